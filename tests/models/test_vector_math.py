"""Vector arithmetic without numpy (models/vector_math.py): stored int8 rows against a query,
checked against numpy's float arithmetic on the same rows."""

from __future__ import annotations

import gc
import sys
from array import array

import numpy as np
import pytest

from teamlore.memory.store.vectors import to_blobs
from teamlore.models.embeddings import normalize_rows, quantize_rows
from teamlore.models.vector_math import (
    QUERY_STEPS,
    Int8Rows,
    QueryRows,
    at_least,
    pack_float32s,
    pack_int64s,
    picked,
    standardized,
    unpack_float32s,
    unpack_int64s,
)


def stored(rows: np.ndarray) -> Int8Rows:
    return Int8Rows.from_blobs(to_blobs(rows))


def cosines(rows: Int8Rows, queries: list[list[float]]) -> list[array[float]]:
    return rows.cosines(QueryRows.of(queries, rows.dimensions))


def test_cosines_are_numpys_product_of_the_stored_rows() -> None:
    rng = np.random.default_rng(25)
    rows = normalize_rows(rng.standard_normal((1031, 768)))
    query = normalize_rows(rng.standard_normal((1, 768)))[0]
    scales, values = quantize_rows(rows)
    dequantized = values.astype(np.float64) * (scales.astype(np.float64) / 127)[:, None]
    (got,) = cosines(stored(rows), [query.tolist()])
    # the query is kept to 1/QUERY_STEPS of a unit: its error is far below the rows' own
    np.testing.assert_allclose(np.asarray(got), dequantized @ query, atol=2e-4)
    np.testing.assert_allclose(np.asarray(got), rows @ query, atol=0.02)


def test_each_query_is_compared_with_its_own_dimensions_of_a_paired_row() -> None:
    rng = np.random.default_rng(3)
    first = normalize_rows(rng.standard_normal((6, 12)))
    second = normalize_rows(rng.standard_normal((6, 4)))
    paired = normalize_rows(np.hstack([first, second]))  # each half scaled by 1/sqrt(2)
    got = cosines(stored(paired), [first[0].tolist(), second[1].tolist()])
    np.testing.assert_allclose(np.asarray(got[0]), first @ first[0], atol=0.02)
    np.testing.assert_allclose(np.asarray(got[1]), second @ second[1], atol=0.02)


def test_rows_in_column_blocks_give_the_same_cosines_bit_for_bit() -> None:
    # a paired model's rows keep each model's columns together: a query row of one model is
    # multiplied by its columns only, and the exact integer products are the same
    rng = np.random.default_rng(14)
    blobs = [*to_blobs(normalize_rows(rng.standard_normal((211, 20)))), None, b"odd"]
    rows, blocked = Int8Rows.from_blobs(blobs), Int8Rows.from_blobs(blobs, widths=(12, 8))
    assert blocked.blocks == (12, 8) and blocked.values != rows.values
    assert sorted(blocked.values) == sorted(rows.values)  # the same values, moved
    assert blocked.scales == rows.scales
    first = normalize_rows(rng.standard_normal((2, 12)))
    second = normalize_rows(rng.standard_normal((2, 8)))
    asked = [
        [first[0].tolist(), second[0].tolist()],  # one query per block (memory search)
        [normalize_rows(rng.standard_normal((1, 20)))[0].tolist()],  # one across both (dedup)
        [normalize_rows(rng.standard_normal((1, 14)))[0].tolist(), second[1][:6].tolist()],
    ]
    for queries in asked:
        expected = [c.tobytes() for c in cosines(rows, queries)]
        assert [c.tobytes() for c in cosines(blocked, queries)] == expected


def test_rows_are_blocked_only_by_widths_that_fit_them() -> None:
    blobs = to_blobs(normalize_rows(np.random.default_rng(2).standard_normal((4, 6))))
    rows = Int8Rows.from_blobs(blobs)
    for widths in ((), (6,), (3, 2), (3, 4), (6, 0)):
        assert Int8Rows.from_blobs(blobs, widths=widths) == rows
    assert Int8Rows.from_blobs(blobs, widths=(1, 2, 3)).blocks == (1, 2, 3)
    empty = Int8Rows.from_blobs([], 6, (4, 2))
    assert empty.count == 0 and empty.cosines(QueryRows.of([[1.0] * 6], 6)) == [array("d")]


def test_a_query_component_is_two_exact_int8_parts() -> None:
    rows = Int8Rows.from_blobs([pack_float32s([127.0]) + bytes([1, 0, 0])])  # the row (1, 0, 0)
    for value in (1.0, -1.0, 0.5, -0.4999, 1e-6, 0.0):
        (got,) = cosines(rows, [[value, 0.0, 0.0]])
        assert got[0] == pytest.approx(round(value * QUERY_STEPS) / QUERY_STEPS, abs=1e-12)
    (clipped,) = cosines(rows, [[2.0, -3.0, 0.0]])  # not a unit row: each part stays int8
    assert clipped[0] == pytest.approx(1.0, abs=1e-12)


def test_a_missing_or_odd_blob_is_a_zero_row_with_scale_zero() -> None:
    good = to_blobs(normalize_rows(np.ones((1, 4))))[0]
    rows = Int8Rows.from_blobs([good, None, good[:-1]], dimensions=4)
    assert rows.count == 3 and list(rows.scales[1:]) == [0.0, 0.0]
    assert rows.values == good[4:] + bytes(8)
    assert rows.scales[0] == pytest.approx(float(np.frombuffer(good[:4], dtype="<f4")[0]))
    assert Int8Rows.from_blobs([]).count == 0


def test_standardized_scores_have_mean_zero_and_unit_spread() -> None:
    scores = array("d", [0.1, 0.4, 0.2, 0.9])
    z = np.asarray(standardized(scores))
    expected = (np.asarray(scores) - np.mean(scores)) / np.std(scores)
    np.testing.assert_allclose(z, expected, atol=1e-12)
    assert list(standardized(array("d", [0.5] * 3))) == [0.0] * 3
    assert len(standardized(array("d"))) == 0


def test_packed_columns_read_back_as_written() -> None:
    ids = [3, 1 << 40, -2]
    assert list(unpack_int64s(pack_int64s(ids))) == ids
    assert pack_int64s(ids) == np.asarray(ids, dtype="<i8").tobytes()
    scales = [0.5, 0.1, 3.0]
    assert pack_float32s(scales) == np.asarray(scales, dtype="<f4").tobytes()
    assert list(unpack_float32s(pack_float32s(scales))) == [float(np.float32(s)) for s in scales]
    assert list(picked(array("q", ids), [2, 0])) == [-2, 3]


def test_many_rankings_leave_the_interpreters_none_as_it_was() -> None:
    rows = stored(normalize_rows(np.random.default_rng(1).standard_normal((40, 16))))
    query = [0.25] * 16
    gc.collect()  # a collection in the loop would free other objects' references to None
    gc.disable()
    try:
        before = sys.getrefcount(None)
        for _ in range(500):
            standardized(cosines(rows, [query])[0])
        after = sys.getrefcount(None)
    finally:
        gc.enable()
    assert after - before > -100


def test_a_query_of_another_length_is_never_compared() -> None:
    rows = stored(normalize_rows(np.ones((3, 8))))
    assert cosines(rows, [[0.5] * 9]) == [array("d")]


def test_at_least_marks_the_values_at_or_above_the_floor() -> None:
    values = array("d", [0.1, 0.0999999, 0.5, -0.3, 0.1000001, 0.0, -0.0])
    assert list(at_least(values, 0.1)) == [1, 0, 1, 0, 1, 0, 0]
    assert list(at_least(values, 0.0)) == [1, 1, 1, 0, 1, 1, 0]  # -0.0: below, as documented
    assert list(at_least(values, -1.0)) == [1] * len(values)
    assert at_least(array("d"), 0.1) == b""
