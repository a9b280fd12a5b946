"""A command started with its standard input closed (`teamlore memory confirm <&-`) answers as
it does with an empty one (`< /dev/null`), never with `AttributeError: 'NoneType' object has no
attribute 'isatty'` (`teamlore.cli.closed_stdin_as_empty`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import initialized_repository

EMPTY_REQUEST = "error INVALID_ARGUMENT: -: standard input is empty"


def closed_stdin(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`teamlore ARGS <&-`, as a shell runs it."""
    exe = shutil.which("teamlore", path=str(Path(sys.executable).parent)) or "teamlore"
    return subprocess.run(
        ["sh", "-c", 'exec "$@" <&-', "sh", exe, *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "code", "stderr"),
    [
        # reaches its operation, which needs a registered worktree (the isatty check came first)
        (("memory", "confirm"), 1, "error REPOSITORY_NOT_REGISTERED: "),
        (("memory", "discard", "--candidate", "nonexist"), 1, "error CANDIDATE_NOT_FOUND: "),
        (("memory", "stage", "--request", "-"), 2, EMPTY_REQUEST),
        (("memory", "prepare", "--request", "-"), 2, EMPTY_REQUEST),
        (("mcp",), 0, ""),  # its end of input, as with < /dev/null
    ],
    ids=["confirm", "discard", "stage", "prepare", "mcp"],
)
def test_a_closed_stdin_is_an_empty_one(
    tmp_path: Path, home: Path, args: tuple[str, ...], code: int, stderr: str
) -> None:
    repo = initialized_repository(tmp_path, home)
    done = closed_stdin(*args, cwd=repo)
    assert (done.returncode, done.stderr[: len(stderr)]) == (code, stderr), done.stderr
    assert "Traceback" not in done.stderr and "NoneType" not in done.stderr
