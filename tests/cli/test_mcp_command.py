"""`teamlore mcp`'s launch (cli/mcp_command.py): plain flags start the server without typer,
refusals read as before, and what the plain parse cannot read goes to typer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


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
    return [line for line in stderr.splitlines() if not line.startswith("import time:")]


def test_a_refused_launch_says_why_without_loading_typer(home: Path, tmp_path: Path) -> None:
    unknown = _launch("--capability", "nope", cwd=tmp_path)
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert _messages(unknown.stderr) == [
        "error INVALID_ARGUMENT: unknown capability 'nope'; use one of team-read, team, init, "
        "read, relay, org"
    ]
    assert "typer" not in _modules(unknown.stderr)
    personal = _launch("-c", "read", cwd=tmp_path)
    assert personal.returncode == 2
    assert _messages(personal.stderr) == [
        "error INVALID_CLIENT_ID: personal tiers need --client-id [A-Za-z0-9_-]{1,128}"
    ]
    assert not home.exists()  # a refused launch creates nothing


def test_flags_the_plain_parse_cannot_read_go_to_typer(home: Path, tmp_path: Path) -> None:
    bogus = _launch("--bogus", cwd=tmp_path)
    assert bogus.returncode == 2
    assert "No such option: --bogus" in bogus.stderr
    assert "typer" in _modules(bogus.stderr)
    helped = _launch("--help", cwd=tmp_path)
    assert helped.returncode == 0 and "Serve teamlore over MCP on stdio." in helped.stdout
