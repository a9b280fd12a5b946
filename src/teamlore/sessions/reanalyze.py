"""Re-analyze the turn search index when the text analyzer changes (`ANALYZER_VERSION`).

Every turn's searchable body is rebuilt from the turn rows already in the index, so sessions
whose files are gone keep being searchable and no session file is read again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from teamlore.core import db
from teamlore.core.analyzer import ANALYZER_VERSION
from teamlore.sessions.assembler import load_turn

BATCH = 500


def stored_analyzer_version(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'analyzer_version'").fetchone()
    return None if row is None else str(row[0])


def reanalyze_if_outdated(
    conn: sqlite3.Connection, progress: Callable[[int, int, str], None] | None = None
) -> int:
    """Rebuild every turn's FTS body with the current analyzer when the index was built with
    another one; returns how many turns were re-analyzed (0 when it was current)."""
    if stored_analyzer_version(conn) in (None, ANALYZER_VERSION):
        return 0
    turn_ids = [int(r[0]) for r in conn.execute("SELECT id FROM turns ORDER BY id")]
    for start in range(0, len(turn_ids), BATCH):
        with db.write_tx(conn):
            for turn_id in turn_ids[start : start + BATCH]:
                turn = load_turn(conn, turn_id)
                if turn is None:
                    continue
                conn.execute(
                    "UPDATE turns_fts SET body = ? WHERE rowid = ?", (turn.search_body(), turn_id)
                )
        if progress:
            done = min(start + BATCH, len(turn_ids))
            progress(done, len(turn_ids), "re-analyzing turns")
    with db.write_tx(conn):
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'analyzer_version'", (ANALYZER_VERSION,)
        )
    return len(turn_ids)
