"""Cosines of stored int8 turn vectors with a query: how a session search rescores the
candidates its sign-bit scan found (sessions/turn_vectors.py; docs/hybrid-search.md, "Session
search"). Exact integers, so numpy (when a process has loaded it) and plain Python give the same
cosines to the last bit."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

# exact, so numpy and plain Python give the same cosines to the last bit (the query is kept to
# 2^-24 of a unit: far below the int8 rows' own precision)
QUERY_SCALE = 1 << 24


def int8_cosines(stored: list[bytes], query_vector: Sequence[float]) -> list[float]:
    """Cosine of each int8 row with the unit query row (a row's scale cancels): dot products
    and squared norms in integers (numpy's when it is loaded, else plain Python), then the same
    float operations either way."""
    query = [round(float(value) * QUERY_SCALE) for value in query_vector]
    if not stored:
        return []
    if "numpy" in sys.modules:
        import numpy as np

        matrix = np.frombuffer(b"".join(stored), dtype=np.int8).reshape(len(stored), -1)
        wide = matrix.astype(np.int64)
        # exact integers below 2^53 as float64: the same IEEE operations as the loop below
        products = (wide @ np.array(query, dtype=np.int64)).astype(np.float64)
        norms = np.sqrt(np.einsum("ij,ij->i", wide, wide).astype(np.float64))
        cosines: list[float] = (products / QUERY_SCALE / np.maximum(norms, 1e-9)).tolist()
        return cosines
    dots, squares = _plain_products(stored, query)
    return [
        dot / QUERY_SCALE / max(math.sqrt(square), 1e-9)
        for dot, square in zip(dots, squares, strict=True)
    ]


# a stored int8 value's byte → the value + 128 (0..255); → the low and the high byte of the
# value's square (at most 128² = 0x4000)
_SIGNED = [byte - 256 if byte > 127 else byte for byte in range(256)]
_OFFSET = bytes(value + 128 for value in _SIGNED)
_SQUARE_LOW = bytes(value * value & 0xFF for value in _SIGNED)
_SQUARE_HIGH = bytes(value * value >> 8 for value in _SIGNED)


def _plain_products(stored: list[bytes], query: list[int]) -> tuple[list[int], list[int]]:
    """Each row's dot product with `query` and its squared norm, exact, in plain Python.

    The dot products column by column, every row at once: column i of the rows (shifted by 128
    into unsigned bytes, `bytes.translate`) laid out as one big integer with a field per row,
    times the query's component i (made non-negative by `offset`), summed over the columns;
    the columns' plain sum holds each row's sum. A field holds at most `bound`, so none
    carries into the next, and the shifts are taken out again per row
    (Σ r·q = Σ (r+128)·(q+offset) − offset·Σ (r+128) − 128·Σ q): ~500 big-integer operations
    instead of ~100,000 small ones for 400 rows of 256 dimensions. Squared norms sum the low
    and the high bytes of each value's square (`bytes.translate` again)."""
    count, width = len(stored), len(query)
    offset = -min(0, *query)
    shifted = b"".join(stored).translate(_OFFSET)
    bound = width * 255 * (max(0, *query) + offset + 1)
    size = bound.bit_length() // 8 + 1  # bytes per field
    column = bytearray(size * count)
    products = sums = 0
    for i, value in enumerate(query):
        column[::size] = shifted[i::width]
        values = int.from_bytes(column, "little")
        products += values * (value + offset)
        sums += values
    # read apart: a row's Σ r·q may be negative, which would borrow from the next field
    products_of, sums_of = _fields(products, size, count), _fields(sums, size, count)
    query_part = 128 * sum(query)
    dots = [p - offset * s - query_part for p, s in zip(products_of, sums_of, strict=True)]
    squares = [
        sum(row.translate(_SQUARE_LOW)) + (sum(row.translate(_SQUARE_HIGH)) << 8) for row in stored
    ]
    return dots, squares


def _fields(number: int, size: int, count: int) -> list[int]:
    """The `count` unsigned fields of `size` bytes of `number`, least significant first."""
    whole = number.to_bytes(size * count, "little")
    return [int.from_bytes(whole[k * size : (k + 1) * size], "little") for k in range(count)]
