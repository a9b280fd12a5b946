"""Where teamlore keeps its private state, how files there are created, and how a path is
shown to the person (`display_path`).

The state dir is `$TEAMLORE_HOME`, else the platform's user state dir. Directories are 0700 and
files 0600: the state holds raw transcripts and must stay private to the user.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import fcntl
import json
import os
import stat
from pathlib import Path

from teamlore.core import errors
from teamlore.core.locations import state_dir_path

DIR_MODE = 0o700
FILE_MODE = 0o600
# the socket `teamlore watch` listens on in the state dir; cli/warm.py, kept free of teamlore's
# imports, repeats the name (tests/cli/test_watch.py checks the two agree)
WATCH_SOCKET_NAME = "watch.sock"


def state_dir() -> Path:
    """The state dir, created private (0700) if missing."""
    return finish_state_switch(ensure_private_dir(state_dir_path()))


def ensure_private_dir(path: Path) -> Path:
    """Create `path` and any missing parent 0700 (whatever the umask); tighten `path` if it
    exists with group or other bits."""
    missing: list[Path] = []
    probe = path
    try:  # `exists` too raises for a path no file system can hold (a name too long)
        while not probe.exists() and not probe.is_symlink() and probe != probe.parent:
            missing.append(probe)
            probe = probe.parent
        for directory in reversed(missing):
            with contextlib.suppress(FileExistsError):  # a concurrent creator is fine
                os.mkdir(directory, DIR_MODE)
                os.chmod(directory, DIR_MODE)
    except OSError as exc:
        raise errors.TeamloreError(
            errors.STATE_DIR_UNSAFE,
            f"cannot create state directory {display_path(path)}: {exc.strerror}",
        ) from exc
    if path.is_symlink():  # its target could change under us: the state dir is a real folder
        raise errors.TeamloreError(
            errors.STATE_DIR_UNSAFE,
            f"{display_path(path)} is a symbolic link; teamlore keeps its state only in a real"
            " folder",
        )
    if not path.is_dir():
        raise errors.TeamloreError(
            errors.STATE_DIR_UNSAFE, f"{display_path(path)} is not a directory"
        )
    if os.stat(path).st_mode & 0o077:
        try:
            os.chmod(path, DIR_MODE)
        except OSError as exc:  # a read-only mount: nobody can add to it, reading stays fine
            if exc.errno != errno.EROFS:
                raise
    return path


def refuse_wrong_type(path: Path) -> None:
    """STATE_INVALID when a state file exists as something else than a regular file (a folder,
    a socket, …); a symlink is left to the no-follow opens, which refuse it themselves."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
        return
    kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
    raise errors.TeamloreError(
        errors.STATE_INVALID,
        f"{path.name} in the state directory is {kind} where a file belongs; move it aside "
        "and retry",
        path=path.name,
    )


def ensure_private_file(path: Path) -> None:
    """Create `path` if missing and make sure it is 0600, refusing as an open for writing would
    (a symlink, a read-only file or folder) — without opening a file that exists: closing any
    descriptor of a file drops every POSIX lock this process holds on it, and those are
    SQLite's locks of a connection this process already has open on that database or its WAL
    (docs/architecture.md, "SQLite files and this process's locks")."""
    for _ in range(3):
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, FILE_MODE))
            return
        except FileExistsError:
            pass
        try:
            _tighten_existing(path)
            return
        except FileNotFoundError:
            # gone since (SQLite deletes a `-wal` and `-shm` as another process's last
            # connection closes): created anew, as an open with O_CREAT would have
            continue
    _tighten_existing(path)


def _tighten_existing(path: Path) -> None:
    mode = os.lstat(path).st_mode
    if not stat.S_ISREG(mode):
        refused = errno.ELOOP if stat.S_ISLNK(mode) else errno.EISDIR
        raise OSError(refused, os.strerror(refused), str(path))
    if not os.access(path, os.W_OK):
        os.lstat(path)  # not a file removed just now (FileNotFoundError) taken for a refusal
        refused = errno.EROFS if os.statvfs(path).f_flag & os.ST_RDONLY else errno.EACCES
        raise OSError(refused, os.strerror(refused), str(path))
    if mode & 0o077:
        os.chmod(path, FILE_MODE)  # a regular file, in a folder only its owner can write


def read_private_file(path: Path) -> bytes:
    """Read a state file without following a symlink, tightening it to 0600 if it is looser."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, FILE_MODE)
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read()
    finally:
        os.close(fd)


def work_path(path: Path, suffix: str = "tmp") -> Path:
    """A hidden sibling of `path` to write before it is renamed or linked into place, named for
    this process and thread: the MCP server runs calls in threads of one process, so a name by
    the process alone let two calls write, and then rename away, the same file."""
    return path.with_name(f".{path.name}.{os.getpid()}.{_thread.get_ident()}.{suffix}")


def write_private_file(path: Path, data: bytes) -> None:
    """Atomically replace `path` with `data`, mode 0600."""
    tmp = work_path(path)
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def resolve_home(home: Path | None = None) -> Path:
    """The state dir to use: `home` when given (created private if needed), else the default."""
    return finish_state_switch(ensure_private_dir(home)) if home is not None else state_dir()


# A new origin secret (docs/sessions.md, "A new origin secret"): the secret and every re-keyed
# state file are staged in SWITCH_DIR, then SWITCH_FILE (the commit point) lists them and they
# replace the old ones. A crash before SWITCH_FILE leaves the old state untouched; after it, the
# next process that resolves the state dir rolls the switch forward before it reads anything.
SWITCH_DIR = ".regenerate-secret"
SWITCH_FILE = "switch.json"
_SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def finish_state_switch(home: Path) -> Path:
    """Roll a committed switch forward (idempotent; one `stat` when there is none); `home`."""
    if not os.path.exists(f"{home}/{SWITCH_DIR}/{SWITCH_FILE}"):  # the common case, kept cheap
        return home
    staging = home / SWITCH_DIR
    journal = staging / SWITCH_FILE
    fd = os.open(home / f"{SWITCH_DIR}.lock", os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another process may be finishing it: wait for it
        if journal.exists():
            old = ensure_private_dir(staging / "old")
            for name in json.loads(journal.read_text("utf-8"))["replace"]:
                _replace_with_staged(home, staging, old, name)
            import shutil  # rare: every short process imports this module (docs/architecture.md)

            shutil.rmtree(staging)
    finally:
        os.close(fd)
    return home


def _replace_with_staged(home: Path, staging: Path, old: Path, name: str) -> None:
    from teamlore.core.failpoints import failpoint

    staged = staging / name
    if not staged.exists():
        return  # already in place
    for suffix in ("", *_SQLITE_SIDE_FILES):  # a database's old WAL must never meet the new file
        current = home / (name + suffix)
        if current.exists():
            current.rename(old / (name + suffix))
    failpoint("secret.mid-switch")
    staged.rename(home / name)


def display_path(path: Path | str) -> str:
    """A path as shown to the person: their home folder as `~`, bytes that are not UTF-8
    escaped (`\\xff`), so a hostile file name can be printed and stored."""
    home = escaped_path(Path.home())
    text = escaped_path(path)
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home) :]
    return text


def working_directory() -> Path:
    """The current folder. CWD_GONE when it was deleted or moved while the shell (or the agent
    that started this process) stood in it, where `Path.cwd()` raises a bare FileNotFoundError."""
    try:
        return Path(os.getcwd())
    except FileNotFoundError:
        raise errors.TeamloreError(
            errors.CWD_GONE,
            "the current folder no longer exists: it was deleted or moved while your shell"
            " was in it",
        ) from None


def from_here(path: str) -> Path:
    """`path` (`~` expanded) as an absolute path, a relative one taken from the current folder."""
    given = Path(path).expanduser()
    return given if given.is_absolute() else working_directory() / given


def escaped_path(path: Path | str | bytes) -> str:
    """`path` as text that encodes to UTF-8: a byte the file system holds that is not UTF-8
    (a name Python decoded with surrogate escapes) shows as `\\xNN`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")
