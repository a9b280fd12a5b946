"""The command line: the console entry (`entry.py`), the lean commands, the typer app."""

from __future__ import annotations

import os


def single_blas_thread() -> None:
    """One BLAS thread unless the user set another count (before numpy is imported): hybrid
    search multiplies one query vector by the memory's vectors (docs/hybrid-search.md), too
    small a product for worker threads, whose spinning after the work cost a `memory search`
    process 1.5x its CPU with two of them on a 2-core machine (bench/bench_cli.py)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
