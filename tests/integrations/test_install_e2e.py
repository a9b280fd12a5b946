"""`teamlore install` proven with the real clients: after install (in a private HOME), the real
`claude -p` and `codex exec`, driven by the scripted model, call `threadshare_memory_search` and
`memory_read` through the configs install wrote, the final answer carries the entry id and the
profile fact, and the SessionStart brief is in the first request the CLI sent, next to the
CLAUDE.md / AGENTS.md block (a user-scope install assembles only when asked: `--assemble`).
Uninstall then removes exactly our entries (the demo had assembled the block already, so it was
not install's to take out).

Codex runs a new hook only after the user trusted it in its TUI; these runs pass
`--dangerously-bypass-hook-trust` (Codex's own switch for vetted automation) in its place."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from agent_clis import (
    AgentClis,
    Scenario,
    ScriptedModel,
    ToolStep,
    Turn,
    isolated_env,
    run_claude,
    run_codex,
    run_with_hard_timeout,
)
from support import teamlore_cli

ENTRY_ID = "invoice-export-must-sort-rows-by-id-unordered-exports-made"
PROFILE_FACT = "The user writes Rust at work and prefers answers with code first."
ASSEMBLED = "## Team memory"  # the heading of the block assemble writes
PROMPT = "What does the team memory say about invoice export, and what do you know about me?"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    target = tmp_path_factory.mktemp("install-e2e") / "demo"
    done = teamlore_cli("demo", "--dir", str(target), "--format", "json")
    assert done.returncode == 0, done.stderr
    info = dict(json.loads(done.stdout))
    personal = Path(info["stateDir"]) / "personal"
    personal.mkdir(mode=0o700, exist_ok=True)
    profile = personal / "profile.md"
    profile.write_text(f"# Profile\n\n## Work\n{PROFILE_FACT}\n")
    profile.chmod(0o600)
    return info


def client_env(clis: AgentClis, home: Path, state: str) -> dict[str, str]:
    """What a user's shell would have: the CLIs and teamlore on PATH, their state dir."""
    path = os.pathsep.join(
        [str(clis.codex.parent), str(Path(sys.executable).parent), os.environ.get("PATH", "")]
    )
    return {"PATH": path, "TEAMLORE_HOME": state, "TEAMLORE_HOOK_BUDGET": "20"}


def teamlore_in(home: Path, env: dict[str, str], *args: str, cwd: Path) -> dict[str, Any]:
    argv = [str(Path(sys.executable).parent / "teamlore"), *args, "--format", "json"]
    done, _ = run_with_hard_timeout(argv, cwd, isolated_env(home, env), timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout))


def answer(turn: Turn) -> str:
    entry = turn.json(0)["results"][0]["id"]
    fact = next(line for line in turn.results[1].splitlines() if "Rust" in line)
    return f"entry: {entry}\nprofile: {fact}"


def scenario() -> Scenario:
    return Scenario(
        steps=[
            ToolStep("threadshare_memory_search", {"query": "invoice export", "limit": 5}),
            ToolStep("memory_read", {}),
        ],
        final_text=answer,
    )


def first_request_text(model: ScriptedModel) -> str:
    return json.dumps(model.model_requests()[0].body, ensure_ascii=False)


@pytest.mark.e2e
def test_claude_after_install_calls_team_and_personal_tools_and_sees_the_brief(
    agent_clis: AgentClis, demo: dict[str, Any], tmp_path: Path
) -> None:
    home, repo = tmp_path / "home", Path(demo["repository"])
    env = client_env(agent_clis, home, demo["stateDir"])
    installed = teamlore_in(home, env, "install", "--client", "claude", "--assemble", cwd=repo)
    [claude] = installed["installed"]
    assert claude["client"] == "claude" and claude["assemble"]["ran"] is True
    report = teamlore_in(home, env, "doctor", "--client", "claude", cwd=repo)
    assert report["counts"] == {"ok": len(report["checks"]), "warn": 0, "fail": 0}, report

    with ScriptedModel(scenario()) as model:
        run = run_claude(
            agent_clis,
            PROMPT,
            cwd=repo,
            home=home,
            model=model,
            env=env,
            allowed_tools=("mcp__teamlore", "mcp__teamlore_personal"),
        )
    assert not run.is_error, run.describe()
    assert model.errors == []
    assert [name for name, _ in model.tool_calls()] == [
        "mcp__teamlore__threadshare_memory_search",
        "mcp__teamlore_personal__memory_read",
    ]
    assert ENTRY_ID in run.result and PROFILE_FACT in run.result
    first = first_request_text(model)
    assert PROFILE_FACT in first  # the SessionStart brief
    assert ASSEMBLED in first  # install assembled CLAUDE.md, so the brief leaves team memory out
    assert "This repository has reviewed team memory" not in first

    teamlore_in(home, env, "uninstall", "--client", "claude", cwd=repo)
    servers = json.loads((home / ".claude" / ".claude.json").read_text())
    assert "mcpServers" not in servers and servers  # ours gone, Claude's own state kept
    assert not (home / ".claude" / "settings.json").exists()


@pytest.mark.e2e
def test_codex_after_install_calls_team_and_personal_tools_and_sees_the_brief(
    agent_clis: AgentClis, demo: dict[str, Any], tmp_path: Path
) -> None:
    home, repo = tmp_path / "home", Path(demo["repository"])
    env = client_env(agent_clis, home, demo["stateDir"])
    installed = teamlore_in(home, env, "install", "--client", "codex", "--assemble", cwd=repo)
    assert installed["installed"][0]["assemble"]["ran"] is True
    report = teamlore_in(home, env, "doctor", "--client", "codex", cwd=repo)
    assert report["counts"] == {"ok": len(report["checks"]), "warn": 0, "fail": 0}, report
    config = tomllib.loads((home / ".codex" / "config.toml").read_text())
    assert config["mcp_servers"]["teamlore"]["required"] is True

    with ScriptedModel(scenario()) as model:
        run = run_codex(
            agent_clis,
            PROMPT,
            cwd=repo,
            home=home,
            model=model,
            env=env,
            extra_args=["--dangerously-bypass-hook-trust"],
        )
    assert run.returncode == 0, run.describe()
    assert model.errors == []
    assert [(c["server"], c["tool"], c["status"]) for c in run.tool_calls] == [
        ("teamlore", "threadshare_memory_search", "completed"),
        ("teamlore_personal", "memory_read", "completed"),
    ]
    assert ENTRY_ID in run.last_message and PROFILE_FACT in run.last_message
    first = first_request_text(model)
    assert PROFILE_FACT in first and ASSEMBLED in first  # brief + assembled AGENTS.md

    teamlore_in(home, env, "uninstall", "--client", "codex", cwd=repo)
    assert not (home / ".codex" / "config.toml").exists()
    assert not (home / ".codex" / "hooks.json").exists()


@pytest.mark.e2e
def test_codex_reads_the_servers_install_adds_to_a_config_written_with_dotted_keys(
    agent_clis: AgentClis, demo: dict[str, Any], tmp_path: Path
) -> None:
    # `mcp_servers.other.…` and `features.…` written dotted at the top level: install's tables
    # go after them, and the real Codex reads the user's server and both of ours
    home, repo = tmp_path / "home", Path(demo["repository"])
    env = client_env(agent_clis, home, demo["stateDir"])
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        'mcp_servers.other.command = "other-server"\nfeatures.web_search_request = true\n'
    )
    teamlore_in(home, env, "install", "--client", "codex", cwd=repo)
    listed, _ = run_with_hard_timeout(
        [str(agent_clis.codex), "mcp", "list", "--json"], repo, isolated_env(home, env), 60
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    servers = {server["name"]: server for server in json.loads(listed.stdout)}
    assert sorted(servers) == ["other", "teamlore", "teamlore_personal"]
    assert servers["other"]["transport"]["command"] == "other-server"


@pytest.mark.e2e
def test_codex_keeps_a_server_the_user_turned_off_off_after_the_next_install(
    agent_clis: AgentClis, demo: dict[str, Any], tmp_path: Path
) -> None:
    home, repo = tmp_path / "home", Path(demo["repository"])
    env = client_env(agent_clis, home, demo["stateDir"])
    teamlore_in(home, env, "install", "--client", "codex", cwd=repo)
    config = home / ".codex" / "config.toml"
    config.write_text(
        config.read_text().replace(
            "[mcp_servers.teamlore]\n", "[mcp_servers.teamlore]\nenabled = false\n"
        )
    )
    teamlore_in(home, env, "install", "--client", "codex", "--personal", cwd=repo)
    listed, _ = run_with_hard_timeout(
        [str(agent_clis.codex), "mcp", "list", "--json"], repo, isolated_env(home, env), 60
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    enabled = {server["name"]: server["enabled"] for server in json.loads(listed.stdout)}
    assert enabled == {"teamlore": False, "teamlore_personal": True}


@pytest.mark.e2e
def test_both_clients_read_what_install_wrote_into_a_linked_config_saved_with_a_bom(
    agent_clis: AgentClis, demo: dict[str, Any], tmp_path: Path
) -> None:
    """`~/.claude.json` and `~/.codex/config.toml` kept in a dotfiles folder, linked in, and
    saved with a UTF-8 byte order mark: install writes through the links and keeps the mark,
    and the real CLIs list teamlore's servers from them (Claude Code keeps the link when it
    rewrites its file)."""
    home, repo = tmp_path / "home", Path(demo["repository"])
    env = client_env(agent_clis, home, demo["stateDir"])
    isolated_env(home, env)
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    texts = {".claude.json": '{\n  "numStartups": 3\n}\n', ".codex/config.toml": 'model = "o3"\n'}
    for name, text in texts.items():
        target = dotfiles / Path(name).name
        target.write_bytes(b"\xef\xbb\xbf" + text.encode())
        (home / name).symlink_to(target)
    teamlore_in(home, env, "install", "--client", "all", cwd=repo)
    for name in texts:
        assert (home / name).is_symlink()
        assert (dotfiles / Path(name).name).read_bytes().startswith(b"\xef\xbb\xbf")

    listed, _ = run_with_hard_timeout(
        [str(agent_clis.codex), "mcp", "list", "--json"], repo, isolated_env(home, env), 60
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert sorted(s["name"] for s in json.loads(listed.stdout)) == ["teamlore", "teamlore_personal"]
    listed, _ = run_with_hard_timeout(
        [str(agent_clis.claude), "mcp", "list"], repo, isolated_env(home, env), 120
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "teamlore: " in listed.stdout and "teamlore_personal: " in listed.stdout
    assert (home / ".claude.json").is_symlink()
