"""Uninstall removes teamlore's own server entries and nothing else (docs/agents.md, "What
uninstall removes"): when the file changed since install, so the backup no longer applies and
uninstall deletes teamlore's keys one by one, a container the user had before install
(`"mcpServers": {}`, `[mcp_servers]`) stays, even empty; one install created goes once empty;
a comment the user wrote after teamlore's tables stays too."""

from __future__ import annotations

from pathlib import Path

from install_world import cli, op, recorded_as_an_older_teamlore, uninstalled_after_an_edit


def test_an_empty_servers_container_the_user_had_stays_after_uninstall(user: Path) -> None:
    claude = user / ".claude.json"
    codex = user / ".codex" / "config.toml"
    codex.parent.mkdir()
    claude.write_text('{"mcpServers": {}, "theme": "dark"}\n')
    codex.write_text("[mcp_servers]\n\n[other]\nx = 1\n")
    cli("install", "--client", "all")
    claude.write_text(claude.read_text().replace("dark", "light"))  # no byte-exact restore now
    codex.write_text(codex.read_text().replace("x = 1", "x = 2"))

    cli("uninstall", "--client", "all")

    assert claude.read_text() == '{"mcpServers": {}, "theme": "light"}\n'
    assert codex.read_text() == "[mcp_servers]\n\n[other]\nx = 2\n"


def test_the_servers_container_install_created_goes_once_empty(user: Path) -> None:
    after = uninstalled_after_an_edit(user / ".claude.json", '{"theme": "dark"}\n', "dark", "light")
    assert after == '{"theme": "light"}\n'


def test_a_key_record_of_an_older_teamlore_removes_the_container_as_before(user: Path) -> None:
    claude = user / ".claude.json"
    claude.write_text('{"mcpServers": {}, "theme": "dark"}\n')
    cli("install", "--client", "claude")
    recorded_as_an_older_teamlore("createdParent")
    claude.write_text(claude.read_text().replace("dark", "light"))

    cli("uninstall", "--client", "claude")

    assert claude.read_text() == '{"theme": "light"}\n'


def test_comments_written_after_the_tables_install_added_stay_after_uninstall(user: Path) -> None:
    codex = user / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text('model = "o3"\n')
    op("install", user, client="codex")  # its tables end the file: [mcp_servers.*], [features]
    mine = '\n# work: the cheap model\n[profiles.work]\nmodel = "gpt-5-mini"\n# the end'
    codex.write_text(codex.read_text() + mine)  # TOML puts the comments in [features]
    op("install", user, client="codex", personal=True)  # rewrites our tables, keeps theirs

    op("uninstall", user, client="codex")

    assert codex.read_text() in ('model = "o3"\n' + mine, 'model = "o3"\n' + mine + "\n")


def test_a_config_ending_in_a_comment_without_a_line_end_keeps_that_comment_once(
    user: Path,
) -> None:
    codex = user / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text('model = "o3"\n# the end')
    op("install", user, client="codex")  # appends its tables after the comment
    assert codex.read_text().count("# the end") == 1
    codex.write_text(codex.read_text().replace('"o3"', '"o4"'))
    op("uninstall", user, client="codex")
    assert codex.read_text() == 'model = "o4"\n# the end\n'
