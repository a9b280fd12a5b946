"""Sessions kept out of extraction (docs/sessions.md "Keeping a session out").

`teamlore sessions exclude KEY` records the session's key in `excluded_sessions` of
`memory-state.sqlite3` (precious state: a rebuilt session index keeps the list). Recall never
selects an excluded session's turns, so neither the agent-native path nor the batch runner and
its previews (which select through recall) can send them anywhere; a runner plan made before
the exclusion refuses at approval. `include` takes the session back.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from teamlore.core import db
from teamlore.core.timeutil import now_ms
from teamlore.memory.store.state_db import state_db_path


def exclude(conn: sqlite3.Connection, session_key: str) -> bool:
    """Keep `session_key` out of extraction; False when it already was."""
    with db.write_tx(conn):
        cursor = conn.execute(
            "INSERT INTO excluded_sessions (session_key, excluded_at) VALUES (?, ?) "
            "ON CONFLICT (session_key) DO NOTHING",
            (session_key, now_ms()),
        )
    return cursor.rowcount == 1


def include(conn: sqlite3.Connection, session_key: str) -> bool:
    """Take `session_key` back into extraction; False when it was not excluded."""
    with db.write_tx(conn):
        cursor = conn.execute("DELETE FROM excluded_sessions WHERE session_key = ?", (session_key,))
    return cursor.rowcount == 1


def excluded_keys(conn: sqlite3.Connection) -> frozenset[str]:
    return frozenset(row[0] for row in conn.execute("SELECT session_key FROM excluded_sessions"))


def is_excluded(home: Path | None, session_key: str) -> bool:
    """Read-only: whether `session_key` is excluded (a state DB that does not exist yet, or
    predates the list, excludes nothing). Never creates or migrates the database."""
    path = state_db_path(home)
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(db.sqlite_uri(path, "mode=ro"), uri=True)
    except sqlite3.Error:
        return False
    try:
        row = conn.execute(
            "SELECT 1 FROM excluded_sessions WHERE session_key = ?", (session_key,)
        ).fetchone()
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()
    return row is not None
