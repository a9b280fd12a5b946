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

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from teamlore.core import db
from teamlore.core.analyzer import ANALYZER_VERSION
from teamlore.core.failpoints import failpoint
from teamlore.core.shapes.records import Record
from teamlore.core.timeutil import now_ms
from teamlore.memory.store.layout import MEMORY_ROOT
from teamlore.memory.store.state_db import RECALL_ALGORITHM_VERSION
from teamlore.memory.store.tree_reader import (
    Coverage,
    Diagnostic,
    Kind,
    MemoryFile,
    MemoryFiles,
    _scan_tree,
    _TreeScan,
    read_memory_files,
)

if TYPE_CHECKING:
    from teamlore.memory.store.projection_rows import _Row

__all__ = [
    "MEMORY_ROOT",
    "Coverage",
    "Diagnostic",
    "Kind",
    "MemoryFile",
    "MemoryFiles",
    "ProjectionCounts",
    "ProjectionResult",
    "projection_is_current",
    "read_memory_files",
    "stored_counts",
    "sync_approved_projection",
]

# bumped when what a file is read as changes, so that every projection is read again (2: a
# file in an unresolved merge is not read; 3: a file's digest reads CRLF as LF, so a CRLF
# checkout's rows take the digests its LF clone has — an LF file's are the same as before)
PROJECTOR_VERSION = "teamlore-approved-projection@3"
SCAN_ATTEMPTS = 2  # one retry after a drifted scan
# a recorded file identity is trusted only if the file's mtime and ctime are at least this much
# older than the start of the scan that recorded it: covers coarse timestamp granularity (2 s on
# FAT, 1 s on ext3/HFS+) and the kernel's coarse clock lagging time.time_ns()
RACY_WINDOW_NS = 2_000_000_000

Outcome = Literal["rebuilt", "unchanged", "drifted"]


# plain records: a search that finds the tree unchanged goes through here without
# loading pydantic (docs/architecture.md, "A short CLI process")
class ProjectionCounts(Record):
    """How many documents a projection added, changed, removed and kept."""

    entries: int = 0
    deprecated: int = 0  # entries whose status is deprecated (included in `entries`)
    scenes: int = 0
    doctrine: int = 0
    skills: int = 0


class ProjectionResult(Record):
    """What one projection of the memory tree did, and the generation it left."""

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
# the database side


class _Stored(NamedTuple):
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
        diagnostics=[Diagnostic.from_json(d) for d in json.loads(row[6])],
    )


def stored_diagnostics(
    conn: sqlite3.Connection, repository_key: str, worktree_key: str
) -> list[Diagnostic]:
    """The files the last projection sync of this worktree could not read, and why."""
    stored = _stored(conn, repository_key, worktree_key)
    return stored.diagnostics if stored is not None else []


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
    from teamlore.core.canonical import canonical_json  # orjson: only a tree that changed

    return canonical_json([d.to_json() for d in diagnostics]).decode("utf-8")


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
    import orjson  # only a tree that changed writes (docs/architecture.md, "A short CLI process")

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


class _RecordedStats(NamedTuple):
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

    def record(conn: sqlite3.Connection) -> None:
        now = _stored(conn, repository_key, worktree_key)
        if (
            now is not None
            and now.generation == stored.generation
            and now.source_tree_digest == tree_digest
        ):
            _record_stats(conn, repository_key, worktree_key, fresh)

    db.write_derived(conn, record)  # if skipped (a full disk), the next run reads the tree again


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


def projection_is_current(
    conn: sqlite3.Connection, *, repository_key: str, worktree_key: str, worktree_root: Path
) -> bool:
    """Whether the owner's projection is that of its memory tree now, found without writing
    (a state DB open read-only, `db.connect_for_read`): the fast path, else a full read."""
    stored = _stored(conn, repository_key, worktree_key)
    if _unchanged_by_stats(conn, repository_key, worktree_key, worktree_root, stored):
        return True
    scan = _scan_tree(worktree_root, None)
    return not scan.drift and _is_current(stored, scan.source_tree_digest())


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
        # the parser (frontmatter, and the documents' models) loads only when a file is read
        from teamlore.memory.store.projection_rows import _rows_from

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
