"""SQLite connection discipline shared by every teamlore database.

WAL, a busy timeout, foreign keys, `BEGIN IMMEDIATE` for writes, numbered migrations recorded in
`PRAGMA user_version`, and files created 0600. A database that keeps what nothing can make again
(`keep_copy`) is copied before a migration changes it, and every migration of an existing
database leaves a line in the state dir's upgrade notes, which the next text view says once
(docs/architecture.md, "Upgrading and going back").
"""

from __future__ import annotations

import fcntl
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Generic, TypeVar
from urllib.parse import quote

from teamlore.core import errors
from teamlore.core.locations import UPGRADE_NOTES_NAME
from teamlore.core.paths import (
    FILE_MODE,
    display_path,
    ensure_private_file,
    refuse_wrong_type,
)

BUSY_TIMEOUT_MS = 10_000
DERIVED_BUSY_TIMEOUT_MS = 250  # how long a read command waits to write a derived record
# the largest integer SQLite stores: a larger one bound to a statement raises OverflowError
MAX_INTEGER = 2**63 - 1

T = TypeVar("T")

Migration = str  # one SQL script; its position in the list is its number (1-based)


def sqlite_uri(path: Path | str, params: str = "") -> str:
    """SQLite's URI of `path` with `params` (`mode=ro`): the path's bytes percent-escaped, so a
    state dir whose name holds `?`, `#` or `%` is that folder, not URI parameters, and one whose
    name is not UTF-8 (`st\\xf3te`) opens at its real bytes."""
    escaped = quote(os.fsencode(path))
    # an absolute path after an empty authority (`file:///…`): `file://srv/…` names a host
    where = f"file://{escaped}" if escaped.startswith("/") else f"file:{escaped}"
    return where + (f"?{params}" if params else "")


def _storage_error(exc: BaseException) -> errors.ErrorCode | None:
    """`refusals.storage_error`, loaded on a failure's path only: a short command opens its
    database without it (tests/cli/test_import_budget.py)."""
    from teamlore.core.refusals import storage_error

    return storage_error(exc)


def is_busy(exc: BaseException) -> bool:
    """`refusals.is_busy`, loaded on a failure's path only (as `_storage_error`)."""
    from teamlore.core.refusals import is_busy as busy

    return busy(exc)


def connect(
    path: Path,
    migrations: Sequence[Migration],
    *,
    readonly: bool = False,
    new_page_size: int | None = None,
    keep_copy: bool = False,
    state_home: Path | None = None,
    remade: bool = False,
) -> sqlite3.Connection:
    """Open (creating if needed) a database and bring its schema up to date. `new_page_size`
    applies to a database created now (SQLite ignores it for an existing one in WAL mode);
    `keep_copy`: a database at an older schema is first copied beside itself (`copy_before`);
    `state_home`: the state dir whose upgrade notes say so (default: the database's folder);
    `remade`: an older teamlore makes the database anew (the session index), which the upgrade
    note of one without a copy says."""
    refuse_wrong_type(path)
    if not readonly:
        ensure_private_file(path)
        for suffix in ("-wal", "-shm"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                ensure_private_file(side)
    uri = sqlite_uri(path, "mode=ro" if readonly else "")
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if not readonly:
        if new_page_size is not None:
            conn.execute(f"PRAGMA page_size = {int(new_page_size)}")
        mode = _wal_unless_first_build(conn)
        if mode not in ("wal", "locked"):
            # SQLite keeps its old journal mode, without an error, where WAL cannot be (a file
            # system without shared memory, an SQLite built without WAL): no rebuild or backup
            # of this file, the index or the state database alike, would cure that
            raise errors.TeamloreError(
                errors.DB_CORRUPT, f"{path.name}: cannot enable WAL (journal mode {mode})"
            ).advising(
                "Put TEAMLORE_HOME on a local disk, with a Python whose SQLite has WAL; retry."
            )
        # NORMAL is power-loss safe only in WAL mode; with the rollback journal it is FULL, as
        # the first build itself has (docs/sessions.md, "A first sync")
        conn.execute(f"PRAGMA synchronous = {'NORMAL' if mode == 'wal' else 'FULL'}")
        copy = None
        if keep_copy and 0 < schema_version(conn) < len(migrations):
            copy = copy_before(conn, path, len(migrations))
        applied: list[int] = []
        try:
            migrate(conn, migrations, name=path.name, applied=applied)
        except errors.TeamloreError as err:
            if err.error is errors.DB_SCHEMA_TOO_NEW:
                err.advising(_going_back(path, len(migrations)))
            raise
        if applied and applied[0] > 1:  # an existing database, upgraded by this connection
            schemas = (applied[0] - 1, applied[-1])
            _note_upgrade(state_home or path.parent, path, schemas, copy, remade=remade)
    return conn


def connect_for_read(
    path: Path, migrations: Sequence[Migration], *, keep_copy: bool = False
) -> sqlite3.Connection:
    """`connect`, or, when the disk is full or the state dir read-only, the same database opened
    read-only for a command that only reads (docs/sessions.md, "When storage fails"): neither
    must stop `memory search` or `memory status`. The fallback connection is `query_only`
    (`is_read_only`, and `cannot_write` says why); it needs the schema already current, else
    the DISK_FULL or STATE_READ_ONLY stands."""
    try:
        return connect(path, migrations, keep_copy=keep_copy)
    except (sqlite3.Error, OSError) as exc:
        if _storage_error(exc) not in (errors.DISK_FULL, errors.STATE_READ_ONLY):
            raise
        if not path.is_file():
            raise
        conn = open_read_only(path)
        if conn is None:
            raise
        if schema_version(conn) != len(migrations):
            conn.close()
            raise
        return conn


def cannot_write(path: Path) -> errors.ErrorCode:
    """Why the database at `path` was opened read-only (`connect_for_read`): STATE_READ_ONLY when
    its folder cannot be written (a read-only mount or mode), else DISK_FULL."""
    return errors.DISK_FULL if os.access(path.parent, os.W_OK) else errors.STATE_READ_ONLY


def open_read_only(path: Path) -> sqlite3.Connection | None:
    """`path` read-only without writing a byte, or None when it cannot be read that way: first
    as usual (`mode=ro`, through its WAL), else — when SQLite cannot create the -shm (a full
    disk, a read-only folder) — as an immutable file. A hot rollback journal (a first build
    killed mid-batch, docs/sessions.md) is None: only a writer can roll it back, and reading
    around it would show the torn batch. The connection is `query_only` (`is_read_only`)."""
    conn = _query_only(sqlite_uri(path, "mode=ro"))
    if conn is not None or path.with_name(path.name + "-journal").exists():
        return conn
    return _query_only(sqlite_uri(path, "mode=ro&immutable=1"))


def _query_only(uri: str) -> sqlite3.Connection | None:
    """A `query_only` connection to `uri` with its schema read, or None when it cannot be."""
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        return None
    return conn


def database_file(conn: sqlite3.Connection) -> str:
    """The path of `conn`'s main database file; "" for a database without one."""
    return next((str(r[2]) for r in conn.execute("PRAGMA database_list") if r[1] == "main"), "")


class ReadBeside(Generic[T]):
    """`work` run in a thread on a second, read-only connection to `conn`'s database while the
    caller goes on with `conn` (SQLite and numpy let go of the GIL while they work: two cores,
    two statements). Every statement already reads its own snapshot (autocommit), so the second
    connection sees what `conn` would. Without a file, inside a transaction (`conn` may see its
    own uncommitted rows) or when the file cannot be opened read-only through its write-ahead
    log (never as an immutable file: that would miss the log's commits), `work(conn)` runs in
    line when `result` is asked."""

    def __init__(self, conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> None:
        self._conn, self._work = conn, work
        self._results: list[T] = []
        self._failures: list[BaseException] = []
        self._thread: threading.Thread | None = None
        path = "" if conn.in_transaction else database_file(conn)
        if path:
            self._thread = threading.Thread(
                target=self._run, args=(path,), name="teamlore-read-beside", daemon=True
            )
            self._thread.start()

    def _run(self, path: str) -> None:
        beside = _query_only(sqlite_uri(path, "mode=ro"))
        if beside is None:
            return
        try:
            self._results.append(self._work(beside))
        except BaseException as exc:  # raised again by `result`, in the caller's thread
            self._failures.append(exc)
        finally:
            beside.close()

    def join(self) -> None:
        """Wait for the thread, if one runs (a caller that fails first leaves none behind)."""
        if self._thread is not None:
            self._thread.join()

    def result(self) -> T:
        """What `work` returned, or what it raised, raised here."""
        self.join()
        if self._failures:
            raise self._failures[0]
        return self._results[0] if self._results else self._work(self._conn)


def is_read_only(conn: sqlite3.Connection) -> bool:
    """Whether `conn` is the read-only fallback of `connect_for_read`."""
    return bool(conn.execute("PRAGMA query_only").fetchone()[0])


def _wal_unless_first_build(conn: sqlite3.Connection) -> str:
    """Switch to WAL mode: "wal", the mode SQLite kept if the database cannot have it, or
    "locked". While another process writes a new database's first build without it
    (`first_build_without_wal`) SQLite refuses the switch: this connection then works with the
    rollback journal (its reads wait for that process's commits, a batch at most) and a later
    connection switches."""
    try:
        return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc):
            raise
        return "locked"


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(
    conn: sqlite3.Connection,
    migrations: Sequence[Migration],
    *,
    name: str,
    applied: list[int] | None = None,
) -> int:
    """Bring `conn`'s schema up to `len(migrations)`; `applied` gets the numbers this
    connection applied (another process may have applied some)."""
    current = schema_version(conn)
    if current > len(migrations):
        raise errors.TeamloreError(
            errors.DB_SCHEMA_TOO_NEW,
            f"{name} has schema {current}; this teamlore knows up to {len(migrations)}",
        )
    for number in range(current + 1, len(migrations) + 1):
        try:
            with write_tx(conn):
                # a concurrent process may have migrated while we waited for the write lock
                if schema_version(conn) >= number:
                    continue
                for statement in _split_sql(migrations[number - 1]):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number}")
            if applied is not None:
                applied.append(number)
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            raise errors.TeamloreError(
                errors.LOCK_BUSY,
                f"{name} must be upgraded from schema {number - 1} to {len(migrations)}, and"
                " another teamlore process holds its write lock; nothing was lost: let that"
                " process finish, then retry (the upgrade goes on where it stopped)",
            ) from None
    return schema_version(conn)


def copy_path(path: Path, schema: int, number: int = 1) -> Path:
    """Where the copy of `path` at `schema` is kept: beside it, named for that schema; a second
    one (an upgrade again after going back) `.schema-N.2.bak`, and so on: none replaces one."""
    return path.with_name(f"{path.name}.schema-{schema}{'' if number == 1 else f'.{number}'}.bak")


def kept_copies(path: Path, schema: int) -> list[Path]:
    """The copies of `path` at `schema` kept beside it (`copy_path`), the first made first."""
    shape = re.compile(rf"{re.escape(path.name)}\.schema-{schema}(?:\.([2-9]|[1-9]\d+))?\.bak")
    found = []
    with suppress(OSError):
        for entry in os.scandir(path.parent):
            if (match := shape.fullmatch(entry.name)) and entry.is_file(follow_symlinks=False):
                found.append((int(match[1] or 1), Path(entry.path)))
    return [copy for _, copy in sorted(found)]


def _keep_copy(tmp: Path, path: Path, schema: int) -> Path:
    """Link the finished copy `tmp` at the first free `copy_path` (a link never replaces a
    file: the copy an earlier upgrade kept, the state before it, stays as it is)."""
    number = 1
    while True:
        kept = copy_path(path, schema, number)
        try:
            os.link(tmp, kept, follow_symlinks=False)
            return kept
        except FileExistsError:
            number += 1


def copy_before(conn: sqlite3.Connection, path: Path, latest: int) -> Path | None:
    """Copy `conn`'s database to `copy_path` (0600, one self-contained file without a WAL, what
    an older teamlore opens as it is) before a migration changes it; None when another process
    migrated it to `latest` meanwhile. A copy that cannot be made (a full disk) leaves the
    database as it was: the error stands and nothing is migrated.

    The copy is written to a temp file of `safe_write.locked_temp` (a random name, held under
    a flock while it is written) beside `path`, so one a killed copy left never stands in the
    way of this one; what killed copies left is removed first (`safe_write.remove_dead_temps`:
    no live copier's, which holds its lock), which also gives the room back for this one."""
    import time

    from teamlore.core import safe_write  # only an upgrade copies: a command's start skips it

    with suppress(OSError, errors.TeamloreError):
        safe_write.remove_dead_temps(path.parent, "", older_than=time.time())
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        name, held = safe_write.locked_temp(folder, FILE_MODE)
    finally:
        os.close(folder)
    tmp = path.parent / name
    try:
        from teamlore.core.failpoints import failpoint  # here: a read command never needs it

        failpoint("db.copy-temp-created")
        copy = sqlite3.connect(sqlite_uri(tmp), uri=True, isolation_level=None)
        try:
            conn.backup(copy)
            copy.execute("PRAGMA journal_mode = DELETE")
            schema = schema_version(copy)
        finally:
            copy.close()
        os.fsync(held)
        if not 0 < schema < latest:
            return None
        kept = _keep_copy(tmp, path, schema)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        os.close(held)  # after SQLite closed the file: closing a descriptor drops its locks
    return kept


def _note_upgrade(
    home: Path, path: Path, schemas: tuple[int, int], copy: Path | None, *, remade: bool
) -> None:
    """Add what this migration did to the upgrade notes in `home`: the CLI's text view says
    them once (cli/output.py, `say_upgrade_notes`); an MCP server, a hook or a JSON view, whose
    output a program reads, leaves them for it. Best effort: a note never fails a command."""
    earlier = [c for c in kept_copies(path, schemas[0]) if c != copy] if copy else []
    if copy is not None:
        kept = f"the file as it was is kept as {display_path(copy)}" + (
            f" (the earlier copy {display_path(earlier[-1])} is kept too, as it was)"
            if earlier
            else ""
        )
    elif remade:
        kept = "an older teamlore cannot read it: move it aside and that one makes it anew"
    else:  # the org store: its tokens and repositories nothing makes again
        kept = "an older teamlore cannot read it, and no copy of it as it was is kept"
    before, after = schemas
    line = f"teamlore upgraded {display_path(path)} from schema {before} to {after}; {kept}\n"
    with suppress(OSError):
        _append_note(home / UPGRADE_NOTES_NAME, line.encode("utf-8", "surrogateescape"))


def _append_note(notes: Path, data: bytes) -> None:
    """Append `data` to the notes file at `notes`, holding an exclusive flock on it, and only
    while it is still there: a text view takes the notes by renaming the file, then reads it
    under the same lock (cli/output.py, `say_upgrade_notes`), so the line is either in what it
    reads or in the file it leaves for the next one, never in one already read and unlinked."""
    while True:
        fd = os.open(
            notes, os.O_CREAT | os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE
        )
        try:
            from teamlore.core.failpoints import failpoint

            failpoint("upgrade-note.opened")
            fcntl.flock(fd, fcntl.LOCK_EX)
            opened = os.fstat(fd)
            try:
                now = os.stat(notes, follow_symlinks=False)
            except FileNotFoundError:
                continue  # taken since it was opened: a new one
            if (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino):
                os.write(fd, data)
                return
        finally:
            os.close(fd)


def _going_back(path: Path, known: int) -> str:
    """DB_SCHEMA_TOO_NEW's `next` for `path`: the copy a newer teamlore kept before it
    migrated, when one is there at a schema this one knows, else upgrading."""
    copies = [kept_copies(path, n) for n in range(known, 0, -1)]
    copy = next((kept[-1] for kept in copies if kept), None)  # the newest: the state last used
    if copy is None:
        return (
            f"A newer teamlore upgraded {path.name} and kept no copy this one reads: upgrade"
            ' teamlore to that version (docs/architecture.md, "Upgrading and going back").'
        )
    return (
        f"A newer teamlore upgraded {path.name}: upgrade teamlore to it, or go back to the copy"
        f" it kept of the file as it was (what changed since is lost): with no teamlore"
        f" running, move {path.name} and its -wal aside, then copy {display_path(copy)} to"
        f" {display_path(path)}."
    )


def _split_sql(script: str) -> Iterator[str]:
    """Split a script into statements (a ';' inside a string or trigger body is not an end)."""
    buffer = ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \t\r\n;"):
                yield buffer
            buffer = ""
    rest = buffer[:-1]
    if rest.strip():
        yield rest


@contextmanager
def write_tx(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction that takes the write lock up front (no upgrade deadlocks)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def write_derived(conn: sqlite3.Connection, write: Callable[[sqlite3.Connection], None]) -> bool:
    """Run `write` in a write transaction when it writes derived data only (a record the next
    run can make again): a full disk, read-only state or another writer holding the lock for
    longer than `DERIVED_BUSY_TIMEOUT_MS` rolls it back and returns False, so a read command
    keeps its answer and does not wait out a long write of another process."""
    waits = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute(f"PRAGMA busy_timeout = {min(waits, DERIVED_BUSY_TIMEOUT_MS)}")
    try:
        with write_tx(conn):
            write(conn)
    except sqlite3.OperationalError as exc:
        if conn.in_transaction:
            conn.rollback()
        if not is_busy(exc) and _storage_error(exc) not in (
            errors.DISK_FULL,
            errors.STATE_READ_ONLY,
        ):
            raise
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout = {waits}")
    return True


def integrity_check(conn: sqlite3.Connection) -> list[str]:
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
    return [] if rows == ["ok"] else rows


@contextmanager
def first_build_without_wal(conn: sqlite3.Connection) -> Iterator[bool]:
    """The first bulk write of a new database with a rollback journal instead of the WAL
    (docs/sessions.md, "A first sync"): in WAL mode every page is written twice, to the WAL and
    again by the checkpoint; pages a transaction adds to the end of the file need no journal
    at all. Commits stay atomic and a crash is rolled back from the journal, with `synchronous
    = FULL` meanwhile. Yields whether the switch was made (it is not when another connection
    has the database open); WAL and `synchronous = NORMAL` are back when the block ends, or at
    the next `connect` when the block ends inside a transaction or another connection opened
    the database meanwhile."""
    try:
        switched = conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
    except sqlite3.OperationalError:
        switched = False
    if switched:
        conn.execute("PRAGMA synchronous = FULL")
    try:
        yield switched
    finally:
        if switched and not conn.in_transaction:
            with suppress(sqlite3.OperationalError):  # another connection is reading it
                if conn.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal":
                    conn.execute("PRAGMA synchronous = NORMAL")  # FULL with the journal
