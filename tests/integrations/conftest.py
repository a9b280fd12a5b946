"""The `user` fixture: a private HOME (never the real one) with the client CLIs (claude, codex,
pi) on PATH as empty stand-ins and a private teamlore state dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture()
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME with the client CLIs on PATH and a private teamlore state dir."""
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex", "pi"):
        stand_in = bin_dir / name
        stand_in.write_text("#!/bin/sh\nexit 0\n")
        stand_in.chmod(0o755)
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TEAMLORE_HOME", str(tmp_path / "state"))
    return home
