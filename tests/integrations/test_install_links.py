"""A client config kept in a dotfiles repository and linked into place (`~/.claude.json`,
`~/.codex/config.toml` as symlinks): both clients read through the link, and Claude Code keeps
the link when it rewrites its file, so install and uninstall edit the link's target (atomically,
in the target's own folder) and keep the link itself. A link the client could not follow either
(dangling, a loop, to a folder) is refused with nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from install_world import CLAUDE_JSON, CLAUDE_SETTINGS, CODEX_CONFIG, op, refused, tree

from support import teamlore_cli

LINKED = [
    ("claude", ".claude.json", CLAUDE_JSON),
    ("claude", ".claude/settings.json", CLAUDE_SETTINGS),
    ("codex", ".codex/config.toml", CODEX_CONFIG),
]


def linked_into_dotfiles(home: Path, dotfiles: Path, name: str, text: str) -> Path:
    """`~/name` as a relative symlink to `dotfiles/name` holding `text`; the target."""
    target = dotfiles / name.lstrip(".")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    target.chmod(0o640)
    link = home / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))
    return target


@pytest.mark.parametrize(("client", "name", "text"), LINKED)
def test_install_and_uninstall_write_through_a_symlinked_config_and_keep_the_link(
    user: Path, tmp_path: Path, client: str, name: str, text: str
) -> None:
    dotfiles = tmp_path / "dotfiles"
    target = linked_into_dotfiles(user, dotfiles, name, text)
    link = os.readlink(user / name)
    before = tree(dotfiles)

    [done] = op("install", user, client=client)["installed"]
    [shown] = [f for f in done["files"] if f["path"] == str(user / name)]
    assert shown["action"] == "updated" and shown["linkTarget"] == str(target)
    assert os.readlink(user / name) == link  # still the same link
    assert "teamlore_personal" in target.read_text() or "session-start" in target.read_text()
    assert target.stat().st_mode & 0o777 == 0o640  # the target's mode kept
    assert sorted(os.listdir(target.parent)) == sorted(p.name for p in [target])  # no temp left

    op("uninstall", user, client=client)
    assert os.readlink(user / name) == link and tree(dotfiles) == before


def test_a_chain_of_links_is_followed_to_the_file_at_its_end(user: Path, tmp_path: Path) -> None:
    target = linked_into_dotfiles(user, tmp_path / "dotfiles", ".codex/config.toml", CODEX_CONFIG)
    middle = tmp_path / "current-config.toml"
    middle.symlink_to(target)
    (user / ".codex" / "config.toml").unlink()
    (user / ".codex" / "config.toml").symlink_to(middle)
    op("install", user, client="codex")
    assert middle.is_symlink() and "[mcp_servers.teamlore]" in target.read_text()
    op("uninstall", user, client="codex")
    assert target.read_text() == CODEX_CONFIG and middle.is_symlink()


@pytest.mark.parametrize(
    ("make", "says"),
    [
        ("dangling", "which does not exist; create that file (or remove the link)"),
        ("loop", "cannot be followed (a loop of symbolic links)"),
        ("folder", "which is a directory"),
    ],
)
def test_a_link_the_client_could_not_follow_either_is_refused_with_nothing_written(
    user: Path, tmp_path: Path, make: str, says: str
) -> None:
    config = user / ".codex" / "config.toml"
    config.parent.mkdir()
    if make == "dangling":
        config.symlink_to(tmp_path / "dotfiles" / "codex" / "config.toml")
    elif make == "loop":
        config.symlink_to(user / ".codex" / "other.toml")
        (user / ".codex" / "other.toml").symlink_to(config)
    else:
        (tmp_path / "a-folder").mkdir()
        config.symlink_to(tmp_path / "a-folder")
    before = tree(user)
    for client in ("codex", "all"):  # with all, Claude Code is not written either
        err = refused("install", user, client=client)
        assert err.code == "CLIENT_CONFIG_UNSAFE" and says in err.message
        assert err.message.startswith("~/.codex/config.toml is a symbolic link")
        assert "nothing was changed" in err.message and tree(user) == before
        # a link is not what is wrong (install writes through one): where it leads is
        assert err.to_json()["next"] == (
            "Point the link at a settings file, or use a regular file; then retry."
        )


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_a_linked_target_the_user_may_not_write_is_refused(user: Path, tmp_path: Path) -> None:
    target = linked_into_dotfiles(user, tmp_path / "dotfiles", ".codex/config.toml", CODEX_CONFIG)
    target.chmod(0o444)
    err = refused("install", user, client="codex")
    assert err.code == "CLIENT_CONFIG_UNWRITABLE" and target.read_text() == CODEX_CONFIG


def test_a_config_moved_into_dotfiles_after_install_is_uninstalled_through_its_link(
    user: Path, tmp_path: Path
) -> None:
    """Installed into a regular file, then the user moved it into a dotfiles repository and
    linked it back: doctor reads it as the client does and finds teamlore there, and uninstall
    removes teamlore's entries from the target, keeping the link (even the file install created
    is not removed: it is the user's dotfile now)."""
    config = user / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_CONFIG)
    op("install", user, client="codex")
    real = tmp_path / "dotfiles-config.toml"
    config.rename(real)
    config.symlink_to(real)
    checks = [
        c for c in op("doctor", user, client="codex")["checks"] if c["check"] == "codex.config"
    ]
    assert [c["status"] for c in checks] == ["ok", "ok", "ok", "ok"]

    [preview] = op("uninstall", user, client="codex", dryRun=True)["uninstalled"]
    [shown] = [f for f in preview["files"] if f["path"] == str(config)]
    assert shown["linkTarget"] == str(real) and "-[mcp_servers.teamlore]" in shown["diff"]
    op("uninstall", user, client="codex")
    assert config.is_symlink() and real.read_text() == CODEX_CONFIG


def test_the_text_view_says_where_a_linked_config_was_written(user: Path, tmp_path: Path) -> None:
    linked_into_dotfiles(user, tmp_path / "dotfiles", ".claude.json", CLAUDE_JSON)
    preview = teamlore_cli("install", "--client", "claude", "--dry-run", env={"COLUMNS": "80"})
    assert preview.returncode == 0, preview.stderr
    said = f"a symbolic link: the change would be made in {tmp_path}/dotfiles/claude.json;"
    assert said in " ".join(preview.stdout.split())
    done = teamlore_cli("install", "--client", "claude", env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    assert "the change was made in" in done.stdout and "the link stays" in done.stdout
