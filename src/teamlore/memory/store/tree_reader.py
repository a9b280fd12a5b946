"""Reading `.threadshare/memory/**` safely for the approved projection: directory fds, no symlink
followed, a size cap per file, a re-stat after reading; every file that cannot be read is a
located `Diagnostic`, and a tree that changes while it is read is reported as drift."""

from __future__ import annotations

import errno
import marshal
import os
import stat
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Literal, NamedTuple

from teamlore.core import errors
from teamlore.core.canonical import digest, sha256_hex
from teamlore.core.paths import escaped_path
from teamlore.core.shapes.records import Record, field
from teamlore.core.text.files import lf_sha256
from teamlore.memory.store import layout
from teamlore.memory.store.frontmatter import MAX_DOCUMENT_BYTES
from teamlore.memory.store.layout import MEMORY_ROOT, what_stands_there

# the cap org/reader.py reads a tree's blobs with (index.json and consolidated.json too); a
# memory document is never read over MAX_DOCUMENT_BYTES, the format's limit (frontmatter.py)
MAX_FILE_BYTES = 256 * 1024
MAX_FILES = 50_000
Coverage = Literal["complete", "partial"]
Kind = Literal["entry", "scene", "doctrine", "skill"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Diagnostic(Record, frozen=True, kw_only=True):
    """Why one file is not (or not reliably) in the projection, located as precisely as known.
    A record, not a pydantic model: a read that finds the tree unchanged makes its
    diagnostics without loading pydantic (docs/architecture.md, "A short CLI process")."""

    code: str
    file: str  # repository-relative
    line: int | None = None
    field: str | None = None
    why: str

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "file": self.file,
            "line": self.line,
            "field": self.field,
            "why": self.why,
        }

    @classmethod
    def from_json(cls, stored: dict[str, Any]) -> Diagnostic:
        """A diagnostic as `to_json` stored it."""
        return cls(**stored)


# --------------------------------------------------------------------------------------------
# reading the tree


class _Identity(NamedTuple):
    """What tells one version of a file from another without reading it (a tuple: the fast
    path builds 10,000 of them per sync)."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> _Identity:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class _SourceFile(NamedTuple):
    """One memory file as read, with the identity that tells whether it changed since (a
    tuple: a full read makes one per file, 10,000 in a large tree)."""

    path: str  # relative to the memory root
    kind: Kind
    data: bytes
    identity: _Identity
    dir_path: str
    name: str


class _TreeScan(Record):
    """What one walk of the memory tree read, skipped and found wrong."""

    files: list[_SourceFile] = field(default_factory=list)
    # files that exist but were not read, with the marker that stands for them in the digest
    skipped: dict[str, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    listings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    drift: list[Diagnostic] = field(default_factory=list)
    # what the unchanged-tree fast path compares: each listed name's type, each file's identity
    listed_types: dict[str, dict[str, str]] = field(default_factory=dict)
    identities: dict[str, _Identity] = field(default_factory=dict)
    started_ns: int = 0

    def stats_digest(self) -> str:
        """What the fast path compares: one digest of every listing (names in byte order, with
        their types), skip marker and file identity, in the order the tree was walked."""
        files = [[path, *identity] for path, identity in self.identities.items()]
        # marshal's version 2 writes no back-references, so equal values give equal bytes; it
        # is as fast as orjson (1.8 ms at 10,000 files, the standard json 7.6 ms), which a
        # search of an unchanged tree does not import (docs/architecture.md)
        walked = marshal.dumps([self.listed_types, self.skipped, files], 2)
        return sha256_hex(walked)

    def newest_ns(self) -> int:
        """The latest mtime or ctime of any file read (0 for none): the racy-clean test."""
        return max(
            (max(i.mtime_ns, i.ctime_ns) for i in self.identities.values()),
            default=0,
        )

    def source_tree_digest(self) -> str:
        pairs = [[f.path, lf_sha256(f.data)] for f in self.files]
        pairs.extend([path, marker] for path, marker in self.skipped.items())
        pairs.sort(key=lambda pair: pair[0].encode("utf-8"))
        return digest(pairs)


def _repo_path(path: str) -> str:
    return f"{MEMORY_ROOT}/{path}" if path else MEMORY_ROOT


def _join(dir_path: str, name: str) -> str:
    return f"{dir_path}/{name}" if dir_path else name


def _cannot_open(what: str, exc: OSError) -> errors.TeamloreError:
    """A worktree or memory folder that is there but cannot be opened: `memory init` would not
    help (only a missing one is MEMORY_NOT_INITIALIZED), its owner or mode would."""
    if exc.errno in (errno.EACCES, errno.EPERM):
        return errors.TeamloreError(errors.PERMISSION_DENIED, f"{what}: {exc.strerror}")
    return errors.TeamloreError(errors.MEMORY_NOT_INITIALIZED, f"{what}: {exc.strerror}").advising(
        "Check the folder the message names (`ls -ld`), then run the command again."
    )


class _TreeReader:
    """Reads the memory tree through directory fds; nothing below the memory root is followed."""

    def __init__(
        self,
        stack: ExitStack,
        after_read: Callable[[str], None] | None,
        stat_only: bool = False,
    ) -> None:
        self._stack = stack
        self._after_read = after_read
        self._stat_only = stat_only  # the fast path: lstat files, never open them
        self._dir_fds: dict[str, int] = {}
        self._types: dict[str, dict[str, str]] = {}
        self.scan = _TreeScan()

    # -- fds -----------------------------------------------------------------------------

    def _hold(self, fd: int) -> int:
        self._stack.callback(os.close, fd)
        return fd

    def open_root(self, worktree_root: Path) -> None:
        try:
            # the worktree root itself may be reached through a symlink (macOS /tmp); everything
            # from `.threadshare` down must not be one
            root_fd = self._hold(os.open(worktree_root, os.O_RDONLY | os.O_DIRECTORY))
        except OSError as exc:
            raise _cannot_open("worktree cannot be opened", exc) from exc
        fd = root_fd
        for part in MEMORY_ROOT.split("/"):
            try:
                fd = self._hold(os.open(part, _DIR_FLAGS, dir_fd=fd))
            except FileNotFoundError as exc:
                raise errors.TeamloreError(errors.MEMORY_NOT_INITIALIZED) from exc
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise errors.TeamloreError(
                        errors.UNSAFE_PATH,
                        f"{MEMORY_ROOT} must be a real directory: {what_stands_there(fd, part)}",
                        path=MEMORY_ROOT,
                    ) from exc
                raise _cannot_open(MEMORY_ROOT, exc) from exc
        self._dir_fds[""] = fd

    def _list(self, dir_path: str) -> list[str]:
        """Sorted names of a directory; their types (from the listing, no stat) are kept."""
        types: dict[str, str] = {}
        with os.scandir(self._dir_fds[dir_path]) as listing:
            for item in listing:
                if item.is_symlink():
                    types[item.name] = "link"
                elif item.is_file(follow_symlinks=False):
                    types[item.name] = "file"
                elif item.is_dir(follow_symlinks=False):
                    types[item.name] = "dir"
                else:
                    types[item.name] = "other"
        names = sorted(types)
        self._types[dir_path] = types
        self.scan.listed_types[dir_path] = {name: types[name] for name in names}
        self.scan.listings[dir_path] = tuple(names)
        return [name for name in names if self._utf8_name(dir_path, name)]

    def _utf8_name(self, dir_path: str, name: str) -> bool:
        """A name that is not UTF-8 (bytes Python decoded with surrogate escapes) cannot be a
        document's path: skipped with a diagnostic that shows it escaped (`bad\\xff.md`)."""
        shown = escaped_path(name)
        if shown == name:
            return True
        if dir_path:  # at the root, names other than the layout's are ignored anyway
            path = _join(dir_path, shown)
            self._skip(path, "name-not-utf8", "name-not-utf8", "the name is not UTF-8: rename it")
        return False

    def _skip(self, path: str, marker: str, code: str, why: str) -> None:
        self.scan.skipped[path] = marker
        self.scan.diagnostics.append(Diagnostic(code=code, file=_repo_path(path), why=why))

    def _lstat(self, dir_path: str, name: str) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=self._dir_fds[dir_path], follow_symlinks=False)
        except FileNotFoundError:
            self._drifted(_join(dir_path, name), "vanished while the tree was read")
            return None

    def _drifted(self, path: str, why: str) -> None:
        self.scan.drift.append(Diagnostic(code="source-drift", file=_repo_path(path), why=why))

    def _open_dir(self, dir_path: str, name: str) -> str | None:
        """Open a sub-directory; a symlink or a non-directory is a diagnostic."""
        path = _join(dir_path, name)
        st = self._lstat(dir_path, name)
        if st is None:
            return None
        if stat.S_ISLNK(st.st_mode):
            self._skip(path, "symlink", "symlink", layout.SYMLINK_WHY)
            return None
        if not stat.S_ISDIR(st.st_mode):
            why = layout.not_a_directory(name).why
            self._skip(path, "not-a-directory", "not-a-directory", why)
            return None
        try:
            fd = self._hold(os.open(name, _DIR_FLAGS, dir_fd=self._dir_fds[dir_path]))
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                self._drifted(path, "replaced while the tree was read")
                return None
            self._skip(path, "unreadable", "unreadable", exc.strerror or "cannot be opened")
            return None
        if _Identity.of(os.fstat(fd)).inode != st.st_ino:
            self._drifted(path, "replaced while the tree was read")
            return None
        self._dir_fds[path] = fd
        return path

    def _read_file(self, dir_path: str, name: str, kind: Kind) -> None:
        path = _join(dir_path, name)
        listed_as = self._types[dir_path].get(name)
        if listed_as == "link":
            self._skip(path, "symlink", "symlink", layout.SYMLINK_WHY)
            return
        if listed_as != "file":
            self._skip(path, "not-a-file", "not-a-file", layout.NOT_A_FILE.why)
            return
        if len(self.scan.identities) >= MAX_FILES:
            self._skip(path, "over-file-limit", "too-many-files", f"more than {MAX_FILES} files")
            return
        if self._stat_only:
            self._stat_file(dir_path, name, path)
            return
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=self._dir_fds[dir_path])
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOENT):
                self._drifted(path, "replaced while the tree was read")
            else:
                self._skip(path, "unreadable", "unreadable", exc.strerror or "cannot be opened")
            return
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode):
                self._drifted(path, "replaced while the tree was read")
                return
            if opened.st_size > MAX_DOCUMENT_BYTES:
                self._too_large(path, opened.st_size)
                return
            # one read of size + 1 bytes: a regular file returns all of it, and more means growth
            data = os.read(fd, opened.st_size + 1)
        finally:
            os.close(fd)
        identity = _Identity.of(opened)
        if len(data) != identity.size:
            self._drifted(path, "its size changed while it was read")
            return
        self.scan.files.append(_SourceFile(path, kind, data, identity, dir_path, name))
        self.scan.identities[path] = identity
        if self._after_read is not None:
            self._after_read(_repo_path(path))

    def _stat_file(self, dir_path: str, name: str, path: str) -> None:
        """The fast path's view of a file: what the full read would fstat, without opening."""
        st = self._lstat(dir_path, name)
        if st is None:
            return
        if not stat.S_ISREG(st.st_mode):
            self._drifted(path, "replaced while the tree was read")
        elif st.st_size > MAX_DOCUMENT_BYTES:
            self._too_large(path, st.st_size)
        else:
            self.scan.identities[path] = _Identity.of(st)

    def _too_large(self, path: str, size: int) -> None:
        self._skip(path, f"too-large:{size}", "file-too-large", layout.too_large(size))

    # -- the layout ------------------------------------------------------------------------

    def read_tree(self) -> _TreeScan:
        for name in self._list(""):
            if name == "entries" or name == "scenes":
                dir_path = self._open_dir("", name)
                if dir_path is not None:
                    self._read_documents(dir_path, "entry" if name == "entries" else "scene")
            elif name == "skills":
                dir_path = self._open_dir("", name)
                if dir_path is not None:
                    self._read_skills(dir_path)
            elif name == "doctrine.md":
                self._read_file("", name, "doctrine")
            # anything else at the root (index.json, README, ...) is not a memory document
        return self.scan

    # what the tree may hold is memory/store/layout.py's rule, which lint follows too: a
    # stray (`scenes/notes.txt`, `skills/README.md`) is left alone, never a diagnostic

    def _read_documents(self, dir_path: str, kind: Kind) -> None:
        for name in self._list(dir_path):
            if layout.skipped(name) or not name.endswith(".md"):
                continue  # .gitkeep, editor swap files; a stray
            self._read_file(dir_path, name, kind)

    def _read_skills(self, dir_path: str) -> None:
        for name in self._list(dir_path):
            if layout.skipped(name) or self._types[dir_path][name] not in ("dir", "link"):
                continue  # a stray file (a README.md); lint blocks a FIFO
            skill_dir = self._open_dir(dir_path, name)
            if skill_dir is None:
                continue
            names = self._list(skill_dir)
            if "SKILL.md" not in names:
                why = layout.MISSING_SKILL_FILE.why
                self._skip(skill_dir, "missing-skill-file", "missing-skill-file", why)
                continue
            self._read_file(skill_dir, "SKILL.md", "skill")

    # -- consistency -----------------------------------------------------------------------

    def recheck(self) -> None:
        """Re-stat every file read and re-list every directory: any change is drift."""
        for source in self.scan.files:
            try:
                st = os.stat(
                    source.name, dir_fd=self._dir_fds[source.dir_path], follow_symlinks=False
                )
            except FileNotFoundError:
                self._drifted(source.path, "vanished while the tree was read")
                continue
            if _Identity.of(st) != source.identity:
                self._drifted(source.path, "changed while the tree was read (size/mtime/inode)")
        for dir_path, names in self.scan.listings.items():
            if tuple(sorted(os.listdir(self._dir_fds[dir_path]))) != names:
                self._drifted(dir_path, "its listing changed while the tree was read")


def _now_ns() -> int:
    return time.time_ns()


def _scan_tree(
    worktree_root: Path, after_read: Callable[[str], None] | None, *, stat_only: bool = False
) -> _TreeScan:
    with ExitStack() as stack:
        reader = _TreeReader(stack, after_read, stat_only)
        reader.scan.started_ns = _now_ns()
        reader.open_root(worktree_root)
        scan = reader.read_tree()
        if not stat_only:
            reader.recheck()
        return scan


class MemoryFile(NamedTuple):
    """One memory document as read from the tree: repo-relative path, kind, exact bytes."""

    path: str
    kind: Kind
    data: bytes


class MemoryFiles(NamedTuple):
    """A consistent read of the memory tree (see `read_memory_files`)."""

    files: tuple[MemoryFile, ...]
    problems: tuple[Diagnostic, ...]  # files that exist but could not be read, and drift

    def of_kind(self, kind: Kind) -> list[MemoryFile]:
        return [f for f in self.files if f.kind == kind]


def read_memory_files(worktree_root: Path) -> MemoryFiles:
    """Read every memory document the way the projection does (no symlink followed, size cap,
    re-checked for drift), without touching the state DB. Callers that must not act on a
    partial view refuse when `problems` concern the kinds they use."""
    scan = _scan_tree(worktree_root, None)
    files = tuple(MemoryFile(_repo_path(f.path), f.kind, f.data) for f in scan.files)
    return MemoryFiles(files, (*scan.diagnostics, *scan.drift))
