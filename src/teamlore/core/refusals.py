"""What a person (or an MCP client) is told about an exception: its stable code when it is a
refusal or a storage failure (a full disk, a damaged or read-only database, a permission), the
paths in it cut to what may leave the machine, and where a full disk is.

Every entry point (the CLI, the MCP server, the hooks) turns an exception into a refusal with
`refusal_for`; MCP output goes through `redacted` as well (docs/architecture.md, errors).
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3

from teamlore.core.errors import (
    DB_CORRUPT,
    DISK_FULL,
    INTERNAL,
    LOCK_BUSY,
    PATH_TOO_LONG,
    PERMISSION_DENIED,
    STATE_INVALID,
    STATE_READ_ONLY,
    ErrorCode,
    TeamloreError,
)
from teamlore.core.paths import escaped_path

_SQLITE_FULL, _SQLITE_CORRUPT, _SQLITE_NOTADB, _SQLITE_READONLY, _SQLITE_IOERR = 13, 11, 26, 8, 10
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6
NEARLY_FULL_BYTES = 1024 * 1024
# more than any state file teamlore writes outside SQLite (a model's derived copy is ~85 MB)
ROOMY_BYTES = 256 * 1024 * 1024


def _state_disk_nearly_full() -> bool:
    """Whether the file system of the state dir has less than 1 MiB left."""
    from teamlore.core.locations import state_disk_free

    free = state_disk_free()
    return free is not None and free < NEARLY_FULL_BYTES


def _on_the_state_disk(filename: str) -> bool | None:
    """Whether `filename` (or its nearest folder that is there) is on the state dir's file
    system; None when either cannot be looked at."""
    from teamlore.core.locations import state_dir_path

    folder = os.path.dirname(filename)
    while folder and not os.path.isdir(folder) and folder != os.path.dirname(folder):
        folder = os.path.dirname(folder)
    try:
        return os.stat(folder).st_dev == os.stat(state_dir_path()).st_dev
    except OSError:
        return None


def _state_dir_read_only(filename: object = None) -> bool:
    """Whether the state dir is there and cannot be written (a read-only mode, `chmod 500`);
    with `filename`, also that the file is in it."""
    from teamlore.core.locations import state_dir_path

    folder = state_dir_path()
    if filename is not None and (
        not isinstance(filename, str)
        or os.path.realpath(os.path.dirname(filename)) != os.path.realpath(folder)
    ):
        return False
    return folder.is_dir() and not os.access(folder, os.W_OK)


# a first build killed mid-batch leaves a hot rollback journal (docs/sessions.md, "A first
# sync"): only a writer can roll it back, so every command says this until a sync can write
INTERRUPTED_BATCH = (
    "index.sqlite3 holds an interrupted sync's batch to roll back and the state directory is"
    " read-only; run `teamlore sync` where it is writable"
)


def _interrupted_batch() -> bool:
    from teamlore.core.locations import state_dir_path

    return (state_dir_path() / "index.sqlite3-journal").exists()


def _another_disk_full(exc: BaseException) -> bool:
    """A file write refused for space on another disk than the state dir's (the worktree's):
    told by the disk of the file that failed when the write names it (`safe_write` does), else
    guessed from the state dir's disk having more room than any state file needs."""
    from teamlore.core.locations import state_disk_free

    if not isinstance(exc, OSError):
        return False
    if isinstance(exc.filename, str) and os.path.isabs(exc.filename):
        same = _on_the_state_disk(exc.filename)
        if same is not None:
            return not same
    free = state_disk_free()
    return free is not None and free >= ROOMY_BYTES


def _readable_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


# a write outside the state dir (a memory file in the worktree) refused while the state dir's
# disk has room: naming the state dir would send the person to free space on the wrong disk
ANOTHER_DISK_FULL = (
    "a disk teamlore writes to is full, not the state directory's (it has room): most likely the"
    " one holding the repository; free space there and retry"
)


def _another_disk(exc: BaseException) -> str:
    """`ANOTHER_DISK_FULL`, naming the file that failed when the write says which (`~/…` under
    the home folder, else its last part, as refusals show paths)."""
    filename = getattr(exc, "filename", None)
    if not isinstance(filename, str) or not os.path.isabs(filename):
        return ANOTHER_DISK_FULL
    shown = shown_paths(filename)
    return (
        "a disk teamlore writes to is full, not the state directory's (it has room): the one"
        f" holding {shown}; free space there and retry"
    )


def disk_full_advice() -> str:
    """What would free space, for a write refused by a full disk: the largest things in the
    state dir (names only, never the path) and where else to look (docs/sessions.md)."""
    from teamlore.core.locations import largest_in_state_dir

    held = ", ".join(f"{name} {_readable_size(size)}" for size, name in largest_in_state_dir(3))
    ours = f" (teamlore's state dir holds {held})" if held else ""
    return (
        f"to free space, delete other files on that disk{ours}, or move the state dir to a "
        "bigger disk and point TEAMLORE_HOME at it; read-only commands (search, status, lint) "
        "keep working meanwhile"
    )


def is_busy(exc: BaseException) -> bool:
    """Whether `exc` is SQLite's "another connection holds the lock" (SQLITE_BUSY or
    SQLITE_LOCKED, after the busy timeout): another process is writing, nothing is damaged."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    primary = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    return primary in (_SQLITE_BUSY, _SQLITE_LOCKED) or "database is locked" in str(exc)


def storage_error(exc: BaseException) -> ErrorCode | None:
    """The stable code for a storage failure (disk full, damaged database, read-only state), or
    None when `exc` is something else. SQLite reports these as primary result codes; the OS as
    errno values."""
    if isinstance(exc, sqlite3.Error):
        primary = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        text = str(exc).lower()
        if primary == _SQLITE_FULL or "database or disk is full" in text:
            return DISK_FULL
        if primary == _SQLITE_IOERR and _state_disk_nearly_full():
            return DISK_FULL  # SQLite reports a failed WAL/shm write as a plain I/O error
        if primary == _SQLITE_IOERR and _state_dir_read_only():
            return STATE_READ_ONLY  # e.g. a hot journal it may not delete after rolling back
        if primary in (_SQLITE_CORRUPT, _SQLITE_NOTADB) or "malformed" in text:
            return DB_CORRUPT
        if primary == _SQLITE_READONLY or "readonly database" in text:
            return STATE_READ_ONLY
        if "no such table" in text or "no such column" in text:
            return DB_CORRUPT
        return None
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return DISK_FULL
        if exc.errno == errno.EROFS:
            return STATE_READ_ONLY
    return None


# an absolute POSIX, Windows or home-relative path: its directories are cut, its last part kept
_ABSOLUTE_PATH = re.compile(
    r"(?<![\w.~:/\\-])(?:[A-Za-z]:[\\/]|[\\/]{1,2}|~[\\/])(?:[^\s'\"\\/:]+[\\/])+"
)
# the same without the home-relative ones (`~/…`), which the CLI shows as they are
_ROOTED_PATH = re.compile(r"(?<![\w.~:/\\-])(?:[A-Za-z]:[\\/]|[\\/]{1,2})(?:[^\s'\"\\/:]+[\\/])+")


def redact_paths(message: str) -> str:
    """`message` with every absolute path cut to `…/<last part>`: error text may name the state
    dir or the user's home, which must not leave the machine (MCP output can end up anywhere)."""
    return _ABSOLUTE_PATH.sub("…/", message)


def shown_paths(text: str) -> str:
    """`text` with its paths as refusals show them: `~/…` under the home folder, any other
    absolute path cut to `…/<last part>` (an exception's text may name the state dir)."""
    return _ROOTED_PATH.sub("…/", _from_home(text))


def _from_home(text: str) -> str:
    """`text` with the user's home folder written `~`, as the CLI shows paths: a path under it
    in a refusal stays one a person can look at (`ls -ld`), other absolute paths are cut, and
    `redacted` cuts both for MCP."""
    home = os.path.expanduser("~").rstrip("/")
    if not home:
        return text
    return re.sub(r"(?<![\w.~:/\\-])" + re.escape(home) + r"(?=/)", "~", text)


def _os_error_detail(exc: BaseException) -> str:
    """The file an OS refusal names and why, as a person reads it
    (`~/.local/state/teamlore/watch.lock: Read-only file system`), not Python's `[Errno 30] …:
    '…'`; SQLite's words as they are."""
    if not isinstance(exc, OSError) or not exc.strerror:
        return shown_paths(str(exc))
    named = [name for name in (exc.filename, exc.filename2) if name is not None]
    if not all(isinstance(name, str | bytes) for name in named):
        return shown_paths(str(exc))  # a file given as a descriptor: Python's words say which
    files = " -> ".join(escaped_path(name) for name in named)  # `\xff`: JSON stays UTF-8
    return shown_paths(f"{files}: {exc.strerror}" if files else exc.strerror)


# refusals whose detail is the OS's: the file and why, in words
_OS_WORDED = (STATE_READ_ONLY, PERMISSION_DENIED, DISK_FULL)


def redacted(err: TeamloreError) -> TeamloreError:
    """`err` with absolute paths cut from its message, details and next step (for MCP
    clients): a next step may name a state file (DB_SCHEMA_TOO_NEW's copy to go back to)."""
    details = {
        key: redact_paths(value) if isinstance(value, str) else value
        for key, value in err.details.items()
    }
    remedy = None if err.remedy is None else redact_paths(err.remedy)
    return TeamloreError(err.error, redact_paths(err.message), **details).advising(remedy)


def refusal_for(exc: BaseException) -> TeamloreError:
    """What a person (or an MCP client) is told about an exception: its stable code when it is
    a refusal or a storage failure, else INTERNAL with the exception's type and its message
    with paths redacted."""
    if isinstance(exc, TeamloreError):
        return exc
    if is_busy(exc):  # a write waited out the busy timeout: another process, nothing damaged
        return TeamloreError(
            LOCK_BUSY,
            "another teamlore process is writing to a database in teamlore's state directory"
            f" and held its write lock longer than this command waits ({exc}); the write this"
            " command tried was not made: let that process finish, then retry",
        )
    code = storage_error(exc)
    if code is None and isinstance(exc, PermissionError) and _state_dir_read_only(exc.filename):
        code = STATE_READ_ONLY  # a state file that the read-only state dir cannot get
    if code is None and isinstance(exc, PermissionError):
        code = PERMISSION_DENIED  # not a storage failure: nothing is damaged, nothing is set aside
    if code is None and isinstance(exc, IsADirectoryError | NotADirectoryError):
        code = STATE_INVALID  # a folder where a file belongs, or the reverse
    if code is None and isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        code = PATH_TOO_LONG  # given somewhere (TEAMLORE_HOME, an option): nothing is damaged
    if code is not None:
        detail = _os_error_detail(exc) if code in _OS_WORDED else shown_paths(str(exc))
        if code is DISK_FULL and _another_disk_full(exc):
            return TeamloreError(code, f"{_another_disk(exc)} ({detail})")
        summary = code.summary
        if code is STATE_READ_ONLY and _interrupted_batch():
            summary = INTERRUPTED_BATCH
        message = f"{summary} ({detail})" if detail else summary
        if code is DISK_FULL:
            message += f"; {disk_full_advice()}"
        return TeamloreError(code, message)
    detail = redact_paths(str(exc))
    return TeamloreError(
        INTERNAL, f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    )
