"""Benchmark: the embedding side of hybrid memory search (docs/hybrid-search.md).

Over a synthetic memory tree of 10,000 entry files (the corpus of bench_memory_projection.py),
projected into a throwaway state database, prints:

- the bundled model's load time and the process RSS it adds;
- embedding throughput: a cold `sync_approved_vectors` (entries/s), and an unchanged re-sync;
- the added cost of embeddings to a cold projection (projection alone vs projection + vectors);
- `memory search` p50/p95 over 200 queries (keywords and sentences), lexical and hybrid, against
  the target (hybrid p95 <= 15 ms at 10k entries);
- storage per 1,000 rows: `approved_vectors` bytes on disk (database pages before/after) and the
  float32 matrix a query scans in memory.

A script, not a test (nothing is asserted):

    .venv/bin/python bench/bench_embeddings.py [--entries 10000] [--queries 200]
        [--rankings FILE]

`--rankings FILE` checks that a change of speed changed no result: the first run writes every
query's ranked hits (id, score, paths, snippet) per mode to FILE, a later run compares its own
with them and prints `rankings: identical` or the queries that differ.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the `teamlore` entry point does

import argparse
import json
import random
import resource
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from bench_hybrid_quality import MODELS, model_named
from bench_memory_projection import Corpus, make_queries, make_tree, percentile
from teamlore.memory.store import vectors
from teamlore.memory.store.projection import sync_approved_projection
from teamlore.memory.store.search import search_memory
from teamlore.memory.store.state_db import open_state_db
from teamlore.memory.store.vectors import from_blobs, sync_approved_vectors
from teamlore.models.embeddings import Embedder, Vectors

REPO = "a1" * 12
WORKTREE = "b2" * 12
TARGET_SEARCH_P95_MS = 15.0

SENTENCES = [
    "what must I check before {a} the {b}?",
    "how do we {a} a {b} safely",
    "I'm about to {a} the {b}; anything to know first",
    "why did the {b} fail after {a}",
]


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def database_bytes(conn: sqlite3.Connection) -> int:
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    return int((pages - free) * size)


def sentence_queries(count: int, corpus: Corpus) -> list[str]:
    rng = corpus.rng
    return [
        rng.choice(SENTENCES).format(a=corpus.content_words(1)[0], b=corpus.content_words(1)[0])
        for _ in range(count)
    ]


def timed_searches(conn: sqlite3.Connection, queries: list[str], **options: object) -> list[float]:
    times = []
    for query in queries:
        start = time.perf_counter()
        search_memory(
            conn,
            repository_key=REPO,
            worktree_key=WORKTREE,
            query=query,
            limit=10,
            **options,  # type: ignore[arg-type]
        )
        times.append((time.perf_counter() - start) * 1000)
    return times


class Recycled:
    """`--distinct N`: the model embeds only the first N documents it is given (and every
    query); the others get copies of those rows, in turn. For timing searches over more
    documents than the cold embedding can afford here: a search's cost does not depend on
    what the stored vectors say, only on how many there are."""

    def __init__(self, embedder: Embedder, distinct: int) -> None:
        self._embedder, self._distinct = embedder, distinct
        self._rows: list[Vectors] = []
        self.space = embedder.space
        self.embed_query, self.reads = embedder.embed_query, embedder.reads
        self.reads_every_text = embedder.reads_every_text

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        have = sum(len(r) for r in self._rows)
        fresh = list(texts[: max(self._distinct - have, 0)])
        if fresh:
            self._rows.append(self._embedder.embed(fresh))
        pool = np.vstack(self._rows)
        copies = [(have + len(fresh) + i) % len(pool) for i in range(len(texts) - len(fresh))]
        return np.vstack([pool[len(pool) - len(fresh) :], pool[copies]])


def whole_matrix_cosines(
    values: NDArray[np.int8], scales: NDArray[np.float32], query: NDArray[np.float32]
) -> NDArray[np.float32]:
    """What `vectors.cosines` computed before it widened rows a block at a time."""
    scores: NDArray[np.float32] = (values @ query.astype(np.float32)) * (scales / np.float32(127))
    return scores


def compare_products(conn: sqlite3.Connection, queries: list[str], embedder: Embedder) -> None:
    """`--compare-blocks`: hybrid searches with the block-wise product and with the whole
    matrix widened at once, interleaved query by query, so both see the same load."""
    times: dict[str, list[float]] = {"blocks": [], "whole matrix": []}
    blocks = vectors.cosines
    try:
        for query in queries:
            for name, product in (("blocks", blocks), ("whole matrix", whole_matrix_cosines)):
                vectors.cosines = product
                times[name] += timed_searches(conn, [query], embedder=embedder)
    finally:
        vectors.cosines = blocks
    print("hybrid search, products interleaved (--compare-blocks)")
    for name, found in times.items():
        print(row(name, found))
    ratio = percentile(times["blocks"], 0.5) / percentile(times["whole matrix"], 0.5)
    print(f"  p50 blocks / whole matrix: {ratio:.2f}")


MODES: dict[str, dict[str, object]] = {
    "lexical": {"mode": "lexical"},
    "vector": {"mode": "vector"},
    "hybrid": {},
}


def rankings(conn: sqlite3.Connection, queries: list[str], embedder: Embedder) -> list[object]:
    """Every query's hits per mode, as `--rankings` stores and compares them."""
    found: list[object] = []
    for name, options in MODES.items():
        chosen = {} if name == "lexical" else {"embedder": embedder}
        for query in queries:
            result = search_memory(
                conn,
                repository_key=REPO,
                worktree_key=WORKTREE,
                query=query,
                limit=10,
                **chosen,  # type: ignore[arg-type]
                **options,  # type: ignore[arg-type]
            )
            hits = [[h.id, h.score, h.matched_by, h.snippet] for h in result.results]
            found.append([name, query, hits])
    return found


def check_rankings(path: Path, found: list[object]) -> None:
    """`--rankings`: store `found` in a new file, else compare it with the stored one."""
    if not path.exists():
        path.write_text(json.dumps(found, ensure_ascii=False), encoding="utf-8")
        print(f"rankings: {len(found)} written to {path}")
        return
    stored = json.loads(path.read_text(encoding="utf-8"))
    differ = [mine for mine, theirs in zip(found, stored, strict=True) if mine != theirs]
    print("rankings: identical" if not differ else f"rankings: {len(differ)} DIFFER")
    for mode, query, _ in differ[:10]:  # type: ignore[misc]
        print(f"  {mode}: {query!r}")


def row(label: str, times: list[float]) -> str:
    p50, p95 = percentile(times, 0.5), percentile(times, 0.95)
    return f"  {label:<28} p50 {p50:6.2f} ms   p95 {p95:6.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--model", choices=MODELS, default="paired", help="memory's model")
    parser.add_argument(
        "--distinct",
        type=int,
        default=None,
        help="embed only this many documents for real, copy their rows to the rest (Recycled)",
    )
    parser.add_argument(
        "--compare-blocks",
        action="store_true",
        help="also time hybrid searches with the whole-matrix product, interleaved",
    )
    parser.add_argument(
        "--rankings",
        type=Path,
        default=None,
        help="write every query's hits to this file, or compare them with it when it exists",
    )
    args = parser.parse_args()
    corpus = Corpus(random.Random(20261201), dense=False)

    before_model = rss_mib()
    start = time.perf_counter()
    embedder = model_named(args.model)
    embedder.embed(["load the model"])  # what the first search of a process pays
    load_s = time.perf_counter() - start
    print(f"model {embedder.space.key}")
    if args.distinct is not None:
        embedder = Recycled(embedder, args.distinct)
        print(f"  only {args.distinct} documents embedded, the others copies of them (--distinct)")
    print(f"  load {load_s:.2f} s, RSS +{rss_mib() - before_model:.0f} MiB (max RSS so far)")

    with tempfile.TemporaryDirectory(prefix="teamlore-embed-bench-") as tmp:
        root = Path(tmp) / "worktree"
        root.mkdir()
        make_tree(root, args.entries, corpus)
        conn = open_state_db(Path(tmp) / "home")
        owner = {"repository_key": REPO, "worktree_key": WORKTREE}

        start = time.perf_counter()
        sync_approved_projection(conn, worktree_root=root, **owner)
        projection_s = time.perf_counter() - start
        size_before = database_bytes(conn)

        start = time.perf_counter()
        cold = sync_approved_vectors(conn, embedder=embedder, **owner)
        embed_s = time.perf_counter() - start
        start = time.perf_counter()
        sync_approved_vectors(conn, embedder=embedder, **owner)
        unchanged_s = time.perf_counter() - start
        size_after = database_bytes(conn)

        print(f"embedding {cold.embedded} entries ({args.entries} files)")
        print(f"  cold      {embed_s:.2f} s = {cold.embedded / embed_s:,.0f} entries/s")
        print(f"  unchanged {unchanged_s * 1000:.1f} ms")
        print(
            f"  cold projection {projection_s:.2f} s alone, {projection_s + embed_s:.2f} s with "
            f"vectors (+{100 * embed_s / projection_s:.0f} %)"
        )

        blobs = [r[0] for r in conn.execute("SELECT vector FROM approved_vectors")]
        matrix = from_blobs(blobs)
        per_k = 1000 / max(len(blobs), 1)
        print("storage per 1,000 rows")
        on_disk = (size_after - size_before) * per_k / 1024
        print(f"  on disk   {on_disk:,.0f} KiB (approved_vectors rows + pack)")
        scanned = 2 * matrix.nbytes / 4 * per_k / 1024  # whole text + headline, int8
        print(f"  in memory {scanned:,.0f} KiB (int8 matrices of a scan: text + headline)")

        keywords = make_queries(args.queries // 2, corpus)
        sentences = sentence_queries(args.queries - len(keywords), corpus)
        queries = keywords + sentences
        timed_searches(conn, queries[:10], embedder=embedder)  # warm caches
        lexical = timed_searches(conn, queries, mode="lexical")
        hybrid = timed_searches(conn, queries, embedder=embedder)
        vector = timed_searches(conn, queries, embedder=embedder, mode="vector")
        print(f"memory search over {args.entries} entries, {len(queries)} queries")
        print(row("lexical (--lexical)", lexical))
        print(row("lexical, keyword queries", lexical[: len(keywords)]))
        print(row("lexical, sentence queries", lexical[len(keywords) :]))
        print(row("vector only", vector))
        print(row("hybrid (default)", hybrid))
        print(row("hybrid, keyword queries", hybrid[: len(keywords)]))
        print(row("hybrid, sentence queries", hybrid[len(keywords) :]))
        verdict = "meets" if percentile(hybrid, 0.95) <= TARGET_SEARCH_P95_MS else "MISSES"
        print(f"  target hybrid p95 <= {TARGET_SEARCH_P95_MS:.0f} ms: {verdict}")
        if args.rankings is not None:
            check_rankings(args.rankings, rankings(conn, queries, embedder))
        if args.compare_blocks:
            compare_products(conn, queries, embedder)
        print(f"max RSS {rss_mib():.0f} MiB")
        conn.close()


if __name__ == "__main__":
    main()
