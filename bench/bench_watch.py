"""`teamlore watch` at rest and on a change: its idle CPU, and how long from a turn appended to a
session file to the end of the sync it starts.

    .venv/bin/python bench/bench_watch.py [--idle 20] [--appends 5]

Copies the real Claude Code sessions of the shared fixtures to a temporary folder, syncs them,
starts `teamlore watch` on them (`--min-interval 0`) and reads its JSON log. See docs/watch.md,
"Keeping the index fresh"; the whole-process figures of the commands it answers are
`bench_cli.py --warm`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import corpus  # noqa: E402
from bench_cli import FIXTURES, child_env, server_cpu, teamlore_exe, user_state  # noqa: E402


def synced(log: Path) -> int:
    return log.read_text().count('"synced"')


def wait_for_sync(log: Path, count: int, server: subprocess.Popen[bytes]) -> None:
    while synced(log) < count:
        if server.poll() is not None:
            raise SystemExit(f"teamlore watch exited: {log.read_text()}")
        time.sleep(0.005)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=float, default=20.0, help="seconds of idle CPU measured")
    parser.add_argument("--appends", type=int, default=5)
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"bench_watch: load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="tl-watch-") as tmp:
        work = Path(tmp)
        sessions = work / "claude"
        shutil.copytree(FIXTURES / "sessions" / "claude", sessions)
        env = child_env(work / "home", work, BENCH_DIR.parent / "src")
        state = user_state(work / "home")  # where a user's teamlore keeps it
        exe = teamlore_exe()
        sync = [exe, "sync", "--source", f"claude={sessions}", "--format", "json"]
        subprocess.run(sync, env=env, check=True, stdout=subprocess.DEVNULL)
        (state / "config.toml").write_text(f'[sources]\nclaude = ["{sessions}"]\n')
        log = work / "watch.log"
        with log.open("wb") as out:
            watch = [exe, "watch", "--format", "json", "--min-interval", "0"]
            server = subprocess.Popen(watch, env=env, stdout=out, stderr=out)
        try:
            wait_for_sync(log, 1, server)
            before = server_cpu(server.pid)
            time.sleep(args.idle)
            idle = server_cpu(server.pid) - before
            print(f"  idle CPU: {idle:.3f} s in {args.idle:g} s ({idle / args.idle:.2%})")
            files = sorted(sessions.rglob("*.jsonl"))
            seconds = []
            for n in range(args.appends):
                count = synced(log)
                started = time.perf_counter()
                at_ms = corpus.BASE_EPOCH_MS + 10**10 + n * 60_000
                corpus.append_turn(files[n % len(files)], f"zqwatch{n}", at_ms=at_ms)
                wait_for_sync(log, count + 1, server)
                seconds.append(time.perf_counter() - started)
                time.sleep(0.5)
            print(
                f"  append -> synced: p50 {statistics.median(seconds) * 1000:.0f} ms, max"
                f" {max(seconds) * 1000:.0f} ms over {len(seconds)} appends (watchfiles groups"
                " writes for 200 ms)"
            )
        finally:
            server.terminate()
            server.wait(timeout=60)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
