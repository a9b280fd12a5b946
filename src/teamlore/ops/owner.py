"""The owner of an operation and the stores it works on, found one way for every operation.

The rule (glossary: owner; docs/architecture.md "The owner of an operation"):

1. The caller's directory is `OpContext.cwd` — the CLI's working directory or `--repository`,
   the MCP server's launch directory. Request arguments never choose the owner.
2. The owner is the git worktree containing that directory.
3. From a directory outside any git worktree, the owner is the one *registered* worktree below
   it; several is `OWNER_AMBIGUOUS`. With none, every operation refuses with git's
   `NOT_A_GIT_REPOSITORY` (those that read sessions too: `OWNER_NOT_FOUND`, which they gave
   for the same condition, is no longer raised).
4. An operation that reads the session index (recall, stage, extract, review of entries and
   Skills) also needs the owner registered (`REPOSITORY_NOT_REGISTERED`): sessions are only
   mapped to registered worktrees. Operations on the memory tree alone (status, search, list,
   consolidation, promote, discard, assemble) work in any git worktree.

    identity = resolve_owner(ctx)                  # no database (init, lint, assemble)
    with open_owner(ctx) as owner:                 # + the state DB
        owner.sync_projection()
    with open_owner(ctx, sessions=True) as owner:  # + the session index; registered only
        recall(owner.index, owner.state, owner.identity, ...)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from teamlore.core import db, errors
from teamlore.core.shapes.records import Record
from teamlore.ops.registry import OpContext
from teamlore.repo.binding import (
    RepositoryIdentity,
    is_within,
    list_repositories,
    normalize_posix,
    refuse_path_not_utf8,
    resolve_repository,
)


class OwnerContext(Record, frozen=True):
    """The owner's identity with the databases an operation opened for it (closed on exit)."""

    identity: RepositoryIdentity
    state: sqlite3.Connection
    opened_index: sqlite3.Connection | None = None

    @property
    def index(self) -> sqlite3.Connection:
        """The session index; only when opened with `sessions=True`."""
        if self.opened_index is None:
            raise RuntimeError("the session index was not opened: use open_owner(sessions=True)")
        return self.opened_index

    @property
    def worktree_root(self) -> Path:
        return self.identity.worktree_root

    @property
    def repository_key(self) -> str:
        return self.identity.repository_key

    @property
    def worktree_key(self) -> str:
        return self.identity.worktree_key

    def sync_projection(self, *, only_if_present: bool = False) -> str | None:
        """Bring the approved projection up to date (glossary: projection), and the candidate
        FTS to the current analyzer. With `only_if_present` a missing or symlinked memory tree
        is left for the caller to report instead of refused. On a state DB open read-only (a
        full disk, a read-only state dir) nothing is written: the projection stays as last
        synced, and when the tree has changed since, what to tell the reader is returned."""
        from teamlore.core.analyzer import ANALYZER_VERSION
        from teamlore.memory.store.layout import MEMORY_ROOT
        from teamlore.memory.store.projection import sync_approved_projection
        from teamlore.memory.store.state_db import candidate_analyzer_version

        tree = self.worktree_root / MEMORY_ROOT
        absent = not tree.is_dir() or tree.is_symlink()
        if db.is_read_only(self.state):
            return None if only_if_present and absent else self._not_synced()
        found = candidate_analyzer_version(self.state, self.repository_key, self.worktree_key)
        if found not in (None, ANALYZER_VERSION):
            # the staging code loads only when there is something to re-analyze
            from teamlore.memory.extraction.drafts import reanalyze_candidates
            from teamlore.memory.extraction.tasks import Owner

            reanalyze_candidates(self.state, Owner(self.repository_key, self.worktree_key))

        if only_if_present and absent:
            return None
        sync_approved_projection(
            self.state,
            repository_key=self.repository_key,
            worktree_key=self.worktree_key,
            worktree_root=self.worktree_root,
        )
        return None

    def _not_synced(self) -> str | None:
        """What a reader of the projection as last synced is told when the memory tree has
        changed since and the state DB cannot be written (docs/sessions.md, "When storage
        fails"); None when the projection is current."""
        from teamlore.memory.store.projection import projection_is_current

        if projection_is_current(
            self.state,
            repository_key=self.repository_key,
            worktree_key=self.worktree_key,
            worktree_root=self.worktree_root,
        ):
            return None
        why = db.cannot_write(Path(db.database_file(self.state)))
        cause = (
            "the disk is full" if why is errors.DISK_FULL else "the state directory is read-only"
        )
        return (
            f"{cause}: this is the memory as last synced, without the changes to"
            " .threadshare/memory since; a command run where the state dir can be written"
            " brings it up to date"
        )


def resolve_owner(
    ctx: OpContext, *, registered: bool = False, index: sqlite3.Connection | None = None
) -> RepositoryIdentity:
    """The owner of `ctx` by the rule above; `registered` for operations that read sessions
    (then `index` is the open session index to check against)."""
    try:
        identity = resolve_repository(ctx.cwd, home=ctx.home)
    except errors.TeamloreError as exc:
        if exc.code != errors.NOT_A_GIT_REPOSITORY.code:
            raise
        return _registered_below(ctx, index, exc)
    if registered and not _is_registered(identity, index):
        refuse_path_not_utf8(identity)  # `sync --repository .` would refuse it so
        raise errors.TeamloreError(
            errors.REPOSITORY_NOT_REGISTERED,
            "this worktree is not registered; run `teamlore sync --repository .`",
        )
    return identity


@contextmanager
def open_owner(
    ctx: OpContext, *, sessions: bool = False, for_read: bool = False
) -> Iterator[OwnerContext]:
    """The owner with the state DB — and, with `sessions`, the session index (the owner must
    then be registered). `for_read`: the operation only reads, so a full disk gives the state
    DB read-only and the projection as last synced (`db.connect_for_read`)."""
    from teamlore.memory.store.state_db import open_state_db
    from teamlore.sessions.index_db import open_index

    index = open_index(ctx.home) if sessions else None
    try:
        identity = resolve_owner(ctx, registered=sessions, index=index)
        state = open_state_db(ctx.home, for_read=for_read)
        try:
            yield OwnerContext(identity, state, index)
        finally:
            state.close()
    finally:
        if index is not None:
            index.close()


def _is_registered(identity: RepositoryIdentity, index: sqlite3.Connection | None) -> bool:
    if index is None:
        raise RuntimeError("checking registration needs the session index")
    return any(r.worktree_key == identity.worktree_key for r in list_repositories(index))


def _registered_below(
    ctx: OpContext, index: sqlite3.Connection | None, cause: errors.TeamloreError
) -> RepositoryIdentity:
    here = normalize_posix(str(ctx.cwd))
    below = [r for r in _registered(ctx, index) if here and is_within(str(r.worktree_root), here)]
    if len(below) == 1:
        return below[0]
    if len(below) > 1:
        names = ", ".join(sorted(r.worktree_root.name for r in below))
        raise errors.TeamloreError(
            errors.OWNER_AMBIGUOUS,
            f"this directory holds {len(below)} registered worktrees ({names}); "
            "run the command from inside one of them",
            worktrees=len(below),
        )
    raise cause


def _registered(ctx: OpContext, index: sqlite3.Connection | None) -> list[RepositoryIdentity]:
    """Registered worktrees, from the open index or (never creating one) the index on disk."""
    if index is not None:
        return list_repositories(index)
    from teamlore.core.locations import state_dir_path
    from teamlore.sessions.index_db import INDEX_DB_NAME, open_index

    home = ctx.home if ctx.home is not None else state_dir_path()
    if not (home / INDEX_DB_NAME).is_file():  # a refusal must not create the state dir
        return []
    conn = open_index(ctx.home)
    try:
        return list_repositories(conn)
    finally:
        conn.close()
