"""Which turns were extracted, and putting a chunk's turns back to be extracted again.

A chunk in state `drafted` or `extracted` keeps its turns out of later recalls (recall.py). A
person who discards a candidate with `memory discard --extract-again` (promotion/discard.py)
puts the turns of its chunk back: the chunk returns to `pending` with its `extraction_round`
one higher. The round is bound into the identity of the tasks cut from those turns (through the
evidence catalog's scope), so the next recall issues a new task with new evidence and candidate
ids instead of offering the old, submitted one again; the old chunk's tasks that were never
submitted go `stale`.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from teamlore.repo.binding import RepositoryIdentity

EXTRACTED = ("drafted", "extracted")


def done_ranges(
    conn: sqlite3.Connection, identity: RepositoryIdentity, *, exclude: str = ""
) -> dict[str, list[tuple[int, int]]]:
    """The turn ranges of each session whose chunks were staged (all but chunk `exclude`)."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    for row in conn.execute(
        "SELECT session_key, turn_range FROM chunks WHERE repository_key = ? AND worktree_key = ?"
        " AND status IN ('drafted', 'extracted') AND chunk_ref != ?",
        (identity.repository_key, identity.worktree_key, exclude),
    ):
        start, _, end = row["turn_range"].partition("-")
        ranges.setdefault(row["session_key"], []).append((int(start), int(end)))
    return ranges


def extracted_elsewhere(
    conn: sqlite3.Connection,
    identity: RepositoryIdentity,
    session_key: str,
    chunk_ref: str,
    start: str,
    end: str,
) -> bool:
    """Whether another chunk holding some of turns `start`..`end` was staged: a task cut to
    another budget (`chunkBytes`) or from another selection of the same session. Staging this
    one too would extract those turns twice."""
    ranges = done_ranges(conn, identity, exclude=chunk_ref).get(session_key, [])
    return any(first <= int(end) and int(start) <= last for first, last in ranges)


def extraction_rounds(conn: sqlite3.Connection, identity: RepositoryIdentity) -> dict[str, int]:
    """chunk_ref → how many times a person put its turns back (only chunks put back)."""
    return {
        str(row[0]): int(row[1])
        for row in conn.execute(
            "SELECT chunk_ref, extraction_round FROM chunks WHERE repository_key = ?"
            " AND worktree_key = ? AND extraction_round > 0",
            (identity.repository_key, identity.worktree_key),
        )
    }


def put_turns_back(conn: sqlite3.Connection, chunk_ref: str) -> dict[str, Any] | None:
    """Return the turns of an extracted chunk to be extracted again (inside the caller's
    transaction); None when the chunk is not extracted (nothing to put back)."""
    row = conn.execute(
        "SELECT session_key, turn_range, status FROM chunks WHERE chunk_ref = ?", (chunk_ref,)
    ).fetchone()
    if row is None or row[2] not in EXTRACTED:
        return None
    conn.execute(
        "UPDATE chunks SET status = 'pending', extraction_round = extraction_round + 1"
        " WHERE chunk_ref = ?",
        (chunk_ref,),
    )
    conn.execute(
        "UPDATE tasks SET status = 'stale', lease_holder = NULL, claim_token = NULL,"
        " lease_expires_at = NULL WHERE chunk_ref = ? AND status IN ('pending', 'claimed')",
        (chunk_ref,),
    )
    start, _, end = str(row[1]).partition("-")
    return {"sessionKey": str(row[0]), "turnRange": {"start": int(start), "end": int(end)}}


def candidates_waiting_on(
    conn: sqlite3.Connection, identity: RepositoryIdentity, session_keys: list[str]
) -> dict[str, int]:
    """Of the candidates staged from the extracted turns of these sessions, how many still wait
    on their adjudication (`draft`) and how many on a person's review (`quarantined`)."""
    waiting = {"draft": 0, "quarantined": 0}
    marks = ",".join("?" * len(session_keys))
    for status, n in conn.execute(
        "SELECT c.status, count(*) FROM candidates c JOIN chunks k ON k.chunk_ref = c.chunk_ref"
        " WHERE k.repository_key = ? AND k.worktree_key = ? AND k.status IN ('drafted',"
        f" 'extracted') AND k.session_key IN ({marks})"
        " AND c.status IN ('draft', 'quarantined') GROUP BY c.status",
        (identity.repository_key, identity.worktree_key, *session_keys),
    ):
        waiting[str(status)] = int(n)
    return waiting
