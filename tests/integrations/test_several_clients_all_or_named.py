"""`install` / `uninstall --client all` with one client's config that cannot be written (its
target in a dotfiles repository, linked into place, made read-only): every client's files are
checked before any is written, so the refusal changes nothing, as it says. When a write fails
after that check (the folder made read-only while the command runs), the clients already done
stay done, and the refusal names them and what their files became."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

import pytest
from install_world import CLAUDE_JSON, CODEX_CONFIG, op, refused, seed_user_configs, tree
from test_install_links import linked_into_dotfiles

from support import unwritable
from teamlore.core import errors
from teamlore.core.failpoints import PAUSE_ENV
from teamlore.ops.integrations.each_client import already_done


def installed_with_codex_in_dotfiles(user: Path, tmp_path: Path) -> Path:
    """Both clients installed (`--team`), ~/.codex/config.toml a link into a dotfiles
    repository; the link's target."""
    seed_user_configs(user)
    (user / ".codex" / "config.toml").unlink()
    target = linked_into_dotfiles(user, tmp_path / "dotfiles", ".codex/config.toml", CODEX_CONFIG)
    op("install", user, client="all", team=True)
    return target


def test_uninstall_all_refuses_before_any_client_when_one_config_is_read_only(
    user: Path, tmp_path: Path
) -> None:
    seeded = CLAUDE_JSON.encode()
    target = installed_with_codex_in_dotfiles(user, tmp_path)
    state = user.parent / "state"
    before, recorded = tree(user), tree(state)
    with unwritable(target):
        err = refused("uninstall", user, client="all")
    assert err.code == "CLIENT_CONFIG_UNWRITABLE" and err.message.endswith("nothing was changed")
    assert tree(user) == before and tree(state) == recorded  # Claude's hook is still there

    op("uninstall", user, client="all")
    assert target.read_text() == CODEX_CONFIG and tree(user)[".claude.json"] == seeded


def paused_on_the_second_client(
    monkeypatch: pytest.MonkeyPatch, user: Path, name: str, folder: Path, **payload: Any
) -> errors.TeamloreError:
    """`name` run for both clients, its dotfiles `folder` made read-only once the first
    client is done and the second one's files checked (at its transaction's start)."""
    flag = user.parent / "paused"
    monkeypatch.setenv(PAUSE_ENV, f"{name}.planned={flag}")
    caught: list[BaseException] = []

    def run() -> None:
        try:
            op(name, user, client="all", **payload)
        except BaseException as exc:
            caught.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    with contextlib.ExitStack() as stack:
        for second in (False, True):
            while not flag.exists():
                assert worker.is_alive(), caught
                worker.join(0.005)
            if second:
                stack.enter_context(unwritable(folder))
            flag.unlink()
        worker.join(30)
    monkeypatch.delenv(PAUSE_ENV)
    [err] = caught
    assert isinstance(err, errors.TeamloreError)
    return err


def test_a_write_failing_after_the_check_names_the_client_already_uninstalled(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = installed_with_codex_in_dotfiles(user, tmp_path)
    installed = target.read_text()
    err = paused_on_the_second_client(monkeypatch, user, "uninstall", target.parent)
    assert err.code == "CLIENT_CONFIG_UNWRITABLE" and "nothing was changed" not in err.message
    assert (
        "; claude (~/.claude.json: restored, ~/.claude/settings.json: restored) was already"
        " uninstalled" in err.message
    )
    [claude] = err.to_json()["details"]["alreadyChanged"]
    assert claude["client"] == "claude" and {f["action"] for f in claude["files"]} == {"restored"}
    assert target.read_text() == installed  # codex's own transaction changed nothing

    op("uninstall", user, client="all")  # the same command again does the rest
    assert target.read_text() == CODEX_CONFIG


def test_a_write_failing_after_the_check_names_the_client_already_installed(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_user_configs(user)
    (user / ".codex" / "config.toml").unlink()
    target = linked_into_dotfiles(user, tmp_path / "dotfiles", ".codex/config.toml", CODEX_CONFIG)
    err = paused_on_the_second_client(monkeypatch, user, "install", target.parent, team=True)
    assert err.code == "CLIENT_CONFIG_UNWRITABLE"
    assert (
        "; claude (~/.claude.json: updated, ~/.claude/settings.json: updated) was already"
        " installed" in err.message
    )
    assert target.read_text() == CODEX_CONFIG
    assert op("install", user, client="all", team=True)["installed"][1]["client"] == "codex"


def test_a_refusal_saying_nothing_was_changed_says_it_of_its_own_client_only() -> None:
    """A file another program wrote while the second client's transaction ran: that client's
    files were put back, the first client's stay."""
    err = errors.TeamloreError(
        errors.CLIENT_CONFIG_CHANGED,
        "~/.codex/config.toml changed while teamlore was writing it; its change was kept and"
        " nothing was changed; run the command again",
    )
    done = [{"client": "claude", "files": [{"path": "/nowhere/.claude.json", "action": "updated"}]}]
    told = already_done(err, "codex", done, "installed")
    assert told.code == "CLIENT_CONFIG_CHANGED" and told.message == (
        "~/.codex/config.toml changed while teamlore was writing it; its change was kept and no"
        " file of codex was changed, but claude (/nowhere/.claude.json: updated) was already"
        " installed; run the command again"
    )
    assert told.to_json()["next"].endswith(
        "claude stays installed: the same command, run again, does the rest."
    )
