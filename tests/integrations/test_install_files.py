"""`teamlore install` / `uninstall` on the client config files: what is written where, that the
user's own settings and comments survive, that uninstall restores every file byte for byte, and
that every bad input is refused with its code and nothing changed.

The client CLIs are only looked up on PATH here: `bin/claude` and `bin/codex` are empty stand-in
executables (the e2e tests run the real ones)."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest
import tomlkit
from install_world import (
    CLAUDE_SETTINGS,
    CODEX_CONFIG,
    op,
    refused,
    seed_user_configs,
    tree,
)

from support import git, in_process, refusal_lines, run_killed_at, teamlore_cli, unwritable
from teamlore.core import errors
from teamlore.integrations.config_files import load


def test_install_keeps_the_users_settings_and_comments_and_uninstall_restores_bytes(
    user: Path,
) -> None:
    seed_user_configs(user)
    before = tree(user)
    op("install", user, client="all")

    codex_text = (user / ".codex" / "config.toml").read_text()
    assert codex_text.startswith(CODEX_CONFIG.split("[profiles")[0])  # comments and order kept
    assert "\n\n[profiles.work]\nmodel" in codex_text
    codex = tomllib.loads(codex_text)
    team = codex["mcp_servers"]["teamlore"]
    assert team["required"] is True and team["startup_timeout_sec"] == 30
    assert team["args"][-2:] == ["--capability", "team-read"]
    assert codex["mcp_servers"]["teamlore_personal"]["args"][-3:] == [
        "--client-id",
        "codex-cli",
        "--global",
    ]
    assert codex["features"]["codex_hooks"] is True
    assert codex["profiles"]["work"]["model"] == "gpt-5.5"
    codex_hooks = json.loads((user / ".codex" / "hooks.json").read_text())
    [group] = codex_hooks["hooks"]["SessionStart"]
    assert group["hooks"][0]["command"].endswith("hook session-start --client codex")

    claude = json.loads((user / ".claude.json").read_text())
    assert claude["numStartups"] == 3 and set(claude["mcpServers"]) == {
        "other",
        "teamlore",
        "teamlore_personal",
    }
    settings = json.loads((user / ".claude" / "settings.json").read_text())
    assert settings["theme"] == "dark" and settings["hooks"]["Stop"] == []
    assert "--client claude" in settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]

    op("install", user, client="all")  # idempotent: nothing doubles
    hooks = json.loads((user / ".codex" / "hooks.json").read_text())["hooks"]
    assert len(hooks["SessionStart"]) == 1

    op("uninstall", user, client="all")
    assert tree(user) == before


def test_the_preview_of_a_config_without_a_final_newline_shows_the_bytes_as_git_would(
    user: Path,
) -> None:
    """An editor that saves without a final newline: the dry run's diff keeps the old last line
    and the lines install adds apart, with git's marker, instead of one glued line."""
    files = seed_user_configs(user)
    config = user / ".codex" / "config.toml"
    config.write_bytes(files[config].rstrip(b"\n"))
    last = files[config].rstrip(b"\n").decode().rsplit("\n", 1)[-1]

    dry = op("install", user, client="codex", dryRun=True)["installed"][0]["files"]
    diff = next(f["diff"] for f in dry if f["path"].endswith("config.toml")).split("\n")
    assert f"-{last}" in diff and f"+{last}" in diff
    assert diff[diff.index(f"-{last}") + 1] == "\\ No newline at end of file"
    assert [line for line in diff if last in line and line not in (f"-{last}", f"+{last}")] == []


def test_config_files_saved_with_crlf_keep_crlf_and_uninstall_restores_their_bytes(
    user: Path,
) -> None:
    """A client config saved on Windows keeps one kind of line end: what install adds is
    written with CRLF, and uninstall gives back the very bytes."""
    files = seed_user_configs(user)
    for path, data in files.items():
        path.write_bytes(data.replace(b"\n", b"\r\n"))
    before = tree(user)

    dry = op("install", user, client="codex", dryRun=True)["installed"][0]["files"]
    diff = next(f["diff"] for f in dry if f["path"].endswith("config.toml"))
    assert "+[mcp_servers.teamlore]\n" in diff and "\r" not in diff
    op("install", user, client="all")

    for path in files:
        data = path.read_bytes()
        assert data.count(b"\n") == data.count(b"\r\n"), path
    codex = tomllib.loads((user / ".codex" / "config.toml").read_text())
    assert codex["mcp_servers"]["teamlore"]["required"] is True
    op("uninstall", user, client="all")
    assert tree(user) == before


def test_a_claude_state_file_of_many_megabytes_is_installed_into_and_restored(
    user: Path,
) -> None:
    """~/.claude.json keeps every project's prompt history and grows past 8 MiB for people who
    use Claude Code a lot: install edits it, leaves no record behind, and uninstall restores
    it byte for byte."""
    history = [{"display": f"fix the flaky test number {n} " + "x" * 300} for n in range(30_000)]
    big = json.dumps({"numStartups": 3, "projects": {"/home/u/src/app": {"history": history}}})
    assert len(big) > 9 * 1024 * 1024
    (user / ".claude.json").write_text(big)
    before = tree(user)

    op("install", user, client="claude")

    assert "teamlore" in json.loads((user / ".claude.json").read_text())["mcpServers"]
    state = user.parent / "state" / "integrations"
    assert not (state / "intent.json").exists()
    op("uninstall", user, client="claude")
    assert tree(user) == before


def test_inline_tables_in_codex_config_get_our_entries_inline(user: Path) -> None:
    """`mcp_servers = { … }` and `features = { … }` written as inline tables (valid TOML, and
    how some people write them): install adds its servers and the hooks feature inside them
    (a table cannot live in an inline table), and uninstall takes them out again."""
    seed_user_configs(user)
    config = user / ".codex" / "config.toml"
    inline = (
        'model = "o3"\nmcp_servers = { other = { command = "x" } }\n'
        "features = { web_search = true }\n"
    )
    config.write_text(inline)

    op("install", user, client="codex")

    codex = tomllib.loads(config.read_text())
    assert sorted(codex["mcp_servers"]) == ["other", "teamlore", "teamlore_personal"]
    assert codex["mcp_servers"]["teamlore"]["required"] is True
    assert codex["features"] == {"web_search": True, "codex_hooks": True}
    config.write_text(config.read_text().replace('"o3"', '"o4"'))  # edited since: entries go
    op("uninstall", user, client="codex")
    assert config.read_text() == inline.replace('"o3"', '"o4"')


def test_a_config_with_dotted_top_level_keys_gets_its_tables_at_the_end_and_keeps_its_meaning(
    user: Path,
) -> None:
    """`mcp_servers.other.command = "x"` written dotted at the top level, then more top-level
    keys: a `[mcp_servers.teamlore]` table written beside `other` would take `features.…` in.
    Install puts its tables after the file's last table, and uninstall (after an edit, so the
    entries are removed one by one) gives back the user's lines."""
    seed_user_configs(user)
    config = user / ".codex" / "config.toml"
    dotted = 'model = "o3"\nmcp_servers.other.command = "x"\nfeatures.web_search = true\n'
    config.write_text(dotted)

    op("install", user, client="codex")

    text = config.read_text()
    assert text.startswith(dotted.replace("true\n", "true\nfeatures.codex_hooks = true\n"))
    codex = tomllib.loads(text)
    assert codex["features"] == {"web_search": True, "codex_hooks": True}
    assert codex["mcp_servers"]["other"] == {"command": "x"}
    assert codex["mcp_servers"]["teamlore"]["required"] is True
    config.write_text(text.replace('"o3"', '"o4"'))  # edited since: entries go one by one
    op("uninstall", user, client="codex")
    assert config.read_text() == dotted.replace('"o3"', '"o4"')


def test_a_written_config_that_would_not_mean_what_was_edited_is_refused(tmp_path: Path) -> None:
    # the last guard: whatever the edit, the bytes written are read back and must hold what
    # the edited document holds (here a table placed by hand where `set_key` would not)
    config = tmp_path / "config.toml"
    config.write_text('mcp_servers.other.command = "x"\nfeatures.web_search = true\n')
    document = load(config, "toml")
    document.doc["mcp_servers"]["teamlore"] = tomlkit.table()
    document.doc["mcp_servers"]["teamlore"]["command"] = "py"
    with pytest.raises(errors.TeamloreError) as caught:
        document.render()
    assert caught.value.code == "CLIENT_CONFIG_INVALID"
    assert "without changing what" in caught.value.message


def test_uninstall_after_the_client_rewrote_the_file_removes_only_our_entries(user: Path) -> None:
    seed_user_configs(user)
    op("install", user, client="claude")
    state = json.loads((user / ".claude.json").read_text())
    state["numStartups"] = 4  # Claude Code rewrites its state file on every start
    (user / ".claude.json").write_text(json.dumps(state, indent=2))
    op("uninstall", user, client="claude")
    assert json.loads((user / ".claude.json").read_text()) == {
        "numStartups": 4,
        "mcpServers": {"other": {"command": "x"}},
    }
    assert (user / ".claude" / "settings.json").read_bytes() == CLAUDE_SETTINGS.encode()


def test_dry_run_shows_the_diff_and_writes_nothing(user: Path) -> None:
    seed_user_configs(user)
    before = tree(user)
    result = op("install", user, client="codex", dryRun=True)
    [codex] = result["installed"]
    diff = next(f["diff"] for f in codex["files"] if f["path"].endswith("config.toml"))
    assert "+[mcp_servers.teamlore]" in diff and "+required = true" in diff
    assert tree(user) == before
    assert not (user.parent / "state" / "integrations").exists()


def test_the_text_view_of_a_dry_run_says_what_would_happen(user: Path) -> None:
    """The rows under `would change (dry run, nothing written)` said `created` and `removed`;
    and `uninstall --client all` with nothing installed said "not installed for all"."""
    refused = in_process("uninstall", "--client", "all", env={"COLUMNS": "80"})
    assert refused.returncode == 1
    assert refusal_lines(refused.stderr)[0] == (
        "error NOTHING_INSTALLED: teamlore is not installed for claude, codex or pi (user scope)"
    )
    preview = in_process("install", "--client", "codex", "--dry-run", env={"COLUMNS": "80"})
    rows = [line for line in preview.stdout.splitlines() if line.startswith("  ")]
    assert rows == ["  would create  ~/.codex/config.toml", "  would create  ~/.codex/hooks.json"]
    assert preview.stdout.startswith("codex (user scope): would change (dry run), nothing written")
    assert in_process("install", "--client", "codex").returncode == 0
    again = in_process("install", "--client", "codex", "--dry-run", env={"COLUMNS": "80"})
    assert again.stdout.startswith("codex (user scope): nothing to change (dry run), nothing")
    preview = in_process("uninstall", "--client", "codex", "--dry-run", env={"COLUMNS": "80"})
    rows = [line for line in preview.stdout.splitlines() if line.startswith("  ")]
    assert rows == ["  would remove  ~/.codex/config.toml", "  would remove  ~/.codex/hooks.json"]


def test_project_scope_is_safe_to_commit(user: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "sub").mkdir()
    op("install", repo / "sub", client="all", scope="project")
    written = tree(repo)
    assert sorted(k for k in written if not k.startswith(".git/")) == [
        ".claude/settings.json",
        ".codex/config.toml",
        ".codex/hooks.json",
        ".mcp.json",
    ]
    for name, data in written.items():
        if name.startswith(".git/"):
            continue
        text = data.decode()
        for private in (str(tmp_path), "TEAMLORE_HOME", os.environ.get("USER") or "root", "python"):
            assert private not in text, (name, private)
    servers = json.loads(written[".mcp.json"])["mcpServers"]
    assert servers["teamlore"]["command"] == "teamlore"
    assert servers["teamlore"]["args"] == ["mcp", "--capability", "team-read"]
    codex = tomllib.loads(written[".codex/config.toml"].decode())
    assert codex["mcp_servers"]["teamlore_personal"]["command"] == "teamlore"
    hook = json.loads(written[".claude/settings.json"])["hooks"]["SessionStart"][0]["hooks"][0]
    assert hook["command"] == "teamlore hook session-start --client claude"

    op("uninstall", repo, client="all", scope="project")
    assert sorted(k for k in tree(repo) if not k.startswith(".git/")) == []
    assert not (repo / ".codex").exists() and not (repo / ".claude").exists()


def test_project_scope_says_which_files_git_ignores(user: Path, tmp_path: Path) -> None:
    """ "Safe to commit" holds only if git commits them: a repository that ignores `.claude/`
    (Claude Code's settings.local.json lives there) gets the install, and is told which files
    the team will not get, by which rule; the others are not named."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("node_modules/\n.claude/\n")
    result = op("install", repo, client="all", scope="project")
    ignored = {done["client"]: done["ignoredByGit"] for done in result["installed"]}
    assert ignored == {
        "claude": [{"rule": ".gitignore:2 .claude/", "paths": [".claude/settings.json"]}],
        "codex": [],
    }
    assert (repo / ".claude" / "settings.json").is_file()
    op("uninstall", repo, client="all", scope="project")
    shown = in_process("install", "--client", "claude", "--scope", "project", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert (
        "warn git ignores 1 file (.gitignore:2 .claude/): your team will not get it\n"
        "  .claude/settings.json\n"
    ) in shown.stdout


def test_team_and_personal_flags_pick_the_write_tiers(user: Path) -> None:
    op("install", user, client="codex", team=True, personal=True)
    codex = tomllib.loads((user / ".codex" / "config.toml").read_text())
    team = codex["mcp_servers"]["teamlore"]
    assert "team" in team["args"] and "threadshare_memory_stage" in team["enabled_tools"]
    assert team["default_tools_approval_mode"] == "prompt"
    assert "memory_init" in codex["mcp_servers"]["teamlore_personal"]["enabled_tools"]


# -- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "content"),
    [(".codex/config.toml", "model = \n[broken"), (".claude.json", "{not json")],
)
def test_a_config_file_that_does_not_parse_is_refused_and_nothing_changes(
    user: Path, relative: str, content: str
) -> None:
    seed_user_configs(user)
    (user / relative).write_text(content)
    before = tree(user)
    err = refused("install", user, client="all")
    assert err.code == "CLIENT_CONFIG_INVALID" and relative.split("/")[-1] in err.message
    assert err.message.startswith(f"~/{relative}") and str(user) not in err.message
    assert tree(user) == before


@pytest.mark.parametrize(
    ("client", "name"), [("claude", ".claude.json"), ("codex", ".codex/config.toml")]
)
def test_a_config_a_git_merge_left_unresolved_is_refused_saying_so(
    user: Path, client: str, name: str
) -> None:
    """A client config kept in a dotfiles repository, in the middle of a merge: the refusal
    names the conflict and its line, not the parser's complaint about a marker line."""
    seed_user_configs(user)
    lines = (user / name).read_text().splitlines()
    conflicted = [*lines[:1], "<<<<<<< HEAD", *lines[1:], "=======", ">>>>>>> laptop"]
    (user / name).write_text("\n".join(conflicted) + "\n")
    before = tree(user)
    err = refused("install", user, client=client)
    assert err.code == "CLIENT_CONFIG_INVALID"
    assert err.message.startswith(f"~/{name}: line 2: an unresolved git merge conflict")
    assert tree(user) == before


@pytest.mark.parametrize(
    ("client", "name"), [("claude", ".claude.json"), ("codex", ".codex/config.toml")]
)
def test_a_config_saved_with_a_byte_order_mark_is_edited_and_keeps_it(
    user: Path, client: str, name: str
) -> None:
    """Both clients read a file that begins with a UTF-8 BOM (test_install_e2e checks the real
    ones): install edits it and the mark stays first; uninstall gives back its bytes, or, after
    an edit by hand, removes teamlore's entries and keeps the mark."""
    seed_user_configs(user)
    config = user / name
    config.write_bytes(b"\xef\xbb\xbf" + config.read_bytes())
    before = tree(user)
    op("install", user, client=client)
    data = config.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and not data[3:].startswith(b"\xef\xbb\xbf")
    assert "teamlore_personal" in data.decode("utf-8-sig")
    op("uninstall", user, client=client)
    assert tree(user) == before

    op("install", user, client=client)
    config.write_bytes(config.read_bytes().replace(b"other", b"mine"))  # the backup is stale now
    op("uninstall", user, client=client)
    assert config.read_bytes() == before[name].replace(b"other", b"mine")


def test_a_dry_run_shows_the_change_a_symlinked_config_needs(user: Path, tmp_path: Path) -> None:
    """Dotfiles kept in a folder of their own: the dry run reads through the link and shows
    the change install would make in its target; nothing is written, there or beside it."""
    real = tmp_path / "dotfiles-settings.json"
    real.write_text(CLAUDE_SETTINGS)
    (user / ".claude").mkdir()
    (user / ".claude" / "settings.json").symlink_to(real)
    before = tree(user)
    [preview] = op("install", user, client="claude", dryRun=True)["installed"]
    [settings] = [f for f in preview["files"] if f["path"].endswith("settings.json")]
    assert settings["linkTarget"] == str(real)
    added = [line for line in settings["diff"].splitlines() if line.startswith("+ ")]
    assert any("hook session-start --client claude" in line for line in added)
    assert real.read_text() == CLAUDE_SETTINGS and tree(user) == before


def test_a_folder_where_a_config_file_belongs_is_named_as_one(user: Path) -> None:
    (user / ".claude.json").mkdir()
    err = refused("install", user, client="claude")
    assert err.code == "CLIENT_CONFIG_UNSAFE"
    assert (
        err.message.startswith("~/.claude.json is a directory;") and "move it aside" in err.message
    )


def test_an_entry_with_our_name_that_we_did_not_write_needs_force(user: Path) -> None:
    mine = '[mcp_servers.teamlore]\ncommand = "my-own-teamlore"\n'
    (user / ".codex").mkdir()
    (user / ".codex" / "config.toml").write_text(mine)
    err = refused("install", user, client="codex")
    assert err.code == "INTEGRATION_CONFLICT" and "--force" in err.message
    assert (user / ".codex" / "config.toml").read_text() == mine

    op("install", user, client="codex", force=True)
    replaced = tomllib.loads((user / ".codex" / "config.toml").read_text())
    assert replaced["mcp_servers"]["teamlore"]["required"] is True
    op("uninstall", user, client="codex")
    assert (user / ".codex" / "config.toml").read_text() == mine


def test_a_read_only_home_is_refused_with_nothing_written(user: Path) -> None:
    with unwritable(user):
        err = refused("install", user, client="claude")
    assert err.code == "CLIENT_CONFIG_UNWRITABLE"
    assert list(user.iterdir()) == []


def test_a_read_only_config_folder_refuses_every_client_with_nothing_written(user: Path) -> None:
    seed_user_configs(user)
    before = tree(user)
    with unwritable(user / ".codex"):
        err = refused("install", user, client="all")
    assert err.code == "CLIENT_CONFIG_UNWRITABLE" and ".codex" in err.message
    assert tree(user) == before  # claude, checked first, was not written either


def test_a_dry_run_foresees_the_refusal_of_a_read_only_config(user: Path) -> None:
    """`--dry-run` listed the edits of a file the real run then refused to write, saying
    nothing of it; it still shows them (a read-only dotfile's diff is worth seeing), each with
    a note of the real run's refusal."""
    seed_user_configs(user)
    for name in ("install", "uninstall"):
        before = tree(user)
        with unwritable(user / ".codex"):
            preview = op(name, user, client="codex", dryRun=True)
            err = refused(name, user, client="codex")
        refusals = [n for n in preview["notes"] if "would be refused" in n]
        assert refusals and all(  # one for each file in the folder
            n.startswith("codex: the real run would be refused: folder ~/.codex is not writable")
            and n.endswith("(CLIENT_CONFIG_UNWRITABLE)")
            for n in refusals
        ), refusals
        [config] = [
            f
            for f in preview["installed" if name == "install" else "uninstalled"][0]["files"]
            if f["path"].endswith("config.toml")
        ]
        assert config["diff"] and "unwritable" in config, config
        assert err.code == "CLIENT_CONFIG_UNWRITABLE" and tree(user) == before
        op(name, user, client="codex")  # what the real run does once it can write


def test_a_missing_cli_is_refused_unless_forced(user: Path, tmp_path: Path) -> None:
    (tmp_path / "bin" / "codex").unlink()
    err = refused("install", user, client="codex")
    assert err.code == "CLIENT_NOT_FOUND" and "codex" in err.message
    assert err.remedy is not None and err.remedy.startswith("Install `codex` (`npm")  # not claude
    assert not (user / ".codex").exists()
    result = op("install", user, client="all")  # all: the clients that are there
    assert [i["client"] for i in result["installed"]] == ["claude"]
    assert any("codex" in note for note in result["notes"])


def test_uninstall_without_an_installation_is_refused(user: Path) -> None:
    assert refused("uninstall", user, client="claude").code == "NOTHING_INSTALLED"
    assert not (user.parent / "state").exists()  # a refusal leaves no trace


def test_cli_exit_codes_and_text(user: Path) -> None:
    bad = teamlore_cli("install", "--client", "vim", "--format", "json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["code"] == "INVALID_ARGUMENT"
    missing = teamlore_cli("uninstall", "--client", "codex")
    assert missing.returncode == 1 and "NOTHING_INSTALLED" in missing.stderr
    done = teamlore_cli("install", "--client", "claude")
    assert done.returncode == 0, done.stderr
    assert "claude (user scope): installed" in done.stdout and ".claude.json" in done.stdout


def test_sync_on_stop_adds_a_stop_hook_for_each_client(user: Path) -> None:
    seed_user_configs(user)
    before = tree(user)
    op("install", user, client="all", syncOnStop=True)
    codex_hooks = json.loads((user / ".codex" / "hooks.json").read_text())["hooks"]
    [group] = codex_hooks["Stop"]
    assert group["hooks"][0]["command"].endswith("hook session-end --client codex")
    settings = json.loads((user / ".claude" / "settings.json").read_text())
    assert [g["hooks"][0]["command"].split()[-3:] for g in settings["hooks"]["Stop"]] == [
        ["session-end", "--client", "claude"]
    ]
    op("uninstall", user, client="all")
    assert tree(user) == before


# -- the repository you stand in ------------------------------------------------------------


def test_a_user_scope_install_writes_into_the_repository_only_when_asked_and_uninstall_takes_it_out(
    user: Path, repo: Path
) -> None:
    before = tree(repo)
    result = op("install", repo, client="all")
    assert all("assemble" not in done for done in result["installed"])
    assert tree(repo) == before
    op("uninstall", repo, client="all")

    result = op("install", repo, client="all", assemble=True)
    assert [done["assemble"]["ran"] for done in result["installed"]] == [True, True]
    assert "## Team memory" in (repo / "CLAUDE.md").read_text()
    assert "## Team memory" in (repo / "AGENTS.md").read_text()
    assert (repo / ".claude" / "skills").is_dir()
    op("uninstall", repo, client="all")
    assert tree(repo) == before
    assert not (repo / ".claude").exists() and not (repo / ".agents").exists()


def test_a_claude_md_linked_to_agents_md_gets_one_block_and_uninstall_takes_it_out(
    user: Path, repo: Path
) -> None:
    """The common `CLAUDE.md -> AGENTS.md`: install stopped with CLIENT_CONFIG_UNSAFE after it
    had written .mcp.json and .claude/settings.json, and the team got no block and no Skills."""
    (repo / "AGENTS.md").write_text("# Our project\n\nRun make test.\n")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    before = tree(repo)
    claude, codex = op("install", repo, client="all", assemble=True)["installed"]
    assert claude["assemble"]["result"]["targetLinksTo"] == "AGENTS.md"
    assert codex["assemble"]["result"]["changed"] is True
    assert (repo / "CLAUDE.md").is_symlink()
    assert (repo / "AGENTS.md").read_text().count("## Team memory") == 1
    assert (repo / ".agents" / "skills").is_dir()
    op("uninstall", repo, client="all")
    assert tree(repo) == before and (repo / "CLAUDE.md").is_symlink()


def test_an_instructions_file_assemble_refuses_leaves_the_install_done_and_says_why(
    user: Path, repo: Path, tmp_path: Path
) -> None:
    (tmp_path / "shared.md").write_text("# Shared\n")
    (repo / "CLAUDE.md").symlink_to(tmp_path / "shared.md")
    before = tree(repo)
    (done,) = op("install", repo, client="claude", assemble=True)["installed"]
    assert done["assemble"]["ran"] is False and done["assemble"]["refused"] is True
    assert done["assemble"]["reason"].startswith("ASSEMBLY_TARGET_INVALID: CLAUDE.md is")
    assert done["files"] and all(f["action"] != "unchanged" for f in done["files"])
    assert (tmp_path / "shared.md").read_text() == "# Shared\n"
    op("uninstall", repo, client="claude")
    assert tree(repo) == before


def test_an_assembled_file_edited_since_install_is_kept_by_uninstall(
    user: Path, repo: Path
) -> None:
    op("install", repo, client="claude", assemble=True)
    edited = (repo / "CLAUDE.md").read_text() + "\nMy own note.\n"
    (repo / "CLAUDE.md").write_text(edited)
    result = op("uninstall", repo, client="claude")
    assert (repo / "CLAUDE.md").read_text() == edited
    actions = {Path(f["path"]).name: f["action"] for f in result["uninstalled"][0]["files"]}
    assert actions["CLAUDE.md"] == "kept (changed since install)"


@pytest.mark.parametrize("step", ["assemble.intent-written", "assemble.written"])
def test_a_kill_around_assemble_is_recorded_by_the_next_uninstall(
    user: Path, repo: Path, step: str
) -> None:
    (repo / "CLAUDE.md").write_text("# Our project\n\nRun make test.\n")
    before = tree(repo)
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from teamlore.ops.registry import OpContext, run_operation\n"
        "run_operation('install', OpContext(cwd=Path(sys.argv[1])),"
        " {'client': 'claude', 'assemble': True})\n"
    )
    run_killed_at(step, script, str(repo))
    op("uninstall", repo, client="claude")
    assert tree(repo) == before


def test_a_second_assembling_install_keeps_the_first_backup(user: Path, repo: Path) -> None:
    (repo / "CLAUDE.md").write_text("# Our project\n")
    before = tree(repo)
    op("install", repo, client="claude", assemble=True)
    op("install", repo, client="claude", assemble=True)
    op("uninstall", repo, client="claude")
    assert tree(repo) == before


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_an_assembled_file_whose_backup_is_lost_loses_only_the_block_on_uninstall(
    user: Path, repo: Path, newline: str
) -> None:
    """Without the copy of the file as it was, uninstall kept the whole file, block included,
    and dropped the record: nothing would ever take teamlore's block out again. Now it takes
    out the block alone; the team's own text stays byte for byte."""
    ours = f"# Our project{newline}{newline}Run make test.{newline}".encode()
    (repo / "CLAUDE.md").write_bytes(ours)
    installed = in_process("install", "--client", "claude", "--assemble", cwd=repo)
    assert installed.returncode == 0, installed.stderr
    assert b"## Team memory" in (repo / "CLAUDE.md").read_bytes()
    for backup in (Path(os.environ["TEAMLORE_HOME"]) / "integrations" / "backups").iterdir():
        backup.unlink()

    done = in_process("uninstall", "--client", "claude", cwd=repo, env={"COLUMNS": "80"})

    assert done.returncode == 0, done.stderr
    assert f"block removed (backup lost) {repo / 'CLAUDE.md'}" in done.stdout
    assert "took its team memory block out" in " ".join(done.stdout.split())
    assert (repo / "CLAUDE.md").read_bytes() == ours


def test_a_project_install_after_an_assembling_user_install_leaves_claude_md_as_it_was(
    user: Path, repo: Path
) -> None:
    """The project install's assemble stored its backup of CLAUDE.md under the user install's
    backup name (one name per file) and, changing nothing, dropped it: the user install's
    uninstall then kept teamlore's block for good."""
    (repo / "CLAUDE.md").write_text("# Our project\n")
    before = tree(repo)
    op("install", repo, client="claude", assemble=True)
    op("install", repo, client="claude", scope="project")

    op("uninstall", repo, client="claude", scope="project")
    op("uninstall", repo, client="claude")

    assert tree(repo) == before
