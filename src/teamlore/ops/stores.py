"""Opening what a team-memory operation works on: the caller's registered worktree, the session
index and the state DB — once, the same way for every operation."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from teamlore.ops.registry import OpContext
from teamlore.repo.binding import RepositoryIdentity


@dataclass(frozen=True, slots=True)
class Stores:
    identity: RepositoryIdentity
    index: sqlite3.Connection
    state: sqlite3.Connection


@contextmanager
def worktree_state(ctx: OpContext) -> Iterator[tuple[RepositoryIdentity, sqlite3.Connection]]:
    """The worktree of `ctx.cwd` (registered for sessions or not) and the state DB: what an
    operation on the memory tree alone needs (consolidation, discard, status)."""
    from teamlore.memory.store.state_db import open_state_db
    from teamlore.repo.binding import resolve_repository

    identity = resolve_repository(ctx.cwd, home=ctx.home)
    state = open_state_db(ctx.home)
    try:
        yield identity, state
    finally:
        state.close()


@contextmanager
def registered_stores(ctx: OpContext, *, sync_projection: bool = False) -> Iterator[Stores]:
    """The registered worktree of `ctx.cwd` (refused when unregistered or ambiguous) with the
    index and the state DB; with `sync_projection` the approved projection is brought up to
    date first, as every recall, stage and search requires (glossary: projection)."""
    from teamlore.memory.extraction.selection import resolve_owner
    from teamlore.memory.store.projection import sync_approved_projection
    from teamlore.memory.store.state_db import open_state_db
    from teamlore.sessions.index_db import open_index

    index = open_index(ctx.home)
    try:
        identity = resolve_owner(index, ctx.cwd, ctx.home)
        state = open_state_db(ctx.home)
        try:
            if sync_projection:
                sync_approved_projection(
                    state,
                    repository_key=identity.repository_key,
                    worktree_key=identity.worktree_key,
                    worktree_root=identity.worktree_root,
                )
            yield Stores(identity, index, state)
        finally:
            state.close()
    finally:
        index.close()
