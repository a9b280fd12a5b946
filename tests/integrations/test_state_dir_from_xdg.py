"""A state dir from `$XDG_STATE_HOME` (no TEAMLORE_HOME): Codex passes an MCP server only an
allow-list of its environment (HOME, PATH, USER, …), so a server entry naming no state dir read
~/.local/state/teamlore inside Codex while the CLI used $XDG_STATE_HOME/teamlore, and doctor,
which started the servers with its own whole environment, said ok. Install now names the state
dir it resolved in every entry (`TEAMLORE_HOME=…`), for Claude Code too, and doctor starts a
server with the environment its client gives it. All through the real CLI, in a private HOME."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from install_world import cli, seed_user_configs

from support import teamlore_cli


@pytest.fixture()
def xdg(user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The state dir `$XDG_STATE_HOME/teamlore`, TEAMLORE_HOME unset."""
    monkeypatch.delenv("TEAMLORE_HOME")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    seed_user_configs(user)
    return tmp_path / "xdg" / "teamlore"


def codex_servers(home: Path) -> dict[str, dict[str, object]]:
    servers = tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]
    return {k: v for k, v in servers.items() if k.startswith("teamlore")}


def server_checks(client: str) -> list[dict[str, str]]:
    done = teamlore_cli("doctor", "--client", client, "--format", "json")
    checks = json.loads(done.stdout)["checks"]
    return [c for c in checks if c["check"] == f"{client}.server"]


def test_install_names_the_state_dir_from_xdg_in_every_entry(user: Path, xdg: Path) -> None:
    cli("install", "--client", "all")

    servers = codex_servers(user)
    assert servers and all(s["env"] == {"TEAMLORE_HOME": str(xdg)} for s in servers.values())
    claude = json.loads((user / ".claude.json").read_text())["mcpServers"]
    ours = [v for k, v in claude.items() if k.startswith("teamlore")]
    assert ours and all(v["env"] == {"TEAMLORE_HOME": str(xdg)} for v in ours)
    for hooks in (user / ".claude" / "settings.json", user / ".codex" / "hooks.json"):
        assert f"TEAMLORE_HOME={xdg} " in hooks.read_text()
    checks = server_checks("codex")
    assert checks and all(c["status"] == "ok" for c in checks), checks


def test_doctor_fails_a_codex_server_that_would_serve_another_state_dir(
    user: Path, xdg: Path
) -> None:
    """An entry an earlier teamlore wrote (no TEAMLORE_HOME): doctor says Codex's server reads
    another state dir; uninstall still removes it all, and install names the state dir."""
    before = (user / ".codex" / "config.toml").read_bytes()
    cli("install", "--client", "codex")
    config = user / ".codex" / "config.toml"
    config.write_text(config.read_text().replace(f'env = {{TEAMLORE_HOME = "{xdg}"}}\n', ""))
    assert all("env" not in s for s in codex_servers(user).values())

    checks = server_checks("codex")
    assert checks and all(c["status"] == "fail" for c in checks), checks
    assert all("/.local/state/teamlore" in c["message"] for c in checks), checks
    assert all(c["fix"].startswith("teamlore install --client codex") for c in checks)

    cli("install", "--client", "codex")  # the fix doctor names
    assert all(s["env"] == {"TEAMLORE_HOME": str(xdg)} for s in codex_servers(user).values())
    assert all(c["status"] == "ok" for c in server_checks("codex"))
    cli("uninstall", "--client", "codex")
    assert config.read_bytes() == before


def test_an_install_recorded_before_the_state_dir_was_named_uninstalls_cleanly(
    user: Path, xdg: Path
) -> None:
    """Entries and hooks as an earlier teamlore wrote them (no TEAMLORE_HOME anywhere), recorded
    so: uninstall takes out exactly them."""
    files = {p: p.read_bytes() for p in (user / ".codex" / "config.toml", user / ".claude.json")}
    cli("install", "--client", "all")
    manifest = xdg / "integrations" / "manifest.json"
    pinned = f"TEAMLORE_HOME={xdg} "
    for path in [*files, user / ".claude" / "settings.json", user / ".codex" / "hooks.json"]:
        text = path.read_text()
        text = text.replace(f'env = {{TEAMLORE_HOME = "{xdg}"}}\n', "").replace(pinned, "")
        if path.name == ".claude.json":
            data = json.loads(text)
            for name, value in data["mcpServers"].items():
                if name.startswith("teamlore"):
                    value.pop("env")
            text = json.dumps(data, indent=2)
        path.write_text(text)
    manifest.write_text(manifest.read_text().replace(pinned, ""))

    cli("uninstall", "--client", "all")

    for path in files:
        assert "teamlore" not in path.read_text()
    assert "teamlore" not in (user / ".claude" / "settings.json").read_text()
