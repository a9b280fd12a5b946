"""Benchmark: memory search's meaning ranking (memory/store/meaning.py) against the two rankings
it replaced (the pair's mean cosine by whole text and by headline), on the same stored matrices.

    python bench/bench_meaning.py [--entries 10000] [--queries 200]

Random unit rows of memory's paired model (512 + 256 dimensions) stand for the stored vectors:
what a ranking costs depends on how many rows there are, not on what they say. The two ways run
query by query, interleaved, each timed in CPU seconds (process time); prints p50 / p95 of each
and their ratio, and the issue's in-process target (a whole memory search p95 <= 15 ms at 10,000
entries) beside the ranking's share of it. The reading check (`unread`) is given nobody blind:
its one SQL query over the candidates is the same in both.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the `teamlore` entry point does

import argparse
import sys
import time

import numpy as np

from teamlore.memory.store.meaning import meaning_ranking, model_cosines
from teamlore.memory.store.search import MIN_SIMILARITY, VECTOR_DEPTH
from teamlore.memory.store.vectors import best, cosines
from teamlore.models.embeddings import normalize_rows, quantize_rows

PARTS = (512, 256)
TARGET_MS = 15.0


def unit(rng: np.random.Generator, rows: int) -> np.ndarray:
    return normalize_rows(
        np.hstack([normalize_rows(rng.standard_normal((rows, d))) for d in PARTS])
    )


def before(stored: tuple[np.ndarray, ...], query: np.ndarray) -> list[int]:
    scales, values, line_scales, line_values, ids = stored
    whole = best(ids, cosines(values, scales, query), VECTOR_DEPTH, MIN_SIMILARITY)
    lines = best(ids, cosines(line_values, line_scales, query), VECTOR_DEPTH, MIN_SIMILARITY)
    return [i for i, _ in whole] + [i for i, _ in lines]


def after(stored: tuple[np.ndarray, ...], parts: list[np.ndarray]) -> list[int]:
    scales, values, line_scales, line_values, ids = stored
    fields = [model_cosines(values, scales, parts), model_cosines(line_values, line_scales, parts)]
    ranked = meaning_ranking(
        ids,
        fields,
        limit=VECTOR_DEPTH,
        min_similarity=MIN_SIMILARITY,
        unread=lambda d: [set(), set()],
    )
    return [i for i, _ in ranked]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(25)
    stored = (
        *quantize_rows(unit(rng, args.entries)),
        *quantize_rows(unit(rng, args.entries)),
        np.arange(1, args.entries + 1, dtype=np.int64),
    )
    queries = unit(rng, args.queries)
    spent: dict[str, list[float]] = {"before": [], "after": []}
    for query in queries:
        parts = [normalize_rows(query[None, :512])[0], normalize_rows(query[None, 512:])[0]]
        for name in ("before", "after") if len(spent["before"]) % 2 else ("after", "before"):
            started = time.process_time()
            before(stored, query) if name == "before" else after(stored, parts)
            spent[name].append((time.process_time() - started) * 1000)
    print(f"{args.entries} entries, {args.queries} queries, load {os.getloadavg()[0]:.1f}")
    figures = {}
    for name, times in spent.items():
        p50, p95 = np.percentile(times, 50), np.percentile(times, 95)
        figures[name] = (p50, p95)
        label = "two rankings (before)" if name == "before" else "meaning ranking (now)"
        print(f"  {label:<24} CPU p50 {p50:6.2f} ms  p95 {p95:6.2f} ms")
    ratio = figures["after"][0] / figures["before"][0], figures["after"][1] / figures["before"][1]
    print(f"  ratio now / before: p50 x{ratio[0]:.2f}, p95 x{ratio[1]:.2f}")
    print(
        f"target: whole memory search p95 <= {TARGET_MS:.0f} ms at 10,000 entries; "
        f"this ranking's p95 {figures['after'][1]:.2f} ms of it"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
