"""A second `teamlore install` over what an earlier one wrote (docs/agents.md, "One command"):
install sets the keys it owns in its server entries and leaves every key the user added to
them since; what it wrote is still taken back out by uninstall."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from install_world import op

from teamlore.ops.integrations.install import InstallRequest, plan_client


def test_a_key_the_user_added_to_teamlores_server_survives_the_next_install(user: Path) -> None:
    codex = user / ".codex" / "config.toml"
    claude = user / ".claude.json"
    codex.parent.mkdir()
    codex.write_text('model = "o3"\n')
    claude.write_text("{}\n")
    op("install", user, client="all")
    codex.write_text(  # the user turns teamlore's team server off in Codex
        codex.read_text().replace(
            "[mcp_servers.teamlore]\n", "[mcp_servers.teamlore]\nenabled = false\n"
        )
    )
    state = json.loads(claude.read_text())
    state["mcpServers"]["teamlore"]["timeout"] = 5000
    claude.write_text(json.dumps(state))

    op("install", user, client="all", team=True)

    table = tomllib.loads(codex.read_text())["mcp_servers"]["teamlore"]
    assert table["enabled"] is False and table["args"][-1] == "team"
    assert table["default_tools_approval_mode"] == "prompt"
    entry = json.loads(claude.read_text())["mcpServers"]["teamlore"]
    assert entry["timeout"] == 5000 and entry["args"][-1] == "team"

    op("install", user, client="codex")  # back to team-read: what only --team writes goes
    table = tomllib.loads(codex.read_text())["mcp_servers"]["teamlore"]
    assert table["enabled"] is False and table["args"][-1] == "team-read"
    assert "default_tools_approval_mode" not in table and "tools" not in table
    op("uninstall", user, client="all")
    assert codex.read_text() == 'model = "o3"\n'
    assert json.loads(claude.read_text()) == {}


@pytest.mark.parametrize("client", ["claude", "codex"])
@pytest.mark.parametrize("team", [False, True])
def test_every_key_install_writes_in_a_server_entry_is_one_it_owns(
    user: Path, client: str, team: bool
) -> None:
    """Else a key only one tier writes would be kept as the user's when the tier changes."""
    request = InstallRequest(
        client=client, team=team, personal=True, orgUrl="https://o.example/mcp"
    )
    servers = [e for f in plan_client(client, request, None) for e in f.keys if e.owns]
    assert len(servers) == 3
    for edit in servers:
        assert set(edit.value) <= edit.owns, edit.key
