"""What orders memory search's hits — each projected document's kind, entry id and status —
kept per process for the projection a search reads (docs/hybrid-search.md, "Speed").

A search orders up to MAX_CANDIDATES BM25 candidates by (deprecated last, BM25, kind, entry
id), and the fused ranking orders the documents the vector path found the same way. Asking the
state database for those columns joins every candidate to its row (bodies inline), ~2 ms of a
search at 10,000 entries. A long-lived process (the MCP server, a benchmark) therefore keeps
them for the last projection it searched twice, keyed by the state database's random id, the
owner and the projection's generation: every write of an owner's rows is one transaction that
bumps its generation (memory/store/projection.py), so a key names one set of rows. A one-shot
`teamlore memory search` searches once and never builds the table (building it reads every
row of the owner: more than one search's join). Memory: ~200 bytes a document (10,000
documents: ~2 MB), one owner at a time.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import NamedTuple


class OrderRow(NamedTuple):
    """A document as search orders it; `rank`: its BM25 rank (lower is better), 0.0 when it
    comes from elsewhere (the vector path)."""

    id: int
    kind: str
    entry_id: str
    status: str
    rank: float = 0.0


Stamp = tuple[object, str, str, int]  # (state DB id, repository key, worktree key, generation)


class Kept:
    """The owner's documents of one projection generation: approved_entries.id → its row. (A
    plain class: a second NamedTuple would cost every `memory search` process ~0.3 ms to
    create.)"""

    __slots__ = ("generation", "rows")

    def __init__(self, generation: int, rows: dict[int, OrderRow]) -> None:
        self.generation, self.rows = generation, rows


class OrderKeyCache:
    """The order keys of the last projection searched twice by this process (`get`). Safe
    across threads (the MCP server)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: Stamp | None = None
        self._stamp: Stamp | None = None
        self._keys: Kept | None = None

    def get(self, conn: sqlite3.Connection, stamp: Stamp) -> Kept | None:
        """The owner's keys under `stamp`, read now on its second search; None on its first
        (the caller joins, as one search should)."""
        with self._lock:
            if self._stamp == stamp and self._keys is not None:
                return self._keys
            if self._seen != stamp:
                self._seen = stamp
                return None
        keys = _read(conn, stamp)
        if keys is not None:
            with self._lock:
                self._stamp, self._keys = stamp, keys
        return keys

    def clear(self) -> None:
        with self._lock:
            self._seen = self._stamp = None
            self._keys = None


def _read(conn: sqlite3.Connection, stamp: Stamp) -> Kept | None:
    """The owner's keys, or None when its projection is no longer of `stamp`'s generation:
    the rows and the generation are read in one snapshot."""
    owner = stamp[1:3]
    began = not conn.in_transaction
    if began:
        conn.execute("BEGIN")
    try:
        generation = conn.execute(
            "SELECT generation FROM approved_projection "
            "WHERE repository_key = ? AND worktree_key = ?",
            owner,
        ).fetchone()
        if generation is None or generation[0] != stamp[3]:
            return None
        rows = conn.execute(
            "SELECT id, kind, entry_id, status FROM approved_entries "
            "WHERE repository_key = ? AND worktree_key = ?",
            owner,
        ).fetchall()
    finally:
        if began:
            conn.execute("COMMIT")
    return Kept(stamp[3], {row[0]: OrderRow(*row) for row in rows})


ORDER_KEYS = OrderKeyCache()
