"""Two installations in one file (docs/agents.md, "Two installations in one file"): a user-scope
install with `--assemble` and a project-scope install both hold the repository's CLAUDE.md /
AGENTS.md, and in a home that is a git repository both hold `~/.claude/settings.json`. Each
keeps its own backup, neither install nor uninstall deletes the other's, and after both
uninstalls, in either order, every file is as it was before, byte for byte; after the first,
the file is as the remaining installation wrote it. All through the CLI's app, in this
process; the runs killed at a failpoint in a real process."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from install_world import tree

from support import git, in_process, teamlore_cli

INSTRUCTIONS = {"claude": "CLAUDE.md", "codex": "AGENTS.md"}
# CRLF and no final newline: taking the managed block out does not give these bytes back, only
# the copy install kept does
THE_TEAMS_OWN = b"# Our project\r\n\r\nRun make test."
SETTINGS = b'{\n  "theme": "dark",\n  "hooks": {"Stop": []}\n}\n'
USER = ["--scope", "user"]
PROJECT = ["--scope", "project"]


def teamlore(where: Path, *args: str, failpoint: str | None = None) -> str:
    """The command from `where`: killed at `failpoint` in a real process, or, what it does to
    the files being the subject, in this process (`in_process`)."""
    if failpoint:
        done = teamlore_cli(*args, cwd=where, env={"TEAMLORE_FAILPOINT": failpoint})
        assert done.returncode == -9, done.stdout + done.stderr  # killed there
    else:
        done = in_process(*args, cwd=where)
        assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def state() -> Path:
    return Path(os.environ["TEAMLORE_HOME"]) / "integrations"


def without_git(files: dict[str, bytes]) -> dict[str, bytes]:
    return {name: data for name, data in files.items() if not name.startswith(".git/")}


def reached(folder: Path, way: str) -> Path:
    """`folder` itself, or a symlink to it beside it (a HOME or a checkout reached through a
    link: the project root is the resolved path, HOME and the cwd's link are not)."""
    if way == "directly":
        return folder
    link = folder.with_name(f"{folder.name}-link")
    link.symlink_to(folder)
    return link


@pytest.mark.parametrize("way", ["directly", "through a symlink"])
@pytest.mark.parametrize("client", ["claude", "codex"])
@pytest.mark.parametrize("first", ["user", "project"])
def test_a_user_install_with_assemble_and_a_project_install_give_the_file_back_in_either_order(
    user: Path, repo: Path, client: str, first: str, way: str
) -> None:
    """The project install's assemble stored its copy of CLAUDE.md under the user install's
    name (one name per file), changed nothing and deleted it: the user install's uninstall
    then only took the block out, and the team's bytes (CRLF, no final newline) were lost."""
    instructions = repo / INSTRUCTIONS[client]
    instructions.write_bytes(THE_TEAMS_OWN)
    before, home_before = tree(repo), tree(user)
    where = reached(repo, way)
    teamlore(where, "install", "--client", client, "--assemble")
    teamlore(where, "install", "--client", client, *PROJECT)
    assembled = instructions.read_bytes()
    assert b"## Team memory" in assembled

    second = "project" if first == "user" else "user"
    teamlore(where, "uninstall", "--client", client, "--scope", first)
    assert instructions.read_bytes() == assembled  # the other installation's block stays
    teamlore(where, "uninstall", "--client", client, "--scope", second)

    assert tree(repo) == before and tree(user) == home_before
    assert os.listdir(state() / "backups") == []


@pytest.mark.parametrize("way", ["directly", "through a symlink"])
@pytest.mark.parametrize("first", ["user", "project"])
def test_a_home_that_is_a_repository_gets_its_settings_back_after_a_user_and_a_project_install(
    user: Path, first: str, way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`~/.claude/settings.json` is both installations' file when HOME is a git repository
    (dotfiles): the project install overwrote the user install's copy with the user install's
    own bytes, the next user install deleted it, and an uninstall of the user install first left
    `"SessionStart": []` behind. With HOME a symlink, the project install (its root resolved)
    did not see the file as shared and kept a copy of its own, and the user uninstall then put
    the file back whole, the project's hook with it."""
    git(user, "init", "-q")
    settings = user / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(SETTINGS)
    before = without_git(tree(user))
    home = reached(user, way)
    monkeypatch.setenv("HOME", str(home))
    teamlore(home, "install", "--client", "claude")
    teamlore(home, "install", "--client", "claude", *PROJECT)
    # again, with a hook more: the file is teamlore's, not edited
    teamlore(home, "install", "--client", "claude", "--sync-on-stop")

    second = "project" if first == "user" else "user"
    teamlore(home, "uninstall", "--client", "claude", "--scope", first)
    hooks = json.loads(settings.read_text())["hooks"]
    assert len(hooks["SessionStart"]) == 1  # the other installation's hooks stay
    assert len(hooks["Stop"]) == (1 if second == "user" else 0)
    last = teamlore(home, "uninstall", "--client", "claude", "--scope", second)

    # the project's record names the resolved path: shown as is when HOME is a link
    assert re.search(r"restored +\S*/\.claude/settings\.json\n", last), last
    assert without_git(tree(user)) == before
    assert os.listdir(state() / "backups") == []


def _as_an_older_teamlore_named_them() -> None:
    """Each backup renamed as a teamlore before per-installation names named it, after its
    file's path alone, and the manifest's references with it."""
    manifest = state() / "manifest.json"
    record = json.loads(manifest.read_text())
    for installation in record["installations"]:
        for file in installation["files"]:
            if file["backup"]:
                old = f"{hashlib.sha256(file['path'].encode()).hexdigest()[:24]}.orig"
                (state() / "backups" / file["backup"]).rename(state() / "backups" / old)
                file["backup"] = old
    manifest.write_text(json.dumps(record))


@pytest.mark.parametrize("first", ["user", "project"])
def test_a_backup_an_older_teamlore_stored_is_found_and_kept_through_a_project_install(
    user: Path, repo: Path, first: str
) -> None:
    (repo / "CLAUDE.md").write_bytes(THE_TEAMS_OWN)
    before = tree(repo)
    teamlore(repo, "install", "--client", "claude", "--assemble")
    _as_an_older_teamlore_named_them()

    teamlore(repo, "install", "--client", "claude", *PROJECT)
    second = "project" if first == "user" else "user"
    teamlore(repo, "uninstall", "--client", "claude", "--scope", first)
    teamlore(repo, "uninstall", "--client", "claude", "--scope", second)

    assert tree(repo) == before
    assert os.listdir(state() / "backups") == []


@pytest.mark.parametrize("step", ["assemble.planned", "install.planned"])
def test_a_project_install_killed_after_storing_its_backups_leaves_the_user_installs_alone(
    user: Path, repo: Path, step: str
) -> None:
    """Killed after it stored its backups and before its intent record, the project install
    had overwritten the user install's copy of CLAUDE.md (or, in a home that is a repository,
    of settings.json) with the user install's own bytes: uninstall then put teamlore's block
    (or hook) back instead of the file as it was."""
    where = repo
    if step == "install.planned":  # the shared file is a config: a home that is a repository
        where = user
        git(user, "init", "-q")
        (user / ".claude").mkdir()
        (user / ".claude" / "settings.json").write_bytes(SETTINGS)
    (where / "CLAUDE.md").write_bytes(THE_TEAMS_OWN)
    before = without_git(tree(where))
    teamlore(where, "install", "--client", "claude", "--assemble")

    teamlore(where, "install", "--client", "claude", *PROJECT, failpoint=step)
    teamlore(where, "uninstall", "--client", "claude")
    if step == "assemble.planned":  # its servers were installed before the assemble
        teamlore(where, "uninstall", "--client", "claude", *PROJECT)

    assert without_git(tree(where)) == before
    assert os.listdir(state() / "backups") == []


def a_home_that_is_a_repository(user: Path) -> Path:
    """`~/.claude/settings.json` of a home that is a git repository: both scopes' file."""
    git(user, "init", "-q")
    settings = user / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(SETTINGS)
    return settings


def edited_by_hand(settings: Path) -> None:
    settings.write_bytes(settings.read_bytes().replace(b'"dark"', b'"light"'))


def session_start_commands(settings: Path) -> list[str]:
    groups = json.loads(settings.read_text()).get("hooks", {}).get("SessionStart", [])
    return [hook["command"] for group in groups for hook in group["hooks"]]


@pytest.mark.parametrize("first", ["user", "project"])
def test_settings_edited_between_the_two_installs_keep_the_edit_and_lose_teamlores_hooks(
    user: Path, first: str
) -> None:
    """Edited by hand after the first install, settings.json was no longer as the first one
    left it, so the second kept a copy of it as it found it, the first one's hook in it, and
    its record followed the first uninstall's write: the second uninstall then put that copy
    back, the first one's hook with it. The second one's hook also stayed in the
    `SessionStart` list the first had made, which then stayed behind empty."""
    settings = a_home_that_is_a_repository(user)
    second = "project" if first == "user" else "user"
    teamlore(user, "install", "--client", "claude", "--scope", first)
    firsts = session_start_commands(settings)
    edited_by_hand(settings)
    teamlore(user, "install", "--client", "claude", "--scope", second)

    teamlore(user, "uninstall", "--client", "claude", "--scope", second)
    assert session_start_commands(settings) == firsts  # the first one's hook stays
    teamlore(user, "install", "--client", "claude", "--scope", second)
    seconds = [c for c in session_start_commands(settings) if c not in firsts]

    teamlore(user, "uninstall", "--client", "claude", "--scope", first)
    assert session_start_commands(settings) == seconds  # the second one's hook stays
    teamlore(user, "uninstall", "--client", "claude", "--scope", second)

    assert settings.read_bytes() == SETTINGS.replace(b'"dark"', b'"light"')
    assert os.listdir(state() / "backups") == []


STEPS = ["planned", "intent-written", "file-written-1", "files-written", "manifest-saved"]


@pytest.mark.parametrize(
    "step", [f"install.{s}" for s in STEPS] + [f"uninstall.{s}" for s in STEPS]
)
def test_a_kill_at_any_step_around_settings_edited_between_the_installs_is_completed(
    user: Path, step: str
) -> None:
    """Killed in the second install (which keeps no copy of the edited file) or in the first
    uninstall (which leaves the `SessionStart` list to the second), the next run of the same
    command completes it, and after both the file holds the edit and no hook of teamlore's."""
    settings = a_home_that_is_a_repository(user)
    teamlore(user, "install", "--client", "claude")
    edited_by_hand(settings)
    if step.startswith("install."):
        teamlore(user, "install", "--client", "claude", *PROJECT, failpoint=step)
        teamlore(user, "install", "--client", "claude", *PROJECT)
        teamlore(user, "uninstall", "--client", "claude")
    else:
        teamlore(user, "install", "--client", "claude", *PROJECT)
        teamlore(user, "uninstall", "--client", "claude", failpoint=step)
        teamlore(user, "uninstall", "--client", "claude")  # completes it (or runs it anew)
    teamlore(user, "uninstall", "--client", "claude", *PROJECT)

    assert settings.read_bytes() == SETTINGS.replace(b'"dark"', b'"light"')
    assert os.listdir(state() / "backups") == []
