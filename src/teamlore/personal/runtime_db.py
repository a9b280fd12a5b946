"""`<state>/personal/runtime.sqlite3`: the observation queue, Writer jobs, source links, receipts.

Precious (not a cache): it holds queued observations nobody has processed yet.

- `observations`: one per submitted item; `(namespace, key)` is the idempotency key, `digest`
  the sha256 of `text` (for an import, the JSON envelope). States: `pending`, `claimed`,
  `processed`, `quarantined`, `dead`. `text` is set to NULL when a forget purges it.
- `jobs`: one per claimed batch (one scope, one provenance class). States: `running`, `retry`,
  `done`, `dead`, `retired` (an explicit retry released its observations to a new job).
- `associations`: section source links, `(target, section_key = sha256(title)) -> observation`.
- `document_versions`: the last document hash the Writer committed (a different file hash means
  the person edited the document by hand).
- `section_versions`: the digest of each section of that last committed text (`Section.digest`),
  so a hand edit makes only the sections whose text changed hand-written. A document committed
  before schema 2 has none until the Writer commits it again: a hand edit of it makes every
  section hand-written, as it did then.
- `receipts`: jobs whose outcome is durable (the receipt file is the cross-store witness).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from teamlore.core import db
from teamlore.core.paths import ensure_private_dir

RUNTIME_DB_NAME = "runtime.sqlite3"

MIGRATIONS: list[db.Migration] = [
    """
    CREATE TABLE observations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        namespace TEXT NOT NULL,
        key TEXT NOT NULL,
        text TEXT,
        digest TEXT NOT NULL,
        scope TEXT NOT NULL,
        source TEXT NOT NULL,
        provenance TEXT,
        state TEXT NOT NULL CHECK (state IN
            ('pending', 'claimed', 'processed', 'quarantined', 'dead')),
        observed_at TEXT NOT NULL,
        enqueued_at REAL NOT NULL,
        processed_at TEXT,
        job_id TEXT,
        issue TEXT,
        UNIQUE (namespace, key)
    );
    CREATE INDEX observations_state ON observations(state, id);
    CREATE INDEX observations_job ON observations(job_id, id) WHERE job_id IS NOT NULL;

    CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        scope TEXT NOT NULL,
        provenance TEXT NOT NULL,
        token TEXT NOT NULL,
        generation INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('running', 'retry', 'done', 'dead', 'retired')),
        lease_expires REAL NOT NULL,
        attempts INTEGER NOT NULL,
        available_at REAL NOT NULL,
        issue TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX jobs_active ON jobs(state, scope) WHERE state IN ('running', 'retry');

    CREATE TABLE associations (
        target TEXT NOT NULL,
        section_key TEXT NOT NULL,
        observation_id INTEGER NOT NULL REFERENCES observations(id),
        PRIMARY KEY (target, section_key, observation_id)
    );
    CREATE INDEX associations_observation ON associations(observation_id);

    CREATE TABLE document_versions (
        target TEXT PRIMARY KEY,
        hash TEXT NOT NULL
    );

    CREATE TABLE receipts (
        job_id TEXT PRIMARY KEY,
        outcome TEXT NOT NULL,
        recorded_at TEXT NOT NULL
    );
    """,
    """
    CREATE TABLE section_versions (
        target TEXT NOT NULL,
        section_key TEXT NOT NULL,
        digest TEXT NOT NULL,
        PRIMARY KEY (target, section_key)
    );
    """,
]


def runtime_db_path(personal_root: Path) -> Path:
    return personal_root / RUNTIME_DB_NAME


def open_runtime_db(personal_root: Path) -> sqlite3.Connection:
    """Open (creating the private dir and the schema if needed). Writers and enqueuers only."""
    ensure_private_dir(personal_root)
    # its queue of observations not yet written and the digests of committed sections: a copy is
    # kept before an upgrade migrates it (docs/architecture.md, "Upgrading and going back")
    path = runtime_db_path(personal_root)
    return db.connect(path, MIGRATIONS, keep_copy=True, state_home=personal_root.parent)


def open_runtime_db_if_exists(personal_root: Path) -> sqlite3.Connection | None:
    """Open an existing runtime DB read-only; None when there is none (status, no side effects)."""
    path = runtime_db_path(personal_root)
    if not path.is_file():
        return None
    return db.connect(path, MIGRATIONS, readonly=True)
