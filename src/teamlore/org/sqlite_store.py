"""The embedded org store: `org.sqlite3` under the state dir (docs/org.md "One machine").

FTS5 over the analyzed text (the tokenizer of memory search), BM25 ranking; the sync lock is a
file lock next to the database, so two `org sync` on one machine take turns.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from teamlore.core import db, errors
from teamlore.core.analyzer import Query
from teamlore.core.lock import file_lock
from teamlore.core.paths import write_private_file
from teamlore.core.timeutil import now_instant
from teamlore.org.store import (
    ADD_A_TOKEN_UNLESS_ITS_NAME_IS_LIVE,
    Backend,
    Document,
    LexicalHit,
    Repository,
    SearchFilter,
    StoredHit,
    StoredVectors,
    Token,
    chunks,
    read_repository,
    repository_taken,
    sync_busy,
    token_exists,
)

MIGRATIONS = [
    """
CREATE TABLE org_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO org_meta VALUES ('generation', '0');
INSERT INTO org_meta VALUES ('index_id', lower(hex(randomblob(16))));
CREATE TABLE org_repositories (
  name TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  remote TEXT,
  added_at TEXT NOT NULL,
  state TEXT NOT NULL,
  head_commit TEXT,
  memory_tree TEXT,
  synced_at TEXT,
  problem TEXT,
  findings TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE org_documents (
  id INTEGER PRIMARY KEY,
  repository TEXT NOT NULL REFERENCES org_repositories(name) ON DELETE CASCADE,
  path TEXT NOT NULL,
  kind TEXT NOT NULL,
  doc_id TEXT NOT NULL,
  blob TEXT NOT NULL,
  entry_type TEXT,
  status TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  space TEXT,
  vector BLOB,
  headline_vector BLOB,
  UNIQUE (repository, path)
);
CREATE VIRTUAL TABLE org_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 0');
CREATE TABLE org_tokens (
  name TEXT PRIMARY KEY,
  digest TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
""",
    # 2: one row per token, not per name: a revoked token keeps its dates when its name is
    # given to a new one (a unique index holds the names of the live tokens)
    """
CREATE TABLE org_tokens_2 (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  digest TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
INSERT INTO org_tokens_2 (name, digest, created_at, revoked_at)
  SELECT name, digest, created_at, revoked_at FROM org_tokens ORDER BY created_at, name;
DROP TABLE org_tokens;
ALTER TABLE org_tokens_2 RENAME TO org_tokens;
CREATE UNIQUE INDEX org_tokens_live ON org_tokens (name) WHERE revoked_at IS NULL;
""",
]

_HIT_COLUMNS = "id, repository, kind, doc_id, path, entry_type, status, title, body"


@dataclass
class SqliteStore:
    conn: sqlite3.Connection
    path: Path
    backend: Backend = "sqlite"

    @classmethod
    def open(cls, path: Path) -> SqliteStore:
        return cls(db.connect(path, MIGRATIONS), path)

    @property
    def where(self) -> str:
        return f"embedded ({self.path.name} in the state dir)"

    @property
    def public_where(self) -> str:
        return self.where  # a file name every embedded index has: nothing of this machine

    def close(self) -> None:
        self.conn.close()

    # ---------------------------------------------------------------------------- repositories

    def add_repository(self, repository: Repository) -> None:
        with db.write_tx(self.conn):
            taken = self.conn.execute(
                "SELECT name, path, remote FROM org_repositories "
                "WHERE path = ? OR name = ? OR lower(remote) = lower(?)",
                (repository.path, repository.name, repository.remote),
            ).fetchall()
            repository_taken(
                repository, [(str(name), str(path), remote) for name, path, remote in taken]
            )
            self.conn.execute(
                "INSERT INTO org_repositories (name, path, remote, added_at, state) "
                "VALUES (?, ?, ?, ?, ?)",
                (repository.name, repository.path, repository.remote, repository.added_at, "new"),
            )

    def remove_repository(self, name: str) -> int:
        with db.write_tx(self.conn):
            self._delete_documents(name, None)
            removed = self.conn.execute(
                "DELETE FROM org_repositories WHERE name = ?", (name,)
            ).rowcount
            self._bump()
        return int(removed)

    def repositories(self) -> list[Repository]:
        counts = dict(
            self.conn.execute(
                "SELECT repository, count(*) FROM org_documents GROUP BY repository"
            ).fetchall()
        )
        rows = self.conn.execute("SELECT * FROM org_repositories ORDER BY name").fetchall()
        return [
            read_repository(
                name=row["name"],
                path=row["path"],
                remote=row["remote"],
                added_at=row["added_at"],
                state=row["state"],
                commit=row["head_commit"],
                tree=row["memory_tree"],
                synced_at=row["synced_at"],
                problem=row["problem"],
                findings=orjson.loads(row["findings"]),
                documents=int(counts.get(row["name"], 0)),
            )
            for row in rows
        ]

    def record(self, repository: Repository) -> None:
        with db.write_tx(self.conn):
            self._record(repository)

    def _record(self, repository: Repository) -> None:
        self.conn.execute(
            "UPDATE org_repositories SET remote = ?, state = ?, head_commit = ?, "
            "memory_tree = ?, synced_at = ?, problem = ?, findings = ? WHERE name = ?",
            (
                repository.remote,
                repository.state,
                repository.commit,
                repository.tree,
                repository.synced_at,
                repository.problem,
                orjson.dumps(repository.findings).decode(),
                repository.name,
            ),
        )

    # ------------------------------------------------------------------------------- documents

    def stored_blobs(self, repository: str) -> dict[str, str]:
        rows = self.conn.execute(
            "SELECT path, blob FROM org_documents WHERE repository = ?", (repository,)
        ).fetchall()
        return {row[0]: row[1] for row in rows}

    def unembedded(self, repository: str, space: str) -> set[str]:
        rows = self.conn.execute(
            "SELECT path FROM org_documents WHERE repository = ? "
            "AND (vector IS NULL OR space IS NOT ?)",
            (repository, space),
        ).fetchall()
        return {row[0] for row in rows}

    def apply(self, repository: Repository, upserts: list[Document], deletes: list[str]) -> None:
        with db.write_tx(self.conn):
            self._delete_documents(repository.name, [*deletes, *(d.path for d in upserts)])
            for doc in upserts:
                cursor = self.conn.execute(
                    "INSERT INTO org_documents (repository, path, kind, doc_id, blob, entry_type, "
                    "status, title, body, space, vector, headline_vector) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        doc.repository,
                        doc.path,
                        doc.kind,
                        doc.doc_id,
                        doc.blob,
                        doc.entry_type,
                        doc.status,
                        doc.title,
                        doc.body,
                        doc.space,
                        doc.vector,
                        doc.headline_vector,
                    ),
                )
                self.conn.execute(
                    "INSERT INTO org_fts (rowid, text) VALUES (?, ?)",
                    (cursor.lastrowid, doc.analyzed),
                )
            self._record(repository)
            if upserts or deletes:
                self._bump()

    def _delete_documents(self, repository: str, paths: list[str] | None) -> None:
        if paths is None:
            ids = [
                row[0]
                for row in self.conn.execute(
                    "SELECT id FROM org_documents WHERE repository = ?", (repository,)
                )
            ]
        else:
            ids = []
            for part in chunks(paths, 500):
                marks = ", ".join("?" * len(part))
                ids += [
                    row[0]
                    for row in self.conn.execute(
                        f"SELECT id FROM org_documents WHERE repository = ? AND path IN ({marks})",
                        (repository, *part),
                    )
                ]
        for part in chunks(ids, 500):
            marks = ", ".join("?" * len(part))
            self.conn.execute(f"DELETE FROM org_fts WHERE rowid IN ({marks})", part)
            self.conn.execute(f"DELETE FROM org_documents WHERE id IN ({marks})", part)

    def _bump(self) -> None:
        self.conn.execute(
            "UPDATE org_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
        )

    def generation(self) -> int:
        row = self.conn.execute("SELECT value FROM org_meta WHERE key = 'generation'").fetchone()
        return int(row[0])

    def stamp(self) -> tuple[str, int]:
        rows = dict(self.conn.execute("SELECT key, value FROM org_meta").fetchall())
        return str(rows["index_id"]), int(rows["generation"])

    @contextmanager
    def sync_lock(
        self, wait_seconds: float, holder: str, waiting: Callable[[str], None] | None = None
    ) -> Iterator[None]:
        """A file lock next to the database; the holder is written beside it, so a second sync
        that waits or gives up can say who holds it."""
        lock = self.path.with_name(self.path.name + ".sync-lock")
        named = self.path.with_name(self.path.name + ".sync-holder")

        def holding() -> str:
            return named.read_text(errors="replace") if named.exists() else "holder unknown"

        try:
            with ExitStack() as held:
                try:
                    held.enter_context(file_lock(lock, wait_seconds=0, what="org sync"))
                except errors.TeamloreError as busy:
                    if busy.code != errors.LOCK_BUSY.code or wait_seconds <= 0:
                        raise
                    if waiting is not None:
                        waiting(holding())
                    held.enter_context(file_lock(lock, wait_seconds=wait_seconds, what="org sync"))
                write_private_file(named, f"{holder}, since {now_instant()}".encode())
                yield
        except errors.TeamloreError as busy:
            if busy.code != errors.LOCK_BUSY.code:
                raise
            raise sync_busy(holding()) from None

    # ---------------------------------------------------------------------------------- search

    def lexical(self, query: Query, where: SearchFilter, window: int) -> list[LexicalHit]:
        """The `window` best matches by BM25 with the terms each holds. Unfiltered, FTS5 is asked
        alone for its best (no join per match; the few deprecated documents among them are then
        left out); with a repository or kind filter, the filtered join over every match."""
        conditions, params = _filter_sql(where)
        if not where.repositories and not where.kinds:
            rows = self.conn.execute(
                "WITH best AS (SELECT rowid AS id, bm25(org_fts) AS rank FROM org_fts "
                "WHERE org_fts MATCH ? ORDER BY rank LIMIT ?) "
                f"SELECT best.id, best.rank FROM best JOIN org_documents AS d ON d.id = best.id "
                f"WHERE 1{conditions} ORDER BY best.rank",
                (query.match_any(), window, *params),
            ).fetchall()
        else:
            rows = self.conn.execute(
                "SELECT d.id, bm25(org_fts) AS rank FROM org_fts JOIN org_documents AS d "
                f"ON d.id = org_fts.rowid WHERE org_fts MATCH ?{conditions} ORDER BY rank LIMIT ?",
                (query.match_any(), *params, window),
            ).fetchall()
        held = self._terms_held(query, [row[0] for row in rows])
        return [LexicalHit(row[0], held.get(row[0], 1), -float(row[1])) for row in rows]

    def _terms_held(self, query: Query, docs: list[int]) -> dict[int, int]:
        """How many query terms each candidate holds: each term's matches asked of FTS5 alone,
        as one JSON array (memory search's way: no join and no Python step per match)."""
        if len(query.terms) < 2 or not docs:
            return {}
        held = dict.fromkeys(docs, 0)
        for term in query.terms:
            (found,) = self.conn.execute(
                "SELECT json_group_array(rowid) FROM org_fts WHERE org_fts MATCH ?",
                (term.expr(),),
            ).fetchone()
            for doc in held.keys() & orjson.loads(found):
                held[doc] += 1
        return held

    def hits(self, docs: list[int]) -> dict[int, StoredHit]:
        found: dict[int, StoredHit] = {}
        for part in chunks(docs, 500):
            marks = ", ".join("?" * len(part))
            for row in self.conn.execute(
                f"SELECT {_HIT_COLUMNS} FROM org_documents WHERE id IN ({marks})", part
            ):
                found[row[0]] = StoredHit(*row)
        return found

    def vectors(self, space: str) -> StoredVectors:
        rows = self.conn.execute(
            "SELECT id, vector, headline_vector, repository, kind, status FROM org_documents "
            "WHERE space = ? AND vector IS NOT NULL ORDER BY id",
            (space,),
        ).fetchall()
        return StoredVectors(
            [row[0] for row in rows],
            [row[1] for row in rows],
            [row[2] for row in rows],
            [(row[3], row[4], row[5]) for row in rows],
        )

    def counts(self) -> dict[str, Any]:
        (documents,) = self.conn.execute("SELECT count(*) FROM org_documents").fetchone()
        (embedded,) = self.conn.execute(
            "SELECT count(*) FROM org_documents WHERE vector IS NOT NULL"
        ).fetchone()
        return {"documents": int(documents), "embedded": int(embedded), "vectorStorage": "blob"}

    # ---------------------------------------------------------------------------------- tokens

    def add_token(self, name: str, digest: str, created_at: str) -> None:
        with db.write_tx(self.conn):
            added = self.conn.execute(
                "INSERT INTO org_tokens (name, digest, created_at) VALUES (?, ?, ?) "
                f"{ADD_A_TOKEN_UNLESS_ITS_NAME_IS_LIVE}",
                (name, digest, created_at),
            ).rowcount
        if not added:
            raise token_exists(name)

    def revoke_token(self, name: str, revoked_at: str) -> bool:
        with db.write_tx(self.conn):
            changed = self.conn.execute(
                "UPDATE org_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
                (revoked_at, name),
            ).rowcount
        return bool(changed)

    def token_named(self, digest: str) -> str | None:
        row = self.conn.execute(
            "SELECT name FROM org_tokens WHERE digest = ? AND revoked_at IS NULL", (digest,)
        ).fetchone()
        return None if row is None else str(row[0])

    def tokens(self) -> list[Token]:
        rows = self.conn.execute(
            "SELECT name, created_at, revoked_at FROM org_tokens ORDER BY name, id"
        ).fetchall()
        return [Token(*row) for row in rows]


def _filter_sql(where: SearchFilter) -> tuple[str, list[Any]]:
    sql, params = "", []
    if where.repositories:
        sql += f" AND d.repository IN ({', '.join('?' * len(where.repositories))})"
        params += list(where.repositories)
    if where.kinds:
        sql += f" AND d.kind IN ({', '.join('?' * len(where.kinds))})"
        params += list(where.kinds)
    if not where.include_deprecated:
        sql += " AND d.status = 'approved'"
    return sql, params
