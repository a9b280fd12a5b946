"""Lint reads a memory file as safe_write reads it: a FIFO swapped in for a file after lint
checked its kind is never waited on but named, in the tree and on the command line. The real
CLI stands still before each read (a pausepoint) while the test swaps the file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from support import git
from teamlore.memory.store import layout

REFERENCE = Path(__file__).parents[1] / "data" / "reference"
# the first file the tree lint reads (no doctrine.md or consolidated.json sorts before entries/)
FIRST_ENTRY = min(f"{layout.ENTRIES_DIR}/{p.name}" for p in (REFERENCE / "entries").iterdir())


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    layout.init_tree(root)
    for folder in ("entries", "scenes"):
        for source in sorted((REFERENCE / folder).iterdir()):
            shutil.copyfile(source, root / layout.MEMORY_ROOT / folder / source.name)
    return Path(os.path.realpath(root))


def lint_swapping_the_first_read(
    repo: Path, swap: Callable[[], None], *args: str
) -> subprocess.CompletedProcess[str]:
    """`memory lint --format json ARGS` of the real CLI, with `swap` run while it stands before
    its first read; killed after 60 seconds (TimeoutExpired)."""
    flag = repo.parent / "paused"
    env = {
        **os.environ,
        "TEAMLORE_HOME": str(repo.parent / "state"),
        "TEAMLORE_PAUSEPOINT": f"lint.before-read={flag}",
    }
    command = [sys.executable, "-m", "teamlore.cli.main", "memory", "lint", "--format", "json"]
    with subprocess.Popen(
        [*command, *args], cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as lint:
        deadline = time.monotonic() + 60
        swapped = False
        while lint.poll() is None and time.monotonic() < deadline:
            if flag.exists():  # it stands still before a read until the flag is gone
                if not swapped:
                    swap()
                    swapped = True
                flag.unlink()
            time.sleep(0.01)
        if lint.poll() is None:
            lint.kill()
            raise subprocess.TimeoutExpired(lint.args, 60)
        stdout, stderr = lint.communicate()
    assert swapped
    return subprocess.CompletedProcess(lint.args, lint.returncode, stdout.decode(), stderr.decode())


def fifo_in_place_of(path: Path) -> Callable[[], None]:
    def swap() -> None:
        path.unlink()
        os.mkfifo(path)

    return swap


def test_an_entry_swapped_for_a_fifo_during_the_tree_lint_is_named_not_waited_on(
    repo: Path,
) -> None:
    done = lint_swapping_the_first_read(repo, fifo_in_place_of(repo / FIRST_ENTRY))

    assert done.returncode == 1, done.stderr
    findings = orjson.loads(done.stdout)["findings"]
    assert [(f["rule"], f["severity"]) for f in findings if f["file"] == FIRST_ENTRY] == [
        ("tree.not-a-file", "block")
    ]


def test_a_file_given_to_lint_swapped_for_a_fifo_is_refused_not_waited_on(repo: Path) -> None:
    entry = repo / FIRST_ENTRY
    done = lint_swapping_the_first_read(repo, fifo_in_place_of(entry), str(entry))

    assert done.returncode == 2, done.stderr
    error = orjson.loads(done.stdout)["error"]
    assert (error["code"], error["message"]) == (
        "INVALID_ARGUMENT",
        f"{FIRST_ENTRY}: not a regular file",
    )
