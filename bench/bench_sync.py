"""L0 session-index benchmark: prints figures, never asserts.

    .venv/bin/python bench/bench_sync.py [--mib 200] [--search-turns 250000] [--files 10000]

Phases (each measured in its own subprocess, so peak RSS is per phase):

1. cold     Indexer over a fresh state dir, throughput in MiB/s of raw JSONL, peak RSS.
2. peer     the same Claude Code bytes through teamlore and through claude-mem 1.0.3.
3. append   append a turn to one file of the synced cold corpus, sync, search its unique token.
4. noop     resync of N unchanged small files.
5. search   turn search over a corpus of --search-turns turns (generated once, cached in .bench/).

See bench/README.md for what each figure means and the targets.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import os
import pstats
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import corpus  # noqa: E402

PEER_PACKAGE = "claude-mem==1.0.3"
# the peer is a PyPI package, not the Claude Code plugin that shares its name
PEER_NOTE = (
    "claude-mem = the PyPI package `claude-mem` 1.0.3 (module `session_recall`), not the Claude"
    " Code plugin of the same name (which has no offline indexer)"
)
TARGETS = {
    "cold_mib_s": (">=", 60.0, "cold sync throughput (MiB/s)"),
    "noop_s": ("<=", 0.25, "no-op resync of {files} files (s)"),
    "append_p95_ms": ("<=", 500.0, "append-to-searchable p95 (ms)"),
    "search_p95_ms": ("<=", 50.0, "turn search p95 at {turns} turns (ms)"),
    "peak_rss_mib": ("<=", 150.0, "peak RSS, worst teamlore phase (MiB)"),
}


# ----------------------------------------------------------------------------------------------
# child side: one phase in this process, result as one JSON line on stdout


def _peak_rss_mib() -> float:
    """ru_maxrss of this process (Linux: KiB). A child's ru_maxrss starts at its parent's RSS at
    fork time, so the parent of the phases stays small (corpora are generated in children)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _sources(root: Path, providers: list[str]) -> list[Any]:
    from teamlore.sessions.indexer import Source

    roots = corpus.source_roots(root)
    return [Source(p, roots[p]) for p in providers]


def _index_sync(root: Path, state: Path, providers: list[str]) -> dict[str, Any]:
    """open_index + Indexer.sync, as `teamlore sync` does it minus lock and delivery trace."""
    from teamlore.sessions.index_db import open_index
    from teamlore.sessions.indexer import Indexer
    from teamlore.sessions.providers import get_adapter

    started = time.perf_counter()
    conn = open_index(state)
    stats = Indexer(conn, {p: get_adapter(p) for p in providers}, home=state).sync(
        _sources(root, providers)
    )
    conn.close()
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "files_seen": stats.files_seen,
        "files_changed": stats.files_changed,
        "sessions": stats.sessions,
        "turns": stats.turns,
        "bytes_read": stats.bytes_read,
        "diagnostics": stats.diagnostic_count,
        "first_diagnostics": [d.to_json() for d in stats.diagnostics[:3]],
    }


def child_noop(args: dict[str, Any]) -> dict[str, Any]:
    """A no-op resync, `--reps` times, each after the floor it is held to in the same process:
    walk the roots (`os.scandir`, as discovery does) and `stat` each file, nothing else. Wall
    and CPU seconds (CPU is what a loaded, shared machine distorts least); medians."""
    root, state = Path(args["root"]), Path(args["state"])
    floor_wall: list[float] = []
    floor_cpu: list[float] = []
    sync_wall: list[float] = []
    sync_cpu: list[float] = []
    result: dict[str, Any] = {}
    for _ in range(int(args["reps"])):
        wall, cpu = time.perf_counter(), time.process_time()
        files = _walk_and_stat([str(s.root) for s in _sources(root, args["providers"])])
        floor_wall.append(time.perf_counter() - wall)
        floor_cpu.append(time.process_time() - cpu)
        cpu = time.process_time()
        result = _index_sync(root, state, args["providers"])
        sync_cpu.append(time.process_time() - cpu)
        sync_wall.append(result["seconds"])
    result.update(
        seconds=statistics.median(sync_wall),
        cpu_seconds=statistics.median(sync_cpu),
        floor_seconds=statistics.median(floor_wall),
        floor_cpu_seconds=statistics.median(floor_cpu),
        floor_files=files,
        peak_rss_mib=_peak_rss_mib(),
    )
    return result


def _walk_and_stat(roots: list[str]) -> int:
    """The least a no-op resync can do: list every folder under the roots and stat each file."""
    count = 0
    folders = list(roots)
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                elif entry.name.endswith(".jsonl"):
                    os.stat(entry.path)
                    count += 1
    return count


def _index_contents(state: Path) -> dict[str, int]:
    conn = sqlite3.connect(state / "index.sqlite3")
    try:
        counts = {
            table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in ("sessions", "turns", "tool_uses", "file_touches", "observed_commits")
        }
        counts["tool_uses_with_exit_code"] = int(
            conn.execute("SELECT count(*) FROM tool_uses WHERE exit_code IS NOT NULL").fetchone()[0]
        )
        counts["tool_payload_bytes"] = int(
            conn.execute("SELECT coalesce(sum(result_bytes), 0) FROM tool_uses").fetchone()[0]
        )
    finally:
        conn.close()
    counts["db_bytes"] = sum(p.stat().st_size for p in state.glob("index.sqlite3*"))
    return counts


def child_sync(args: dict[str, Any]) -> dict[str, Any]:
    root, state = Path(args["root"]), Path(args["state"])
    if args.get("fresh"):
        shutil.rmtree(state, ignore_errors=True)
    profile_top = int(args.get("profile_top") or 0)
    profiler = cProfile.Profile() if profile_top else None
    if profiler:
        profiler.enable()
    result = _index_sync(root, state, args["providers"])
    if profiler:
        profiler.disable()
        result["profile"] = _profile_text(profiler, profile_top)
    result["peak_rss_mib"] = _peak_rss_mib()
    if args.get("contents"):
        result["contents"] = _index_contents(state)
    return result


def _profile_text(profiler: cProfile.Profile, top: int) -> str:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def child_append(args: dict[str, Any]) -> dict[str, Any]:
    """Append a turn, sync, search for its token: the time a person waits until a turn they just
    finished is findable. Files alternate between providers."""
    from teamlore.sessions.index_db import open_index
    from teamlore.sessions.queries import search_turns

    root, state = Path(args["root"]), Path(args["state"])
    files = [Path(p) for p in args["files"]]
    totals: list[float] = []
    syncs: list[float] = []
    searches: list[float] = []
    misses = 0
    for rep in range(int(args["reps"])):
        path = files[rep % len(files)]
        token = f"appendprobe{rep}x{os.getpid()}"
        started = time.perf_counter()
        corpus.append_turn(path, token, at_ms=corpus.BASE_EPOCH_MS + 400 * 86_400_000 + rep)
        _index_sync(root, state, ["codex", "claude"])
        synced = time.perf_counter()
        conn = open_index(state)
        hits = search_turns(conn, token, limit=5).hits
        conn.close()
        done = time.perf_counter()
        misses += 0 if hits else 1
        totals.append(done - started)
        syncs.append(synced - started)
        searches.append(done - synced)
    result: dict[str, Any] = {
        "total_ms": _ms(totals),
        "sync_ms": _ms(syncs),
        "search_ms": _ms(searches),
        "misses": misses,
        "peak_rss_mib": _peak_rss_mib(),
    }
    result["operation"] = _append_via_operation(root, state, files, int(args["reps"]))
    return result


def _append_via_operation(root: Path, state: Path, files: list[Path], reps: int) -> Any:
    """The same through the operation registry (`teamlore sync` / `sessions search` minus the
    CLI process): adds the sync lock, config, repository mapping and delivery-trace update."""
    try:
        from teamlore.ops.registry import OpContext, run_operation

        roots = corpus.source_roots(root)
        sources = [f"{p}={r}" for p, r in roots.items()]
        ctx = OpContext(cwd=REPO, home=state)
        totals: list[float] = []
        misses = 0
        for rep in range(reps):
            token = f"opprobe{rep}x{os.getpid()}"
            started = time.perf_counter()
            corpus.append_turn(
                files[rep % len(files)], token, at_ms=corpus.BASE_EPOCH_MS + 401 * 86_400_000 + rep
            )
            run_operation("sync", ctx, {"sources": sources})
            hits = run_operation("sessions.search", ctx, {"query": token, "limit": 5})["hits"]
            totals.append(time.perf_counter() - started)
            misses += 0 if hits else 1
        return {"total_ms": _ms(totals), "misses": misses}
    except Exception as exc:  # a colleague's module mid-change must not sink the benchmark
        return {"error": f"{type(exc).__name__}: {exc}"}


def child_search(args: dict[str, Any]) -> dict[str, Any]:
    from teamlore.sessions import queries as session_queries
    from teamlore.sessions.index_db import open_index
    from teamlore.sessions.queries import search_turns

    # the time the unfiltered searches spend cutting snippets (docs/sessions.md, "Passages")
    snippet_seconds = [0.0]
    cut_snippet = session_queries._snippet

    def timed_snippet(*args: Any, **kwargs: Any) -> str:
        started = time.process_time()
        try:
            return cut_snippet(*args, **kwargs)
        finally:
            snippet_seconds[0] += time.process_time() - started

    state = Path(args["state"])
    conn = open_index(state)
    queries = corpus.search_queries(int(args["queries"]), seed=int(args["seed"]))
    for _, text in queries[:10]:  # warm the page cache and statement cache a little
        search_turns(conn, text)
    plain: list[float] = []
    filtered: list[float] = []
    by_kind: dict[str, list[float]] = {}
    hit_counts: dict[str, list[int]] = {}
    cpu_started = time.process_time()
    for number, (kind, text) in enumerate(queries):
        started = time.perf_counter()
        session_queries._snippet = timed_snippet  # type: ignore[assignment]
        hits = search_turns(conn, text).hits
        session_queries._snippet = cut_snippet  # type: ignore[assignment]
        elapsed = time.perf_counter() - started
        plain.append(elapsed)
        by_kind.setdefault(kind, []).append(elapsed)
        hit_counts.setdefault(kind, []).append(len(hits))
        provider = ("codex", "claude")[number % 2]
        started = time.perf_counter()
        search_turns(conn, text, provider=provider)
        filtered.append(time.perf_counter() - started)
    turns = int(conn.execute("SELECT count(*) FROM turns").fetchone()[0])
    conn.close()
    return {
        "turns": turns,
        "queries": len(queries),
        "plain_ms": _ms(plain),
        "provider_ms": _ms(filtered),
        "by_kind": {
            kind: {
                **_ms(values),
                "with_hits": sum(1 for h in hit_counts[kind] if h),
                "n": len(values),
            }
            for kind, values in by_kind.items()
        },
        "peak_rss_mib": _peak_rss_mib(),
        "cpu_seconds": time.process_time() - cpu_started,
        "snippet_cpu_seconds": snippet_seconds[0],
    }


def child_generate(args: dict[str, Any]) -> dict[str, Any]:
    root = Path(args["root"])
    shutil.rmtree(root, ignore_errors=True)
    started = time.perf_counter()
    if args.get("small_files"):
        stats = corpus.generate_small_files(root, int(args["small_files"]), seed=args["seed"])
    else:
        stats = corpus.generate(
            root,
            seed=args["seed"],
            mib=args.get("mib"),
            turns=args.get("turns"),
            profile=args.get("profile", "full"),
        )
    return {
        **stats.to_json(),
        "seconds": time.perf_counter() - started,
        "paths": [str(p) for p in stats.paths] if args.get("paths") else [],
    }


CHILDREN: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "generate": child_generate,
    "sync": child_sync,
    "noop": child_noop,
    "append": child_append,
    "search": child_search,
}


def _ms(seconds: list[float]) -> dict[str, float]:
    values = sorted(s * 1000 for s in seconds)
    if not values:
        return {"p50": 0.0, "p95": 0.0, "max": 0.0}
    p95 = (
        statistics.quantiles(values, n=20, method="inclusive")[-1] if len(values) > 1 else values[0]
    )
    return {
        "p50": round(statistics.median(values), 2),
        "p95": round(p95, 2),
        "max": round(values[-1], 2),
    }


# ----------------------------------------------------------------------------------------------
# parent side


def run_child(phase: str, **args: Any) -> dict[str, Any]:
    """Run one phase in a fresh interpreter; returns its result plus the process wall time."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", phase]
    started = time.perf_counter()
    proc = subprocess.run(
        command,
        input=orjson.dumps(args),
        capture_output=True,
        cwd=REPO,
        check=False,
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(
            f"phase {phase} failed (exit {proc.returncode}):\n{proc.stderr.decode()[-3000:]}"
        )
    result: dict[str, Any] = orjson.loads(proc.stdout.splitlines()[-1])
    result["process_seconds"] = wall
    return result


def say(text: str = "") -> None:
    print(text, flush=True)


def mib(n: float) -> float:
    return n / (1 << 20)


def source_digest() -> str:
    """What the cached search index depends on: the L0 code and the analyzer."""
    digest = hashlib.sha256()
    src = REPO / "src" / "teamlore"
    files = [*sorted((src / "sessions").rglob("*.py")), src / "core" / "analyzer.py"]
    for path in files:
        digest.update(path.read_bytes())
    digest.update((BENCH_DIR / "corpus.py").read_bytes())
    return digest.hexdigest()[:12]


def phase_cold(args: argparse.Namespace, work: Path, figures: dict[str, Any]) -> Path:
    home = work / f"cold-{args.mib:g}mib-s{args.seed}"
    stats = run_child("generate", root=str(home), seed=args.seed, mib=args.mib, paths=True)
    say(
        f"corpus: {stats['files']} files, {stats['sessions']} sessions, {stats['turns']} turns, "
        f"{mib(stats['bytes']):.1f} MiB (codex {mib(stats['codexBytes']):.1f}, "
        f"claude {mib(stats['claudeBytes']):.1f}) generated in {stats['seconds']:.1f} s"
    )
    result = run_child(
        "sync",
        root=str(home),
        state=str(work / "state-cold"),
        providers=["codex", "claude"],
        fresh=True,
        contents=True,
        profile_top=args.profile_top,
    )
    throughput = mib(result["bytes_read"]) / result["seconds"]
    figures["cold_mib_s"] = throughput
    figures["rss"]["cold"] = result["peak_rss_mib"]
    say(
        f"[1] cold sync: {mib(result['bytes_read']):.1f} MiB in {result['seconds']:.2f} s = "
        f"{throughput:.1f} MiB/s; {result['turns']} turns "
        f"({result['turns'] / result['seconds']:.0f} turns/s); "
        f"peak RSS {result['peak_rss_mib']:.0f} MiB; "
        f"diagnostics {result['diagnostics']}"
    )
    contents = result["contents"]
    say(
        "    stored: "
        + ", ".join(f"{k}={v}" for k, v in contents.items() if k != "db_bytes")
        + f"; index {mib(contents['db_bytes']):.1f} MiB"
    )
    if result["diagnostics"]:
        say(f"    first diagnostics: {result['first_diagnostics']}")
    if result.get("profile"):
        say("    cProfile of the cold sync (tottime, then cumulative):")
        say(result["profile"])
    figures["cold_home"] = home
    figures["cold_stats"] = stats
    return home


def phase_peer(args: argparse.Namespace, work: Path, figures: dict[str, Any]) -> None:
    say(f"    ({PEER_NOTE})")
    home: Path = figures["cold_home"]
    stats: dict[str, Any] = figures["cold_stats"]
    claude_bytes = stats["claudeBytes"]
    ours = run_child(
        "sync",
        root=str(home),
        state=str(work / "state-claude-only"),
        providers=["claude"],
        fresh=True,
        contents=True,
    )
    ours_inproc = mib(claude_bytes) / ours["seconds"]
    ours_process = mib(claude_bytes) / ours["process_seconds"]
    say(
        f"[5] peer, same {mib(claude_bytes):.1f} MiB of Claude Code JSONL "
        f"({stats['claudeFiles']} files):"
    )
    say(
        f"    teamlore    : {ours['seconds']:.2f} s in-process = {ours_inproc:.1f} MiB/s; "
        f"{ours['process_seconds']:.2f} s whole process = {ours_process:.1f} MiB/s; "
        f"peak RSS {ours['peak_rss_mib']:.0f} MiB"
    )
    contents = ours["contents"]
    say(
        f"                  stores {contents['turns']} turns (full user/assistant text, FTS5 over "
        f"analyzed text incl. CJK bigrams), {contents['tool_uses']} tool uses (input, result "
        f"head/tail, sha256, byte size, exit code for {contents['tool_uses_with_exit_code']}), "
        f"{contents['file_touches']} file touches, {contents['observed_commits']} observed "
        f"commits; index {mib(contents['db_bytes']):.1f} MiB"
    )
    peer = run_peer(work, home)
    if "error" in peer:
        say(f"    claude-mem  : not measured: {peer['error']}")
        return
    peer_rate = mib(claude_bytes) / peer["seconds"]
    say(
        f"    claude-mem  : {peer['seconds']:.2f} s whole process = {peer_rate:.1f} MiB/s; "
        f"peak RSS {peer['peak_rss_mib']:.0f} MiB; exit {peer['exit']}"
    )
    say(
        f"                  stores {peer['counts'].get('cc_turns')} turns (user and assistant "
        f"text cut to 500 chars, tool calls as '[Name]', tool results cut to 200 chars), "
        f"{peer['counts'].get('cc_files')} file paths, {peer['counts'].get('cc_sessions')} "
        f"sessions; FTS5 (default tokenizer); no tool payloads, exit codes, commits or "
        f"subagent files; index {mib(peer['db_bytes']):.1f} MiB"
    )
    say(
        f"    ratio teamlore/claude-mem (whole process, same bytes): "
        f"{ours_process / peer_rate:.2f}x"
    )


def run_peer(work: Path, home: Path) -> dict[str, Any]:
    venv = work / "peer"
    exe = venv / "bin" / "claude-mem"
    if not exe.exists():
        try:
            subprocess.run(
                ["python3", "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300
            )
            subprocess.run(
                [str(venv / "bin" / "pip"), "install", "-q", PEER_PACKAGE],
                check=True,
                capture_output=True,
                timeout=600,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, "stderr", b"") or b""
            return {"error": f"cannot install {PEER_PACKAGE}: {exc} {detail.decode()[-300:]}"}
    peer_home = work / "peer-home"
    shutil.rmtree(peer_home, ignore_errors=True)
    (peer_home / ".claude").mkdir(parents=True)
    (peer_home / ".claude" / "projects").symlink_to(home / "claude" / "projects")
    env = {**os.environ, "HOME": str(peer_home)}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [str(exe), "cc-index", "--rebuild"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    out = (proc.stdout.read() if proc.stdout else b"") + (
        proc.stderr.read() if proc.stderr else b""
    )
    if proc.returncode != 0:
        return {"error": f"claude-mem exited {proc.returncode}: {out.decode()[-500:]}"}
    db = peer_home / ".claude" / ".sr-index.db"
    counts: dict[str, int] = {}
    if db.exists():
        conn = sqlite3.connect(db)
        for table in ("cc_sessions", "cc_turns", "cc_files"):
            counts[table] = int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        conn.close()
    return {
        "seconds": seconds,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "exit": proc.returncode,
        "counts": counts,
        "db_bytes": db.stat().st_size if db.exists() else 0,
    }


def phase_append(args: argparse.Namespace, work: Path, figures: dict[str, Any]) -> None:
    stats: dict[str, Any] = figures["cold_stats"]
    root = Path(stats["root"])
    by_provider = {
        p: [f for f in map(Path, stats["paths"]) if f.relative_to(root).parts[0] == p]
        for p in ("codex", "claude")
    }
    files = [
        str(f)
        for pair in zip(by_provider["codex"], by_provider["claude"], strict=False)
        for f in pair
    ]
    result = run_child(
        "append", root=str(root), state=str(work / "state-cold"), files=files, reps=args.reps
    )
    figures["append_p95_ms"] = result["total_ms"]["p95"]
    figures["rss"]["append"] = result["peak_rss_mib"]
    total, sync, search = result["total_ms"], result["sync_ms"], result["search_ms"]
    say(
        f"[3] append-to-searchable over {stats['files']} synced files, {args.reps} reps: "
        f"p50 {total['p50']:.0f} ms, p95 {total['p95']:.0f} ms, max {total['max']:.0f} ms "
        f"(sync p50 {sync['p50']:.0f} / p95 {sync['p95']:.0f} ms, search p50 "
        f"{search['p50']:.1f} / p95 {search['p95']:.1f} ms); misses {result['misses']}; "
        f"peak RSS {result['peak_rss_mib']:.0f} MiB"
    )
    op = result["operation"]
    if "error" in op:
        say(f"    via the sync/search operations: not measured: {op['error']}")
    else:
        say(
            f"    via the sync/search operations (lock, config, repo mapping, delivery trace): "
            f"p50 {op['total_ms']['p50']:.0f} ms, p95 {op['total_ms']['p95']:.0f} ms; "
            f"misses {op['misses']}"
        )
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import teamlore.cli.main"], check=False, cwd=REPO)
    say(
        f"    (a `teamlore` CLI process adds interpreter start + imports: "
        f"{(time.perf_counter() - started) * 1000:.0f} ms per command)"
    )


def phase_noop(args: argparse.Namespace, work: Path, figures: dict[str, Any]) -> None:
    home = work / f"small-{args.files}-s{args.seed}-g{corpus.GENERATOR_VERSION}"
    marker = home / ".complete"
    if not marker.exists():
        made = run_child("generate", root=str(home), seed=args.seed, small_files=args.files)
        marker.write_text("ok\n")
        say(f"    generated {made['files']} small files in {made['seconds']:.1f} s")
    state = work / "state-noop"
    first = run_child(
        "sync", root=str(home), state=str(state), providers=["codex", "claude"], fresh=True
    )
    again = run_child(
        "noop", root=str(home), state=str(state), providers=["codex", "claude"], reps=args.reps
    )
    figures["noop_s"] = again["seconds"]
    figures["rss"]["noop"] = max(first["peak_rss_mib"], again["peak_rss_mib"])
    say(
        f"[2] no-op resync of {again['files_seen']} unchanged files (median of {args.reps}): "
        f"{again['seconds']:.3f} s in-process, CPU {again['cpu_seconds']:.3f} s; walk + stat "
        f"of the same {again['floor_files']} files {again['floor_seconds']:.3f} s, CPU "
        f"{again['floor_cpu_seconds']:.3f} s; ratio "
        f"{again['seconds'] / again['floor_seconds']:.2f}x wall, "
        f"{again['cpu_seconds'] / again['floor_cpu_seconds']:.2f}x CPU; files re-read "
        f"{again['files_changed']}; first sync of them took {first['seconds']:.1f} s "
        f"({first['files_seen'] / first['seconds']:.0f} files/s); peak RSS "
        f"{figures['rss']['noop']:.0f} MiB"
    )
    say(
        f"    (command: python bench/bench_sync.py --phases noop --files {args.files}"
        f" --reps {args.reps})"
    )


def phase_search(args: argparse.Namespace, work: Path, figures: dict[str, Any]) -> None:
    base = work / f"search-{args.search_turns}-s{args.seed}-g{corpus.GENERATOR_VERSION}"
    home, marker = base / "home", base / ".complete"
    if not marker.exists():
        shutil.rmtree(base, ignore_errors=True)
        made = run_child(
            "generate", root=str(home), seed=args.seed, turns=args.search_turns, profile="lean"
        )
        marker.write_text("ok\n")
        say(
            f"    generated search corpus: {made['files']} files, {made['turns']} turns, "
            f"{mib(made['bytes']):.0f} MiB in {made['seconds']:.0f} s"
        )
    state = base / f"state-{source_digest()}"
    if not (state / ".complete").exists():
        for stale in base.glob("state-*"):
            shutil.rmtree(stale, ignore_errors=True)
        built = run_child(
            "sync", root=str(home), state=str(state), providers=["codex", "claude"], fresh=True
        )
        (state / ".complete").write_text("ok\n")
        figures["rss"]["search-build"] = built["peak_rss_mib"]
        say(
            f"    indexed search corpus: {built['turns']} turns, "
            f"{mib(built['bytes_read']):.0f} MiB "
            f"in {built['seconds']:.0f} s ({mib(built['bytes_read']) / built['seconds']:.1f} MiB/s,"
            f" peak RSS {built['peak_rss_mib']:.0f} MiB, diagnostics {built['diagnostics']})"
        )
    result = run_child("search", state=str(state), queries=args.queries, seed=args.seed)
    figures["search_p95_ms"] = max(result["plain_ms"]["p95"], result["provider_ms"]["p95"])
    figures["rss"]["search"] = result["peak_rss_mib"]
    plain, filtered = result["plain_ms"], result["provider_ms"]
    say(
        f"[4] turn search at {result['turns']} turns, {result['queries']} queries: "
        f"no filter p50 {plain['p50']:.1f} / p95 {plain['p95']:.1f} / max {plain['max']:.0f} ms; "
        f"provider filter p50 {filtered['p50']:.1f} / p95 {filtered['p95']:.1f} / max "
        f"{filtered['max']:.0f} ms; peak RSS {result['peak_rss_mib']:.0f} MiB"
    )
    say(
        f"    CPU of all searches {result['cpu_seconds']:.2f} s, of which snippets of the"
        f" unfiltered ones {result['snippet_cpu_seconds']:.2f} s"
    )
    for kind, row in result["by_kind"].items():
        say(
            f"    {kind:8} n={row['n']:3} with hits {row['with_hits']:3}: p50 {row['p50']:7.1f} ms"
            f"  p95 {row['p95']:7.1f} ms  max {row['max']:7.1f} ms"
        )


def print_targets(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    if figures["rss"]:
        figures["peak_rss_mib"] = max(figures["rss"].values())
    say()
    say("targets (2-core machine):")
    for key, (op, bound, label) in TARGETS.items():
        text = label.format(files=args.files, turns=args.search_turns)
        if key not in figures:
            say(f"  {text:48} not run")
            continue
        value = float(figures[key])
        ok = value >= bound if op == ">=" else value <= bound
        say(f"  {text:48} {value:10.2f}  target {op} {bound:g}  {'pass' if ok else 'MISS'}")
    if figures["rss"]:
        say(
            "  peak RSS by phase (MiB): "
            + ", ".join(f"{k} {v:.0f}" for k, v in figures["rss"].items())
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="teamlore L0 sync/search benchmark")
    parser.add_argument("--mib", type=float, default=200.0, help="cold corpus size")
    parser.add_argument("--search-turns", type=int, default=250_000)
    parser.add_argument("--files", type=int, default=10_000, help="files for the no-op resync")
    parser.add_argument("--reps", type=int, default=20, help="append-to-searchable repetitions")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--phases", default="cold,peer,append,noop,search", help="comma-separated subset"
    )
    parser.add_argument(
        "--profile-top", type=int, default=0, help="cProfile the cold sync; print N rows"
    )
    parser.add_argument("--workdir", type=Path, default=REPO / ".bench")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        payload = orjson.loads(sys.stdin.buffer.read())
        sys.stdout.write(orjson.dumps(CHILDREN[args.child](payload)).decode() + "\n")
        return 0
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    work: Path = args.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    figures: dict[str, Any] = {"rss": {}}
    say(
        f"teamlore L0 benchmark: --mib {args.mib:g} --search-turns {args.search_turns} "
        f"--files {args.files} --seed {args.seed}; {os.cpu_count()} CPUs; "
        f"Python {sys.version.split()[0]}; SQLite {sqlite3.sqlite_version}; load average "
        f"{os.getloadavg()[0]:.2f} (other work on the machine skews every figure)"
    )
    if {"cold", "peer", "append"} & set(phases):
        phase_cold(args, work, figures)
    if "peer" in phases:
        phase_peer(args, work, figures)
    if "append" in phases:
        phase_append(args, work, figures)
    if "noop" in phases:
        phase_noop(args, work, figures)
    if "search" in phases:
        phase_search(args, work, figures)
    print_targets(args, figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
