"""The `user` fixture: a private HOME (never the real one) with the client CLIs (claude, codex,
pi) on PATH as empty stand-ins and a private teamlore state dir; `repo`: a repository with
reviewed team memory, for the installs that assemble it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from support import teamlore_cli


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


@pytest.fixture(scope="module")
def team_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with reviewed team memory (the demo's), never assembled."""
    target = tmp_path_factory.mktemp("team") / "demo"
    env = {"TEAMLORE_HOME": str(target), "HOME": str(target / "home")}  # never the real HOME
    done = teamlore_cli("demo", "--dir", str(target), "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    repo = Path(json.loads(done.stdout)["repository"])
    for name in ("CLAUDE.md", "AGENTS.md"):
        (repo / name).unlink()
    for name in (".claude", ".agents"):
        shutil.rmtree(repo / name)
    return repo


@pytest.fixture()
def repo(team_repo: Path, tmp_path: Path) -> Path:
    """A copy of `team_repo` for one test to change (links kept as links)."""
    repo = tmp_path / "repo"
    shutil.copytree(team_repo, repo, symlinks=True)
    return repo
