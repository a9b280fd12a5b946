"""Client config edits are transactions (integrations/transaction.py, docs/agents.md "What
install records"): a real SIGKILL at every step of install and uninstall leaves each client file
as before or as intended and `uninstall` then restores every byte; a change another process
writes between install's read and its write is never overwritten; a full state dir refuses
before any client file is touched; JSON the user wrote is preserved byte for byte."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from install_world import CODEX_CONFIG, op, refused, tree

from support import fill_to_the_last_byte, git, run_killed_at, tmpfs
from teamlore.core.failpoints import PAUSE_ENV
from teamlore.integrations.manifest import backup_name, installation_key

# what Claude Code may keep in ~/.claude.json: a number JSON.parse reads as Infinity, a key given
# twice (JSON.parse keeps the last), escapes, four-space indentation, no final newline
HOSTILE_CLAUDE_JSON = (
    '{\n    "numStartups": 3,\n    "tipsHistory": {"a": 1e400},\n    "projects": {},\n'
    '    "projects": {"/w": {"allowedTools": []}},\n    "userID": "\\u00e9\\ud83d\\ude00",\n'
    '    "mcpServers": {\n        "other": {"command": "x"}\n    }\n}'
)
SETTINGS = '{\n  "theme": "dark",\n  "hooks": {\n    "Stop": []\n  }\n}\n'
RUN = """
import sys
from pathlib import Path
from teamlore.ops.registry import OpContext, run_operation
run_operation(sys.argv[1], OpContext(cwd=Path(sys.argv[2])), {"client": sys.argv[3]})
"""
STEPS = ["planned", "intent-written", "file-written-1", "file-written-2", "files-written"]
STEPS += ["manifest-saved"]


def seed(home: Path) -> dict[str, bytes]:
    files = {
        ".claude.json": HOSTILE_CLAUDE_JSON,
        ".claude/settings.json": SETTINGS,
        ".codex/config.toml": CODEX_CONFIG,
    }
    for name, text in files.items():
        (home / name).parent.mkdir(exist_ok=True)
        (home / name).write_text(text)
    return tree(home)


def installed_and_removed(user: Path, client: str) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The seeded files before install and as a clean install leaves them (then uninstalled)."""
    before = seed(user)
    op("install", user, client=client)
    intended = tree(user)
    op("uninstall", user, client=client)
    assert tree(user) == before
    return before, intended


def each_file_as_before_or_as_intended(
    now: dict[str, bytes], before: dict[str, bytes], intended: dict[str, bytes]
) -> None:
    for name in sorted(set(before) | set(intended) | set(now)):
        assert now.get(name) in (before.get(name), intended.get(name)), name


@pytest.mark.parametrize("client", ["claude", "codex"])
@pytest.mark.parametrize("step", STEPS)
def test_a_kill_at_any_step_of_install_is_undone_byte_for_byte_by_uninstall(
    user: Path, client: str, step: str
) -> None:
    before, intended = installed_and_removed(user, client)
    run_killed_at(f"install.{step}", RUN, "install", str(user), client)
    each_file_as_before_or_as_intended(tree(user), before, intended)
    if step == "planned":  # killed before its intent record: nothing was touched or recorded
        assert tree(user) == before
        assert refused("uninstall", user, client=client).code == "NOTHING_INSTALLED"
        return
    done = op("uninstall", user, client=client)
    assert tree(user) == before
    assert "interrupted install" in done["notes"][0]


@pytest.mark.parametrize("step", STEPS)
def test_a_kill_at_any_step_of_install_is_completed_by_the_next_install(
    user: Path, step: str
) -> None:
    before, intended = installed_and_removed(user, "claude")
    run_killed_at(f"install.{step}", RUN, "install", str(user), "claude")
    op("install", user, client="claude")
    assert tree(user) == intended
    op("uninstall", user, client="claude")  # the re-install's server does not stay behind
    assert tree(user) == before


@pytest.mark.parametrize("client", ["claude", "codex"])
@pytest.mark.parametrize("step", STEPS)
def test_a_kill_at_any_step_of_uninstall_is_completed_by_the_next_uninstall(
    user: Path, client: str, step: str
) -> None:
    before = seed(user)
    op("install", user, client=client)
    installed = tree(user)

    run_killed_at(f"uninstall.{step}", RUN, "uninstall", str(user), client)
    each_file_as_before_or_as_intended(tree(user), installed, before)
    op("uninstall", user, client=client)
    assert tree(user) == before
    assert refused("uninstall", user, client=client).code == "NOTHING_INSTALLED"


def seed_linked(home: Path, dotfiles: Path) -> dict[str, str]:
    """The seeded configs kept in `dotfiles` and linked into `home`: each link's text."""
    seed(dotfiles)
    links = {}
    for target in [p for p in dotfiles.rglob("*") if p.is_file()]:
        name = target.relative_to(dotfiles)
        (home / name).parent.mkdir(exist_ok=True)
        (home / name).symlink_to(target)
        links[str(name)] = os.readlink(home / name)
    return links


@pytest.mark.parametrize("client", ["claude", "codex"])
@pytest.mark.parametrize("operation", ["install", "uninstall"])
@pytest.mark.parametrize("step", STEPS)
def test_a_kill_at_any_step_through_symlinked_configs_keeps_the_links_and_each_target_whole(
    user: Path, tmp_path: Path, client: str, operation: str, step: str
) -> None:
    """Configs linked in from a dotfiles folder are written in their targets: a kill at any
    step leaves each target as before or as intended, every link a link, and the next
    uninstall gives back every byte."""
    links = seed_linked(user, tmp_path / "dotfiles")
    before = tree(user)
    op("install", user, client=client)
    intended = tree(user)
    if operation == "install":
        op("uninstall", user, client=client)
    run_killed_at(f"{operation}.{step}", RUN, operation, str(user), client)
    each_file_as_before_or_as_intended(tree(user), before, intended)
    assert {name: os.readlink(user / name) for name in links} == links
    if operation == "install" and step == "planned":
        assert refused("uninstall", user, client=client).code == "NOTHING_INSTALLED"
    else:
        op("uninstall", user, client=client)
    assert tree(user) == before
    assert {name: os.readlink(user / name) for name in links} == links


@pytest.mark.parametrize("next_command", ["install", "uninstall"])
def test_the_backups_of_an_install_killed_before_its_intent_are_reported_then_removed(
    user: Path, tmp_path: Path, next_command: str
) -> None:
    """Killed after storing its byte-exact backups and before its intent record, an install
    changed no client file; its backups (copies of the user's configs) are named by doctor and
    removed by the next install or uninstall."""
    before = seed(user)
    run_killed_at("install.planned", RUN, "install", str(user), "claude")
    backups = tmp_path / "state" / "integrations" / "backups"
    assert len(os.listdir(backups)) == 2 and tree(user) == before

    [check] = [c for c in op("doctor", user)["checks"] if c["check"] == "integrations.backups"]
    assert check["status"] == "warn" and check["message"].startswith(
        "2 copies of client files an interrupted install left in "
    )
    assert check["fix"] == "the next install or uninstall removes them"

    if next_command == "uninstall":
        assert refused("uninstall", user, client="codex").code == "NOTHING_INSTALLED"
        assert os.listdir(backups) == [] and tree(user) == before
        return
    op("install", user, client="codex")
    owner = installation_key("codex", "user", None)
    assert os.listdir(backups) == [backup_name(user / ".codex" / "config.toml", owner)]  # its own
    op("uninstall", user, client="codex")
    assert os.listdir(backups) == [] and tree(user) == before
    assert not [c for c in op("doctor", user)["checks"] if c["check"] == "integrations.backups"]


def test_doctor_reports_an_interrupted_install_with_the_command_that_finishes_it(
    user: Path,
) -> None:
    seed(user)
    run_killed_at("install.file-written-1", RUN, "install", str(user), "claude")
    checks = op("doctor", user, client="claude")["checks"]
    [check] = [c for c in checks if c["check"] == "integrations.interrupted"]
    assert check["status"] == "fail" and "install of claude (user scope)" in check["message"]
    preview = op("uninstall", user, client="claude", dryRun=True)
    assert "will be completed first" in preview["notes"][0]
    assert "teamlore uninstall --client claude" in check["fix"]
    assert "teamlore install --client claude" in check["fix"]


@pytest.mark.parametrize("operation", ["install", "uninstall"])
def test_doctor_names_an_interrupted_transaction_once_not_entry_by_entry_with_other_fixes(
    user: Path, operation: str
) -> None:
    seed(user)
    if operation == "uninstall":
        op("install", user, client="claude")
    run_killed_at(f"{operation}.file-written-1", RUN, operation, str(user), "claude")
    checks = op("doctor", user, client="claude")["checks"]
    assert [c["check"] for c in checks if c["check"].startswith(("claude.", "integrations"))] == [
        "integrations.interrupted",
        "claude.cli",  # not "mcpServers.teamlore is missing", fix: install; nor "not installed"
    ]


# -- a concurrent writer ------------------------------------------------------------------


@contextlib.contextmanager
def paused_at(point: str, user: Path, client: str) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """`install --client <client>` in a real second process that stops at `point` each time it
    gets there, until the test removes the flag file."""
    flag = user.parent / "paused"
    env = {**os.environ, PAUSE_ENV: f"{point}={flag}"}
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, "install", str(user), client],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc, flag
    finally:
        with contextlib.suppress(FileNotFoundError):
            flag.unlink()
        proc.wait(timeout=120)


def wait_for(flag: Path, proc: subprocess.Popen[str]) -> None:
    for _ in range(12000):
        if flag.exists():
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    raise AssertionError("the install never reached its pause point")


def stderr_of(proc: subprocess.Popen[str]) -> str:
    return proc.stderr.read() if proc.stderr else ""


def claude_rewrites(user: Path, startups: int) -> None:
    """What Claude Code does on every start: rewrite ~/.claude.json with a new counter."""
    path = user / ".claude.json"
    path.write_text(re.sub(r'"numStartups": \d+', f'"numStartups": {startups}', path.read_text()))


@pytest.mark.parametrize("point", ["install.intent-written", "install.file-written-1"])
def test_a_change_written_between_read_and_write_is_kept_and_the_install_replanned(
    user: Path, point: str
) -> None:
    seed(user)
    with paused_at(point, user, "claude") as (proc, flag):
        wait_for(flag, proc)
        if point == "install.intent-written":
            claude_rewrites(user, 4)
        else:  # .claude.json is written; the settings file changes before its turn
            (user / ".claude" / "settings.json").write_text(SETTINGS.replace("dark", "light"))
        flag.unlink()
        wait_for(flag, proc)  # the second attempt, planned from the new bytes
        flag.unlink()
    assert proc.returncode == 0, stderr_of(proc)
    claude = json.loads((user / ".claude.json").read_text())
    assert {"teamlore", "other"} <= set(claude["mcpServers"])
    if point == "install.intent-written":
        assert claude["numStartups"] == 4
    else:
        assert json.loads((user / ".claude" / "settings.json").read_text())["theme"] == "light"


def test_a_file_changed_again_on_the_retry_is_refused_with_nothing_of_ours_left(
    user: Path,
) -> None:
    before = seed(user)
    with paused_at("install.intent-written", user, "claude") as (proc, flag):
        for startups in (4, 5):
            wait_for(flag, proc)
            claude_rewrites(user, startups)
            flag.unlink()
    assert proc.returncode == 1 and "CLIENT_CONFIG_CHANGED" in stderr_of(proc)
    assert (user / ".claude.json").read_text() == HOSTILE_CLAUDE_JSON.replace(
        '"numStartups": 3', '"numStartups": 5'
    )
    assert tree(user)[".claude/settings.json"] == before[".claude/settings.json"]
    assert not (user.parent / "state" / "integrations" / "intent.json").exists()
    assert refused("uninstall", user, client="claude").code == "NOTHING_INSTALLED"


# -- a full state dir ---------------------------------------------------------------------


@contextlib.contextmanager
def full_tmpfs(folder: Path, *, used_before: bool) -> Iterator[None]:
    """`folder` as a 256 KiB tmpfs filled to the last byte."""
    with tmpfs(folder, "256k"):
        if used_before:  # teamlore's folder is there already; otherwise it cannot be made
            (folder / "integrations").mkdir(mode=0o700)
        fill_to_the_last_byte(folder)
        yield


@pytest.mark.parametrize("seeded", [True, False])
def test_a_full_state_dir_refuses_before_any_client_file_is_touched(
    user: Path, seeded: bool
) -> None:
    before = seed(user) if seeded else tree(user)
    state = user.parent / "state"
    with full_tmpfs(state, used_before=seeded):
        err = refused("install", user, client="all")
        assert err.code == "DISK_FULL" and "no client file was changed" in err.message
        assert tree(user) == before
        assert not (state / "integrations" / "intent.json").exists()


# -- what is written ----------------------------------------------------------------------


def test_json_the_client_wrote_survives_install_byte_for_byte(user: Path) -> None:
    seed(user)
    op("install", user, client="claude")
    text = (user / ".claude.json").read_text()
    head = HOSTILE_CLAUDE_JSON.partition('        "other": {"command": "x"}')[0]
    assert text.startswith(head + '        "other": {"command": "x"},\n        "teamlore": {\n')
    assert text.endswith("    }\n}") and "1e400" in text and "Infinity" not in text
    assert json.loads(text)["mcpServers"]["teamlore"]["type"] == "stdio"
    claude_rewrites(user, 9)  # changed since: uninstall removes our entries, keeps the rest
    op("uninstall", user, client="claude")
    assert (user / ".claude.json").read_text() == HOSTILE_CLAUDE_JSON.replace(
        '"numStartups": 3', '"numStartups": 9'
    )


def test_a_lone_surrogate_is_refused_as_invalid_naming_the_line(user: Path) -> None:
    (user / ".claude.json").write_text('{\n  "numStartups": 1,\n  "name": "\\udc00"\n}\n')
    err = refused("install", user, client="claude")
    assert err.code == "CLIENT_CONFIG_INVALID" and ".claude.json: line 3:" in err.message
    assert not (user / ".claude").exists()


def test_project_scope_codex_servers_are_not_required(user: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    op("install", repo, client="codex", scope="project")
    servers = tomllib.loads((repo / ".codex" / "config.toml").read_text())["mcp_servers"]
    assert servers["teamlore"]["required"] is False
    assert servers["teamlore_personal"]["required"] is False


def test_doctor_warns_when_a_project_entry_names_a_teamlore_that_is_not_on_path(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    op("install", repo, client="codex", scope="project")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin")
    checks = op("doctor", repo, client="codex")["checks"]
    project = [c for c in checks if "not on PATH" in c["message"]]
    assert {c["status"] for c in project} == {"warn"} and len(project) == 3  # 2 servers, 1 hook
    assert all("teamlore" in c["fix"] for c in project)
    assert not [c for c in checks if c["status"] == "fail" and c["check"].startswith("codex.")]


def test_toml_comments_survive_an_uninstall_after_the_user_edited_the_file(user: Path) -> None:
    config = user / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_CONFIG)
    op("install", user, client="codex")
    edited = config.read_text().replace('model = "o3"', 'model = "o4"')
    config.write_text(edited)  # changed since install: uninstall edits instead of restoring
    op("uninstall", user, client="codex")
    assert config.read_text() == CODEX_CONFIG.replace('model = "o3"', 'model = "o4"')


def test_when_a_written_file_changes_too_the_record_stays_and_uninstall_removes_our_entries(
    user: Path,
) -> None:
    seed(user)
    with paused_at("install.file-written-1", user, "claude") as (proc, flag):
        wait_for(flag, proc)  # .claude.json holds our entries now; Claude rewrites it, and the
        claude_rewrites(user, 7)  # user edits settings.json before install gets to it
        (user / ".claude" / "settings.json").write_text(SETTINGS.replace("dark", "light"))
        flag.unlink()
    assert proc.returncode == 1 and "CLIENT_CONFIG_CHANGED" in stderr_of(proc)
    assert (user.parent / "state" / "integrations" / "intent.json").exists()
    assert "teamlore" in json.loads((user / ".claude.json").read_text())["mcpServers"]

    op("uninstall", user, client="claude")
    assert (user / ".claude.json").read_text() == re.sub(
        r'"numStartups": \d+', '"numStartups": 7', HOSTILE_CLAUDE_JSON
    )
    assert (user / ".claude" / "settings.json").read_text() == SETTINGS.replace("dark", "light")


def test_an_entry_replaced_with_force_comes_back_byte_for_byte_after_the_file_changed(
    user: Path,
) -> None:
    mine = (
        '{\n  "numStartups": 3,\n  "mcpServers": {\n'
        '    "teamlore": {"command": "mine", "n": 1e400}\n  }\n}\n'
    )
    (user / ".claude.json").write_text(mine)
    assert refused("install", user, client="claude").code == "INTEGRATION_CONFLICT"
    op("install", user, client="claude", force=True)
    claude_rewrites(user, 4)
    op("uninstall", user, client="claude")
    assert (user / ".claude.json").read_text() == mine.replace(
        '"numStartups": 3', '"numStartups": 4'
    )


def test_a_damaged_intent_record_is_advised_as_itself_not_as_config_toml(user: Path) -> None:
    """Its refusal is CONFIG_INVALID, whose usual next step sent the person to config.toml; the
    message's own remedy (`install --dry-run`) refuses the same way. Moved aside, all works."""
    op("install", user, client="codex")
    intent = user.parent / "state" / "integrations" / "intent.json"
    intent.write_text('{"operation": "ins')
    intent.chmod(0o600)
    advice = (
        "Move integrations/intent.json aside (its interrupted change stays unfinished), "
        "then run the command again."
    )
    for name, payload in [
        ("install", {"client": "codex"}),
        ("install", {"client": "codex", "dryRun": True}),
        ("uninstall", {"client": "codex"}),
    ]:
        refusal = refused(name, user, **payload).to_json()
        assert (refusal["code"], refusal["next"]) == ("CONFIG_INVALID", advice), (name, payload)
    intent.rename(intent.with_name("intent.json.aside"))
    assert op("uninstall", user, client="codex")["uninstalled"]
