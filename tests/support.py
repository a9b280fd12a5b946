"""Helpers shared by tests of every package (import as `from support import ...`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_FIXTURES = (REPO_ROOT / ".." / "shared" / "fixtures").resolve()


def shared_fixtures(*parts: str) -> Path:
    path = SHARED_FIXTURES.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real fixtures not present at {path}")
    return path


def teamlore_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real `teamlore` console entry point in a subprocess."""
    full_env = {**os.environ, **(env or {})}
    exe = shutil.which("teamlore", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "teamlore.cli.main"]
    return subprocess.run(
        [*cmd, *args],
        cwd=cwd,
        env=full_env,
        text=True,
        capture_output=True,
        input=input,
        timeout=120,
    )


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` with no user or system config (deterministic, hook-free)."""
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout.strip()
