"""`run_bounded`: the runner child gets exactly the task bytes on a closed stdin, and every way
it can misbehave ends in a stable code with its whole process group gone."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from teamlore.core import errors
from teamlore.runner.process import Limits, group_alive, run_bounded

ENV = {"PATH": os.environ.get("PATH", "")}
LIMITS = Limits(timeout_s=20, max_output_bytes=64 * 1024)


def _run(code: str, tmp_path: Path, stdin: bytes = b"", limits: Limits = LIMITS) -> bytes:
    return run_bounded(
        [sys.executable, "-c", code], stdin=stdin, env=ENV, cwd=tmp_path, limits=limits
    ).stdout


def test_the_child_reads_exactly_the_task_bytes_to_eof(tmp_path: Path) -> None:
    data = os.urandom(300_000)
    echoed = _run(
        "import sys, hashlib; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())",
        tmp_path,
        stdin=data,
    )
    import hashlib

    assert echoed.decode().strip() == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import sys; sys.stderr.write('e' * 200000)", "RUNNER_OUTPUT_TOO_LARGE"),
        ("import sys; sys.stdout.write('o' * 200000)", "RUNNER_OUTPUT_TOO_LARGE"),
        ("import sys; sys.exit(3)", "RUNNER_EXIT_NONZERO"),
        ("import time; time.sleep(60)", "RUNNER_TIMEOUT"),
    ],
)
def test_misbehaviour_has_a_stable_code(tmp_path: Path, code: str, expected: str) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        _run(code, tmp_path, limits=Limits(timeout_s=2, max_output_bytes=64 * 1024))
    assert caught.value.code == expected
    assert "o" * 50 not in caught.value.message and "e" * 50 not in caught.value.message


def test_a_grandchild_left_behind_is_killed_with_the_group(tmp_path: Path) -> None:
    pids: list[int] = []
    code = "import subprocess, sys; p = subprocess.Popen(['sleep', '300']); print(p.pid)"
    result = run_bounded(
        [sys.executable, "-c", code],
        stdin=b"",
        env=ENV,
        cwd=tmp_path,
        limits=LIMITS,
        on_start=pids.append,
    )
    assert result.lingering
    deadline = time.monotonic() + 10
    while group_alive(pids[0]):
        assert time.monotonic() < deadline, "the left-behind process survived"
        time.sleep(0.05)


def test_a_missing_binary(tmp_path: Path) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        run_bounded(
            [str(tmp_path / "no-such-cli")], stdin=b"", env=ENV, cwd=tmp_path, limits=LIMITS
        )
    assert caught.value.code == "RUNNER_BINARY_NOT_FOUND"
    assert str(tmp_path) not in caught.value.message
