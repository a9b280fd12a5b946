"""The bundled model's vectors of a few texts in plain Python: the very bytes numpy makes."""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from support import shared_fixtures
from teamlore.models.embeddings import (
    SMALL_BATCH,
    SUBSET_CHARS,
    bundled_embedder,
    mean_token_rows,
    normalize_rows,
    quantize_rows,
)
from teamlore.models.plain_rows import TableFile, quantized_row, sign_bits, unit_row
from teamlore.sessions.turn_vectors import quantize, stored_rows


def _numpy_unit_rows(table: np.ndarray, id_lists: list[list[int]]) -> np.ndarray:
    out = np.zeros((len(id_lists), table.shape[1]), dtype=np.float32)
    mean_token_rows(table, id_lists, out)
    return normalize_rows(out)


def _random_float16_table(seed: int, rows: int, columns: int) -> np.ndarray:
    """float16 bit patterns of every kind but NaN/inf: normals, subnormals, both zeros."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 0x7C00, size=(rows, columns), dtype=np.uint16)
    bits |= rng.integers(0, 2, size=bits.shape, dtype=np.uint16) << 15
    return bits.view(np.float16)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(min_value=-3, max_value=70), max_size=200),
    st.sampled_from([1, 7, 8, 9, 100, 128, 129, 256, 300, 1000]),
    st.integers(min_value=0, max_value=2**32 - 1),
)
@example(ids=[63], columns=1000, seed=4_294_967_294)  # a -0.0 in the row: numpy's sum gives +0.0
def test_unit_rows_are_numpys_bit_for_bit_at_every_width(
    ids: list[int], columns: int, seed: int
) -> None:
    # widths on both sides of numpy's pairwise-sum thresholds (8 values, blocks of 128)
    table = _random_float16_table(seed, 64, columns)
    plain = unit_row(TableFile(table.tobytes(), "F16", 64, columns, 0), ids)

    assert plain.tobytes() == _numpy_unit_rows(table, [ids]).tobytes()


def test_a_row_too_small_to_normalize_is_zero_as_numpy_leaves_it() -> None:
    # a float32 table: squares of 1e-30 underflow to 0, so the norm is 0 and numpy's row stays 0
    table = np.full((2, 4), 1e-30, dtype=np.float32)
    plain = unit_row(TableFile(table.tobytes(), "F32", 2, 4, 0), [0, 1])

    assert plain.tobytes() == _numpy_unit_rows(table, [[0, 1]]).tobytes() == bytes(16)


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1), st.booleans())
def test_the_stored_form_of_a_row_is_numpys(seed: int, zero: bool) -> None:
    rng = np.random.default_rng(seed)
    row = np.zeros((1, 256), np.float32) if zero else normalize_rows(rng.standard_normal((1, 256)))
    unit = array("f", row.tobytes())

    assert quantized_row(unit) == quantize_rows(row)[1].tobytes()
    assert sign_bits(unit) == quantize(row)[1].tobytes()


def test_few_real_session_texts_get_the_bytes_embed_stores(tmp_path: Path) -> None:
    embedder = bundled_embedder(cache_dir=tmp_path / "models")  # the subset tokenizer too
    texts = [
        line[:1024]
        for path in sorted(shared_fixtures("sessions").rglob("*.jsonl"))[:12]
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[:12]
    ] + ["", "迁移数据库之前先备份", "<s> special </s> and \u2581 spaces  "]
    assert len(texts) > 100
    for start in range(0, len(texts), 3):
        batch = texts[start : start + 3]
        few = embedder.embed_few(batch)
        assert few is not None
        expected = embedder.embed(batch)
        assert b"".join(row.tobytes() for row in few) == expected.tobytes()
        stored = b"".join(quantized_row(row) + sign_bits(row) for row in few)
        assert stored == stored_rows(expected)


def test_more_or_longer_texts_are_left_to_numpy(tmp_path: Path) -> None:
    embedder = bundled_embedder(cache_dir=tmp_path / "models")
    assert embedder.embed_few(["a turn"] * (SMALL_BATCH + 1)) is None
    assert embedder.embed_few(["x" * (SUBSET_CHARS + 1)]) is None
    assert embedder.embed_few(["a turn"] * SMALL_BATCH) is not None


@pytest.mark.parametrize("dtype", ["F16", "F32"])
def test_a_table_row_is_read_widened_and_clipped(dtype: str) -> None:
    table = np.arange(12, dtype=np.float16 if dtype == "F16" else np.float32).reshape(4, 3) / 8
    found = TableFile(b"pad" + table.tobytes(), dtype, 4, 3, 3)
    assert found.row(1) == tuple(table[1].astype(float))
    assert found.row(-2) == found.row(0) and found.row(99) == found.row(3)
