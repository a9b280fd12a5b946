"""Session → worktree mapping (runs on every sync): sessions per second and the cost of the
per-sync git reads, on an index of N generated sessions and R registered real repositories.

Sessions are a mix of what real disks hold: a quarter inside a registered worktree, a quarter
recorded on Windows with the remote Codex records, a quarter on another machine's home matched
by a path alias, a quarter in folders no repository owns.

    .venv/bin/python bench/bench_session_mapping.py [--sessions 20000] [--repositories 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from teamlore.core import db
from teamlore.repo.binding import register_repository
from teamlore.repo.worktrees import map_sessions, registered_worktrees
from teamlore.sessions.index_db import open_index


def _git(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull})
    subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=20000)
    parser.add_argument("--repositories", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = base / "state"
        home.mkdir(mode=0o700)
        conn = open_index(home)
        names = []
        for n in range(args.repositories):
            root = base / "src" / f"proj{n}"
            root.mkdir(parents=True)
            _git(root, "init", "-q")
            _git(root, "remote", "add", "origin", f"git@github.com:team/proj{n}.git")
            register_repository(conn, root, home)
            names.append(root)
        with db.write_tx(conn):
            for i in range(args.sessions):
                n = i % args.repositories
                kind = i % 4
                cwd, remote = {
                    0: (f"{names[n]}/pkg/sub", None),
                    1: (f"C:\\Users\\me\\code\\proj{n}", f"https://github.com/team/proj{n}"),
                    2: (f"/Users/me/src/proj{n}/app", None),
                    3: (f"/nowhere/else/{i}", None),
                }[kind]
                conn.execute(
                    "INSERT INTO sessions (session_key, provider, provider_session_id, cwd,"
                    " git_remote) VALUES (?, 'codex', ?, ?, ?)",
                    (f"k{i}", f"p{i}", cwd, remote),
                )
        aliases = {"/Users/me/src": str(base / "src")}
        started = time.perf_counter()
        registered_worktrees(conn)
        git_reads = time.perf_counter() - started
        for label in ("first (every session changes)", "again (no change)"):
            started = time.perf_counter()
            result = map_sessions(conn, aliases=aliases)
            elapsed = time.perf_counter() - started
            print(
                f"{label}: {args.sessions} sessions in {elapsed:.2f} s"
                f" ({args.sessions / elapsed:,.0f} sessions/s); mapped {result.mapped}"
                f" {result.by}, unmapped {result.unmapped}"
            )
        print(f"git remote reads for {args.repositories} worktrees: {git_reads * 1000:.0f} ms")
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
