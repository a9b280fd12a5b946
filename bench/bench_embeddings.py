"""Benchmark: the embedding side of hybrid memory search (docs/hybrid-search.md).

Over a synthetic memory tree of 10,000 entry files (the corpus of bench_memory_projection.py),
projected into a throwaway state database, prints:

- the bundled model's load time and the process RSS it adds;
- embedding throughput: a cold `sync_approved_vectors` (entries/s), and an unchanged re-sync;
- the added cost of embeddings to a cold projection (projection alone vs projection + vectors);
- `memory search` p50/p95 over 200 queries (keywords and sentences), wall and CPU, lexical,
  vector and hybrid, each mode against its target (issue 25: hybrid p95 <= 15 ms at 10k
  entries; lexical: round 1's p95 <= 10 ms, bench_memory_projection.py);
- storage per 1,000 rows: `approved_vectors` bytes on disk (database pages before/after) and the
  float32 matrix a query scans in memory.

A script, not a test (nothing is asserted):

    .venv/bin/python bench/bench_embeddings.py [--entries 10000] [--queries 200]
        [--rankings FILE] [--state DIR [--as-server]] [--versus SRC [--rounds 3]]

`--rankings FILE` checks that a change of speed changed no result: the first run writes every
query's ranked hits (id, score, paths, snippet) per mode to FILE, a later run compares its own
with them and prints `rankings: identical` or the queries that differ.

`--state DIR` keeps the tree and the state database in DIR (built on the first run, reused by
later ones: no embedding figures then). `--versus SRC` times the same searches with another
source tree of teamlore (`/work/main/src`), interleaved: each round runs the searches in a
fresh process with SRC, then with this tree, and prints both sides' figures and their ratios
(this / SRC) — one run, one load. `--as-server` searches with memory's embedder as `teamlore
mcp` builds it, its derived model copy in the state dir: the query then takes a long-lived
server's path (on this tree the multilingual model's network without numpy, on a tree before
round 16 numpy's); without it a query reads the model package's own files through numpy.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the `teamlore` entry point does

import argparse
import json
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench_hybrid_quality import MODELS, model_named
from bench_memory_projection import Corpus, entry_text, make_queries, make_tree, percentile
from teamlore.memory.store.projection import sync_approved_projection
from teamlore.memory.store.search import search_memory
from teamlore.memory.store.state_db import open_state_db
from teamlore.memory.store.vectors import from_blobs, sync_approved_vectors
from teamlore.models.embeddings import Embedder, Vectors

REPO = "a1" * 12
WORKTREE = "b2" * 12
TARGET_SEARCH_P95_MS = 15.0  # issue 25, memory search (hybrid, the default)
TARGET_LEXICAL_P95_MS = 10.0  # round 1 (bench_memory_projection.py)
TARGETS = {"lexical": TARGET_LEXICAL_P95_MS, "vector": TARGET_SEARCH_P95_MS}
TARGETS["hybrid"] = TARGET_SEARCH_P95_MS

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


Times = tuple[list[float], list[float]]  # (wall ms, CPU ms) per search


def timed_searches(conn: sqlite3.Connection, queries: list[str], **options: object) -> Times:
    times: Times = ([], [])
    for query in queries:
        start, cpu = time.perf_counter(), time.process_time()
        search_memory(
            conn,
            repository_key=REPO,
            worktree_key=WORKTREE,
            query=query,
            limit=10,
            **options,  # type: ignore[arg-type]
        )
        times[0].append((time.perf_counter() - start) * 1000)
        times[1].append((time.process_time() - cpu) * 1000)
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


def row(label: str, times: list[float], cpu: list[float] | None = None) -> str:
    p50, p95 = percentile(times, 0.5), percentile(times, 0.95)
    line = f"  {label:<28} p50 {p50:6.2f} ms   p95 {p95:6.2f} ms"
    if cpu is not None:
        line += f"   CPU p50 {percentile(cpu, 0.5):6.2f} ms   p95 {percentile(cpu, 0.95):6.2f} ms"
    return line


def target_line(mode: str, times: Times) -> str:
    """The mode's p95 against its target, wall time (and CPU, for a loaded machine)."""
    target = TARGETS[mode]
    wall, cpu = percentile(times[0], 0.95), percentile(times[1], 0.95)
    verdict = "meets" if wall <= target else "MISSES"
    return (
        f"  target {mode} p95 <= {target:.0f} ms: {verdict} "
        f"(p95 {wall:.2f} ms, CPU p95 {cpu:.2f} ms)"
    )


def search_times(
    conn: sqlite3.Connection, queries: list[str], embedder: Embedder
) -> dict[str, Times]:
    """Each mode's times over `queries`, after warming the caches a long-lived process has."""
    timed_searches(conn, queries[:10], embedder=embedder)
    lexical = timed_searches(conn, queries, mode="lexical")
    hybrid = timed_searches(conn, queries, embedder=embedder)
    vector = timed_searches(conn, queries, embedder=embedder, mode="vector")
    return {"lexical": lexical, "vector": vector, "hybrid": hybrid}


def print_searches(times: dict[str, Times], keywords: int, entries: int) -> None:
    lexical, vector, hybrid = times["lexical"], times["vector"], times["hybrid"]
    print(f"memory search over {entries} entries, {len(lexical[0])} queries")
    print(row("lexical (--lexical)", *lexical))
    print(row("lexical, keyword queries", lexical[0][:keywords], lexical[1][:keywords]))
    print(row("lexical, sentence queries", lexical[0][keywords:], lexical[1][keywords:]))
    print(row("vector only", *vector))
    print(row("hybrid (default)", *hybrid))
    print(row("hybrid, keyword queries", hybrid[0][:keywords], hybrid[1][:keywords]))
    print(row("hybrid, sentence queries", hybrid[0][keywords:], hybrid[1][keywords:]))
    for mode in ("lexical", "vector", "hybrid"):
        print(target_line(mode, times[mode]))


def versus(args: argparse.Namespace, state: Path) -> None:
    """`--versus SRC`: the searches timed in fresh processes, SRC's and this tree's in turn,
    each over its own copy of the state database (a side whose schema is newer migrates its
    copy: the other side could not open it)."""
    with tempfile.TemporaryDirectory(prefix="teamlore-embed-versus-") as tmp:
        copies = {side: Path(tmp) / side for side in ("versus", "this")}
        for copy in copies.values():
            shutil.copytree(state / "home", copy / "home")
            (copy / "built").write_text("")
        timed_sides(args, copies)


def timed_sides(args: argparse.Namespace, copies: dict[str, Path]) -> None:
    own = str(Path(__file__).resolve().parents[1] / "src")
    sides: dict[str, dict[str, Times]] = {"versus": {}, "this": {}}
    for _ in range(args.rounds):
        for side, src in (("versus", args.versus), ("this", own)):
            state = copies[side]
            command = [sys.executable, __file__, "--state", str(state), "--searches-only"]
            command += ["--entries", str(args.entries), "--queries", str(args.queries)]
            command += ["--model", args.model, *(["--as-server"] if args.as_server else [])]
            env = {**os.environ, "PYTHONPATH": src}
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            found = json.loads(done.stdout.strip().splitlines()[-1])
            for mode, (wall, cpu) in found.items():
                mine = sides[side].setdefault(mode, ([], []))
                mine[0].extend(wall)
                mine[1].extend(cpu)
    print(f"interleaved with {args.versus} ({args.rounds} rounds of fresh processes each)")
    for mode in ("lexical", "vector", "hybrid"):
        theirs, mine = sides["versus"][mode], sides["this"][mode]
        print(row(f"{mode}, versus", *theirs))
        print(row(f"{mode}, this tree", *mine))
        ratios = [
            percentile(mine[i], q) / percentile(theirs[i], q) for i in (0, 1) for q in (0.5, 0.95)
        ]
        print(
            "  {:<28} p50 {:.2f}   p95 {:.2f}   CPU p50 {:.2f}   p95 {:.2f}".format(
                "ratio this / versus", *ratios
            )
        )
        print(target_line(mode, mine))


def advance(corpus: Corpus, entries: int) -> None:
    """Draw what `make_tree` draws, without writing: the queries of a reused --state."""
    for i in range(entries):
        entry_text(f"entry-{i:05d}", corpus)


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
        "--rankings",
        type=Path,
        default=None,
        help="write every query's hits to this file, or compare them with it when it exists",
    )
    parser.add_argument("--state", type=Path, default=None, help="keep (and reuse) tree and DB")
    parser.add_argument("--versus", default=None, help="another teamlore src to time against")
    parser.add_argument("--rounds", type=int, default=3, help="--versus: rounds of processes")
    parser.add_argument(
        "--as-server",
        action="store_true",
        help="with --state: search with memory's embedder as `teamlore mcp` builds it (the"
        " derived model copy in the state dir: the query path of a long-lived server)",
    )
    parser.add_argument("--searches-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.state is not None or args.versus is not None:
        with tempfile.TemporaryDirectory(prefix="teamlore-embed-bench-") as tmp:
            kept(args, args.state or Path(tmp))
        return
    with tempfile.TemporaryDirectory(prefix="teamlore-embed-bench-") as tmp:
        measure(args, Path(tmp))


def kept(args: argparse.Namespace, state: Path) -> None:
    """`--state` / `--versus`: build the state once, then time (or compare) the searches."""
    if not (state / "built").exists():
        state.mkdir(parents=True, exist_ok=True)
        measure(args, state)
        (state / "built").write_text("")
        if args.versus is None:
            return
    elif not args.searches_only and args.versus is None:
        print(f"reusing {state} (no embedding figures)")
    if args.versus is not None:
        versus(args, state)
        return
    if not (args.searches_only or args.rankings):
        return
    corpus = Corpus(random.Random(20261201), dense=False)
    advance(corpus, args.entries)
    embedder = searching_embedder(args, state / "home")
    embedder.embed(["load the model"])
    conn = open_state_db(state / "home")
    # what every `memory search` does first: a pack a migration dropped is written again
    sync_approved_vectors(conn, embedder=embedder, repository_key=REPO, worktree_key=WORKTREE)
    keywords = make_queries(args.queries // 2, corpus)
    queries = keywords + sentence_queries(args.queries - len(keywords), corpus)
    if args.rankings is not None:
        check_rankings(args.rankings, rankings(conn, queries, embedder))
    if args.searches_only:
        print(json.dumps(search_times(conn, queries, embedder)))
    conn.close()


def searching_embedder(args: argparse.Namespace, home: Path) -> Embedder:
    """`--as-server`: memory's embedder as `teamlore mcp` builds it for `home` (its derived
    model copy in the state dir's `models/`, so a query takes the path a long-lived server
    takes); else `--model`'s, reading the model package's own files."""
    if not args.as_server:
        return model_named(args.model)
    from teamlore.models.multilingual import memory_embedder

    embedder = memory_embedder(home)
    assert embedder is not None, "the state dir's config turns embeddings off"
    return embedder


def measure(args: argparse.Namespace, tmp: Path) -> None:
    """Build the tree and the state in `tmp`, embed, and time everything."""
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

    root = tmp / "worktree"
    root.mkdir()
    make_tree(root, args.entries, corpus)
    conn = open_state_db(tmp / "home")
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
    print_searches(search_times(conn, queries, embedder), len(keywords), args.entries)
    if args.rankings is not None:
        check_rankings(args.rankings, rankings(conn, queries, embedder))
    print(f"max RSS {rss_mib():.0f} MiB")
    conn.close()


if __name__ == "__main__":
    main()
