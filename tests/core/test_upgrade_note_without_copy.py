"""The upgrade note of a database teamlore keeps no copy of (core/db.py, `_note_upgrade`) says
what going back costs: the session index an older teamlore builds anew from the session files,
but the org store (its tokens, its repositories) nothing makes again, so its note must not tell
the person to move it aside for an older teamlore to make it anew (docs/architecture.md,
"Upgrading and going back": back it up yourself). Real SQLite files at 0.1.0's schemas."""

from __future__ import annotations

from pathlib import Path

from teamlore.core import db
from teamlore.org import sqlite_store
from teamlore.sessions import index_db

ORG_SCHEMA_010 = 1  # teamlore 0.1.0's org store
INDEX_SCHEMA_010 = 7  # and its session index


def _notes(home: Path) -> str:
    return (home / "upgrade-notes").read_text(encoding="utf-8")


def test_the_org_stores_note_never_says_an_older_teamlore_makes_it_anew(tmp_path: Path) -> None:
    home = tmp_path / "state"
    home.mkdir(mode=0o700)
    path = home / "org.sqlite3"
    db.connect(path, sqlite_store.MIGRATIONS[:ORG_SCHEMA_010]).close()

    sqlite_store.SqliteStore.open(path).conn.close()

    note = _notes(home)
    assert f"from schema {ORG_SCHEMA_010} to {len(sqlite_store.MIGRATIONS)}" in note
    assert "anew" not in note and "no copy" in note, note


def test_the_session_indexs_note_still_says_an_older_teamlore_builds_it_anew(
    tmp_path: Path,
) -> None:
    home = tmp_path / "state"
    home.mkdir(mode=0o700)
    path = home / index_db.INDEX_DB_NAME
    db.connect(path, index_db.MIGRATIONS[:INDEX_SCHEMA_010]).close()

    index_db.open_index(home).close()

    assert "move it aside and that one makes it anew" in _notes(home)
