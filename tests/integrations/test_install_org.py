"""`teamlore install --org-url` (docs/org.md "A team server"): the remote org endpoint is added
to Claude Code and Codex with its bearer token read from an environment variable, so no token is
ever written into a config file, least of all a project's; uninstall removes it with the rest."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

from support import git, teamlore_cli
from teamlore.core import errors
from teamlore.ops.registry import OpContext, run_operation

URL = "https://memory.example.com/mcp"
TOKEN = "tlorg_do-not-write-me-anywhere"


@pytest.fixture()
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TEAMLORE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("TEAMLORE_ORG_TOKEN", TOKEN)
    return home


def install(cwd: Path, **payload: Any) -> dict[str, Any]:
    request = {"client": "all", "force": True, "orgUrl": URL, **payload}
    return run_operation("install", OpContext(cwd=cwd), request)


def test_the_org_endpoint_is_added_with_the_token_variable_never_the_token(user: Path) -> None:
    install(user)
    claude = json.loads((user / ".claude.json").read_text())["mcpServers"]["teamlore_org"]
    assert claude == {
        "type": "http",
        "url": URL,
        "headers": {"Authorization": "Bearer ${TEAMLORE_ORG_TOKEN}"},
    }
    codex = tomllib.loads((user / ".codex/config.toml").read_text())["mcp_servers"]
    assert codex["teamlore_org"] == {"url": URL, "bearer_token_env_var": "TEAMLORE_ORG_TOKEN"}
    written = [p for p in user.rglob("*") if p.is_file()]
    assert all(TOKEN not in p.read_text(errors="replace") for p in written)
    run_operation("uninstall", OpContext(cwd=user), {"client": "all"})
    # neither file existed before install
    assert not (user / ".claude.json").exists() and not (user / ".codex/config.toml").exists()


def test_project_scope_holds_the_variable_name_only(user: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    install(repo, scope="project", orgTokenVariable="ACME_MEMORY_TOKEN")
    project = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["teamlore_org"]
    assert project["headers"] == {"Authorization": "Bearer ${ACME_MEMORY_TOKEN}"}
    files = [p for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts]
    assert files and all(TOKEN not in p.read_text() for p in files)
    assert all(os.fspath(user) not in p.read_text() for p in files)


@pytest.mark.parametrize(
    "payload",
    [
        {"orgUrl": "file:///etc/passwd"},
        {"orgUrl": "https://x/mcp\nevil"},
        {"orgTokenVariable": "a b"},
    ],
)
def test_a_bad_org_url_or_variable_is_refused_and_nothing_is_written(
    user: Path, payload: dict[str, Any]
) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        install(user, **payload)
    assert caught.value.code == "INVALID_ARGUMENT"
    assert not (user / ".claude.json").exists() and not (user / ".codex").exists()


@pytest.mark.parametrize(
    "url",
    [
        f"https://ci:{TOKEN}@memory.example.com/mcp",
        f"https://{TOKEN}@memory.example.com/mcp",
        f"https://memory.example.com/mcp?token={TOKEN}",
        f"https://memory.example.com/mcp?access_token={TOKEN}&x=1",
        f"https://memory.example.com/{TOKEN}/mcp",
    ],
)
def test_a_url_holding_credentials_is_refused_without_echoing_them_and_nothing_is_written(
    user: Path, tmp_path: Path, url: str
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    done = teamlore_cli(
        "install", "--client", "all", "--scope", "project", "--force", "--org-url", url, cwd=repo
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error ORG_URL_HAS_CREDENTIALS: ")
    assert "TEAMLORE_ORG_TOKEN" in done.stderr and "--org-token-env" in done.stderr
    assert TOKEN not in done.stdout + done.stderr
    assert sorted(p.name for p in repo.iterdir()) == [".git"]
    assert not (user / ".claude.json").exists() and not (user / ".codex").exists()
    assert not (tmp_path / "state").exists()
