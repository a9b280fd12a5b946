"""Vector arithmetic without numpy: stored int8 rows against a query, and the few whole-vector
operations a ranking needs, on `array` buffers through SimSIMD's kernels (docs/hybrid-search.md,
"Ranking without numpy").

A fresh `memory search` process that imported numpy spent ~50 ms of its ~110 ms on that import;
SimSIMD (Apache-2.0, one ~1.6 MB extension module) imports in ~1 ms and runs the same products
in SIMD code. Stored rows are int8 with a scale each (`quantize_rows`); a query is a float row.
SimSIMD multiplies like types only, so a query is written as two int8 rows, its high and its low
part (`QUERY_STEPS` steps per unit, 2^-14 of a unit: far below the rows' own 1/127), and the
products of those are exact integers.

    rows = Int8Rows.from_blobs(blobs)        # the stored `to_blobs` form: scale, then int8s
    rows.cosines([query])                    # one array of cosines per query row
"""

from __future__ import annotations

import itertools
import math
import struct
import sys
from array import array
from collections.abc import Sequence
from typing import Any

import simsimd as _simsimd

from teamlore.core.shapes.records import Record

# its stubs accept numpy arrays and memoryviews; `array` buffers are what is passed here
simsimd: Any = _simsimd

# a unit query component v is round(v * QUERY_STEPS) = 128 * high + low, high in [-127, 127]
# and low in [-64, 63]: both int8
QUERY_STEPS = 127 * 128
_SCALE = struct.Struct("<f")


def as_array(result: Any) -> array[float]:
    """A SimSIMD result as an `array` of its own float type (float32 for float32 inputs,
    float64 for float64 ones). Results are never written into a given `out=` buffer: SimSIMD
    6.5 then returns None without a reference of its own, and each such call takes one from
    None until the interpreter aborts (tests check None's reference count)."""
    view = memoryview(result)
    out: array[float] = array(view.format)
    out.frombytes(view.cast("B"))
    return out


def weighted_sum(a: array[float], b: array[float], alpha: float, beta: float) -> array[float]:
    """alpha · a + beta · b, element by element."""
    return as_array(simsimd.wsum(a, b, alpha=alpha, beta=beta))


def times(a: array[float], b: array[float]) -> array[float]:
    """a · b, element by element."""
    return as_array(simsimd.fma(a, b, a, alpha=1.0, beta=0.0))


def ones(count: int, typecode: str = "d") -> array[float]:
    return array(typecode, [1.0]) * count


def total(values: array[float]) -> float:
    return float(simsimd.dot(values, ones(len(values)))) if values else 0.0


def standardized(scores: array[float]) -> array[float]:
    """(score − mean) / standard deviation; all 0 when the scores do not differ."""
    count = len(scores)
    if not count:
        return array("d")
    unit = ones(count)
    centred = weighted_sum(scores, unit, 1.0, -total(scores) / count)
    spread = math.sqrt(float(simsimd.dot(centred, centred)) / count)
    if spread <= 0:
        return array("d", bytes(8 * count))
    return weighted_sum(centred, centred, 1.0 / spread, 0.0)


# a float64's byte holding its sign → 1 when the sign is clear (the value is ≥ 0), else 0
_NON_NEGATIVE = bytes(int(byte < 0x80) for byte in range(256))
_SIGN_BYTE = 7 if sys.byteorder == "little" else 0


def at_least(values: array[float], floor: float) -> bytes:
    """One byte per value: 1 where it is ≥ `floor`, else 0. Read from the sign of value − floor
    (a SimSIMD sum), byte by byte: no Python loop over the values. A value of -0.0 reads as
    below a floor of 0 (search floors are positive)."""
    if not values:
        return b""
    shifted = weighted_sum(values, ones(len(values)), 1.0, -floor)
    return shifted.tobytes()[_SIGN_BYTE::8].translate(_NON_NEGATIVE)


def picked(values: array[Any], indices: Sequence[int]) -> array[Any]:
    """values[i] for each of `indices`, in order."""
    return array(values.typecode, map(values.__getitem__, indices))


class Int8Rows(Record, frozen=True):
    """Stored vectors of one space: `count` rows of `dimensions` int8 values, each with its
    scale (a row stands for value · scale / 127; scale 0: no vector).

    `values` holds the rows' columns in blocks of the widths `blocks`, one block after the
    other, each block its `count` rows of `width` values (`()`: one block, the rows one after
    the other). A paired model's rows are kept in one block per model (`from_blobs`' widths),
    so a query row of one model is multiplied by that model's columns only, not by the other's
    zeros."""

    values: bytes
    scales: array[float]
    dimensions: int
    blocks: tuple[int, ...] = ()

    @property
    def count(self) -> int:
        return len(self.scales)

    @property
    def widths(self) -> tuple[int, ...]:
        return self.blocks or (self.dimensions,)

    @classmethod
    def from_blobs(
        cls, blobs: Sequence[bytes | None], dimensions: int = 0, widths: Sequence[int] = ()
    ) -> Int8Rows:
        """Rows of stored blobs (`to_blobs`: a float32 scale, then the int8 values), all of one
        length; None, or a blob of another length than `dimensions` (when given), is a zero row
        with scale 0. With `widths` (two or more, summing to the dimensions) their columns are
        laid out in blocks of those widths."""
        if not dimensions:
            dimensions = max((len(b) - 4 for b in blobs if b is not None), default=0)
        size, zero = 4 + dimensions, bytes(4 + dimensions)
        rows = [blob if blob is not None and len(blob) == size else zero for blob in blobs]
        scales = array("d", [_SCALE.unpack_from(row)[0] for row in rows])
        blocks = tuple(widths)
        if len(blocks) < 2 or sum(blocks) != dimensions or min(blocks) < 1:
            blocks = ()
        ends = list(itertools.accumulate(blocks or (dimensions,), initial=4))
        values = b"".join(
            [b"".join([row[start:end] for row in rows]) for start, end in itertools.pairwise(ends)]
        )
        return cls(values, scales, dimensions, blocks)

    def cosines(self, queries: QueryRows) -> list[array[float]]:
        """Each query's cosine with every row: per block of columns, one product of its rows
        with the two int8 parts (`QueryRows`) of every query that has a value there. The
        products are exact integers, so summing a query's blocks gives what one product over
        whole rows gives."""
        if not self.count or not queries.count or queries.dimensions != self.dimensions:
            return [array("d") for _ in range(queries.count)]
        parts: list[tuple[array[float], array[float]] | None] = [None] * queries.count
        offset = start = 0
        for width in self.widths:
            block = memoryview(self.values)[offset : offset + self.count * width]
            offset += self.count * width
            asked = queries.in_columns(start, width)
            start += width
            if not asked:
                continue
            columns = memoryview(b"".join(rows for _, rows in asked))
            products = as_array(
                simsimd.cdist(
                    block.cast("b", shape=[self.count, width]),
                    columns.cast("b", shape=[2 * len(asked), width]),
                    metric="dot",
                    out_dtype="float64",
                )
            )
            step = 2 * len(asked)
            for place, (query, _) in enumerate(asked):
                high, low = products[2 * place :: step], products[2 * place + 1 :: step]
                earlier = parts[query]
                if earlier is not None:  # another block's share of this query
                    high = weighted_sum(earlier[0], high, 1.0, 1.0)
                    low = weighted_sum(earlier[1], low, 1.0, 1.0)
                parts[query] = (high, low)
        unit = math.sqrt(queries.count) / QUERY_STEPS / 127
        scales = weighted_sum(self.scales, self.scales, unit, 0.0)
        return [
            times(weighted_sum(*part, 128.0, 1.0), scales)
            if part is not None
            else array("d", bytes(8 * self.count))  # an empty query row: no value anywhere
            for part in parts
        ]


class QueryRows(Record, frozen=True):
    """Unit query rows laid side by side over `dimensions` (a paired model's models,
    `PairedEmbedder`), each written as two int8 rows, its high and its low part: query i is
    compared with its own dimensions only, times sqrt(count), which is that model's cosine of
    a paired row."""

    parts: array[int]  # 2 · count rows of `dimensions` int8s: query i's high, then its low part
    count: int
    dimensions: int
    spans: tuple[tuple[int, int], ...] = ()  # query i's first dimension and its length

    @classmethod
    def of(cls, queries: Sequence[Sequence[float]], dimensions: int) -> QueryRows:
        parts = array("b", bytes(2 * len(queries) * dimensions))
        start = 0
        spans = []
        for i, query in enumerate(queries):
            if start + len(query) > dimensions:
                return cls(array("b"), len(queries), -1)  # another length: never compared
            high, low = _split(query)
            at = 2 * i * dimensions + start
            parts[at : at + len(query)] = high
            at += dimensions
            parts[at : at + len(query)] = low
            spans.append((start, len(query)))
            start += len(query)
        return cls(parts, len(queries), dimensions, tuple(spans))

    def in_columns(self, start: int, width: int) -> list[tuple[int, bytes]]:
        """(query, its high and low part over the columns start..start + width) of each query
        with a value there."""
        size, out = self.dimensions, []
        for query, (first, length) in enumerate(self.spans):
            if first < start + width and start < first + length:
                at = 2 * query * size + start
                high, low = self.parts[at : at + width], self.parts[at + size : at + size + width]
                out.append((query, high.tobytes() + low.tobytes()))
        return out


def _split(query: Sequence[float]) -> tuple[array[int], array[int]]:
    """A unit row's high and low int8 parts: round(v · QUERY_STEPS) = 128 · high + low."""
    top = QUERY_STEPS
    steps = [round(value * top) for value in query]
    if steps and (max(steps) > top or min(steps) < -top):  # not a unit row: clipped
        steps = [min(max(step, -top), top) for step in steps]
    high = [(step + 64) >> 7 for step in steps]
    return array("b", high), array(
        "b", [step - 128 * h for step, h in zip(steps, high, strict=True)]
    )


def unpack_int64s(data: bytes) -> array[int]:
    """Little-endian int64s (a pack's ids) as an `array`."""
    out = array("q")
    out.frombytes(data)
    if sys.byteorder == "big":
        out.byteswap()
    return out


def pack_int64s(values: Sequence[int]) -> bytes:
    """`unpack_int64s`'s bytes of `values`."""
    out = array("q", values)
    if sys.byteorder == "big":
        out.byteswap()
    return out.tobytes()


def unpack_float32s(data: bytes) -> array[float]:
    """Little-endian float32s (a pack's scales) as a float64 `array`."""
    out = array("f")
    out.frombytes(data)
    if sys.byteorder == "big":
        out.byteswap()
    return array("d", out)


def pack_float32s(values: Sequence[float]) -> bytes:
    """`unpack_float32s`'s bytes of `values` (each rounded to float32)."""
    out = array("f", values)
    if sys.byteorder == "big":
        out.byteswap()
    return out.tobytes()
