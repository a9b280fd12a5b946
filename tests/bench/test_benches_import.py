"""Every script in bench/ still imports: a helper it names moved or renamed in src/ fails
here instead of the next time someone runs that benchmark (bench_recall.py named
`selection.resolve_owner` for weeks after it moved to `ops.owner`)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("script", sorted(p.stem for p in BENCH.glob("*.py")))
def test_a_benchmark_script_imports(script: str) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        module = importlib.import_module(script)
    finally:
        sys.path.remove(str(BENCH))
    assert module.__file__ is not None and Path(module.__file__).parent == BENCH
