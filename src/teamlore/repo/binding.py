"""Repository binding: which git repository and worktree a path belongs to.

A repository is identified by its git common directory (shared by all its worktrees), a worktree
by its real top-level directory. Both are real (symlink-free) absolute paths; the keys shown to
people are keyed ids of them (`keys.repository_key`, `keys.worktree_key`), so several worktrees
of one repository share a `repository_key` and each has its own `worktree_key`.

Registration is explicit (`teamlore sync --repository PATH`) and stored in the index DB's
`repositories` table, one row per worktree.
"""

from __future__ import annotations

import os
import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, NamedTuple

from teamlore.core import db, errors, keys
from teamlore.core.paths import display_path, escaped_path
from teamlore.repo import tables
from teamlore.repo.git import GitCommandError, run_git

_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\|[A-Za-z]:$)")


class RepositoryIdentity(NamedTuple):
    """A registered worktree as git and the index know it (made here from git's answers or the
    index's rows, never from a request: a plain value, docs/architecture.md)."""

    repository_key: str
    worktree_key: str
    worktree_root: Path  # real absolute path of the worktree's top level
    git_common_dir: Path  # real absolute path of the repository's common git dir


def is_windows_path(path: str) -> bool:
    return bool(_WINDOWS_PATH.match(path)) or ("\\" in path and "/" not in path)


def normalize_posix(path: str) -> str | None:
    """A recorded path as a real absolute POSIX path, or None when it cannot be one.

    Symlinks are resolved as far as the path exists, so a directory that no longer exists still
    normalizes (by its prefix). Windows paths (`C:\\...`, UNC) and relative paths give None:
    they can never lie inside a POSIX worktree.
    """
    if not path or "\x00" in path or is_windows_path(path) or not path.startswith("/"):
        return None
    return os.path.realpath(path)


def is_within(path: str, root: str) -> bool:
    """True when `path` is `root` or below it (both normalized; compared by whole components)."""
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root if root == "/" else root + "/")


def _real_directory(path: Path) -> Path:
    try:
        real = Path(os.path.realpath(path.expanduser(), strict=True))
    except OSError as exc:
        raise errors.TeamloreError(
            errors.PATH_NOT_FOUND,
            f"{display_path(path)} does not exist; give the folder of a git repository",
            folder=path.name,
        ) from exc
    return real if real.is_dir() else real.parent


def _rev_parse(cwd: Path, *flags: str) -> list[str]:
    try:
        # a path's bytes as the file system holds them: a name that is not UTF-8 as surrogate
        # escapes (what `os` gives and takes), not as U+FFFD, which names no folder
        out = run_git(["rev-parse", *flags], cwd=cwd).decode("utf-8", "surrogateescape")
    except GitCommandError as exc:
        if "not a git repository" in exc.stderr.lower():
            raise errors.TeamloreError(
                errors.NOT_A_GIT_REPOSITORY,
                f"folder `{cwd.name}` is not inside a git repository",
                folder=cwd.name,
            ) from exc
        raise
    return out.splitlines()


def resolve_repository(path: Path, *, home: Path | None = None) -> RepositoryIdentity:
    """The repository and worktree that contain `path` (refuses bare repositories)."""
    cwd = _real_directory(path)
    where = ("--is-bare-repository", "--is-inside-git-dir", "--is-inside-work-tree")
    try:  # one git process in a worktree, the common case (a short command's start)
        *answers, common_dir, toplevel = _rev_parse(
            cwd, *where, "--git-common-dir", "--show-toplevel"
        )
        if answers == ["false", "false", "true"]:
            return _identity(cwd, common_dir, toplevel, home)
    except GitCommandError:
        pass  # not a worktree (--show-toplevel refuses): the questions one by one say why
    bare, inside_git_dir, inside_work_tree, common_dir = _rev_parse(cwd, *where, "--git-common-dir")
    if bare == "true":
        raise errors.TeamloreError(errors.BARE_REPOSITORY, folder=cwd.name)
    if inside_work_tree != "true" or inside_git_dir == "true":
        raise errors.TeamloreError(
            errors.NOT_A_GIT_REPOSITORY,
            f"folder `{cwd.name}` is inside a git directory, not a worktree",
            folder=cwd.name,
        )
    (toplevel,) = _rev_parse(cwd, "--show-toplevel")
    return _identity(cwd, common_dir, toplevel, home)


def _identity(cwd: Path, common_dir: str, toplevel: str, home: Path | None) -> RepositoryIdentity:
    worktree_root = Path(os.path.realpath(toplevel))
    common = Path(common_dir)
    git_common_dir = Path(os.path.realpath(common if common.is_absolute() else cwd / common))
    return RepositoryIdentity(
        repository_key=keys.repository_key(str(git_common_dir), home),
        worktree_key=keys.worktree_key(str(worktree_root), home),
        worktree_root=worktree_root,
        git_common_dir=git_common_dir,
    )


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def register_repository(
    conn: sqlite3.Connection, path: Path, home: Path | None = None
) -> RepositoryIdentity:
    """Resolve `path` and upsert its worktree into `repositories` (idempotent)."""
    identity = resolve_repository(path, home=home)
    refuse_path_not_utf8(identity)
    row = tables.WorktreeRow(
        identity.repository_key,
        identity.worktree_key,
        str(identity.worktree_root),
        str(identity.git_common_dir),
    )
    with db.write_tx(conn):
        tables.upsert_worktree(conn, row, _now())
    return identity


def refuse_path_not_utf8(identity: RepositoryIdentity) -> None:
    """PATH_NOT_UTF8 for a repository whose path is not UTF-8 (`lat\\xf3n`, made under a
    latin-1 locale): the index stores paths as UTF-8 text, which cannot hold such a name."""
    for path in (identity.worktree_root, identity.git_common_dir):
        if escaped_path(path) != str(path):
            raise errors.TeamloreError(
                errors.PATH_NOT_UTF8,
                f"{display_path(path)} is not UTF-8, so it cannot be registered",
                path=escaped_path(path),
            )


def list_repositories(conn: sqlite3.Connection) -> list[RepositoryIdentity]:
    """Every registered worktree, ordered by worktree root."""
    return [
        RepositoryIdentity(
            repository_key=row.repository_key,
            worktree_key=row.worktree_key,
            worktree_root=Path(row.worktree_root),
            git_common_dir=Path(row.git_common_dir),
        )
        for row in tables.list_worktrees(conn)
    ]


# why a registered worktree is skipped; `unreadable`: git failed reading its history
WorktreeProblem = Literal["missing", "not-a-repository", "replaced", "unreadable", "untrusted"]


def worktree_problem(
    identity: RepositoryIdentity, home: Path | None = None
) -> WorktreeProblem | None:
    """Why a registered worktree can no longer be used, or None when it still can.

    `missing`: its folder is gone (deleted or moved away); `not-a-repository`: the folder is there
    but git finds no worktree in it; `replaced`: the folder now belongs to another worktree or
    repository (its root or git directory changed); `untrusted`: git refuses it, another user
    owning it now (`REPOSITORY_NOT_TRUSTED`)."""
    root = identity.worktree_root
    if not root.is_dir():
        return "missing"
    try:
        found = resolve_repository(root, home=home)
    except errors.TeamloreError as err:
        return "untrusted" if err.error is errors.REPOSITORY_NOT_TRUSTED else "not-a-repository"
    if (found.worktree_key, found.repository_key) != (
        identity.worktree_key,
        identity.repository_key,
    ):
        return "replaced"
    return None


def find_owner(conn: sqlite3.Connection, path: Path) -> RepositoryIdentity | None:
    """The registered worktree containing `path` (the deepest one when worktrees nest)."""
    target = normalize_posix(str(path))
    if target is None:
        return None
    best: RepositoryIdentity | None = None
    for identity in list_repositories(conn):
        root = str(identity.worktree_root)
        if is_within(target, root) and (best is None or len(root) > len(str(best.worktree_root))):
            best = identity
    return best
