"""A teamlore server entry the user wrote by hand (docs/agents.md, "Two state dirs in one
config"): it starts teamlore with a state dir that never ran `install` (no manifest there: it
came with dotfiles, or names a shared team state dir). `install` refuses it and says
`uninstall` puts it back after `install --force`; uninstall then did not, as it read the
missing manifest as that state dir's installation uninstalled since. All through the real CLI,
the config's bytes checked after each step."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support import teamlore_cli

CONFIGS = {"codex": ".codex/config.toml", "claude": ".claude.json"}
HOOKS = {"codex": ".codex/hooks.json", "claude": ".claude/settings.json"}


def hand_written(client: str, state_dir: str | None) -> str:
    """The user's config with their own `teamlore` server entry (`state_dir` None: none named,
    so the default state dir)."""
    if client == "codex":
        env = f'env = {{ TEAMLORE_HOME = "{state_dir}" }}\n' if state_dir else ""
        return (
            '# mine\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other-server"\n\n'
            f'[mcp_servers.teamlore]\ncommand = "teamlore"\nargs = ["mcp"]\n{env}'
        )
    env = f', "env": {{"TEAMLORE_HOME": "{state_dir}"}}' if state_dir else ""
    return (
        '{\n  "numStartups": 3,\n  "mcpServers": {\n    "other": {"command": "x"},\n'
        f'    "teamlore": {{"command": "teamlore", "args": ["mcp"]{env}}}\n  }}\n}}\n'
    )


@pytest.mark.parametrize("client", ["codex", "claude"])
@pytest.mark.parametrize("named", ["absent", "no-manifest", "default"])
def test_uninstall_puts_back_a_hand_written_entry_install_force_replaced(
    user: Path, client: str, named: str
) -> None:
    state_dir = {
        "absent": "/srv/my-team-state-never-created",
        "no-manifest": str(user / "team-state"),
        "default": None,
    }[named]
    if named == "no-manifest":  # a state dir in use (its database), never installed from
        (user / "team-state").mkdir()
        (user / "team-state" / "teamlore.db").write_bytes(b"")
    config = user / CONFIGS[client]
    config.parent.mkdir(exist_ok=True)
    original = hand_written(client, state_dir)
    config.write_text(original)

    refused = teamlore_cli("install", "--client", client, cwd=user)
    assert refused.returncode != 0
    assert "INTEGRATION_CONFLICT" in refused.stdout + refused.stderr
    assert "uninstall puts it back" in " ".join((refused.stdout + refused.stderr).split())
    assert config.read_text() == original

    done = teamlore_cli("install", "--client", client, "--force", cwd=user)
    assert done.returncode == 0, done.stdout + done.stderr
    installed = config.read_text()
    assert os.environ["TEAMLORE_HOME"] in installed
    if state_dir is not None:
        assert state_dir not in installed

    done = teamlore_cli("uninstall", "--client", client, cwd=user)
    assert done.returncode == 0, done.stdout + done.stderr
    assert config.read_text() == original
    assert not (user / HOOKS[client]).exists()  # install made it; nothing of the user's in it
