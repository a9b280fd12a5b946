"""Index health: open the L0 index and tell its troubles apart.

See docs/sessions.md, "When storage fails":

- a full disk is `DISK_FULL`: nothing changed, retry later; never "damaged";
- a damaged index (malformed pages, dropped tables, not a database at all) is `DB_CORRUPT` with
  the advice to run `teamlore sync --rebuild`;
- `--rebuild` sets a damaged index aside (renamed, never deleted) and starts a fresh one, but
  only after confirming (`--discard-history`) when the damaged file holds the history of
  sessions whose transcripts are gone, which no rebuild can recreate;
- a read-only state dir still serves every read-only command (the index opens read-only).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from teamlore.core import db, errors
from teamlore.sessions.index_db import INDEX_DB_NAME, MIGRATIONS, index_db_path, open_index


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


# every table the current schema creates, FTS shadow tables included (a test migrates an empty
# database and compares): naming them here spares each process ~6 ms of migrating one in memory
EXPECTED_TABLES = frozenset(
    {
        "commit_files",
        "commits",
        "delivery_edges",
        "diagnostics",
        "file_touches",
        "meta",
        "observed_commits",
        "repositories",
        "sessions",
        "source_files",
        "tool_uses",
        "turn_passages",
        "turn_vector_blocks",
        "turn_vectors",
        "turns",
        "turns_fts",
        "turns_fts_config",
        "turns_fts_content",
        "turns_fts_data",
        "turns_fts_docsize",
        "turns_fts_idx",
        "vector_spaces",
    }
)


def _missing_tables(conn: sqlite3.Connection) -> list[str]:
    """A table of the schema that is gone means the file was damaged or tampered with."""
    if db.schema_version(conn) != len(MIGRATIONS):
        return []
    present = _tables(conn)
    return [f"table {name} is missing" for name in sorted(EXPECTED_TABLES - present)]


def _damaged(detail: str) -> errors.TeamloreError:
    from teamlore.core import refusals  # a failure's path: a read command never loads it

    return errors.TeamloreError(
        errors.DB_CORRUPT,
        f"{INDEX_DB_NAME} is damaged ({refusals.redact_paths(detail)});"
        " run `teamlore sync --rebuild`",
    )


def _classified(exc: BaseException) -> errors.TeamloreError | None:
    if isinstance(exc, UnicodeDecodeError):  # the index only ever stores valid UTF-8 text
        return _damaged(f"undecodable text: {exc.reason}")
    from teamlore.core import refusals

    code = refusals.storage_error(exc)
    if code is errors.DB_CORRUPT:
        return _damaged(str(exc))
    if code is not None:
        return refusals.refusal_for(exc)  # DISK_FULL says what would free space
    return None


def open_index_for_sync(
    home: Path | None,
    *,
    rebuild: bool,
    discard_history: bool = False,
    kept: list[Path] | None = None,
) -> sqlite3.Connection:
    """Open the index to write. With `rebuild`, a damaged index is set aside and recreated (see
    the module docstring for when that needs `discard_history`); where it was set aside is
    appended to `kept`, for the sync to say."""
    path = index_db_path(home)
    conn: sqlite3.Connection | None = None
    try:
        conn = open_index(home)
        problems = _missing_tables(conn)
        if rebuild and not problems:
            problems = db.integrity_check(conn)
    except (sqlite3.Error, OSError, UnicodeDecodeError) as exc:
        if conn is not None:
            conn.close()
        conn = None
        refusal = _classified(exc)
        if refusal is None:
            raise
        if refusal.error is not errors.DB_CORRUPT or not rebuild:
            raise refusal from exc
        problems = [str(exc)]
    if not problems:
        assert conn is not None
        return conn
    if conn is not None:
        conn.close()
    if not rebuild:
        raise _damaged("; ".join(problems[:3]))
    lost = sessions_only_in(path)
    if lost and not discard_history:
        raise errors.TeamloreError(
            errors.REBUILD_LOSES_HISTORY,
            f"{INDEX_DB_NAME} is damaged and holds the history of {lost} session(s) whose"
            " transcripts are gone; a rebuild cannot recreate them. Rerun with"
            " `--rebuild --discard-history` to set it aside (it is kept, renamed) and start"
            " a fresh index",
            sessions=lost,
        )
    aside = set_aside(path)
    if kept is not None:
        kept.append(aside)
    return open_index(home)


def sessions_only_in(path: Path) -> int:
    """How many sessions the (damaged) index at `path` holds whose transcript files are gone.
    What cannot be read cannot be lost; a file that is not a database holds nothing."""
    try:
        conn = sqlite3.connect(db.sqlite_uri(path, "mode=ro"), uri=True)
    except sqlite3.Error:
        return 0
    lost = 0
    try:
        lost += int(conn.execute("SELECT count(*) FROM sessions WHERE available = 0").fetchone()[0])
        for (source,) in conn.execute(
            "SELECT path FROM source_files WHERE status != 'unavailable'"
            " AND session_id IN (SELECT id FROM sessions WHERE available = 1)"
        ):
            if not os.path.exists(source):
                lost += 1
    except (sqlite3.Error, UnicodeDecodeError):
        pass  # counted what could be read
    finally:
        conn.close()
    return lost


def set_aside(path: Path) -> Path:
    """Rename a damaged index (and drop its WAL side files, which belong to it)."""
    aside = path.with_name(f"{INDEX_DB_NAME}.damaged-{int(time.time())}")
    path.rename(aside)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(aside.with_name(aside.name + suffix))
    return aside


def open_index_for_read(home: Path | None) -> sqlite3.Connection:
    """Open the index for a read-only command: a damaged index is `DB_CORRUPT`, a read-only
    state dir opens the index read-only (never `INTERNAL`)."""
    try:
        conn = open_index(home)
    except (sqlite3.Error, OSError, UnicodeDecodeError) as exc:
        refusal = _classified(exc)
        cannot_write = refusal is not None and refusal.error in (
            errors.STATE_READ_ONLY,
            errors.DISK_FULL,
        )
        if not cannot_write and os.access(index_db_path(home).parent, os.W_OK):
            if refusal is None:
                raise
            raise refusal from exc
        try:
            conn = _open_read_only(index_db_path(home))
        except errors.TeamloreError:
            if refusal is not None and refusal.error is errors.DISK_FULL:
                raise refusal from exc  # no index to read yet: the full disk is what to fix
            raise
    problems = _missing_tables(conn)
    if problems:
        conn.close()
        raise _damaged("; ".join(problems))
    return conn


def _open_read_only(path: Path) -> sqlite3.Connection:
    if not path.exists():
        raise errors.TeamloreError(
            errors.STATE_READ_ONLY,
            f"the state directory is read-only and holds no {INDEX_DB_NAME} yet; run"
            " `teamlore sync` where it is writable",
        )
    opened = db.open_read_only(path)
    if opened is None:
        # a first build killed mid-batch (docs/sessions.md, "A first sync"): only a writer can
        # roll the journal back, and reading around it would show the torn batch
        from teamlore.core.refusals import INTERRUPTED_BATCH

        raise errors.TeamloreError(errors.STATE_READ_ONLY, INTERRUPTED_BATCH)
    conn = opened
    if db.schema_version(conn) == 0:  # an empty file: a first open that could not go on
        conn.close()
        raise errors.TeamloreError(
            errors.STATE_READ_ONLY,
            f"the state directory is read-only and holds no {INDEX_DB_NAME} yet; run"
            " `teamlore sync` where it is writable",
        )
    if db.schema_version(conn) < len(MIGRATIONS):
        conn.close()
        raise errors.TeamloreError(
            errors.STATE_READ_ONLY,
            f"{INDEX_DB_NAME} needs a schema upgrade and the state directory is read-only",
        )
    return conn


# where a sync was when the disk filled, and what it had not written yet: what it wrote before
# is committed and kept (each batch is a transaction), so "nothing was changed" would be false
SYNC_STEPS = {
    "index": (
        "indexing session files",
        "the files not reached yet, the links to repositories and the turn vectors were not"
        " written",
    ),
    "link": (
        "linking sessions to repositories and commits",
        "those links and the turn vectors were not written",
    ),
    "embed": (
        "writing turn vectors",
        "the rest of the turn vectors were not written (those turns are found by words only"
        " until a sync embeds them)",
    ),
}


def release_wal(conn: sqlite3.Connection) -> None:
    """Fold the WAL into the database and cut it to 0 bytes when SQLite can (best effort): a
    write refused by a full disk leaves its frames in the WAL, holding that space until the
    next writer."""
    with suppress(sqlite3.Error):
        if conn.in_transaction:
            conn.rollback()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def sync_stopped(conn: sqlite3.Connection, step: str, exc: BaseException) -> errors.TeamloreError:
    """The refusal for a sync a full disk stopped at `step` (a `SYNC_STEPS` key): what the
    index holds now, what was not written, and what frees space (docs/sessions.md, "When
    storage fails"). The WAL is released first, where SQLite can."""
    from teamlore.core import refusals

    release_wal(conn)
    doing, missing = SYNC_STEPS[step]
    held = ""
    with suppress(sqlite3.Error):
        sessions, turns, repositories = conn.execute(
            "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM turns),"
            " (SELECT count(*) FROM repositories)"
        ).fetchone()
        counts = [(sessions, "session", "sessions"), (turns, "turn", "turns")]
        counts.append((repositories, "repository", "repositories"))
        held = ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in counts)
        held = f" (the index holds {held})"
    stays = ""
    with suppress(sqlite3.Error, OSError):
        wal = Path(conn.execute("PRAGMA database_list").fetchone()[2] + "-wal")
        if wal.stat().st_size:  # the database could not grow to take it in
            stays = (
                f"; {wal.name} keeps part of it until there is room to fold it into"
                f" {INDEX_DB_NAME} (the next command that opens the index does): never delete it"
            )
    return errors.TeamloreError(
        errors.DISK_FULL,
        f"the disk holding the state directory filled while the sync was {doing}: what it"
        f" wrote before is kept{held}, {missing}{stays}; free space and run `teamlore sync`"
        f" again, it goes on from there ({refusals.shown_paths(str(exc))});"
        f" {refusals.disk_full_advice()}",
    )


@contextmanager
def stops_at(conn: sqlite3.Connection) -> Iterator[list[str]]:
    """A sync's body: it sets `step[0]` to the `SYNC_STEPS` key it is at; a full disk met there
    becomes `sync_stopped`'s refusal."""
    step = ["index"]
    try:
        yield step
    except (sqlite3.Error, OSError) as exc:
        from teamlore.core import refusals

        if refusals.storage_error(exc) is not errors.DISK_FULL:
            raise
        raise sync_stopped(conn, step[0], exc) from exc


@contextmanager
def index_errors(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Use `conn`, then close it; a storage failure on the way (a malformed page met by a
    query, a full disk met by a write) becomes its stable code with the index's own advice."""
    try:
        yield conn
    except (sqlite3.Error, OSError, UnicodeDecodeError) as exc:
        refusal = _classified(exc)
        if refusal is None:
            raise
        raise refusal from exc
    finally:
        conn.close()
