"""Word → text tables derived once from the dictionary into the model cache (`models/` of the
state dir, `$TEAMLORE_MODEL_CACHE`) as SQLite files, so a process reads only the words it needs
instead of reading CC-CEDICT whole (`glosses`, `reverse_glosses`)."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from teamlore.core.db import sqlite_uri
from teamlore.core.paths import work_path


def read_words(path: Path, words: list[str]) -> dict[str, str]:
    """Those of `words` the table at `path` holds → their text (sqlite3.Error when damaged)."""
    conn = sqlite3.connect(sqlite_uri(path, "mode=ro&immutable=1"), uri=True)
    try:
        rows = conn.execute(
            "SELECT word, text FROM words WHERE word IN (SELECT value FROM json_each(?))",
            (json.dumps(words, ensure_ascii=False),),
        ).fetchall()
    finally:
        conn.close()
    return {str(word): str(text) for word, text in rows}


def write_words(path: Path, table: Iterable[tuple[str, str]], family: str) -> None:
    """The table into `path` (0600), whole or not at all, and the other files of its `family`
    (a glob: older formats or dictionaries) removed; a model cache that cannot be written leaves
    it to be derived again by the next process."""
    work = work_path(path, "sqlite3")
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        work.unlink(missing_ok=True)
        conn = sqlite3.connect(work)
        try:
            conn.execute(
                "CREATE TABLE words (word TEXT PRIMARY KEY, text TEXT NOT NULL) WITHOUT ROWID"
            )
            conn.executemany("INSERT INTO words VALUES (?, ?)", table)
            conn.commit()
        finally:
            conn.close()
        work.chmod(0o600)
        os.replace(work, path)
        for stale in path.parent.glob(family):
            if stale != path:
                stale.unlink(missing_ok=True)
    except (OSError, sqlite3.Error):
        with contextlib.suppress(OSError):
            work.unlink()
