"""Repository operations, all CLI-only (no MCP tool):

- `repo.show`: the commit or path behind a piece of evidence, as `git show` renders it, from the
  caller's worktree (read-only, local). The review page links commit and path evidence here;
  agents already have git.
- `repo.list` / `repo.forget`: the registered repositories and forgetting one. Local
  housekeeping of this machine's index: they show absolute paths and an agent has no reason to
  unregister the user's repositories.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, model_validator

from teamlore.core import db, errors
from teamlore.core.failpoints import failpoint
from teamlore.core.lock import file_lock
from teamlore.core.paths import display_path, resolve_home
from teamlore.core.shapes.strict import STRICT
from teamlore.ops.registry import OpContext, operation
from teamlore.repo import tables
from teamlore.repo.binding import RepositoryIdentity
from teamlore.sessions.index_health import index_errors, open_index_for_read, open_index_for_sync


class ShowRequest(BaseModel):
    model_config = STRICT

    commit: str | None = Field(
        None, description="A commit hash (full or ≥ 7 digits): `git show` of it."
    )
    path: str | None = Field(
        None, max_length=4096, description="A repository-relative path: its recent history."
    )

    @model_validator(mode="after")
    def _one(self) -> ShowRequest:
        if (self.commit is None) == (self.path is None):
            raise ValueError("give either commit or path")
        return self


@operation("repo.show", input_model=ShowRequest, side_effect="read")
def repo_show(ctx: OpContext, request: ShowRequest) -> dict[str, Any]:
    """Show a commit (git show) or the recent history of a path in this worktree."""
    from teamlore.ops.owner import resolve_owner
    from teamlore.repo.show import path_history, show_commit

    root = resolve_owner(ctx).worktree_root
    if request.commit is not None:
        return show_commit(root, request.commit)
    if request.path is None:  # pragma: no cover - the validator guarantees one of them
        raise errors.TeamloreError(errors.INVALID_ARGUMENT, "give either commit or path")
    return path_history(root, request.path)


class ListRequest(BaseModel):
    model_config = STRICT


def _worktree_json(identity: RepositoryIdentity) -> dict[str, Any]:
    return {
        "path": display_path(identity.worktree_root),
        "name": identity.worktree_root.name,
        "repositoryKey": identity.repository_key,
        "worktreeKey": identity.worktree_key,
    }


@operation("repo.list", input_model=ListRequest, side_effect="read")
def repo_list(ctx: OpContext, request: ListRequest) -> dict[str, Any]:
    """List the registered repositories (worktrees), whether each is still there, and what the
    index holds for it."""
    from teamlore.repo.binding import list_repositories, worktree_problem

    home = resolve_home(ctx.home)
    with index_errors(open_index_for_read(home)) as conn:
        out = []
        for identity in list_repositories(conn):
            stats = tables.worktree_stats(conn, identity.worktree_key)
            out.append(
                {
                    **_worktree_json(identity),
                    "status": worktree_problem(identity, home) or "ok",
                    "sessions": stats.sessions,
                    "commits": stats.commits,
                    "scannedAt": stats.scanned_at,
                }
            )
    return {"repositories": out}


FORGET_WAIT_SECONDS = 60.0  # for a running sync to finish


class ForgetRequest(BaseModel):
    model_config = STRICT

    path: str = Field(
        min_length=1,
        max_length=4096,
        description="The registered worktree's folder (it may no longer exist).",
    )


def _spellings(raw: str, cwd: Path, home: Path | None) -> set[str]:
    """The ways a registered root may match `raw`: as typed (absolute), resolved through
    symlinks, and — when it is still a worktree — that worktree's root."""
    from teamlore.repo.binding import resolve_repository

    path = Path(raw).expanduser()
    absolute = Path(os.path.abspath(path if path.is_absolute() else cwd / path))
    found = {str(absolute), os.path.realpath(absolute)}
    if absolute.is_dir():
        with contextlib.suppress(errors.TeamloreError):  # no longer a worktree: typed paths only
            found.add(str(resolve_repository(absolute, home=home).worktree_root))
    return found


@operation("repo.forget", input_model=ForgetRequest, side_effect="state-write")
def repo_forget(ctx: OpContext, request: ForgetRequest) -> dict[str, Any]:
    """Stop tracking a registered repository (worktree): its sessions stay indexed and
    searchable, they only lose the mapping; commits and delivery edges go with the
    repository's last worktree. The repository itself is never touched."""
    from teamlore.ops.sessions.index import SYNC_LOCK
    from teamlore.repo.binding import list_repositories
    from teamlore.repo.delivery import build_delivery_edges
    from teamlore.repo.worktrees import map_sessions, path_aliases

    home = resolve_home(ctx.home)
    spellings = _spellings(request.path, ctx.cwd, home)
    aliases = path_aliases(home)
    with (
        file_lock(home / SYNC_LOCK, wait_seconds=FORGET_WAIT_SECONDS, what="a sync"),
        index_errors(open_index_for_sync(home, rebuild=False)) as conn,
    ):
        registered = list_repositories(conn)
        target = next((r for r in registered if str(r.worktree_root) in spellings), None)
        if target is None:
            listed = _forget_listed_only(conn, home, spellings)
            if listed is not None:
                return listed
            raise errors.TeamloreError(
                errors.REPOSITORY_NOT_REGISTERED,
                f"{display_path(request.path)} is not a registered repository;"
                " `teamlore repo list` shows them",
            ).advising("Forget one of the paths `teamlore repo list` shows; this one is not in.")
        sessions = tables.worktree_stats(conn, target.worktree_key).sessions
        # config.toml first, under the sync lock: a sync registers again the worktrees it
        # lists (ops/sessions/index.py, `_restore_registered`), so a forget killed after the
        # index's change, or a sync waiting on the lock, would bring this one back
        _drop_from_config(home, target.worktree_key)
        with db.write_tx(conn):
            tables.forget_worktree(conn, target.worktree_key)
        failpoint("repo.forget.index-forgotten")
        remaining = [r for r in registered if r.worktree_key != target.worktree_key]
        mapping = map_sessions(conn, aliases=aliases)
        history_kept = any(r.repository_key == target.repository_key for r in remaining)
        if history_kept:
            build_delivery_edges(conn, target.repository_key)
    return {
        "forgotten": _worktree_json(target),
        "sessionsKept": sessions,
        "sessionsUnmapped": mapping.unmapped,
        "repositoryHistoryKept": history_kept,
    }


def _drop_from_config(home: Path, worktree_key: str) -> None:
    from teamlore.core.config import load_config, save_config

    config = load_config(home)
    kept = [r for r in config.repositories if r.worktree_key != worktree_key]
    if len(kept) != len(config.repositories):
        config.repositories = kept
        save_config(config, home)


def _forget_listed_only(
    conn: sqlite3.Connection, home: Path, spellings: set[str]
) -> dict[str, Any] | None:
    """`repo forget` of a worktree config.toml lists and the index does not hold (its folder
    was gone when the index was rebuilt): dropped from config.toml, or a sync would register
    it again once the folder is back. None when config.toml does not list it either."""
    from teamlore.core.config import load_config

    entry = next((r for r in load_config(home).repositories if r.path in spellings), None)
    if entry is None:
        return None
    _drop_from_config(home, entry.worktree_key)
    unmapped = conn.execute("SELECT count(*) FROM sessions WHERE worktree_key IS NULL").fetchone()
    return {
        "forgotten": {
            "path": display_path(entry.path),
            "name": Path(entry.path).name,
            "repositoryKey": entry.repository_key,
            "worktreeKey": entry.worktree_key,
        },
        "sessionsKept": 0,
        "sessionsUnmapped": int(unmapped[0]),
        "repositoryHistoryKept": True,  # the index held none of it
    }
