"""The repository tables of the index DB, and every query over them.

`repositories` (one row per registered worktree), `commits` and `commit_files` (the commit scan)
and `delivery_edges` (session/turn → commit,
docs/sessions.md "Repositories and delivery evidence") are created with the rest of the index
schema (`sessions/index_db.py`), but this module is their only reader and writer: code
elsewhere calls the named functions below instead of writing SQL against them.

Functions that write do not open a transaction unless they say so; callers group them in
`core.db.write_tx`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple, Protocol

from teamlore.core import errors

if TYPE_CHECKING:  # a sync writes these tables without importing the session queries
    from teamlore.sessions.queries import RepositoryFacts


class WorktreeRow(NamedTuple):
    """One registered worktree, as stored (paths are real absolute paths, as registered)."""

    repository_key: str
    worktree_key: str
    worktree_root: str
    git_common_dir: str


class TurnEdge(NamedTuple):
    """A stored delivery edge seen from its turn."""

    hash: str
    strength: str
    reasons: tuple[str, ...]
    limitations: tuple[str, ...]
    revision: str


class EdgeLike(Protocol):
    """What `replace_edges` needs of an edge (`repo.delivery.DeliveryEdge` has it)."""

    @property
    def session_id(self) -> int: ...
    @property
    def turn_id(self) -> int: ...
    @property
    def hash(self) -> str: ...
    @property
    def strength(self) -> str: ...
    @property
    def reasons(self) -> list[str]: ...
    @property
    def limitations(self) -> list[str]: ...
    @property
    def revision(self) -> str: ...


class EdgeChanges(NamedTuple):
    inserted: int
    updated: int
    deleted: int
    unchanged: int


# strongest first, for people (docs/sessions.md, delivery trace)
_STRENGTH_ORDER = (
    "CASE strength WHEN 'direct' THEN 0 WHEN 'observed' THEN 1 WHEN 'candidate' THEN 2 ELSE 3 END"
)


# --- repositories ------------------------------------------------------------------------------


def upsert_worktree(conn: sqlite3.Connection, row: WorktreeRow, registered_at: str) -> None:
    """Register a worktree, or update its repository and paths (keeps `registered_at`)."""
    conn.execute(
        "INSERT INTO repositories"
        " (repository_key, worktree_key, worktree_root, git_common_dir, registered_at)"
        " VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT(worktree_key) DO UPDATE SET"
        "   repository_key = excluded.repository_key,"
        "   worktree_root = excluded.worktree_root,"
        "   git_common_dir = excluded.git_common_dir"
        " WHERE repository_key IS NOT excluded.repository_key"
        "    OR worktree_root IS NOT excluded.worktree_root"
        "    OR git_common_dir IS NOT excluded.git_common_dir",
        (
            row.repository_key,
            row.worktree_key,
            row.worktree_root,
            row.git_common_dir,
            registered_at,
        ),
    )


def list_worktrees(conn: sqlite3.Connection) -> list[WorktreeRow]:
    """Every registered worktree, ordered by worktree root."""
    rows = conn.execute(
        "SELECT repository_key, worktree_key, worktree_root, git_common_dir FROM repositories"
        " ORDER BY worktree_root, worktree_key"
    ).fetchall()
    return [WorktreeRow(r[0], r[1], r[2], r[3]) for r in rows]


def worktree_roots(conn: sqlite3.Connection, repository_key: str) -> list[str]:
    """The roots of a repository's registered worktrees."""
    return [
        row[0]
        for row in conn.execute(
            "SELECT worktree_root FROM repositories WHERE repository_key = ?"
            " ORDER BY worktree_root",
            (repository_key,),
        )
    ]


class WorktreeStats(NamedTuple):
    sessions: int  # sessions mapped to this worktree
    commits: int  # commits stored for its repository
    scanned_at: str | None


def worktree_stats(conn: sqlite3.Connection, worktree_key: str) -> WorktreeStats:
    row = conn.execute(
        "SELECT (SELECT count(*) FROM sessions s WHERE s.worktree_key = r.worktree_key),"
        " (SELECT count(*) FROM commits c WHERE c.repository_key = r.repository_key),"
        " r.scanned_at FROM repositories r WHERE r.worktree_key = ?",
        (worktree_key,),
    ).fetchone()
    if row is None:
        raise errors.TeamloreError(errors.REPOSITORY_NOT_REGISTERED)
    return WorktreeStats(int(row[0]), int(row[1]), row[2])


def stored_ref_digest(conn: sqlite3.Connection, worktree_key: str) -> str | None:
    """The ref digest of the worktree's last commit scan (None: never scanned).

    Refuses with REPOSITORY_NOT_REGISTERED when the worktree is not registered."""
    row = conn.execute(
        "SELECT ref_digest FROM repositories WHERE worktree_key = ?", (worktree_key,)
    ).fetchone()
    if row is None:
        raise errors.TeamloreError(errors.REPOSITORY_NOT_REGISTERED)
    digest: str | None = row[0]
    return digest


def mark_scanned(conn: sqlite3.Connection, repository_key: str, ref_digest: str, at: str) -> None:
    conn.execute(
        "UPDATE repositories SET ref_digest = ?, scanned_at = ? WHERE repository_key = ?",
        (ref_digest, at, repository_key),
    )


def forget_worktree(conn: sqlite3.Connection, worktree_key: str) -> bool:
    """Drop a worktree's registration (True when it was registered).

    The repository's commits and delivery edges go with its last worktree; sessions stay indexed
    (their mapping is recomputed by `repo.worktrees.map_sessions`)."""
    row = conn.execute(
        "SELECT repository_key FROM repositories WHERE worktree_key = ?", (worktree_key,)
    ).fetchone()
    if row is None:
        return False
    conn.execute("DELETE FROM repositories WHERE worktree_key = ?", (worktree_key,))
    repository_key = row[0]
    still = conn.execute(
        "SELECT 1 FROM repositories WHERE repository_key = ? LIMIT 1", (repository_key,)
    ).fetchone()
    if still is None:
        for table in ("delivery_edges", "commit_files", "commits"):
            conn.execute(f"DELETE FROM {table} WHERE repository_key = ?", (repository_key,))
    return True


# --- commits -----------------------------------------------------------------------------------


def commit_parents(conn: sqlite3.Connection, repository_key: str) -> Iterator[tuple[str, str]]:
    """(hash, space-separated parent hashes) of every stored commit of the repository."""
    for row in conn.execute(
        "SELECT hash, parents FROM commits WHERE repository_key = ?", (repository_key,)
    ):
        yield row[0], row[1]


def commit_times(
    conn: sqlite3.Connection, repository_key: str
) -> Iterator[tuple[str, str | None, str | None]]:
    """(hash, author time, committer time) of every stored commit of the repository."""
    for row in conn.execute(
        "SELECT hash, author_time, committer_time FROM commits WHERE repository_key = ?",
        (repository_key,),
    ):
        yield row[0], row[1], row[2]


def insert_commit(
    conn: sqlite3.Connection,
    repository_key: str,
    hash_: str,
    *,
    parents: list[str],
    author_time: str | None,
    committer_time: str | None,
    subject: str,
    files: Iterable[tuple[str, str]],
) -> int | None:
    """Store a commit and its changed (path, change) pairs; None when it was already stored,
    else the number of path rows inserted."""
    cursor = conn.execute(
        "INSERT OR IGNORE INTO commits"
        " (repository_key, hash, parents, author_time, committer_time, subject)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (repository_key, hash_, " ".join(parents), author_time, committer_time, subject),
    )
    if cursor.rowcount != 1:
        return None
    inserted = 0
    for path, change in files:
        inserted += conn.execute(
            "INSERT OR IGNORE INTO commit_files (repository_key, hash, path, change)"
            " VALUES (?, ?, ?, ?)",
            (repository_key, hash_, path, change),
        ).rowcount
    return inserted


def has_commit(conn: sqlite3.Connection, repository_key: str, hash_: str) -> bool:
    """True when the commit scan stored this commit for the repository."""
    row = conn.execute(
        "SELECT 1 FROM commits WHERE repository_key = ? AND hash = ?", (repository_key, hash_)
    ).fetchone()
    return row is not None


def commit_paths(conn: sqlite3.Connection, repository_key: str, hash_: str) -> list[str]:
    """The repository-relative paths a stored commit changed."""
    return [
        row[0]
        for row in conn.execute(
            "SELECT path FROM commit_files WHERE repository_key = ? AND hash = ?",
            (repository_key, hash_),
        )
    ]


def commits_changing(conn: sqlite3.Connection, repository_key: str, path: str) -> list[str]:
    """The stored commits that changed a repository-relative path, by hash."""
    return [
        row[0]
        for row in conn.execute(
            "SELECT hash FROM commit_files WHERE repository_key = ? AND path = ? ORDER BY hash",
            (repository_key, path),
        )
    ]


# --- delivery edges ----------------------------------------------------------------------------


def mapped_sessions(conn: sqlite3.Connection, repository_key: str) -> list[sqlite3.Row]:
    """Sessions mapped to any worktree of the repository (id, session_key, cwd, times)."""
    return conn.execute(
        "SELECT s.id, s.session_key, s.cwd, s.started_at, s.ended_at FROM sessions s"
        " JOIN repositories r ON r.worktree_key = s.worktree_key"
        " WHERE r.repository_key = ? ORDER BY s.id",
        (repository_key,),
    ).fetchall()


def _json(value: list[str]) -> str:
    from teamlore.core.canonical import canonical_json  # hashlib: not for `status`

    return canonical_json(value).decode("utf-8")


def replace_edges(
    conn: sqlite3.Connection,
    repository_key: str,
    session_ids: Iterable[int],
    edges: Iterable[EdgeLike],
) -> EdgeChanges:
    """Make the stored edges of a repository exactly `edges`, by diff (one transaction is the
    caller's). The sessions' edges under another repository are stale (a session belongs to one
    worktree) and go too."""
    inserted = updated = deleted = unchanged = 0
    wanted = {(e.session_id, e.turn_id, e.hash): e for e in edges}
    for session_id in session_ids:
        deleted += conn.execute(
            "DELETE FROM delivery_edges WHERE session_id = ? AND repository_key != ?",
            (session_id, repository_key),
        ).rowcount
    existing = conn.execute(
        "SELECT id, session_id, turn_id, hash, revision FROM delivery_edges"
        " WHERE repository_key = ?",
        (repository_key,),
    ).fetchall()
    for row in existing:
        edge = wanted.pop((row["session_id"], row["turn_id"], row["hash"]), None)
        if edge is None:
            conn.execute("DELETE FROM delivery_edges WHERE id = ?", (row["id"],))
            deleted += 1
        elif edge.revision == row["revision"]:
            unchanged += 1
        else:
            conn.execute(
                "UPDATE delivery_edges SET strength = ?, reasons = ?, limitations = ?,"
                " revision = ? WHERE id = ?",
                (
                    edge.strength,
                    _json(edge.reasons),
                    _json(edge.limitations),
                    edge.revision,
                    row["id"],
                ),
            )
            updated += 1
    for edge in wanted.values():
        conn.execute(
            "INSERT INTO delivery_edges (repository_key, session_id, turn_id, hash, strength,"
            " reasons, limitations, revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                repository_key,
                edge.session_id,
                edge.turn_id,
                edge.hash,
                edge.strength,
                _json(edge.reasons),
                _json(edge.limitations),
                edge.revision,
            ),
        )
        inserted += 1
    return EdgeChanges(inserted, updated, deleted, unchanged)


def edge_rows(
    conn: sqlite3.Connection,
    repository_key: str,
    *,
    session_id: int | None = None,
    turn_id: int | None = None,
) -> list[sqlite3.Row]:
    """Stored edges of a repository with their session key and turn ordinal (optionally of one
    session or turn), ordered by session, turn ordinal and hash."""
    sql = (
        "SELECT e.repository_key, e.session_id, s.session_key, e.turn_id, t.ordinal,"
        " e.hash, e.strength, e.reasons, e.limitations, e.revision FROM delivery_edges e"
        " JOIN sessions s ON s.id = e.session_id JOIN turns t ON t.id = e.turn_id"
        " WHERE e.repository_key = ?"
    )
    params: list[object] = [repository_key]
    if session_id is not None:
        sql += " AND e.session_id = ?"
        params.append(session_id)
    if turn_id is not None:
        sql += " AND e.turn_id = ?"
        params.append(turn_id)
    sql += " ORDER BY e.session_id, t.ordinal, e.hash"
    return conn.execute(sql, params).fetchall()


def turn_edges(
    conn: sqlite3.Connection, turn_id: int, *, repository_key: str | None = None
) -> list[TurnEdge]:
    """A turn's edges (of one repository when given), strongest first, then by hash."""
    sql = "SELECT hash, strength, reasons, limitations, revision FROM delivery_edges"
    sql += " WHERE turn_id = ?"
    params: list[object] = [turn_id]
    if repository_key is not None:
        sql += " AND repository_key = ?"
        params.append(repository_key)
    sql += f" ORDER BY {_STRENGTH_ORDER}, hash"
    return [
        TurnEdge(
            hash=row[0],
            strength=row[1],
            reasons=tuple(json.loads(row[2])),
            limitations=tuple(json.loads(row[3])),
            revision=row[4],
        )
        for row in conn.execute(sql, params)
    ]


def session_facts(conn: sqlite3.Connection) -> RepositoryFacts:
    """What `sessions list/show` show of these tables: worktree folder names, turn edges."""
    from teamlore.sessions.queries import RepositoryFacts

    names = {
        row.worktree_key: row.worktree_root.rstrip("/").rsplit("/", 1)[-1]
        for row in list_worktrees(conn)
    }

    def edges(turn_id: int) -> list[dict[str, object]]:
        return [
            {
                "hash": e.hash,
                "strength": e.strength,
                "reasons": list(e.reasons),
                "limitations": list(e.limitations),
            }
            for e in turn_edges(conn, turn_id)
        ]

    return RepositoryFacts(names=names, turn_edges=edges)


def table_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Rows in the repository tables: registered worktrees, commits, delivery edges."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM repositories), (SELECT count(*) FROM commits),"
        " (SELECT count(*) FROM delivery_edges)"
    ).fetchone()
    return {"repositories": int(row[0]), "commits": int(row[1]), "deliveryEdges": int(row[2])}
