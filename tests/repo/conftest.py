"""Helpers for the repo tests: real git repositories in tmp dirs, a real index DB, and rows the
session indexer would have written (inserted directly with SQL)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from teamlore.sessions.index_db import open_index


def _git_env(at: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": "Test Author",
            "GIT_AUTHOR_EMAIL": "author@example.invalid",
            "GIT_COMMITTER_NAME": "Test Author",
            "GIT_COMMITTER_EMAIL": "author@example.invalid",
        }
    )
    if at is not None:
        env["GIT_AUTHOR_DATE"] = at
        env["GIT_COMMITTER_DATE"] = at
    return env


def git(cwd: Path, *args: str, at: str | None = None) -> str:
    result = subprocess.run(
        ["git", *args], cwd=cwd, env=_git_env(at), capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


class GitRepo:
    """A real repository made with the git binary. Commit times are explicit (ISO-8601)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def init(cls, root: Path) -> GitRepo:
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q", "-b", "main")
        return cls(root)

    def git(self, *args: str, at: str | None = None) -> str:
        return git(self.root, *args, at=at)

    def write(self, path: str, text: str) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def commit(
        self, message: str, files: dict[str, str] | None = None, *, at: str = "2025-03-01T10:00:00Z"
    ) -> str:
        for path, text in (files or {}).items():
            self.write(path, text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message, at=at)
        return self.git("rev-parse", "HEAD")

    def worktree_add(self, path: Path, branch: str) -> GitRepo:
        self.git("worktree", "add", "-q", "-b", branch, str(path))
        return GitRepo(path)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    return state


@pytest.fixture
def conn(home: Path) -> Iterator[sqlite3.Connection]:
    connection = open_index(home)
    yield connection
    connection.close()


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo.init(tmp_path / "project")


@pytest.fixture
def hand_to_another_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """Give a repository to another user, with no `safe.directory` that trusts it (this
    machine's system config may trust every folder): what git then refuses, as it does a
    shared mount or a clone a container made. Root only."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("a repository another user owns can only be made by root")
    from teamlore.repo import git as git_module

    plain = git_module.git_environment
    empty_home = tmp_path / "no-global-config"
    empty_home.mkdir()
    monkeypatch.setattr(
        git_module,
        "git_environment",
        lambda: {**plain(), "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(empty_home)},
    )

    def hand(root: Path) -> None:
        for path in [root, *root.rglob("*")]:
            os.lchown(path, 65534, 65534)

    return hand


class SessionRows:
    """Writes sessions/turns/tool_uses/file_touches/observed_commits like the indexer would."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._n = 0

    def session(
        self,
        cwd: str | None,
        *,
        started_at: str | None = "2025-03-01T09:00:00Z",
        ended_at: str | None = "2025-03-01T09:30:00Z",
    ) -> int:
        self._n += 1
        cursor = self.conn.execute(
            "INSERT INTO sessions (session_key, provider, provider_session_id, cwd, started_at,"
            " ended_at) VALUES (?, 'codex', ?, ?, ?, ?)",
            (f"sk{self._n:04d}", f"provider-{self._n}", cwd, started_at, ended_at),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def turn(
        self,
        session_id: int,
        ordinal: int,
        *,
        started_at: str | None = "2025-03-01T09:00:00Z",
        ended_at: str | None = "2025-03-01T09:10:00Z",
    ) -> int:
        cursor = self.conn.execute(
            "INSERT INTO turns (session_id, ordinal, user_text, started_at, ended_at, sealed)"
            " VALUES (?, ?, 'do the work', ?, ?, 1)",
            (session_id, ordinal, started_at, ended_at),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def tool_use(self, turn_id: int, command: str | None = None) -> int:
        self._n += 1
        cursor = self.conn.execute(
            "INSERT INTO tool_uses (turn_id, seq, call_id, name, family, command, status)"
            " VALUES (?, ?, ?, 'shell', 'shell', ?, 'ok')",
            (turn_id, self._n, f"call-{self._n}", command),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def write(self, turn_id: int, path: str) -> None:
        tool = self.tool_use(turn_id)
        self.conn.execute(
            "INSERT INTO file_touches (turn_id, tool_use_id, path, kind) VALUES (?, ?, ?, 'write')",
            (turn_id, tool, path),
        )

    def read(self, turn_id: int, path: str) -> None:
        self.conn.execute(
            "INSERT INTO file_touches (turn_id, path, kind) VALUES (?, ?, 'read')", (turn_id, path)
        )

    def observed(self, turn_id: int, hash_: str, *, from_commit_command: bool) -> None:
        tool = self.tool_use(turn_id, "git commit -m x" if from_commit_command else "git log")
        self.conn.execute(
            "INSERT INTO observed_commits (turn_id, tool_use_id, hash, is_full,"
            " from_commit_command) VALUES (?, ?, ?, ?, ?)",
            (turn_id, tool, hash_, int(len(hash_) == 40), int(from_commit_command)),
        )


@pytest.fixture
def rows(conn: sqlite3.Connection) -> SessionRows:
    return SessionRows(conn)


@pytest.fixture
def make_repo() -> object:
    """`make_repo(path)` -> GitRepo; `make_repo(path, bare=True)` -> a bare repository."""

    def make(path: Path, *, bare: bool = False) -> GitRepo:
        if bare:
            path.mkdir(parents=True)
            git(path, "init", "-q", "--bare")
            return GitRepo(path)
        return GitRepo.init(path)

    return make
