"""A session file read again from its start, and the session it held before (docs/sessions.md,
"Incremental by design").

What the file held is replaced only once the file says which session it holds now:

- the same session (the file was rewritten or truncated): its turns are replaced;
- another session (a backup restored over it, a tool that wrote another session's transcript at
  its path): the file was taken over. The session it held keeps its history and is marked
  unavailable, as when its file disappears; the new content is indexed as the session it is;
- none yet (the file is empty, its first line half written): its turns are dropped.

A session the index holds that no other file holds (one whose file was taken over, brought back
at that path or another) is read again whole, its history replaced by what the file says.
"""

from __future__ import annotations

import sqlite3


def drop_session_content(conn: sqlite3.Connection, session_db_id: int) -> None:
    """The session's turns (with their search rows and passages) are gone, the session stays."""
    turn_ids = [
        (r[0],) for r in conn.execute("SELECT id FROM turns WHERE session_id = ?", (session_db_id,))
    ]
    conn.executemany("DELETE FROM turns_fts WHERE rowid = ?", turn_ids)
    conn.executemany("DELETE FROM turn_passages WHERE turn_id = ?", turn_ids)
    conn.execute("DELETE FROM turns WHERE session_id = ?", (session_db_id,))
    conn.execute("UPDATE sessions SET turn_count = 0 WHERE id = ?", (session_db_id,))


class FileReadAgain:
    """One file's read from its start: what becomes of the session it held (`held`, None for a
    file new to the index)."""

    def __init__(self, conn: sqlite3.Connection, held: int | None) -> None:
        self.conn = conn
        self.held = held

    def session_reused(self, session_db_id: int) -> None:
        """The file names a session the index held already and no other file holds, before any
        of its turns is written: that session is read again whole. Its turns' search rows are
        written: the sync settled them before this file (its own session), or an earlier sync
        wrote them (no other file of this sync reads a session whose file was taken over)."""
        drop_session_content(self.conn, session_db_id)

    def finish(self, session_db_id: int | None) -> None:
        """The file has been read; `session_db_id` is the session it holds now, if any."""
        held = self.held
        if held is None or held == session_db_id:
            return
        if session_db_id is None:
            drop_session_content(self.conn, held)  # the file still holds it, with no turns
            return
        self.conn.execute(
            "UPDATE sessions SET available = 0 WHERE id = ? AND NOT EXISTS (SELECT 1 FROM"
            " source_files WHERE session_id = ? AND status != 'unavailable')",
            (held, held),
        )
