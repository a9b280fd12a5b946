"""The approved projection (glossary): `.threadshare/memory/**` of one worktree → rows + FTS.

`sync_approved_projection` reads the memory tree safely (directory fds, no symlink followed, a
size cap per file, a re-stat after reading), computes the canonical source-tree digest, and then
either does nothing (same digest, same analyzer and projector: no write, except recording the
tree's file identities once they have settled, see below) or replaces the
owner's rows and FTS documents in one `BEGIN IMMEDIATE` transaction with generation + 1.

Coverage is declared, never guessed:
- a file that cannot be projected (symlink, not a regular file, over the size cap, invalid
  format, id ≠ file name, duplicate id) yields a located diagnostic; the other files are still
  projected and the projection's coverage is `partial`;
- a file that changes while it is read (size, mtime or inode drift, or a directory listing that
  changes) makes the scan inconsistent: it is retried once, and if it drifts again the projection
  keeps its generation and rows and is marked `partial` until a consistent sync.

Unchanged-tree fast path: a consistent scan records what it saw (`approved_source_stats`): every
directory listing with each name's type, every skip marker, and each file's identity (device,
inode, size, mtime_ns, ctime_ns), bound to the tree digest of those bytes. The next sync lists the
same directories and lstat()s the same files, through the same directory fds and with the same
refusals, without opening a file; if everything equals the record and the projection is current
(same digest, analyzer, projector, coverage not marked partial), it is `unchanged` with its
generation and diagnostics, and no file is read. ctime is in the identity because no user call
can set it back (a same-size edit that restores mtime, a chmod, an inode reuse all move it). A
file whose mtime or ctime is not at least `RACY_WINDOW_NS` older than the start of the recording
scan is "racily clean" (git's term: a later same-size write within the file system's timestamp
granularity could leave the same identity), so such a record never takes the fast path: the tree
is read in full and the record renewed. Anything else that differs means a full read, as before.
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3
import stat
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

import orjson
from pydantic import BaseModel

from teamlore.core import db, errors
from teamlore.core.analyzer import ANALYZER_VERSION, analyze
from teamlore.core.canonical import canonical_json, digest, sha256_hex
from teamlore.core.failpoints import failpoint
from teamlore.core.strict import WIRE, WIRE_FROZEN
from teamlore.core.timeutil import now_ms
from teamlore.memory.store import documents
from teamlore.memory.store.frontmatter import MemoryFormatError, decode_text
from teamlore.memory.store.layout import MEMORY_ROOT
from teamlore.memory.store.state_db import RECALL_ALGORITHM_VERSION

__all__ = [
    "MEMORY_ROOT",
    "Coverage",
    "Diagnostic",
    "Kind",
    "MemoryFile",
    "MemoryFiles",
    "ParsedDocument",
    "ProjectionCounts",
    "ProjectionResult",
    "document_text",
    "headline",
    "parse_document",
    "read_memory_files",
    "stored_counts",
    "sync_approved_projection",
]

PROJECTOR_VERSION = "teamlore-approved-projection@1"
MAX_FILE_BYTES = 256 * 1024
MAX_FILES = 50_000
SCAN_ATTEMPTS = 2  # one retry after a drifted scan
# a recorded file identity is trusted only if the file's mtime and ctime are at least this much
# older than the start of the scan that recorded it: covers coarse timestamp granularity (2 s on
# FAT, 1 s on ext3/HFS+) and the kernel's coarse clock lagging time.time_ns()
RACY_WINDOW_NS = 2_000_000_000

Coverage = Literal["complete", "partial"]
Kind = Literal["entry", "scene", "doctrine", "skill"]
Outcome = Literal["rebuilt", "unchanged", "drifted"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Diagnostic(BaseModel):
    """Why one file is not (or not reliably) in the projection, located as precisely as known."""

    model_config = WIRE_FROZEN

    code: str
    file: str  # repository-relative
    line: int | None = None
    field: str | None = None
    why: str


class ProjectionCounts(BaseModel):
    model_config = WIRE

    entries: int = 0
    deprecated: int = 0  # entries whose status is deprecated (included in `entries`)
    scenes: int = 0
    doctrine: int = 0
    skills: int = 0


class ProjectionResult(BaseModel):
    model_config = WIRE

    repository_key: str
    worktree_key: str
    outcome: Outcome
    generation: int
    coverage: Coverage
    source_tree_digest: str
    analyzer_version: str
    counts: ProjectionCounts
    diagnostics: list[Diagnostic]


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


@dataclass(slots=True)
class _SourceFile:
    path: str  # relative to the memory root
    kind: Kind
    data: bytes
    identity: _Identity
    dir_path: str
    name: str


@dataclass(slots=True)
class _TreeScan:
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
        return sha256_hex(orjson.dumps([self.listed_types, self.skipped, files]))

    def newest_ns(self) -> int:
        """The latest mtime or ctime of any file read (0 for none): the racy-clean test."""
        return max(
            (max(i.mtime_ns, i.ctime_ns) for i in self.identities.values()),
            default=0,
        )

    def source_tree_digest(self) -> str:
        pairs = [[f.path, sha256_hex(f.data)] for f in self.files]
        pairs.extend([path, marker] for path, marker in self.skipped.items())
        pairs.sort(key=lambda pair: pair[0].encode("utf-8"))
        return digest(pairs)


def _repo_path(path: str) -> str:
    return f"{MEMORY_ROOT}/{path}" if path else MEMORY_ROOT


def _join(dir_path: str, name: str) -> str:
    return f"{dir_path}/{name}" if dir_path else name


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
            raise errors.TeamloreError(
                errors.MEMORY_NOT_INITIALIZED, f"worktree cannot be opened: {exc.strerror}"
            ) from exc
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
                        f"{MEMORY_ROOT} must be a real directory (no symbolic link)",
                        path=MEMORY_ROOT,
                    ) from exc
                raise errors.TeamloreError(
                    errors.MEMORY_NOT_INITIALIZED, f"{MEMORY_ROOT}: {exc.strerror}"
                ) from exc
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
                else:
                    types[item.name] = "other"
        names = sorted(types)
        self._types[dir_path] = types
        self.scan.listed_types[dir_path] = {name: types[name] for name in names}
        self.scan.listings[dir_path] = tuple(names)
        return names

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
            self._skip(path, "symlink", "symlink", "a symbolic link is never followed")
            return None
        if not stat.S_ISDIR(st.st_mode):
            self._skip(path, "not-a-directory", "not-a-directory", "expected a directory")
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
            self._skip(path, "symlink", "symlink", "a symbolic link is never followed")
            return
        if listed_as != "file":
            self._skip(path, "not-a-file", "not-a-file", "expected a regular file")
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
            if opened.st_size > MAX_FILE_BYTES:
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
        elif st.st_size > MAX_FILE_BYTES:
            self._too_large(path, st.st_size)
        else:
            self.scan.identities[path] = _Identity.of(st)

    def _too_large(self, path: str, size: int) -> None:
        self._skip(
            path,
            f"too-large:{size}",
            "file-too-large",
            f"{size} bytes is over the {MAX_FILE_BYTES}-byte limit for a memory file",
        )

    def _unexpected(self, path: str, why: str) -> None:
        self._skip(path, "unexpected", "unexpected-file", why)

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

    def _read_documents(self, dir_path: str, kind: Kind) -> None:
        for name in self._list(dir_path):
            if name.startswith("."):
                continue  # .gitkeep, editor swap files
            if not name.endswith(".md"):
                self._unexpected(
                    _join(dir_path, name), f"only <name>.md files belong in {dir_path}/"
                )
                continue
            self._read_file(dir_path, name, kind)

    def _read_skills(self, dir_path: str) -> None:
        for name in self._list(dir_path):
            if name.startswith("."):
                continue
            skill_dir = self._open_dir(dir_path, name)
            if skill_dir is None:
                continue
            names = self._list(skill_dir)
            if "SKILL.md" not in names:
                self._unexpected(skill_dir, "a skill folder must hold SKILL.md")
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


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """One memory document as read from the tree: repo-relative path, kind, exact bytes."""

    path: str
    kind: Kind
    data: bytes


@dataclass(frozen=True, slots=True)
class MemoryFiles:
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


# --------------------------------------------------------------------------------------------
# turning files into rows


@dataclass(slots=True)
class _Row:
    kind: Kind
    entry_id: str
    path: str
    content_digest: str
    entry_type: str | None
    status: str
    superseded_by: str | None
    title: str
    frontmatter: dict[str, Any]
    body: str

    @property
    def revision(self) -> int:
        # derived from the content, so a rebuild gives an unchanged file the same revision
        return int(self.content_digest[:13], 16) + 1

    def searchable_text(self) -> str:
        return analyze(
            document_text(self.entry_id, self.title, self.entry_type, self.frontmatter, self.body)
        )


def document_text(
    entry_id: str, title: str, entry_type: str | None, frontmatter: dict[str, Any], body: str
) -> str:
    """What a projected document is found by, before analysis: its id as words, title, type,
    scene and body (the FTS row is this text analyzed; the embedding is of this text)."""
    parts = [entry_id.replace("-", " "), title]
    if entry_type:
        parts.append(entry_type)
    scene = frontmatter.get("scene")
    if isinstance(scene, str):
        parts.append(scene)
    parts.append(body)
    return "\n".join(p for p in parts if p)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s|(?<=[。！？])")
_WORD = re.compile(r"[^\W\d_]{2}")  # two letters in a row: a word, not a list number or "e.g."


def headline(title: str, body: str) -> str:
    """What a document says it is about, in one line: its title (a scene's summary, a Skill's
    description), else its body's first sentence (an entry states its claim first). Embedded
    alone for memory search's headline ranking (docs/hybrid-search.md "Fusion")."""
    if title.strip():
        return title.strip()
    text = body.strip()
    for end in _SENTENCE_END.finditer(text):
        sentence = text[: end.start()]
        if _WORD.search(sentence):  # "1." or "e.g." before any word is not a sentence yet
            return sentence.strip()
    return text


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    entry_id: str
    entry_type: str | None
    status: str
    superseded_by: str | None
    title: str
    frontmatter: dict[str, Any]
    body: str


def parse_document(kind: Kind, data: bytes, repo_path: str) -> ParsedDocument:
    """One memory file → what the projection keeps of it (raises MemoryFormatError)."""
    if kind == "entry":
        entry = documents.load_entry(data, repo_path)
        return ParsedDocument(
            entry_id=entry.id,
            entry_type=entry.type,
            status=entry.status,
            superseded_by=entry.superseded_by,
            title="",
            frontmatter=entry.model_dump(mode="json", exclude={"body"}),
            body=entry.body,
        )
    if kind == "scene":
        scene = documents.load_scene(data, repo_path)
        return ParsedDocument(
            entry_id=scene.name,
            entry_type=None,
            status="approved",
            superseded_by=None,
            title=scene.summary,
            frontmatter=scene.model_dump(mode="json", exclude={"body", "name"}),
            body=scene.body,
        )
    if kind == "skill":
        skill = documents.load_skill(data, repo_path)
        return ParsedDocument(
            entry_id=skill.name,
            entry_type=None,
            status="approved",
            superseded_by=None,
            title=skill.description,
            frontmatter=skill.model_dump(
                mode="json", by_alias=True, exclude_none=True, exclude={"body"}
            ),
            body=skill.body,
        )
    doctrine = documents.load_doctrine(data, repo_path)
    return ParsedDocument("doctrine", None, "approved", None, "", {}, doctrine.text)


def _declared_id(data: bytes, repo_path: str, line: int | None) -> str | None:
    """The id a file declares on `line` (used to explain an id that is not its file name)."""
    if line is None:
        return None
    try:
        text = decode_text(data, repo_path).text
    except MemoryFormatError:
        return None
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return None
    _key, _sep, value = lines[line - 1].partition(": ")
    value = value.strip()
    if value.startswith('"'):
        try:
            loaded = orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
        return loaded if isinstance(loaded, str) else None
    return value or None


def _rows_from(scan: _TreeScan) -> list[_Row]:
    rows: list[_Row] = []
    owners: dict[tuple[str, str], str] = {}  # (kind, id) -> repository-relative path
    parsed_files: list[tuple[_SourceFile, ParsedDocument]] = []
    mismatches: list[tuple[_SourceFile, MemoryFormatError]] = []
    for source in sorted(scan.files, key=lambda f: f.path.encode("utf-8")):
        repo_path = _repo_path(source.path)
        try:
            parsed = parse_document(source.kind, source.data, repo_path)
        except MemoryFormatError as exc:
            if exc.reason in ("slug.id-mismatch", "slug.name-mismatch"):
                mismatches.append((source, exc))
            else:
                scan.diagnostics.append(_diagnostic_of(exc))
            continue
        key = (source.kind, parsed.entry_id)
        if key in owners:  # defensive: file names are unique, so ids normally are too
            scan.diagnostics.append(
                Diagnostic(
                    code="duplicate-id",
                    file=repo_path,
                    field="id",
                    why=f"id {parsed.entry_id!r} is already used by {owners[key]}",
                )
            )
            continue
        owners[key] = repo_path
        parsed_files.append((source, parsed))
    for source, mismatch in mismatches:
        declared = _declared_id(source.data, mismatch.file, mismatch.line)
        holder = owners.get((source.kind, declared)) if declared else None
        if holder is not None:
            scan.diagnostics.append(
                Diagnostic(
                    code="duplicate-id",
                    file=mismatch.file,
                    line=mismatch.line,
                    field=mismatch.field,
                    why=f"id {declared!r} is already used by {holder}; {mismatch.why}",
                )
            )
        else:
            scan.diagnostics.append(_diagnostic_of(mismatch))
    for source, parsed in parsed_files:
        rows.append(
            _Row(
                kind=source.kind,
                entry_id=parsed.entry_id,
                path=source.path,
                content_digest=sha256_hex(source.data),
                entry_type=parsed.entry_type,
                status=parsed.status,
                superseded_by=parsed.superseded_by,
                title=parsed.title,
                frontmatter=parsed.frontmatter,
                body=parsed.body,
            )
        )
    return rows


def _diagnostic_of(exc: MemoryFormatError) -> Diagnostic:
    return Diagnostic(code=exc.reason, file=exc.file, line=exc.line, field=exc.field, why=exc.why)


# --------------------------------------------------------------------------------------------
# the database side


@dataclass(frozen=True, slots=True)
class _Stored:
    generation: int
    coverage: Coverage
    build_coverage: str
    source_tree_digest: str
    analyzer_version: str
    projector_version: str
    diagnostics: list[Diagnostic]


def _stored(conn: sqlite3.Connection, repository_key: str, worktree_key: str) -> _Stored | None:
    row = conn.execute(
        "SELECT generation, coverage, build_coverage, source_tree_digest, analyzer_version, "
        "projector_version, diagnostics_json FROM approved_projection "
        "WHERE repository_key = ? AND worktree_key = ?",
        (repository_key, worktree_key),
    ).fetchone()
    if row is None:
        return None
    return _Stored(
        generation=row[0],
        coverage=row[1],
        build_coverage=row[2],
        source_tree_digest=row[3],
        analyzer_version=row[4],
        projector_version=row[5],
        diagnostics=[Diagnostic.model_validate(d) for d in orjson.loads(row[6])],
    )


def _is_current(stored: _Stored | None, tree_digest: str) -> bool:
    return (
        stored is not None
        and stored.build_coverage != "none"
        and stored.coverage == stored.build_coverage  # not marked partial by a drifted sync
        and stored.source_tree_digest == tree_digest
        and stored.analyzer_version == ANALYZER_VERSION
        and stored.projector_version == PROJECTOR_VERSION
    )


def stored_counts(
    conn: sqlite3.Connection, repository_key: str, worktree_key: str
) -> ProjectionCounts:
    counts = ProjectionCounts()
    for kind, status, n in conn.execute(
        "SELECT kind, status, count(*) FROM approved_entries "
        "WHERE repository_key = ? AND worktree_key = ? GROUP BY kind, status",
        (repository_key, worktree_key),
    ):
        if kind == "entry":
            counts.entries += n
            if status == "deprecated":
                counts.deprecated += n
        elif kind == "scene":
            counts.scenes += n
        elif kind == "doctrine":
            counts.doctrine += n
        else:
            counts.skills += n
    return counts


def _counts_of(rows: list[_Row]) -> ProjectionCounts:
    counts = ProjectionCounts()
    for row in rows:
        if row.kind == "entry":
            counts.entries += 1
            counts.deprecated += row.status == "deprecated"
        elif row.kind == "scene":
            counts.scenes += 1
        elif row.kind == "doctrine":
            counts.doctrine += 1
        else:
            counts.skills += 1
    return counts


def _diagnostics_json(diagnostics: list[Diagnostic]) -> str:
    return canonical_json([d.model_dump() for d in diagnostics]).decode("utf-8")


def _replace_owner_rows(
    conn: sqlite3.Connection,
    repository_key: str,
    worktree_key: str,
    rows: list[_Row],
    generation: int,
    coverage: Coverage,
    tree_digest: str,
    diagnostics: list[Diagnostic],
) -> None:
    owner = (repository_key, worktree_key)
    conn.execute(
        "DELETE FROM approved_fts WHERE rowid IN "
        "(SELECT id FROM approved_entries WHERE repository_key = ? AND worktree_key = ?)",
        owner,
    )
    conn.execute(
        "DELETE FROM approved_entries WHERE repository_key = ? AND worktree_key = ?", owner
    )
    first_id = int(
        conn.execute("SELECT coalesce(max(id), 0) + 1 FROM approved_entries").fetchone()[0]
    )
    conn.executemany(
        "INSERT INTO approved_entries (id, repository_key, worktree_key, kind, entry_id, path, "
        "revision, content_digest, entry_type, status, superseded_by, title, frontmatter_json, "
        "body_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (
                first_id + i,
                repository_key,
                worktree_key,
                r.kind,
                r.entry_id,
                r.path,
                r.revision,
                r.content_digest,
                r.entry_type,
                r.status,
                r.superseded_by,
                r.title,
                orjson.dumps(r.frontmatter, option=orjson.OPT_SORT_KEYS).decode("utf-8"),
                r.body,
            )
            for i, r in enumerate(rows)
        ),
    )
    failpoint("memory.projection.rows-replaced")
    conn.executemany(
        "INSERT INTO approved_fts (rowid, searchable_text) VALUES (?, ?)",
        ((first_id + i, r.searchable_text()) for i, r in enumerate(rows)),
    )
    conn.execute(
        "INSERT INTO approved_projection (repository_key, worktree_key, generation, "
        "source_tree_digest, coverage, build_coverage, analyzer_version, "
        "recall_algorithm_version, projector_version, entry_count, diagnostics_json, synced_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (repository_key, worktree_key) DO UPDATE SET "
        "generation = excluded.generation, source_tree_digest = excluded.source_tree_digest, "
        "coverage = excluded.coverage, build_coverage = excluded.build_coverage, "
        "analyzer_version = excluded.analyzer_version, "
        "recall_algorithm_version = excluded.recall_algorithm_version, "
        "projector_version = excluded.projector_version, entry_count = excluded.entry_count, "
        "diagnostics_json = excluded.diagnostics_json, synced_at = excluded.synced_at",
        (
            repository_key,
            worktree_key,
            generation,
            tree_digest,
            coverage,
            coverage,
            ANALYZER_VERSION,
            RECALL_ALGORITHM_VERSION,
            PROJECTOR_VERSION,
            len(rows),
            _diagnostics_json(diagnostics),
            now_ms(),
        ),
    )


@dataclass(frozen=True, slots=True)
class _RecordedStats:
    source_tree_digest: str
    stats_digest: str
    newest_ns: int  # latest mtime or ctime of a file the recording scan read
    recorded_ns: int  # when the recording scan started

    @classmethod
    def of(cls, tree_digest: str, scan: _TreeScan) -> _RecordedStats:
        return cls(tree_digest, scan.stats_digest(), scan.newest_ns(), scan.started_ns)

    def settled(self) -> bool:
        """No recorded file is racily clean (see the module docstring)."""
        return self.newest_ns < self.recorded_ns - RACY_WINDOW_NS


def _recorded_stats(
    conn: sqlite3.Connection, repository_key: str, worktree_key: str
) -> _RecordedStats | None:
    row = conn.execute(
        "SELECT source_tree_digest, stats_digest, newest_ns, recorded_ns "
        "FROM approved_source_stats WHERE repository_key = ? AND worktree_key = ?",
        (repository_key, worktree_key),
    ).fetchone()
    return None if row is None else _RecordedStats(row[0], row[1], row[2], row[3])


def _record_stats(
    conn: sqlite3.Connection, repository_key: str, worktree_key: str, record: _RecordedStats
) -> None:
    """Record what a consistent scan saw (inside the caller's write transaction)."""
    conn.execute(
        "INSERT INTO approved_source_stats (repository_key, worktree_key, source_tree_digest, "
        "stats_digest, newest_ns, recorded_ns) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (repository_key, worktree_key) DO UPDATE SET "
        "source_tree_digest = excluded.source_tree_digest, "
        "stats_digest = excluded.stats_digest, newest_ns = excluded.newest_ns, "
        "recorded_ns = excluded.recorded_ns",
        (
            repository_key,
            worktree_key,
            record.source_tree_digest,
            record.stats_digest,
            record.newest_ns,
            record.recorded_ns,
        ),
    )


def _unchanged_by_stats(
    conn: sqlite3.Connection,
    repository_key: str,
    worktree_key: str,
    worktree_root: Path,
    stored: _Stored | None,
) -> bool:
    """The fast path: the projection is current and the tree's listings and file identities
    equal the settled record of the scan that produced its digest (no file is opened)."""
    if stored is None or not _is_current(stored, stored.source_tree_digest):
        return False
    recorded = _recorded_stats(conn, repository_key, worktree_key)
    if (
        recorded is None
        or recorded.source_tree_digest != stored.source_tree_digest
        or not recorded.settled()
    ):
        return False
    scan = _scan_tree(worktree_root, None, stat_only=True)
    return not scan.drift and scan.stats_digest() == recorded.stats_digest


def _renew_stats(
    conn: sqlite3.Connection,
    repository_key: str,
    worktree_key: str,
    stored: _Stored,
    tree_digest: str,
    scan: _TreeScan,
) -> None:
    """After a full read found the tree unchanged: record what it saw, but only when that record
    is settled (else the fast path could not use it) and differs from the stored one, so an
    unchanged tree writes at most once after its files settle."""
    fresh = _RecordedStats.of(tree_digest, scan)
    if not fresh.settled():
        return
    recorded = _recorded_stats(conn, repository_key, worktree_key)
    if (
        recorded is not None
        and recorded.source_tree_digest == tree_digest
        and recorded.settled()
        and recorded.stats_digest == fresh.stats_digest
    ):
        return
    with db.write_tx(conn):
        now = _stored(conn, repository_key, worktree_key)
        if (
            now is not None
            and now.generation == stored.generation
            and now.source_tree_digest == tree_digest
        ):
            _record_stats(conn, repository_key, worktree_key, fresh)


def _mark_drifted(
    conn: sqlite3.Connection, repository_key: str, worktree_key: str, tree_digest: str
) -> _Stored | None:
    """Keep rows and generation; declare the projection partial until a consistent sync."""
    with db.write_tx(conn):
        conn.execute(
            "INSERT INTO approved_projection (repository_key, worktree_key, generation, "
            "source_tree_digest, coverage, build_coverage, analyzer_version, "
            "recall_algorithm_version, projector_version, synced_at) "
            "VALUES (?, ?, 0, ?, 'partial', 'none', ?, ?, ?, ?) "
            "ON CONFLICT (repository_key, worktree_key) DO UPDATE SET coverage = 'partial'",
            (
                repository_key,
                worktree_key,
                tree_digest,
                ANALYZER_VERSION,
                RECALL_ALGORITHM_VERSION,
                PROJECTOR_VERSION,
                now_ms(),
            ),
        )
    return _stored(conn, repository_key, worktree_key)


# --------------------------------------------------------------------------------------------
# the operation


def sync_approved_projection(
    conn: sqlite3.Connection,
    *,
    repository_key: str,
    worktree_key: str,
    worktree_root: Path,
    after_read: Callable[[str], None] | None = None,
) -> ProjectionResult:
    """Bring the owner's approved projection up to date with its memory tree.

    `after_read` is a test seam: called with the repository-relative path of each file right
    after its bytes were read and before the tree is re-stat'ed.
    """
    drift: list[Diagnostic] = []
    tree_digest = ""
    stored = _stored(conn, repository_key, worktree_key)
    if _unchanged_by_stats(conn, repository_key, worktree_key, worktree_root, stored):
        assert stored is not None
        return _result(
            conn, repository_key, worktree_key, "unchanged", stored, stored.source_tree_digest
        )
    for _attempt in range(SCAN_ATTEMPTS):
        before = _stored(conn, repository_key, worktree_key)
        scan = _scan_tree(worktree_root, after_read)
        tree_digest = scan.source_tree_digest()
        if scan.drift:
            drift = scan.drift
            continue
        if _is_current(before, tree_digest):
            assert before is not None
            _renew_stats(conn, repository_key, worktree_key, before, tree_digest, scan)
            return _result(conn, repository_key, worktree_key, "unchanged", before, tree_digest)
        rows = _rows_from(scan)
        coverage: Coverage = "partial" if scan.diagnostics else "complete"
        with db.write_tx(conn):
            now = _stored(conn, repository_key, worktree_key)
            if now is not None and before is not None and now.generation != before.generation:
                conflict = True  # another sync won the race: rescan against its result
            elif now is not None and before is None:
                conflict = True
            else:
                conflict = False
                generation = (now.generation if now else 0) + 1
                _replace_owner_rows(
                    conn,
                    repository_key,
                    worktree_key,
                    rows,
                    generation,
                    coverage,
                    tree_digest,
                    scan.diagnostics,
                )
                _record_stats(
                    conn, repository_key, worktree_key, _RecordedStats.of(tree_digest, scan)
                )
        if conflict:
            continue
        after = _stored(conn, repository_key, worktree_key)
        assert after is not None
        return _result(conn, repository_key, worktree_key, "rebuilt", after, tree_digest)
    stored = _mark_drifted(conn, repository_key, worktree_key, tree_digest)
    assert stored is not None
    result = _result(conn, repository_key, worktree_key, "drifted", stored, tree_digest)
    result.diagnostics = drift + result.diagnostics
    return result


def _result(
    conn: sqlite3.Connection,
    repository_key: str,
    worktree_key: str,
    outcome: Outcome,
    stored: _Stored,
    tree_digest: str,
) -> ProjectionResult:
    return ProjectionResult(
        repository_key=repository_key,
        worktree_key=worktree_key,
        outcome=outcome,
        generation=stored.generation,
        coverage=stored.coverage,
        source_tree_digest=tree_digest if outcome == "drifted" else stored.source_tree_digest,
        analyzer_version=stored.analyzer_version,
        counts=stored_counts(conn, repository_key, worktree_key),
        diagnostics=list(stored.diagnostics),
    )
