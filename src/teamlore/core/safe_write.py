"""The no-follow atomic writer: read, write and delete files below a root without ever crossing
a symbolic link.

Every path is relative to a root directory (a worktree) and is walked component by component
with directory fds: each directory is opened with `O_DIRECTORY | O_NOFOLLOW` relative to its
parent's fd, so a symlink anywhere below the root (`.threadshare`, `memory`, `entries`, the file
itself) is refused with UNSAFE_PATH instead of being followed — also when someone swaps it in
while we walk (the check is the open itself, not an earlier `lstat`). Paths that are absolute,
contain `..`, `.`, empty segments, backslashes or control characters, or are not in normal form
are refused before anything is opened.

A write creates a temp file in the target's own directory (`O_CREAT | O_EXCL | O_NOFOLLOW`),
writes and fsyncs it, checks the caller's expectation about the current target bytes (a CAS
predicate evaluated on the same directory fd just before the swap), installs it with
`renameat` — or, when the target must be absent, with `linkat`, which never replaces an existing
name — and fsyncs the directory. A symlink at the target name is never replaced. A delete checks
the same expectation, unlinks through the directory fd and fsyncs the directory.

The root itself is opened normally (it may be reached through a symlink, e.g. macOS `/tmp`);
callers pass the worktree's real path.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import posixpath
import re
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from teamlore.core import errors
from teamlore.core.failpoints import failpoint

TEMP_PREFIX = ".teamlore-write-"
DEFAULT_FILE_MODE = 0o644
DIRECTORY_MODE = 0o755
MAX_READ_BYTES = 8 * 1024 * 1024

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FORBIDDEN = re.compile(r"[\\\x00-\x1f\x7f]")
# exactly the names _write makes
_TEMP_NAME = re.compile(re.escape(TEMP_PREFIX) + r"[0-9a-f]{16}\.tmp")

Expectation = Callable[[bytes | None], bool]  # current bytes (None: absent) -> may proceed?


def _unsafe(relative: str, why: str) -> errors.TeamloreError:
    return errors.TeamloreError(errors.UNSAFE_PATH, f"{relative}: {why}", path=relative)


class FileTooLarge(errors.TeamloreError):
    """UNSAFE_PATH for a regular file over a reader's cap: a caller that reports sizes (lint's
    `capacity.file-size`) tells it from the other refusals."""

    def __init__(self, relative: str, max_bytes: int | None) -> None:
        super().__init__(
            errors.UNSAFE_PATH, f"{relative}: larger than {max_bytes} bytes", path=relative
        )
        # the code's usual next step (no symlink, a real file) is true of this one already
        self.advising("Shorten the file the message names to under its limit, then retry.")


def check_relative_path(relative: str) -> tuple[str, ...]:
    """The components of a normalized relative POSIX path, or UNSAFE_PATH."""
    shown = _FORBIDDEN.sub("?", relative)[:200]
    if not relative:
        raise _unsafe("(empty)", "an empty path")
    if _FORBIDDEN.search(relative):
        raise _unsafe(shown, "backslash or control character in the path")
    if relative.startswith("/"):
        raise _unsafe(shown, "an absolute path")
    parts = tuple(relative.split("/"))
    if any(part in ("", ".", "..") for part in parts):
        raise _unsafe(shown, "empty, '.' or '..' path segment")
    if posixpath.normpath(relative) != relative:
        raise _unsafe(shown, "not a normalized path")
    return parts


class _Walk:
    """Directory fds from the root down to a target's parent (closed together)."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self._stack = stack

    def hold(self, fd: int) -> int:
        self._stack.callback(os.close, fd)
        return fd


def _open_child_dir(parent_fd: int, name: str, shown: str, *, create: bool) -> int | None:
    """Open directory `name` below `parent_fd` without following a link; None when absent and
    not created."""
    for _ in range(2):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            if not create:
                return None
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, DIRECTORY_MODE, dir_fd=parent_fd)
                os.fsync(parent_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                raise _unsafe(shown, _why_not_directory(parent_fd, name)) from None
            raise
    raise _unsafe(shown, "the directory vanished while it was created")


def _why_not_directory(parent_fd: int, name: str) -> str:
    try:
        mode = os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode
    except OSError:
        return "not a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link (never followed)"
    return "not a directory"


@contextlib.contextmanager
def _parent_dir(root: Path, parts: tuple[str, ...], *, create: bool) -> Iterator[int | None]:
    """The fd of the target's parent directory (None: a directory on the way is absent)."""
    with contextlib.ExitStack() as stack:
        walk = _Walk(stack)
        fd = walk.hold(os.open(os.fspath(root), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
        for depth, name in enumerate(parts[:-1], start=1):
            child = _open_child_dir(fd, name, "/".join(parts[:depth]), create=create)
            if child is None:
                yield None
                return
            fd = walk.hold(child)
        yield fd


def read_at(
    dir_fd: int, name: str, shown: str, max_bytes: int | None = MAX_READ_BYTES
) -> bytes | None:
    """The bytes of regular file `name` in `dir_fd` (None: absent), `shown` as its path in a
    refusal. Symlinks and other kinds of file are UNSAFE_PATH (a FIFO is never waited on), and
    a file over `max_bytes` (None: no cap) is FileTooLarge."""
    cap = float("inf") if max_bytes is None else max_bytes
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise _unsafe(shown, "a symbolic link (never followed)") from None
        if exc.errno == errno.ENOTDIR:
            raise _unsafe(shown, "a path component is not a directory") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _unsafe(shown, "not a regular file")
        if info.st_size > cap:
            raise FileTooLarge(shown, max_bytes)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > cap:
                raise FileTooLarge(shown, max_bytes)
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _target_mode(dir_fd: int, name: str, shown: str) -> int | None:
    """Permission bits of the current target (None: absent); a symlink or non-file refuses."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise _unsafe(shown, "a symbolic link (never replaced)")
    if not stat.S_ISREG(info.st_mode):
        raise _unsafe(shown, "not a regular file")
    return stat.S_IMODE(info.st_mode)


def read_file(root: Path, relative: str, *, max_bytes: int = MAX_READ_BYTES) -> bytes | None:
    """The bytes of `root/relative` read without following any symlink (None: absent); a file
    that is not a regular one (a FIFO is never waited on) or is over `max_bytes` is
    UNSAFE_PATH (the latter FileTooLarge)."""
    parts = check_relative_path(relative)
    with _parent_dir(root, parts, create=False) as dir_fd:
        if dir_fd is None:
            return None
        return read_at(dir_fd, parts[-1], relative, max_bytes)


class ExpectationFailed(Exception):
    """The current target bytes did not satisfy the caller's expectation; nothing was changed."""

    def __init__(self, relative: str, current: bytes | None) -> None:
        super().__init__(f"{relative}: the current content is not the expected one")
        self.relative = relative
        self.current = current


def write_file(
    root: Path,
    relative: str,
    data: bytes,
    *,
    expect: Expectation | None = None,
    create_dirs: bool = True,
    new_file_mode: int = DEFAULT_FILE_MODE,
    max_bytes: int | None = MAX_READ_BYTES,
) -> None:
    """Atomically make `root/relative` hold exactly `data`.

    `expect(current)` is evaluated on the current bytes (read up to `max_bytes`; None: no cap)
    just before the swap; False raises ExpectationFailed and leaves the target untouched.
    Without `expect` the current bytes are never read. When the target is absent at that point,
    it is created with `linkat`, so a file that appears concurrently is never overwritten (that
    also raises ExpectationFailed). A replaced file keeps its permission bits; a new one gets
    `new_file_mode` (less the umask) from the start, never a looser mode first.
    """
    parts = check_relative_path(relative)
    try:
        _write(root, parts, relative, data, expect, create_dirs, new_file_mode, max_bytes)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT) and not os.path.isabs(exc.filename or ""):
            exc.filename = str(root / relative)  # a refusal names the disk that is full
        raise


def _write(
    root: Path,
    parts: tuple[str, ...],
    relative: str,
    data: bytes,
    expect: Expectation | None,
    create_dirs: bool,
    new_file_mode: int,
    max_bytes: int | None,
) -> None:
    name = parts[-1]
    with _parent_dir(root, parts, create=create_dirs) as dir_fd:
        if dir_fd is None:
            raise _unsafe(relative, "the parent directory does not exist")
        temp, fd = locked_temp(dir_fd, new_file_mode)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            mode = _target_mode(dir_fd, name, relative)
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
            failpoint("write.temp-synced")
            if expect is not None:
                current = read_at(dir_fd, name, relative, max_bytes)
                if not expect(current):
                    raise ExpectationFailed(relative, current)
                absent = current is None
            else:
                absent = _target_mode(dir_fd, name, relative) is None
            if absent:
                try:
                    os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
                except FileExistsError:
                    raise ExpectationFailed(relative, _read_or_none(dir_fd, name)) from None
                except OSError as exc:
                    if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                        raise
                    _rename_unless_link(dir_fd, temp, name, relative)  # no hard links here
            else:
                _rename_unless_link(dir_fd, temp, name, relative)
            os.fsync(dir_fd)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=dir_fd)
            os.close(fd)


def locked_temp(dir_fd: int, mode: int) -> tuple[str, int]:
    """A new temp file in `dir_fd` and its descriptor, holding an exclusive flock until the temp
    is installed or removed (a kill lets go of it): how `remove_dead_temps` tells a live
    writer's temp from one a killed writer left. A sweep may take the temp in the instant
    before the lock (it is not held yet): then it is unlinked, and another is made. Its name
    is random, so a temp a killed writer left never stands in the way of the next one (the
    migration copy of a state database, core/db.py, is made as one too)."""
    while True:
        temp = f"{TEMP_PREFIX}{secrets.token_hex(8)}.tmp"
        fd = os.open(
            temp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            mode,
            dir_fd=dir_fd,
        )
        try:
            failpoint("write.temp-created")
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_nlink > 0:  # still there: no sweep can take it now
                return temp, fd
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=dir_fd)
            os.close(fd)
            raise
        os.close(fd)


def _read_or_none(dir_fd: int, name: str) -> bytes | None:
    try:
        return read_at(dir_fd, name, name)
    except errors.TeamloreError:
        return None


def _rename_unless_link(dir_fd: int, temp: str, name: str, relative: str) -> None:
    _target_mode(dir_fd, name, relative)  # a symlink swapped in now is refused, not replaced
    os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def delete_file(
    root: Path,
    relative: str,
    *,
    expect: Expectation | None = None,
    max_bytes: int | None = MAX_READ_BYTES,
) -> bool:
    """Unlink `root/relative` (False: it was absent). `expect` and `max_bytes` as in
    `write_file`; a symlink is refused, never unlinked."""
    parts = check_relative_path(relative)
    name = parts[-1]
    with _parent_dir(root, parts, create=False) as dir_fd:
        if dir_fd is None:
            return False
        if expect is not None:
            current = read_at(dir_fd, name, relative, max_bytes)
            if not expect(current):
                raise ExpectationFailed(relative, current)
        if _target_mode(dir_fd, name, relative) is None:
            return False
        os.unlink(name, dir_fd=dir_fd)
        os.fsync(dir_fd)
        return True


def remove_dead_temps(root: Path, relative_dir: str, *, older_than: float) -> list[str]:
    """Remove the temp files writers killed mid-write left in folder `root/relative_dir` (""
    for root itself), and no other: only names `write_file` makes, regular files last changed
    before `older_than` (a `time.time()`: the start of the command that sweeps), that no live
    writer holds (a writer holds an exclusive flock on its temp until it is installed or
    removed; a kill lets go of it). No symlink is followed. The paths removed, relative to root;
    a folder that is absent removes none."""
    parts = check_relative_path(relative_dir) if relative_dir else ()
    removed: list[str] = []
    with _parent_dir(root, (*parts, "-"), create=False) as dir_fd:
        if dir_fd is None:
            return removed
        for name in sorted(os.listdir(dir_fd)):
            if _TEMP_NAME.fullmatch(name) and _remove_if_dead(dir_fd, name, older_than):
                removed.append("/".join((*parts, name)))
        if removed:
            os.fsync(dir_fd)
    return removed


def _remove_if_dead(dir_fd: int, name: str, older_than: float) -> bool:
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError:  # gone already, or a symlink (never followed)
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_mtime >= older_than:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a live writer's
        now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
            return False  # another file under that name since
        os.unlink(name, dir_fd=dir_fd)
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(fd)
