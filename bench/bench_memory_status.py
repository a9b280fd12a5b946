"""Benchmark: `memory status` on a large tree, with and without kept lint results.

`memory status` lints the whole memory tree on every call; `LintCache`
(memory/store/lint_cache.py) keeps each file's findings by digest, so a status run lints only new
and edited files. Prints, at --entries files (default 4,000, near the 4,096 capacity):

- linting the tree without kept results (`lint_tree`), seconds (min of --rounds);
- `memory_status` the first time (lints everything and keeps it), then with everything kept,
  then after editing 1 % of the entries;
- the whole `teamlore memory status` process, first and later runs (p50 of --rounds);

and the ratio kept / not kept. A script, not a test:

    .venv/bin/python bench/bench_memory_status.py [--entries 4000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_memory_projection import Corpus, entry_text, make_tree
from teamlore.memory.status import memory_status
from teamlore.memory.store.lint import lint_tree
from teamlore.memory.store.state_db import open_state_db

REPO = "a1" * 12
WORKTREE = "b2" * 12


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def status_once(home: Path, root: Path) -> float:
    conn = open_state_db(home)
    try:
        return timed(
            lambda: memory_status(
                conn, repository_key=REPO, worktree_key=WORKTREE, worktree_root=root
            )
        )
    finally:
        conn.close()


def cli_status(repo: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        ["teamlore", "memory", "status"], cwd=repo, env=env, check=True, capture_output=True
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "repo"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        corpus = Corpus(random.Random(7), dense=False)
        make_tree(root, args.entries, corpus)
        home = Path(scratch) / "state"

        plain = min(timed(lambda: lint_tree(root)) for _ in range(args.rounds))
        first = status_once(home, root)
        kept = statistics.median(status_once(home, root) for _ in range(args.rounds))
        edited = []
        entries = root / ".threadshare/memory/entries"
        for round_ in range(args.rounds):
            for i in range(round_, args.entries, 100):
                entry_id = f"entry-{i:05d}"
                (entries / f"{entry_id}.md").write_text(entry_text(entry_id, corpus))
            edited.append(status_once(home, root))

        env = {**os.environ, "TEAMLORE_HOME": str(Path(scratch) / "cli-state")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cli_first = cli_status(root, env)
        cli_later = statistics.median(cli_status(root, env) for _ in range(args.rounds))

    per_file = plain / args.entries * 1e3
    print(f"memory status at {args.entries} entry files")
    print(f"  lint_tree, nothing kept:         {plain:7.3f} s ({per_file:.2f} ms a file)")
    print(f"  memory_status, first:            {first:7.3f} s (lints all, keeps the results)")
    print(
        f"  memory_status, all kept:         {kept:7.3f} s (ratio to lint_tree {kept / plain:.3f})"
    )
    print(f"  memory_status, 1 % edited:       {statistics.median(edited):7.3f} s")
    print(f"  `teamlore memory status`, first: {cli_first:7.3f} s")
    print(f"  `teamlore memory status`, later: {cli_later:7.3f} s (p50 of {args.rounds})")


if __name__ == "__main__":
    main()
