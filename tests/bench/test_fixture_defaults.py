"""The benchmarks that read the real fixtures find them where a checkout has them: `../shared`
beside the repository (as the README and bench/README.md run them), wherever it is cloned."""

from __future__ import annotations

import sys
from pathlib import Path

from support import shared_fixtures

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_codex_records
import bench_hybrid_quality
import bench_search_quality
import bench_sync_real


def test_benchmarks_default_to_the_fixtures_beside_the_checkout() -> None:
    assert bench_hybrid_quality.DEFAULT_TREE.resolve() == shared_fixtures("threadshare-memory")
    assert bench_search_quality.DEFAULT_FIXTURES.resolve() == shared_fixtures("sessions")
    assert bench_sync_real.FIXTURES.resolve() == shared_fixtures("sessions")
    assert bench_codex_records.FIXTURES.resolve() == shared_fixtures("sessions") / "codex"
