"""teamlore's entries installed for another state dir (`TEAMLORE_HOME=~/altstate teamlore
install --client all`, then `teamlore uninstall --client all` and `install --client all`
without it): uninstall's NOTHING_INSTALLED names every client's entries with the command that
removes them (it named Claude Code's only), and install's INTEGRATION_CONFLICT says to uninstall
them with that state dir, not "remove or rename your entry" (they are teamlore's). All through
the real CLI, in a private HOME."""

from __future__ import annotations

from pathlib import Path

from install_world import cli, seed_user_configs

from support import teamlore_cli


def said(done: object) -> str:
    return " ".join((done.stdout + done.stderr).split())  # type: ignore[attr-defined]


def test_the_advice_names_every_clients_entries_and_whose_they_are(
    user: Path, tmp_path: Path
) -> None:
    seed_user_configs(user)
    alt = tmp_path / "altstate"
    done = teamlore_cli("install", "--client", "all", env={"TEAMLORE_HOME": str(alt)})
    assert done.returncode == 0, done.stderr

    refused = teamlore_cli("uninstall", "--client", "all")
    assert refused.returncode != 0
    text = said(refused)
    assert "NOTHING_INSTALLED" in text
    for client, config in (("claude", "~/.claude.json"), ("codex", "~/.codex/config.toml")):
        assert f"TEAMLORE_HOME={alt} teamlore uninstall --client {client}" in text, text
        assert config in text, text

    refused = teamlore_cli("install", "--client", "all")
    assert refused.returncode != 0
    text = said(refused)
    assert "INTEGRATION_CONFLICT" in text
    assert "your entry" not in text, text
    assert f"TEAMLORE_HOME={alt} teamlore uninstall --client claude" in text, text

    cli("install", "--client", "all", "--force")  # what a person may do instead still works
