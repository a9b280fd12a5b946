"""The bundled model's vectors of a few texts in plain Python, without numpy
(docs/hybrid-search.md, "Embedding a query in a fresh process").

A sync that appended a turn or two embeds a few dozen tokens; importing numpy for that costs
~40 ms of a ~250 ms process. These functions compute, with the standard library, exactly the
float32 values numpy computes in `BundledEmbedder.embed` (`mean_token_rows`, then
`normalize_rows`) and in `quantize_rows`, operation for operation in the same order:

- each float32 sum, product, quotient and square root is done in double precision and rounded
  to float32 (`array("f")`); for these operations that rounding gives exactly the correctly
  rounded float32 result numpy computes (a double carries more than 2 x 24 + 2 bits);
- the mean adds a text's token rows one after the other to +0.0, as numpy reduces along the
  first axis;
- the squared norm is numpy's pairwise sum along a row (`pairwise_sum`).

Tests compare the bytes with numpy's on real texts and random token lists
(tests/models/test_plain_rows.py).
"""

from __future__ import annotations

import math
import operator
import struct
from array import array
from collections.abc import Sequence
from typing import Any, NamedTuple

PAIRWISE_BLOCK = 128  # numpy's PW_BLOCKSIZE: below it, eight running sums
STRUCT_CODES = {"F16": "e", "F32": "f"}  # safetensors dtype → struct format code


class TableFile(NamedTuple):
    """An embedding table inside a memory-mapped safetensors file."""

    mapped: Any  # mmap.mmap (or any buffer)
    dtype: str  # a key of STRUCT_CODES
    rows: int
    columns: int
    begin: int  # byte offset of row 0

    def row(self, token: int) -> tuple[float, ...]:
        """Row `token` (clipped to the table, as `mean_token_rows` clips), widened exactly."""
        token = min(max(token, 0), self.rows - 1)
        code = STRUCT_CODES[self.dtype]
        width = struct.calcsize(code) * self.columns
        return struct.unpack_from(f"<{self.columns}{code}", self.mapped, self.begin + token * width)


def unit_row(table: TableFile, ids: Sequence[int]) -> array[float]:
    """The unit-length float32 mean of `ids`' rows: the row `BundledEmbedder.embed` gives (a
    text without tokens: a zero row)."""
    if not ids:
        return array("f", bytes(4 * table.columns))
    rows: dict[int, tuple[float, ...]] = {}
    # numpy's sum starts from +0.0, not from the first row: a -0.0 there becomes +0.0
    total = array("f", bytes(4 * table.columns))
    for token in ids:
        row = rows.get(token)
        if row is None:
            row = rows[token] = table.row(token)
        total = array("f", map(operator.add, total, row))
    count = len(ids)
    mean = array("f", (value / count for value in total))
    norm = _f32(math.sqrt(pairwise_sum(array("f", map(operator.mul, mean, mean)))))
    if not norm > 0:  # `normalize_rows` leaves the row zero: a zero mean, or one so small
        return array("f", bytes(4 * table.columns))  # that its squares underflow (float32)
    return array("f", (value / norm for value in mean))


def pairwise_sum(values: array[float], start: int = 0, count: int | None = None) -> float:
    """numpy's float32 sum along a contiguous row (`pairwise_sum` in its umath loops): fewer than
    8 values one after the other; up to `PAIRWISE_BLOCK` in eight running sums combined as a
    tree, then the rest; more split in two halves (the first a multiple of 8)."""
    n = len(values) - start if count is None else count
    if n < 8:
        total = -0.0
        for value in values[start : start + n]:
            total = _f32(total + value)
        return total
    if n <= PAIRWISE_BLOCK:
        sums = values[start : start + 8]
        end = start + n - n % 8
        for at in range(start + 8, end, 8):
            sums = array("f", map(operator.add, sums, values[at : at + 8]))
        pairs = array("f", (sums[i] + sums[i + 1] for i in range(0, 8, 2)))
        total = _f32(_f32(pairs[0] + pairs[1]) + _f32(pairs[2] + pairs[3]))
        for value in values[end : start + n]:
            total = _f32(total + value)
        return total
    half = n // 2
    half -= half % 8
    return _f32(pairwise_sum(values, start, half) + pairwise_sum(values, start + half, n - half))


def quantized_row(unit: array[float]) -> bytes:
    """`quantize_rows` of one row, as stored: the int8 values (`value / scale * 127`, rounded
    half to even like `np.rint`) as bytes; the scale cancels in a cosine and is not returned."""
    scale = max(map(abs, unit), default=0.0)
    safe = scale if scale > 0 else 1.0
    scaled = array("f", (value / safe for value in unit))
    return array("b", (round(value) for value in array("f", (v * 127 for v in scaled)))).tobytes()


def sign_bits(unit: array[float], pad_to: int = 8) -> bytes:
    """`np.packbits(unit > 0)` (the first value in the high bit), padded with zero bytes to a
    multiple of `pad_to` bytes."""
    bits = bytearray(-(-len(unit) // 8))
    for index, value in enumerate(unit):
        if value > 0:
            bits[index >> 3] |= 0x80 >> (index & 7)
    return bytes(bits) + bytes(-len(bits) % pad_to)


def _f32(value: float) -> float:
    return array("f", (value,))[0]
