"""The git runner: scrubbed environment, disabled repository-controlled programs, bounds."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from support import teamlore_cli
from teamlore.core import errors
from teamlore.repo.git import GitCommandError, git_environment, run_git, run_git_text


def test_inherited_git_variables_cannot_redirect_the_command(
    repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.commit("first", {"a.txt": "a"})
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.setenv("GIT_DIR", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / "index"))
    toplevel = run_git_text(["rev-parse", "--show-toplevel"], cwd=repo.root).strip()
    assert Path(toplevel).resolve() == repo.root.resolve()


def test_environment_disables_optional_locks_prompts_and_localization(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "/bin/false")
    env = git_environment()
    assert env["GIT_OPTIONAL_LOCKS"] == "0"
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["LC_ALL"] == "C"
    assert "GIT_EXTERNAL_DIFF" not in env


def test_fsmonitor_configured_in_the_repository_never_runs(repo, tmp_path: Path) -> None:
    repo.commit("first", {"a.txt": "a"})
    marker = tmp_path / "fsmonitor-ran"
    script = tmp_path / "fsmonitor.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    repo.git("config", "core.fsmonitor", str(script))
    run_git(["status", "--porcelain"], cwd=repo.root)
    assert not marker.exists()


def test_failure_is_git_failed_with_the_first_stderr_line(repo) -> None:
    with pytest.raises(GitCommandError) as caught:
        run_git(["rev-parse", "--verify", "--end-of-options", "no-such-ref"], cwd=repo.root)
    assert caught.value.code == errors.GIT_FAILED.code
    assert caught.value.returncode != 0


def test_output_beyond_the_bound_is_refused(repo) -> None:
    repo.commit("first", {"a.txt": "a" * 1000})
    with pytest.raises(errors.TeamloreError) as caught:
        run_git(["cat-file", "-p", "HEAD:a.txt"], cwd=repo.root, max_output_bytes=100)
    assert caught.value.code == errors.GIT_FAILED.code
    assert "exceeds" in caught.value.message


def test_timeout_kills_git_and_its_children(repo) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        run_git(["-c", "alias.slow=!sleep 60", "slow"], cwd=repo.root, timeout=0.5)
    assert "did not finish" in caught.value.message


def test_missing_working_directory_is_git_failed(tmp_path: Path) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        run_git(["status"], cwd=tmp_path / "gone")
    assert caught.value.code == errors.GIT_FAILED.code


def test_stdin_is_passed_to_git(repo) -> None:
    out = run_git(["hash-object", "--stdin"], cwd=repo.root, stdin=b"hello\n")
    assert out.strip() == b"ce013625030ba8dba906f756967f9e9ca394464a"


def test_a_repository_another_user_owns_is_refused_saying_how_to_trust_it(
    repo, hand_to_another_user: Callable[[Path], None]
) -> None:
    """git's safe.directory check (a shared mount, a container's clone): it was GIT_FAILED
    with git's first line, and `org add` said "not a git repository with a commit"."""
    from teamlore.org.reader import RepositoryGone, head_state
    from teamlore.repo.binding import resolve_repository

    repo.commit("first", {"a.txt": "a"})
    hand_to_another_user(repo.root)
    with pytest.raises(errors.TeamloreError) as caught:
        resolve_repository(repo.root)
    assert caught.value.code == "REPOSITORY_NOT_TRUSTED"
    assert caught.value.message.startswith(f"git refuses the repository {repo.root.name}:")
    assert str(repo.root.parent) not in caught.value.message  # a name, never where it lives
    with pytest.raises(RepositoryGone) as gone:
        head_state(repo.root)
    assert gone.value.error is errors.REPOSITORY_NOT_TRUSTED


def test_without_git_on_path_the_next_step_is_to_install_it(repo, tmp_path: Path) -> None:
    """The usual next step of GIT_FAILED, running the same git command, cannot be taken."""
    repo.commit("first", {"a.txt": "a"})
    state = tmp_path / "state"
    proc = teamlore_cli(
        "sync", "--repository", ".", "--format", "json",
        cwd=repo.root, env={"PATH": str(tmp_path / "no-git-here"), "TEAMLORE_HOME": str(state)},
    )  # fmt: skip
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode == 1
    assert (error["code"], error["message"]) == ("GIT_FAILED", "cannot start git: binary not found")
    assert error["next"] == "Install git and put it on PATH, then run the command again."
