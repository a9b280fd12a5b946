"""Hybrid session search: what turn vectors cost and how fast search stays.

    .venv/bin/python bench/bench_turn_vectors.py [--mib 50] [--search-index PATH]
        [--search-turns 250000] [--queries 200] [--seed 1] [--phases cold,search]

1. cold: a `--mib` corpus (bench/corpus.py, both providers) is indexed into a fresh state dir
   (`open_index` + `Indexer.sync`, as bench_sync.py's cold phase), then every turn is embedded
   with the bundled model (`embed_pending_turns`, what `teamlore sync` adds). Prints both times,
   the added cost of embedding as a share of the cold sync, embedding throughput (turns/s,
   MiB/s of embedded text), and the index bytes the vectors add per 1,000 turns.
2. search: an index of `--search-turns` turns (bench_sync.py's lean search corpus; pass
   `--search-index` to copy an already built `index.sqlite3`, else it is generated and indexed
   here, which takes minutes), every turn embedded (timed), then `--queries` queries
   (`corpus.search_queries`) through `search_turns` three ways: words only (`--lexical`),
   hybrid, and hybrid with a provider filter. p50/p95/max per way, in-process with the model
   loaded once (a `teamlore` process adds its start-up and about 0.1 s to load the model).

Each phase runs in its own interpreter (peak RSS is per phase). Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import inspect
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
import corpus  # noqa: E402
from bench_sync import _index_sync, _ms  # noqa: E402

TARGET_P95_MS = 60.0  # issue 25: session search p95 at 250k turns, in-process


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _db_bytes(state: Path) -> int:
    conn = sqlite3.connect(state / "index.sqlite3")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size, pages, free = (
        conn.execute(f"PRAGMA {p}").fetchone()[0]
        for p in ("page_size", "page_count", "freelist_count")
    )
    conn.close()
    return int(page_size) * (int(pages) - int(free))


def _embed(state: Path) -> dict[str, Any]:
    from teamlore.models.embeddings import bundled_embedder
    from teamlore.sessions.index_db import open_index
    from teamlore.sessions.turn_vectors import ASSISTANT_CHARS, USER_CHARS, embed_pending_turns

    started = time.perf_counter()
    embedder = bundled_embedder()
    loaded = time.perf_counter() - started
    conn = open_index(state)
    text_bytes = int(
        conn.execute(
            f"SELECT sum(min(length(user_text), {USER_CHARS}) +"
            f" min(length(assistant_text), {ASSISTANT_CHARS})) FROM turns"
        ).fetchone()[0]
        or 0
    )
    started = time.perf_counter()
    stats = embed_pending_turns(conn, embedder)
    seconds = time.perf_counter() - started
    conn.close()
    return {
        "model_load_s": loaded,
        "embed_s": seconds,
        "embedded": stats.embedded,
        "turns": stats.turns,
        "text_bytes": text_bytes,
        "space": stats.space,
    }


def child_cold(args: dict[str, Any]) -> dict[str, Any]:
    root, state = Path(args["root"]), Path(args["state"])
    shutil.rmtree(state, ignore_errors=True)
    synced = _index_sync(root, state, ["codex", "claude"])
    before = _db_bytes(state)
    embedded = _embed(state)
    after = _db_bytes(state)
    return {**synced, **embedded, "db_before": before, "db_after": after, "rss": _rss_mib()}


def child_embed(args: dict[str, Any]) -> dict[str, Any]:
    state = Path(args["state"])
    before = _db_bytes(state)
    embedded = _embed(state)
    return {**embedded, "db_before": before, "db_after": _db_bytes(state), "rss": _rss_mib()}


def child_search(args: dict[str, Any]) -> dict[str, Any]:
    if args.get("src"):  # another checkout's code (`--versus`)
        sys.path.insert(0, str(args["src"]))
    from teamlore.models.embeddings import bundled_embedder
    from teamlore.sessions.index_db import open_index
    from teamlore.sessions.queries import search_turns
    from teamlore.sessions.turn_vectors import embed_pending_turns

    conn = open_index(Path(args["state"]))  # this tree's migrations
    embedder = bundled_embedder()
    # what this tree's `teamlore sync` leaves of the vectors it finds (its block upkeep),
    # untimed: nothing to embed
    embed_pending_turns(conn, embedder)
    # where `sessions search` keeps the reversed dictionary (an English query over Chinese
    # turns), when the tree has one (a `--versus` tree may predate it)
    cache = Path(args["state"]) / "models"
    hybrid = {"embedder": embedder}
    if "model_cache" in inspect.signature(search_turns).parameters:
        hybrid["model_cache"] = cache
    queries = corpus.search_queries(int(args["queries"]), seed=int(args["seed"]))
    for _, text in queries[:10]:  # warm the page cache a little
        search_turns(conn, text, **hybrid)  # type: ignore[arg-type]
    timings: dict[str, list[float]] = {"lexical": [], "hybrid": [], "hybrid+provider": []}
    cpu: dict[str, list[float]] = {way: [] for way in timings}
    hits: list[list[tuple[str, int]]] = []
    vector_hits = 0
    for number, (_kind, text) in enumerate(queries):
        for way, kwargs in (
            ("lexical", {}),
            ("hybrid", hybrid),
            ("hybrid+provider", {**hybrid, "provider": ("codex", "claude")[number % 2]}),
        ):
            started, cpu_started = time.perf_counter(), time.process_time()
            found = search_turns(conn, text, **kwargs)  # type: ignore[arg-type]
            timings[way].append(time.perf_counter() - started)
            cpu[way].append(time.process_time() - cpu_started)
            hits.append(
                [
                    (h["sessionKey"], h["turn"], h["score"], h["snippet"], h["matchedBy"])
                    for h in found.hits
                ]
            )
            if way == "hybrid":
                vector_hits += sum("vector" in h["matchedBy"] for h in found.hits)
    turns = int(conn.execute("SELECT count(*) FROM turns").fetchone()[0])
    conn.close()
    return {
        "turns": turns,
        "queries": len(queries),
        "ms": {way: _ms(values) for way, values in timings.items()},
        "cpu_ms": {way: _ms(values) for way, values in cpu.items()},
        "hits": hits,
        "vector_hits_per_query": vector_hits / max(len(queries), 1),
        "rss": _rss_mib(),
    }


CHILDREN = {"cold": child_cold, "embed": child_embed, "search": child_search}


def run_child(phase: str, **args: Any) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", phase],
        input=orjson.dumps(args),
        capture_output=True,
        cwd=REPO,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"phase {phase} failed:\n{proc.stderr.decode()[-3000:]}")
    result: dict[str, Any] = orjson.loads(proc.stdout.splitlines()[-1])
    return result


def mib(n: float) -> float:
    return n / (1 << 20)


def phase_cold(args: argparse.Namespace, work: Path) -> None:
    root = work / f"tv-cold-{args.mib:g}mib-s{args.seed}"
    if not (root / ".complete").exists():
        shutil.rmtree(root, ignore_errors=True)
        corpus.generate(root / "home", seed=args.seed, mib=args.mib)
        (root / ".complete").write_text("ok\n")
    r = run_child("cold", root=str(root / "home"), state=str(root / "state"))
    added = r["embed_s"] / r["seconds"]
    per_1k = (r["db_after"] - r["db_before"]) / max(r["turns"], 1) * 1000
    print(
        f"[cold] {mib(r['bytes_read']):.1f} MiB, {r['turns']} turns: cold sync {r['seconds']:.2f} s"
        f" ({mib(r['bytes_read']) / r['seconds']:.1f} MiB/s); embedding {r['embedded']} turns"
        f" {r['embed_s']:.2f} s = +{added * 100:.1f} % of the cold sync"
        f" (model load {r['model_load_s']:.2f} s, once per process)"
    )
    print(
        f"       embedding throughput {r['embedded'] / r['embed_s']:.0f} turns/s,"
        f" {mib(r['text_bytes']) / r['embed_s']:.2f} MiB/s of embedded text"
        f" ({r['text_bytes'] / max(r['turns'], 1):.0f} chars per turn);"
        f" vectors add {per_1k / 1024:.0f} KiB per 1k turns"
        f" (index {mib(r['db_before']):.1f} → {mib(r['db_after']):.1f} MiB); peak RSS"
        f" {r['rss']:.0f} MiB"
    )


def phase_search(args: argparse.Namespace, work: Path) -> None:
    state = work / f"tv-search-{args.search_turns}-s{args.seed}"
    if not (state / ".complete").exists():
        shutil.rmtree(state, ignore_errors=True)
        state.mkdir(parents=True)
        if args.search_index:
            shutil.copyfile(args.search_index, state / "index.sqlite3")
        else:
            home = work / f"tv-search-corpus-{args.search_turns}-s{args.seed}"
            shutil.rmtree(home, ignore_errors=True)
            corpus.generate(home, seed=args.seed, turns=args.search_turns, profile="lean")
            _index_sync(home, state, ["codex", "claude"])
        r = run_child("embed", state=str(state))
        (state / ".complete").write_text("ok\n")
        per_1k = (r["db_after"] - r["db_before"]) / max(r["turns"], 1) * 1000
        print(
            f"[embed] {r['embedded']} of {r['turns']} turns in {r['embed_s']:.0f} s"
            f" ({r['embedded'] / r['embed_s']:.0f} turns/s); vectors add {per_1k / 1024:.0f} KiB"
            f" per 1k turns (index {mib(r['db_before']):.0f} → {mib(r['db_after']):.0f} MiB);"
            f" peak RSS {r['rss']:.0f} MiB"
        )
    trees = [("", "")] + ([(" [versus]", str(args.versus.resolve()))] if args.versus else [])
    results: dict[str, list[dict[str, Any]]] = {label: [] for label, _src in trees}
    # each tree searches its own copy of the index, migrated and kept by its own code: a tree
    # of another schema would refuse (or change) the other's (build it with the older tree's
    # code: PYTHONPATH=<older tree>/src)
    copies = {label: _tree_copy(state, n) for n, (label, _src) in enumerate(trees)}
    # interleaved, and each round in the other order (ABBA): both trees see the same load, and
    # neither always runs first (with a fixed order the first tree's CPU p50 read 11-18 % higher
    # than the second's with the same code on both sides)
    for round_ in range(args.rounds):
        for label, src in trees if round_ % 2 == 0 else trees[::-1]:
            results[label].append(
                run_child(
                    "search",
                    state=str(copies[label]),
                    queries=args.queries,
                    seed=args.seed,
                    src=src,
                )
            )
    first = results[""][0]
    print(f"[search] {first['turns']} turns, {first['queries']} queries each way (in-process):")
    for label, runs in results.items():
        for way in first["ms"]:
            p50 = statistics.median(r["ms"][way]["p50"] for r in runs)
            p95 = statistics.median(r["ms"][way]["p95"] for r in runs)
            cpu50 = statistics.median(r["cpu_ms"][way]["p50"] for r in runs)
            cpu95 = statistics.median(r["cpu_ms"][way]["p95"] for r in runs)
            verdict = "met" if p95 <= TARGET_P95_MS else "NOT met"
            print(
                f"    {way + label:26} wall p50 {p50:6.1f} / p95 {p95:6.1f} ms; CPU p50"
                f" {cpu50:6.1f} / p95 {cpu95:6.1f} ms  (target wall p95 <= {TARGET_P95_MS:g} ms:"
                f" {verdict})"
            )
    if args.versus:
        pairs = list(zip(first["hits"], results[" [versus]"][0]["hits"], strict=True))
        same = sum([h[:2] for h in a] == [h[:2] for h in b] for a, b in pairs)
        whole = sum(a == b for a, b in pairs)
        print(
            f"    hit lists identical to --versus: {same} of {len(pairs)} searches (session key"
            f" and turn of each hit), {whole} with their scores, snippets and matchedBy too"
        )
    print(
        f"    vector-found hits per hybrid query: {first['vector_hits_per_query']:.1f};"
        f" peak RSS {first['rss']:.0f} MiB (medians over {args.rounds} round(s))"
    )
    versus = f" --versus {args.versus}" if args.versus else ""
    print(
        f"    (command: python bench/bench_turn_vectors.py --phases search --search-turns"
        f" {args.search_turns} --queries {args.queries} --rounds {args.rounds}{versus})"
    )


def _tree_copy(state: Path, number: int) -> Path:
    """A fresh copy of the built state directory for the tree numbered `number`."""
    copy = state.with_name(f"{state.name}-tree{number}")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(state, copy)
    return copy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child")
    parser.add_argument("--mib", type=float, default=50)
    parser.add_argument("--search-turns", type=int, default=250_000)
    parser.add_argument("--search-index", type=Path)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--phases", default="cold,search")
    parser.add_argument("--rounds", type=int, default=1, help="search runs, interleaved")
    parser.add_argument(
        "--versus",
        type=Path,
        help="another checkout's src/ (e.g. ../main/src): its searches run interleaved with ours",
    )
    parser.add_argument("--workdir", type=Path, default=REPO / ".bench")
    args = parser.parse_args(argv)
    if args.child:
        result = CHILDREN[args.child](orjson.loads(sys.stdin.buffer.read()))
        sys.stdout.buffer.write(orjson.dumps(result) + b"\n")
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"turn vectors benchmark: load average {load} (a loaded machine lowers every figure)")
    phases = args.phases.split(",")
    if "cold" in phases:
        phase_cold(args, args.workdir)
    if "search" in phases:
        phase_search(args, args.workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
