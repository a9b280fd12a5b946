"""Session -> worktree mapping by the session's recorded cwd.

A session belongs to the registered worktree whose root is its real cwd or an ancestor of it:
sessions started in a subdirectory belong to the worktree, and when worktrees nest the deepest
root wins. The cwd is normalized with `binding.normalize_posix` (symlinks resolved as far as the
path exists), so a directory deleted since the session still maps by its path prefix. A
Windows-style or relative cwd never matches a POSIX worktree.

The mapping is recomputed from scratch each time: a session whose worktree was unregistered
loses its `worktree_key`.
"""

from __future__ import annotations

import sqlite3

from teamlore.core import db
from teamlore.repo.binding import is_within, list_repositories, normalize_posix
from teamlore.sessions.index_db import fts_scope


def owning_worktree(cwd: str | None, roots: list[tuple[str, str]]) -> str | None:
    """The worktree_key of the deepest root in `roots` ((root, worktree_key)) containing cwd."""
    if cwd is None:
        return None
    normalized = normalize_posix(cwd)
    if normalized is None:
        return None
    best: tuple[str, str] | None = None
    for root, key in roots:
        if is_within(normalized, root) and (best is None or len(root) > len(best[0])):
            best = (root, key)
    return best[1] if best else None


def map_sessions(conn: sqlite3.Connection) -> int:
    """Set `sessions.worktree_key` for every session; return how many sessions are mapped."""
    roots = [(str(r.worktree_root), r.worktree_key) for r in list_repositories(conn)]
    rows = conn.execute("SELECT id, cwd, worktree_key, provider FROM sessions").fetchall()
    updates: list[tuple[str | None, int]] = []
    scopes: list[tuple[str, int]] = []
    mapped = 0
    for row in rows:
        key = owning_worktree(row["cwd"], roots)
        mapped += key is not None
        if key != row["worktree_key"]:
            updates.append((key, row["id"]))
            scopes.append((fts_scope(row["provider"], key), row["id"]))
    if updates:
        with db.write_tx(conn):
            conn.executemany("UPDATE sessions SET worktree_key = ? WHERE id = ?", updates)
            # turn search filters by worktree inside the FTS index: keep its scope current
            conn.executemany(
                "UPDATE turns_fts SET scope = ?"
                " WHERE rowid IN (SELECT id FROM turns WHERE session_id = ?)",
                scopes,
            )
    return mapped
