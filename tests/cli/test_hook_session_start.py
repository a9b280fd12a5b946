"""`teamlore hook session-start` as the clients run it: the hook JSON on stdout, and on a slow
or broken state nothing at all and exit 0 (it never blocks or fails a session)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import git

PROFILE = "# Profile\n\n## Work\nThe user writes Rust at work.\n"


def teamlore_exe() -> str:
    found = shutil.which("teamlore", path=str(Path(sys.executable).parent))
    assert found
    return found


def state_with_profile(tmp_path: Path) -> Path:
    home = tmp_path / "state"
    (home / "personal").mkdir(parents=True, mode=0o700)
    (home / "personal" / "profile.md").write_text(PROFILE)
    return home


def run_hook(
    home: Path, payload: str | None, *, budget: str = "20", client: str = "codex"
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TEAMLORE_HOME": str(home), "TEAMLORE_HOOK_BUDGET": budget}
    return subprocess.run(
        [teamlore_exe(), "hook", "session-start", "--client", client],
        input=payload,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_prints_the_hook_json_with_the_brief(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    payload = json.dumps({"hook_event_name": "SessionStart", "cwd": str(repo)})
    done = run_hook(state_with_profile(tmp_path), payload)
    assert done.returncode == 0 and done.stderr == ""
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    assert "The user writes Rust at work." in output["additionalContext"]


def test_a_mistyped_client_is_said_once_on_stderr_and_the_hook_still_answers(
    tmp_path: Path,
) -> None:
    """`--client clade` was silent: the hook went on as for Claude Code and nothing said why
    a Codex or Pi brief never came. stdout is what the client injects: only the hook JSON."""
    payload = json.dumps({"hook_event_name": "SessionStart", "cwd": str(tmp_path)})
    done = run_hook(state_with_profile(tmp_path), payload, client="clade")
    assert done.returncode == 0
    assert done.stderr.splitlines() == [
        "teamlore hook: unknown client 'clade' (known: claude, codex, pi); going on as for claude"
    ]
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "The user writes Rust at work." in context


def test_past_its_budget_the_hook_prints_nothing_and_exits_0(tmp_path: Path) -> None:
    done = run_hook(state_with_profile(tmp_path), "{}", budget="0.05")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_client_that_never_closes_stdin_does_not_block_the_hook(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TEAMLORE_HOME": str(state_with_profile(tmp_path)),
        "TEAMLORE_HOOK_BUDGET": "1",
    }
    read_end, write_end = os.pipe()  # we hold the write end open: the read never ends
    try:
        hook = subprocess.run(
            [teamlore_exe(), "hook", "session-start", "--client", "claude"],
            stdin=read_end,
            capture_output=True,
            env=env,
            text=True,
            timeout=60,
        )
    finally:
        os.close(read_end)
        os.close(write_end)
    stdout, stderr = hook.stdout, hook.stderr
    assert (hook.returncode, stdout, stderr) == (0, "", "")


def test_a_broken_state_prints_nothing_and_exits_0(tmp_path: Path) -> None:
    home = tmp_path / "state"
    home.mkdir()
    (home / "config.toml").write_text("[personal\nbroken = ")
    (home / "personal").mkdir()
    (home / "personal" / "profile.md").symlink_to("/etc/hostname")
    done = run_hook(home, "not json at all")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_help_goes_through_the_full_cli(tmp_path: Path) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [teamlore_exe(), "hook", "session-start", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "never blocks" in done.stdout
    assert time.monotonic() > started  # (no wall-clock assertion: see DESIGN.md)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_legacy_locale_still_gets_the_brief_of_the_folder_the_client_names(
    tmp_path: Path, encoding: str
) -> None:
    """A client started from a locale that is not UTF-8: the payload it writes (UTF-8) is read as
    such, so a repository in a folder named in Chinese is found, and the characters stdout cannot
    encode go out as JSON's `\\u` escapes, not a traceback."""
    home = state_with_profile(tmp_path)
    (home / "personal" / "profile.md").write_text("# Profile\n\n## Work\n用户写 Rust 😀。\n")
    repo = tmp_path / "项目"
    (repo / ".threadshare" / "memory" / "entries").mkdir(parents=True)
    (repo / ".threadshare" / "memory" / "entries" / "one.md").write_text("")
    git(repo, "init", "-q")
    env = {**os.environ, "TEAMLORE_HOME": str(home), "PYTHONIOENCODING": encoding}
    done = subprocess.run(
        [teamlore_exe(), "hook", "session-start", "--client", "claude"],
        input=json.dumps({"cwd": str(repo)}, ensure_ascii=False).encode(),
        env=env,
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    brief = json.loads(done.stdout.decode("ascii"))["hookSpecificOutput"]["additionalContext"]
    assert "has reviewed team memory (1 entry" in brief
    assert "用户写 Rust 😀。" in brief
