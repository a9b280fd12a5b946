"""Benchmark: memory search's meaning ranking (memory/store/meaning.py) over stored int8 rows:
the two scans (whole text, headline) and the ranking, as a search runs them.

    python bench/bench_meaning.py [--entries 10000] [--queries 200]

Random unit rows of memory's paired model (512 + 256 dimensions) stand for the stored vectors:
what a ranking costs depends on how many rows there are, not on what they say. Each query is
timed in CPU seconds (process time); prints p50 / p95 of the scans and of the ranking, and the
issue's in-process target (a whole memory search p95 <= 15 ms at 10,000 entries) beside them.
The reading check (`unread`) is given nobody blind: its one SQL query over the candidates is
not what is measured. (Rounds before 16 compared this ranking with the two it replaced, in
numpy; docs/hybrid-search.md, "The meaning ranking", keeps those figures.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

from teamlore.memory.store.meaning import meaning_ranking, model_cosines, own_or_whole
from teamlore.memory.store.search import MIN_SIMILARITY, VECTOR_DEPTH
from teamlore.memory.store.vectors import to_blobs
from teamlore.models.embeddings import normalize_rows
from teamlore.models.vector_math import Int8Rows, QueryRows

PARTS = (512, 256)
TARGET_MS = 15.0


def unit(rng: np.random.Generator, rows: int) -> np.ndarray:
    return normalize_rows(
        np.hstack([normalize_rows(rng.standard_normal((rows, d))) for d in PARTS])
    )


def percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(25)
    whole_rows = Int8Rows.from_blobs(to_blobs(unit(rng, args.entries)))
    headline_rows = Int8Rows.from_blobs(to_blobs(unit(rng, args.entries)))
    ids = list(range(1, args.entries + 1))
    spent: dict[str, list[float]] = {"scans": [], "ranking": []}
    for query in unit(rng, args.queries):
        models = [normalize_rows(query[None, :512])[0], normalize_rows(query[None, 512:])[0]]
        started = time.process_time()
        parts = QueryRows.of([m.tolist() for m in models], whole_rows.dimensions)
        whole = model_cosines(whole_rows, parts)
        lines = own_or_whole(model_cosines(headline_rows, parts), whole, headline_rows)
        scanned = time.process_time()
        meaning_ranking(
            ids,
            [whole, lines],
            limit=VECTOR_DEPTH,
            min_similarity=MIN_SIMILARITY,
            unread=lambda docs: [set(), set()],
        )
        spent["scans"].append((scanned - started) * 1000)
        spent["ranking"].append((time.process_time() - scanned) * 1000)
    print(f"{args.entries} entries, {args.queries} queries, load {os.getloadavg()[0]:.1f}")
    for name, times in spent.items():
        p50, p95 = percentiles(times)
        print(f"  {name:<8} CPU p50 {p50:6.2f} ms  p95 {p95:6.2f} ms")
    total = [a + b for a, b in zip(spent["scans"], spent["ranking"], strict=True)]
    print(
        f"target: whole memory search p95 <= {TARGET_MS:.0f} ms at 10,000 entries; "
        f"scans + ranking p95 {percentiles(total)[1]:.2f} ms of it"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
