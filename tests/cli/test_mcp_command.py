"""`teamlore mcp`'s launch (cli/mcp_command.py): plain flags start the server without typer,
refusals read as before, and what the plain parse cannot read goes to typer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import refusal_lines


def _launch(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m teamlore.cli.main mcp ARGS`, as `teamlore install` registers it, stdin closed."""
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "teamlore.cli.main", "mcp", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _modules(stderr: str) -> set[str]:
    lines = [line for line in stderr.splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[-1].strip() for line in lines}


def _messages(stderr: str) -> list[str]:
    return [line for line in refusal_lines(stderr) if not line.startswith("import time:")]


def test_a_refused_launch_says_why_without_loading_typer(home: Path, tmp_path: Path) -> None:
    unknown = _launch("--capability", "nope", cwd=tmp_path)
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert _messages(unknown.stderr) == [
        "error INVALID_ARGUMENT: unknown capability 'nope'; use one of team-read, team, init, "
        "read, relay, org",
        "  next: Correct the value the message names (`--help` shows what it accepts).",
    ]
    assert "typer" not in _modules(unknown.stderr)
    personal = _launch("-c", "read", cwd=tmp_path)
    assert personal.returncode == 2
    assert _messages(personal.stderr) == [
        "error INVALID_CLIENT_ID: personal tiers need --client-id [A-Za-z0-9_-]{1,128}",
        "  next: Use 1-128 characters of A-Z, a-z, 0-9, _ or - for `--client-id`.",
    ]
    assert not home.exists()  # a refused launch creates nothing


def test_flags_the_plain_parse_cannot_read_go_to_typer(home: Path, tmp_path: Path) -> None:
    bogus = _launch("--bogus", cwd=tmp_path)
    assert bogus.returncode == 2
    assert "error USAGE: " in bogus.stderr and "mcp: no such option: --bogus" in bogus.stderr
    assert "typer" in _modules(bogus.stderr)
    helped = _launch("--help", cwd=tmp_path)
    assert helped.returncode == 0 and "Serve teamlore over MCP on stdio." in helped.stdout


@pytest.mark.parametrize(("configured", "expected"), [(None, "1"), ("4", "4")])
def test_the_server_runs_blas_on_one_thread_unless_the_user_set_another(
    configured: str | None, expected: str
) -> None:
    # `python -m teamlore.cli.main mcp` (what install registers) does not pass cli/entry.py: a
    # vector search's small products otherwise leave BLAS worker threads spinning
    probe = (
        "import os, sys\n"
        "from teamlore.cli import mcp_command\n"
        "mcp_command.lean_invocation = lambda args: lambda: print("
        "os.environ.get('OPENBLAS_NUM_THREADS'))\n"
        "mcp_command.serve_from_argv(['--capability', 'team-read'])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if configured is not None:
        env["OPENBLAS_NUM_THREADS"] = configured
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == expected
