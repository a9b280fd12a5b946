"""A teamlore server entry the user added by hand before `install` (`claude mcp add --scope user
teamlore -- …`, or `teamlore mcp-config --client codex` pasted into ~/.codex/config.toml), in a
state dir whose manifest exists (no record of it can be lost): it is the user's, so install
records it as what was there and uninstall puts it back (docs/agents.md, "Entries no install
record covers"). It was taken over as a lost install's own, and uninstall deleted it. All
through the real CLI, in a private HOME."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from install_world import cli, copied_aside, put_back, seed_user_configs

from support import teamlore_cli


def pasted_table() -> str:
    """What `teamlore mcp-config --client codex` prints (the table to paste)."""
    done = teamlore_cli("mcp-config", "--client", "codex")
    assert done.returncode == 0, done.stderr
    return done.stdout


def added_by_claude_mcp_add() -> dict[str, object]:
    """The entry `claude mcp add --scope user teamlore -e TEAMLORE_HOME=… -- <python> -m
    teamlore.cli.main mcp --capability team-read` writes into ~/.claude.json."""
    table = tomllib.loads(pasted_table())["mcp_servers"]["teamlore"]
    return {
        "type": "stdio",
        "command": table["command"],
        "args": table["args"],
        "env": table["env"],
    }


def with_the_users_entry(home: Path, client: str) -> Path:
    if client == "codex":
        config = home / ".codex" / "config.toml"
        config.write_text(config.read_text() + "\n" + pasted_table())
        return config
    config = home / ".claude.json"
    data = json.loads(config.read_text())
    data["mcpServers"]["teamlore"] = added_by_claude_mcp_add()
    config.write_text(json.dumps(data, indent=2) + "\n")
    return config


def the_entry(config: Path, client: str) -> object:
    if client == "codex":
        return tomllib.loads(config.read_text())["mcp_servers"].get("teamlore")
    return json.loads(config.read_text())["mcpServers"].get("teamlore")


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_uninstall_puts_back_the_users_own_entry(user: Path, client: str) -> None:
    seed_user_configs(user)
    cli("install", "--client", client)  # an earlier install, uninstalled: the manifest stays
    cli("uninstall", "--client", client)
    config = with_the_users_entry(user, client)
    before = config.read_bytes()
    mine = the_entry(config, client)
    assert mine is not None

    cli("install", "--client", client)
    installed, as_installed = copied_aside(user), config.read_bytes()
    cli("uninstall", "--client", client)

    assert the_entry(config, client) == mine
    assert config.read_bytes() == before

    put_back(installed)  # the same install, then the client rewrote its file: uninstall goes
    assert config.read_bytes() == as_installed  # entry by entry
    config.write_text(config.read_text().replace("other-server", "other-server-2"))
    cli("uninstall", "--client", client)

    assert the_entry(config, client) == mine
