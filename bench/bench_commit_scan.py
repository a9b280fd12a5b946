"""Commit scan throughput on a generated repository.

Builds a repository of N commits with `git fast-import` (each commit changes 1-3 of 200 files
in 20 directories, every 50th is a rename), registers it in a fresh index DB and prints:
full scan commits/s, a no-op rescan, and an incremental scan after one new commit.

    .venv/bin/python bench/bench_commit_scan.py [--commits 3000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

from teamlore.repo.binding import register_repository
from teamlore.repo.commits import scan_commits
from teamlore.sessions.index_db import open_index


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull})
    return env


def generate(root: Path, commits: int) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=_env())
    stream: list[bytes] = []
    base = 1_700_000_000
    for n in range(commits):
        message = f"commit {n}".encode()
        stream.append(b"commit refs/heads/main\n")
        stamp = f"Bench <bench@example.invalid> {base + n * 60} +0000\n".encode()
        stream.append(b"author " + stamp + b"committer " + stamp)
        stream.append(b"data %d\n%s\n" % (len(message), message))
        for k in range(1 + n % 3):
            path = f"dir{(n + k) % 20}/file{(n * 7 + k) % 200}.txt"
            body = f"{n}:{k}\n".encode()
            stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(body), body))
        if n % 50 == 49:
            stream.append(f"R dir{n % 20}/file{(n * 7) % 200}.txt moved/m{n}.txt\n".encode())
        stream.append(b"\n")
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=root,
        input=b"".join(stream),
        check=True,
        env=_env(),
    )
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=root, check=True, env=_env())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "repo", Path(tmp) / "state"
        home.mkdir(mode=0o700)
        generate(root, args.commits)
        conn = open_index(home)
        identity = register_repository(conn, root, home)

        start = time.perf_counter()
        full = scan_commits(conn, identity, max_commits=args.commits + 10)
        full_s = time.perf_counter() - start
        start = time.perf_counter()
        noop = scan_commits(conn, identity)
        noop_s = time.perf_counter() - start

        (root / "new.txt").write_text("new\n")
        subprocess.run(["git", "add", "new.txt"], cwd=root, check=True, env=_env())
        subprocess.run(
            ["git", "-c", "user.name=B", "-c", "user.email=b@x.invalid", "commit", "-qm", "new"],
            cwd=root,
            check=True,
            env=_env(),
        )
        start = time.perf_counter()
        incremental = scan_commits(conn, identity)
        incremental_s = time.perf_counter() - start
        files = conn.execute("SELECT count(*) FROM commit_files").fetchone()[0]
        conn.close()

    print(
        f"full scan:        {full.commits_inserted} commits, {files} changed paths"
        f" in {full_s:.3f} s -> {full.commits_inserted / full_s:,.0f} commits/s"
    )
    print(f"unchanged rescan: changed={noop.changed} in {noop_s * 1000:.1f} ms")
    print(
        f"incremental scan: read {incremental.commits_read} commit(s)"
        f" in {incremental_s * 1000:.1f} ms"
        f" ({full_s / incremental_s:,.0f}x faster than the full scan)"
    )


if __name__ == "__main__":
    main()
