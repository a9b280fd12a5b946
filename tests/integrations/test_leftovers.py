"""teamlore's entries in a client's files that no install record of this state dir covers
(integrations/leftovers.py; docs/agents.md, "Entries no install record covers"): the record
was lost (the state dir deleted, the manifest moved aside), or they were installed for another
state dir. Uninstall, install and doctor name them and the command that helps; in user scope
install takes over the entries of this installation, so uninstall then removes them."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from install_world import CODEX_CONFIG, op, refused, seed_user_configs


def teamlore_left_in(home: Path) -> list[str]:
    """Where the client files still start teamlore (a server entry or a hook)."""
    found = []
    servers = json.loads((home / ".claude.json").read_text()).get("mcpServers", {})
    codex = tomllib.loads((home / ".codex" / "config.toml").read_text()).get("mcp_servers", {})
    found += [f"claude {name}" for name in servers if name.startswith("teamlore")]
    found += [f"codex {name}" for name in codex if name.startswith("teamlore")]
    for hooks in (home / ".claude" / "settings.json", home / ".codex" / "hooks.json"):
        if hooks.exists() and "hook session-start" in hooks.read_text():
            found.append(str(hooks))
    return found


def the_users_own(home: Path) -> tuple[object, ...]:
    """What the seeded files meant before teamlore, read back from them now."""
    claude = json.loads((home / ".claude.json").read_text())
    codex = tomllib.loads((home / ".codex" / "config.toml").read_text())
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    return (
        claude["numStartups"],
        claude["mcpServers"]["other"],
        codex["model"],
        codex["mcp_servers"]["other"],
        codex["profiles"],
        settings["theme"],
        settings["hooks"]["Stop"],
    )


def test_an_install_whose_record_was_lost_is_taken_over_and_then_uninstalled(
    user: Path, tmp_path: Path
) -> None:
    seed_user_configs(user)
    mine = the_users_own(user)
    op("install", user, client="all")
    (tmp_path / "state" / "integrations" / "manifest.json").unlink()  # the record is lost

    err = refused("uninstall", user, client="all")
    assert err.code == "NOTHING_INSTALLED" and "no record in this state dir" in err.message
    assert "`teamlore install --client claude` takes them over" in err.message
    [config] = [
        c for c in op("doctor", user, client="codex")["checks"] if c["check"] == "codex.config"
    ]
    assert "~/.codex/config.toml and ~/.codex/hooks.json" in config["message"]

    op("install", user, client="all")
    op("uninstall", user, client="all")

    assert teamlore_left_in(user) == []
    assert the_users_own(user) == mine


def test_entries_installed_for_another_state_dir_are_named_with_the_command_that_removes_them(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_user_configs(user)
    first = tmp_path / "first-state"
    monkeypatch.setenv("TEAMLORE_HOME", str(first))
    op("install", user, client="codex")
    monkeypatch.setenv("TEAMLORE_HOME", str(tmp_path / "state"))  # another shell, another dir

    err = refused("uninstall", user, client="codex")
    assert err.code == "NOTHING_INSTALLED"
    assert f"installed for another state dir ({first})" in err.message
    assert f"`TEAMLORE_HOME={first} teamlore uninstall --client codex` removes them" in err.message
    err = refused("install", user, client="codex")
    assert err.code == "INTEGRATION_CONFLICT" and f"another state dir ({first})" in err.message
    [config] = [
        c for c in op("doctor", user, client="codex")["checks"] if c["check"] == "codex.config"
    ]
    assert config["status"] == "warn" and f"TEAMLORE_HOME={first}" in config["fix"]

    monkeypatch.setenv("TEAMLORE_HOME", str(first))
    op("uninstall", user, client="codex")
    assert (user / ".codex" / "config.toml").read_text() == CODEX_CONFIG


def test_a_taken_over_install_leaves_none_of_the_containers_and_flags_it_had_added(
    user: Path, tmp_path: Path
) -> None:
    """Files that held neither servers nor hooks: after a lost record is taken over and
    uninstalled, no `"mcpServers": {}`, empty `hooks` or `[features] codex_hooks = true` that
    the first install added stays behind."""
    files = {
        user / ".claude.json": '{\n  "numStartups": 3\n}\n',
        user / ".claude" / "settings.json": '{\n  "theme": "dark"\n}\n',
        user / ".codex" / "config.toml": 'model = "o3"\n',
    }
    for path, text in files.items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    op("install", user, client="all")
    (tmp_path / "state" / "integrations" / "manifest.json").unlink()  # the record is lost

    op("install", user, client="all")
    op("uninstall", user, client="all")
    assert {path: path.read_text() for path in files} == files
    # the hooks file the first install created: without its record, teamlore cannot tell it
    # from one the user made, so it stays, emptied of what teamlore wrote
    assert json.loads((user / ".codex" / "hooks.json").read_text()) == {}


def test_a_taken_over_install_keeps_the_hooks_flag_a_hook_of_the_users_needs(
    user: Path, tmp_path: Path
) -> None:
    (user / ".codex").mkdir()
    (user / ".codex" / "config.toml").write_text('model = "o3"\n')
    op("install", user, client="codex")
    hooks = user / ".codex" / "hooks.json"
    mine = {"hooks": [{"type": "command", "command": "my-linter"}]}
    data = json.loads(hooks.read_text())
    data["hooks"]["Stop"] = [mine]
    hooks.write_text(json.dumps(data))
    (tmp_path / "state" / "integrations" / "manifest.json").unlink()  # the record is lost

    op("install", user, client="codex")
    op("uninstall", user, client="codex")
    assert tomllib.loads((user / ".codex" / "config.toml").read_text()) == {
        "model": "o3",
        "features": {"codex_hooks": True},
    }
    assert json.loads(hooks.read_text()) == {"hooks": {"Stop": [mine]}}
