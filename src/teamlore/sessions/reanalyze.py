"""Re-analyze the turn search index when the text analyzer changes (`ANALYZER_VERSION`), and
find the passages of turns indexed before passages existed.

Every turn's searchable body is rebuilt from the turn rows already in the index, so sessions
whose files are gone keep being searchable and no session file is read again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from teamlore.core import db
from teamlore.core.analyzer import ANALYZER_VERSION
from teamlore.sessions.assembler import load_turn
from teamlore.sessions.index_db import PASSAGES_PENDING

BATCH = 500


def stored_analyzer_version(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'analyzer_version'").fetchone()
    return None if row is None else str(row[0])


def found_passages(conn: sqlite3.Connection, turn_id: int) -> bytes | None:
    """Where the passages of a written turn start, found from its rows as the next sync will
    store them (`index_db.passage_starts`, `queries.find_pending_passages`); None for a turn
    the index does not hold."""
    turn = load_turn(conn, turn_id)
    return None if turn is None else turn.search_body()[1]


def reanalyze_if_outdated(
    conn: sqlite3.Connection, progress: Callable[[int, int, str], None] | None = None
) -> int:
    """Rebuild every turn's FTS body with the current analyzer when the index was built with
    another one, and find every turn's passages when the index has none yet (its turns were
    written before passages existed: `index_db.TURN_PASSAGES`); returns how many turns were
    re-analyzed (0 when it was current)."""
    outdated = stored_analyzer_version(conn) not in (None, ANALYZER_VERSION)
    pending = conn.execute(PASSAGES_PENDING).fetchone() is not None
    if not (outdated or pending):
        return 0
    what = "re-analyzing turns" if outdated else "finding the passages of turns"
    turn_ids = [int(r[0]) for r in conn.execute("SELECT id FROM turns ORDER BY id")]
    for start in range(0, len(turn_ids), BATCH):
        with db.write_tx(conn):
            for turn_id in turn_ids[start : start + BATCH]:
                turn = load_turn(conn, turn_id)
                if turn is None:
                    continue
                body, starts = turn.search_body()
                if outdated:
                    conn.execute("UPDATE turns_fts SET body = ? WHERE rowid = ?", (body, turn_id))
                conn.execute(
                    "INSERT OR REPLACE INTO turn_passages(turn_id, starts) VALUES (?, ?)",
                    (turn_id, starts),
                )
        if progress:
            done = min(start + BATCH, len(turn_ids))
            progress(done, len(turn_ids), what)
    with db.write_tx(conn):
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'analyzer_version'", (ANALYZER_VERSION,)
        )
        conn.execute("DELETE FROM meta WHERE key = 'passages'")
    return len(turn_ids)
