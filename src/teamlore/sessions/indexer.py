"""Incremental sync of session files into the L0 index.

Per source file the index keeps the file's identity (dev, inode, size, mtime), digests of its
first bytes and of the last it read (`reader.known_bytes`), the byte offset after the last
complete line and the adapter's parser state. A sync:

- skips a file whose identity is unchanged (one stat, no read);
- parses only the appended bytes of a file that grew in place (same inode, same known bytes);
- reparses a file that was rewritten or truncated, replacing that session's turns, and keeps
  the history of the session a file held before another session's transcript took its path
  (takeover.py);
- follows a file that was moved or renamed (same dev and inode, old path gone, same head);
- marks a file that disappeared `unavailable` and keeps its history (Claude Code deletes old
  transcripts; the index is where that history survives).

Each file's rows are written inside a savepoint together with its new offset and parser state
(its search rows, all the batch's together, just before the commit: analysis_helper.py), and
files are committed in batches (a commit per `BATCH_BYTES` read or `BATCH_SECONDS` of CPU, at
most `BATCH_WALL_SECONDS` apart, and at the end): a crash between files, or in the middle of
one, leaves a consistent index in which every file is either wholly at its new offset or wholly
at its old one, and the next sync continues from there. A file that fails rolls back to its
savepoint alone (a first build's files have none: its batch is then synced again, `_file_tx`).
"""

from __future__ import annotations

import heapq
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import Any

import orjson

from teamlore.core import db, errors
from teamlore.core.failpoints import armed, failpoint
from teamlore.core.keys import session_keys
from teamlore.core.paths import display_path
from teamlore.core.timeutil import now_instant
from teamlore.sessions.analysis_helper import (
    HELPER_MIN_BYTES,
    Mode,
    SearchRows,
    configured_mode,
)
from teamlore.sessions.assembler import SessionAssembler
from teamlore.sessions.index_db import LAST_SYNC_UNREADABLE
from teamlore.sessions.model import (
    Adapter,
    Diagnostic,
    ToolResult,
    Unreadable,
    checked_event,
    has_undecodable_name,
)
from teamlore.sessions.providers import Source
from teamlore.sessions.reader import ReadResult, known_bytes, read_lines, reads_as_known
from teamlore.sessions.reanalyze import reanalyze_if_outdated
from teamlore.sessions.takeover import (
    FileReadAgain,
    FileRow,
    load_file_rows,
    moved_files,
    resume_state,
    stat_files,
)

MAX_DIAGNOSTICS_REPORTED = 200
MAX_DIAGNOSTICS_STORED_PER_FILE = 100  # rows kept per file; the count (source_files) is exact
# Files are committed together until this much was read or this long has passed: one commit (and
# fsync) per file made a cold sync of many small files wait on the disk. The time is the sync's
# own CPU time, capped in wall time: a batch that lasted a wall second committed 4x as often on a
# busy machine (load 8 on 2 cores), and each commit writes the batch's FTS5 segment and the pages
# it shares with the last one again (docs/sessions.md, "What a cold sync spends its CPU on"); the
# cap bounds how long a reader of a first build waits for a batch (docs/sessions.md, "A first
# sync").
BATCH_BYTES = 64 << 20
BATCH_SECONDS = 1.0
BATCH_WALL_SECONDS = 3.0
# A new index's first sync that reads at least this much is written without the WAL
# (db.first_build_without_wal; docs/sessions.md, "A first sync").
FIRST_BUILD_MIN_BYTES = 32 << 20


@dataclass(slots=True)
class DiagnosticRecord:
    code: str
    file: str
    line: int | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "file": self.file, "line": self.line, "message": self.message}


@dataclass(slots=True)
class SyncStats:
    files_seen: int = 0
    files_changed: int = 0
    files_failed: int = 0
    files_unavailable: int = 0
    sessions: int = 0
    turns: int = 0
    bytes_read: int = 0
    turns_reanalyzed: int = 0  # turns whose search text a new analyzer version re-analyzed
    diagnostics: list[DiagnosticRecord] = field(default_factory=list)
    diagnostic_count: int = 0
    unreadable: list[DiagnosticRecord] = field(default_factory=list)

    def add_diagnostic(self, record: DiagnosticRecord) -> None:
        self.diagnostic_count += 1
        if len(self.diagnostics) < MAX_DIAGNOSTICS_REPORTED:
            self.diagnostics.append(record)

    def add_unreadable(self, record: DiagnosticRecord) -> None:
        """A file or folder this sync could not read: no index row says so, so the sync keeps
        them for `status` (`_record_unreadable`)."""
        self.files_failed += 1
        self.add_diagnostic(record)
        self.unreadable.append(record)

    def copied(self) -> SyncStats:
        return replace(self, diagnostics=list(self.diagnostics), unreadable=list(self.unreadable))

    def restore(self, saved: SyncStats) -> None:
        """Back to `saved`, the files seen excepted (a batch synced again)."""
        for name in set(self.__slots__) - {"files_seen"}:
            setattr(self, name, getattr(saved.copied(), name))


ProgressCallback = Callable[[int, int, str], None]


def _now() -> str:
    return now_instant()


UNREADABLE_KEPT = 10  # the files and folders `status` names of those the last sync could not read


def _record_unreadable(conn: sqlite3.Connection, unreadable: list[DiagnosticRecord]) -> None:
    """Keep what this sync could not read (how many, and the first ones) for `status`; a sync
    that read everything removes the record."""
    if not unreadable:
        conn.execute("DELETE FROM meta WHERE key = ?", (LAST_SYNC_UNREADABLE,))
        return
    record = {
        "count": len(unreadable),
        "recent": [r.to_json() for r in unreadable[:UNREADABLE_KEPT]],
    }
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?)"
        " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (LAST_SYNC_UNREADABLE, orjson.dumps(record).decode()),
    )


def discover_files(
    sources: Iterable[Source],
    adapters: dict[str, Adapter],
    stats: SyncStats,
    *,
    newest_first: bool = False,
) -> Iterator[tuple[Source, str]]:
    """Each session file of the sources once, as a path string (a `Path` is made only for a
    file that is read: docs/sessions.md, "Incremental by design"). `newest_first`: the most
    recently modified folders first across the sources, and their files newest first, found
    as they are taken (doctor's check; a file appended to in an old folder comes late)."""
    found = [
        _found_in(source, adapters[source.provider], stats, newest_first) for source in sources
    ]
    merged = (
        heapq.merge(*found, key=_newest_first)
        if newest_first and len(found) > 1
        else chain.from_iterable(found)
    )
    seen: set[str] = set()
    for source, path in merged:
        if path not in seen:
            seen.add(path)
            yield source, path


def _found_in(
    source: Source, adapter: Adapter, stats: SyncStats, newest_first: bool
) -> Iterator[tuple[Source, str]]:
    """The session files the adapter discovers under `source`; what it cannot read (or name
    in UTF-8) goes to `stats`."""
    root = source.root
    looked = source.looked_at()
    if looked is None:
        return
    try:
        if isinstance(looked, OSError):
            raise looked
        for item in adapter.discover(root, newest_first=newest_first):
            if isinstance(item, Unreadable):
                stats.add_unreadable(
                    DiagnosticRecord(
                        "source-unreadable", display_path(item.path), None, item.reason
                    )
                )
            elif has_undecodable_name(item):
                stats.add_unreadable(
                    DiagnosticRecord(
                        "file-name-undecodable",
                        display_path(item),
                        None,
                        "the file name is not valid UTF-8; rename the file to index it"
                        if has_undecodable_name(os.path.basename(item))
                        else "a folder in its path is not valid UTF-8; rename the folder to"
                        " index the files in it",
                    )
                )
            else:
                yield source, item
    except OSError as exc:
        stats.add_unreadable(
            DiagnosticRecord("source-unreadable", display_path(root), None, str(exc.strerror))
        )


def _newest_first(found: tuple[Source, str]) -> int:
    """What orders the files of several sources, each found newest first, as one."""
    try:
        return -os.stat(found[1]).st_mtime_ns
    except OSError:
        return 0


class Indexer:
    def __init__(
        self,
        conn: sqlite3.Connection,
        adapters: dict[str, Adapter],
        *,
        home: Path | None = None,
        progress: ProgressCallback | None = None,
        analysis: Mode | None = None,
        embed_space: str | None = None,
    ) -> None:
        self.conn = conn
        self.adapters = adapters
        self.home = home
        self.progress = progress
        # the analysis helper (analysis_helper.py): auto, on or off; the environment decides
        # when not given
        self.analysis: Mode = analysis or configured_mode()
        self.embed_space = embed_space  # the bundled model's space: the helper embeds turns too
        self.search_rows = SearchRows(conn)
        self.batch_bytes = BATCH_BYTES
        self.batch_seconds = BATCH_SECONDS
        self.batch_wall_seconds = BATCH_WALL_SECONDS
        self.first_build_bytes = FIRST_BUILD_MIN_BYTES
        self.built_without_wal = False  # what a test checks
        self._unguarded = False  # a first build: new files without savepoints (`_file_tx`)
        self._batch_files: list[tuple[str, str, os.stat_result | OSError, FileRow | None]] = []
        self._batch_stats: SyncStats | None = None
        self._batch_read = 0
        self._batch_started = self._batch_cpu_started = 0.0
        self._session_key = session_keys(home)  # a sync's own: its secret is read once

    def sync(
        self, sources: list[Source], *, rebuild: bool = False, refresh: bool = False
    ) -> SyncStats:
        """Index the sources' new and changed files. `refresh`: the sources are a few files the
        index knows (a search's bounded refresh), so the record of what the last sync could not
        read is left as it is."""
        stats = SyncStats()
        self._session_key = session_keys(self.home)
        stats.turns_reanalyzed = reanalyze_if_outdated(self.conn, self.progress)
        known = load_file_rows(self.conn)
        files = list(discover_files(sources, self.adapters, stats))
        # one stat per file for the whole sync: what it will read, then whether each changed
        # (a no-op resync is that stat and nothing else per file; docs/sessions.md)
        identities = stat_files(files)
        if not rebuild:
            self._follow_moved_files(files, identities, known)
        seen_paths: set[str] = set()
        self.search_rows = SearchRows(
            self.conn,
            self.analysis,
            self.embed_space,
            _bytes_to_read(identities, known, rebuild=rebuild, enough=HELPER_MIN_BYTES)
            if self.analysis == "auto"
            else 0,
        )
        first_build = not known and (
            _bytes_to_read(identities, known, rebuild=rebuild, enough=self.first_build_bytes)
            >= self.first_build_bytes
        )
        journal = db.first_build_without_wal(self.conn) if first_build else nullcontext(False)
        with journal as self.built_without_wal:
            self._unguarded, self._batch_files = self.built_without_wal, []
            self._sync_files(files, identities, known, seen_paths, stats, rebuild=rebuild)
        self._mark_missing(sources, known, seen_paths, stats)
        with db.write_tx(self.conn):
            self.conn.execute(
                "INSERT INTO meta(key, value) VALUES ('last_sync_at', ?)"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (_now(),),
            )
            if not refresh:
                _record_unreadable(self.conn, stats.unreadable)
        return stats

    def _sync_files(
        self,
        files: list[tuple[Source, str]],
        identities: dict[str, os.stat_result | OSError],
        known: dict[str, FileRow],
        seen_paths: set[str],
        stats: SyncStats,
        *,
        rebuild: bool,
    ) -> None:
        try:
            for number, (source, path) in enumerate(files, 1):
                seen_paths.add(path)
                stats.files_seen += 1
                if self.progress:
                    self.progress(number, len(files), path.rpartition("/")[2])
                found, row = identities[path], known.get(path)
                try:
                    self._sync_file(source.provider, path, found, row, stats, rebuild=rebuild)
                except _BatchRolledBack:
                    self._sync_batch_again(stats, rebuild=rebuild)
                self._commit_batch_if_due()
            self.search_rows.finish()
        finally:
            try:
                self._end_batch()  # keep the files completed so far, whatever stopped the loop
            finally:
                self.search_rows.close()

    # -- batches of files ------------------------------------------------------------------

    @contextmanager
    def _file_tx(self, stats: SyncStats | None = None, *, new: bool = False) -> Iterator[None]:
        """One file's writes: a savepoint inside the open batch (starting one if needed); a
        first build's `new` file without one (docs/sessions.md, "A first sync")."""
        conn = self.conn
        if not conn.in_transaction:
            conn.execute("BEGIN IMMEDIATE")
            self._batch_read, self._batch_started = 0, time.monotonic()
            self._batch_cpu_started = time.process_time()
            self._batch_files = self._batch_files[-1:]  # the file that starts the batch
            self._batch_stats = None if stats is None else stats.copied()
        if new and self._unguarded:
            try:
                yield
            except BaseException as exc:
                self.search_rows.file_rolled_back()
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                self.search_rows.batch_rolled_back()
                if isinstance(exc, Exception) and not (
                    isinstance(exc, errors.TeamloreError) or _index_in_trouble(exc)
                ):
                    raise _BatchRolledBack from exc  # `_sync_batch_again`
                raise  # a refusal, an interruption, a damaged index: the next sync reads them
            self.search_rows.file_released()
            return
        conn.execute("SAVEPOINT sync_file")
        try:
            yield
        except BaseException:
            self.search_rows.file_rolled_back()
            if conn.in_transaction:  # SQLite may have rolled back the whole batch already
                conn.execute("ROLLBACK TO sync_file")
                conn.execute("RELEASE sync_file")
            else:
                self.search_rows.batch_rolled_back()
            raise
        conn.execute("RELEASE sync_file")
        self.search_rows.file_released()

    def _commit_batch_if_due(self) -> None:
        if self.conn.in_transaction and (
            self._batch_read >= self.batch_bytes
            or time.process_time() - self._batch_cpu_started >= self.batch_seconds
            or time.monotonic() - self._batch_started >= self.batch_wall_seconds
        ):
            self._end_batch()

    def _end_batch(self) -> None:
        if not self.conn.in_transaction:
            return
        try:
            self.search_rows.settle()  # no turn is committed without its FTS row
            failpoint("sync.before-commit")
            self.conn.execute("COMMIT")
        except sqlite3.Error:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        failpoint("sync.after-commit")

    # -- one file -------------------------------------------------------------------------

    def _sync_file(
        self,
        provider: str,
        key: str,
        st: os.stat_result | OSError,
        row: FileRow | None,
        stats: SyncStats,
        *,
        rebuild: bool,
    ) -> None:
        if self.built_without_wal:  # what `_sync_batch_again` syncs again
            self._batch_files.append((provider, key, st, row))
        if isinstance(st, OSError):
            stats.add_unreadable(
                DiagnosticRecord("file-unreadable", display_path(key), None, str(st.strerror))
            )
            return
        identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if row is not None and not rebuild and row.status == "ok" and row.holds(st):
            return
        path = Path(key)
        try:
            with open(path, "rb") as handle:
                self._parse_changed(provider, path, handle, row, identity, stats, rebuild=rebuild)
        except OSError as exc:
            stats.add_unreadable(
                DiagnosticRecord("file-unreadable", display_path(path), None, str(exc.strerror))
            )
        except _BatchRolledBack:
            raise
        except Exception as exc:
            if isinstance(exc, errors.TeamloreError) or _index_in_trouble(exc):
                raise  # a refusal, or disk full/damaged/locked: not this file's problem
            self._mark_failed(provider, path, row, exc, stats)

    def _sync_batch_again(self, stats: SyncStats, *, rebuild: bool) -> None:
        """A first build's batch rolled back: its files again, each in a savepoint of its own."""
        files, saved, self._batch_files = self._batch_files, self._batch_stats, []
        if saved is not None:
            stats.restore(saved)
        unguarded, self._unguarded = self._unguarded, False
        try:
            for provider, key, st, row in files:
                self._sync_file(provider, key, st, row, stats, rebuild=rebuild)
        finally:
            self._unguarded = unguarded

    def _parse_changed(
        self,
        provider: str,
        path: Path,
        handle: Any,
        row: FileRow | None,
        identity: tuple[int, int, int, int],
        stats: SyncStats,
        *,
        rebuild: bool,
    ) -> None:
        size = identity[2]
        adapter = self.adapters[provider]
        conn = self.conn
        head_sha256, parser_state = (None, None) if row is None else resume_state(conn, row.id)
        append = (
            row is not None
            and not rebuild
            and parser_state is not None
            and row.dev == identity[0]
            and row.inode == identity[1]
            and size >= row.resume_offset
            and row.resume_offset > 0
            and reads_as_known(handle, row.resume_offset, head_sha256)
        )
        crash_mid_file = armed("sync.mid-file")  # checked once per file, not once per line
        if row is not None:  # it may rewrite turns whose FTS rows are still with the helper
            self.search_rows.settle()
        with self._file_tx(stats, new=row is None):
            stats.files_changed += 1
            if row is None:
                cur = conn.execute(
                    "INSERT INTO source_files(provider, path) VALUES (?, ?)", (provider, str(path))
                )
                file_id = int(cur.lastrowid or 0)
            else:
                file_id = row.id
            read_again: FileReadAgain | None = None
            if append and row is not None and parser_state is not None:
                saved = orjson.loads(parser_state)
                adapter_state, asm_state = saved["adapter"], saved["assembler"]
                start_offset, start_line = row.resume_offset, row.resume_line
            else:
                read_again = FileReadAgain(conn, file_id, handle)
                adapter_state, asm_state = adapter.new_state(path), None
                start_offset, start_line = 0, 0
                conn.execute("DELETE FROM diagnostics WHERE source_file_id = ?", (file_id,))
            assembler = SessionAssembler(
                conn,
                provider=provider,
                file_id=file_id,
                fallback_session_id=path.stem,
                key_for=lambda pid: self._session_key(provider, pid),
                state=asm_state,
                search_rows=self.search_rows,
                on_session_reused=None if read_again is None else read_again.session_reused,
                takes_session=None if read_again is None else read_again.takes_session,
            )
            result = ReadResult(start_offset, start_line, 0, False)
            diagnostics = stored = 0
            # a file of junk lines must not grow the index by a row per line
            room = MAX_DIAGNOSTICS_STORED_PER_FILE - int(
                conn.execute(
                    "SELECT count(*) FROM diagnostics WHERE source_file_id = ?", (file_id,)
                ).fetchone()[0]
            )
            for line in read_lines(
                handle,
                start_offset=start_offset,
                start_line=start_line,
                result=result,
                unread=adapter.unread_lines,
            ):
                if line.error == "blank":
                    continue
                if line.error is not None:
                    events: Iterable[Any] = [
                        Diagnostic(
                            line.error, _line_error_message(line.error, line.size), line.number
                        )
                    ]
                else:
                    try:
                        events = adapter.parse(line.record, line.number, adapter_state)
                        if type(events) is not list:  # the built-in adapters give lists
                            events = list(events)
                    except Exception as exc:  # an adapter bug must not lose the rest of the file
                        events = [
                            Diagnostic("adapter-error", f"{type(exc).__name__}: {exc}", line.number)
                        ]
                for event in events:
                    if isinstance(event, ToolResult) and event.exit_code is not None:
                        event, problem = checked_event(event, line.number)
                        if problem is not None:  # recorded before the event, as it always was
                            diagnostics += 1
                            stored += self._record_diagnostic(
                                file_id, path, problem, stats, store=stored < room
                            )
                    if isinstance(event, Diagnostic):
                        diagnostics += 1
                        stored += self._record_diagnostic(
                            file_id, path, event, stats, store=stored < room
                        )
                    else:
                        assembler.apply(event, line.number)
                if crash_mid_file:
                    failpoint("sync.mid-file")
            if diagnostics > stored and room > 0:
                conn.execute(
                    "INSERT INTO diagnostics(source_file_id, code, line, message, at)"
                    " VALUES (?,?,?,?,?)",
                    (
                        file_id,
                        "diagnostics-not-stored",
                        None,
                        f"{diagnostics - stored} more diagnostics of this file are counted but"
                        f" not stored (the first {stored} are)",
                        _now(),
                    ),
                )
            assembler.flush()
            if read_again is not None:
                read_again.finish(assembler.session_db_id)
            stats.bytes_read += result.bytes_read
            self._batch_read += result.bytes_read
            stats.turns += assembler.turns_written
            if assembler.session_db_id is not None:
                stats.sessions += 1
            state_blob = orjson.dumps({"adapter": adapter_state, "assembler": assembler.state()})
            conn.execute(
                "UPDATE source_files SET dev = ?, inode = ?, size = ?, mtime_ns = ?,"
                " head_sha256 = ?, resume_offset = ?, resume_line = ?, parser_state = ?,"
                " session_id = COALESCE(?, session_id), status = 'ok',"
                " diagnostics = CASE WHEN ? THEN diagnostics + ? ELSE ? END, last_synced_at = ?"
                " WHERE id = ?",
                (
                    *identity,
                    known_bytes(handle, result.resume_offset),
                    result.resume_offset,
                    result.resume_line,
                    state_blob,
                    assembler.session_db_id,
                    append,
                    diagnostics,
                    diagnostics,
                    _now(),
                    file_id,
                ),
            )
            if assembler.session_db_id is not None:
                conn.execute(
                    "UPDATE sessions SET available = 1 WHERE id = ?", (assembler.session_db_id,)
                )
            failpoint("sync.before-release")
        failpoint("sync.after-file")

    def _mark_failed(
        self, provider: str, path: Path, row: FileRow | None, exc: Exception, stats: SyncStats
    ) -> None:
        """The file's transaction rolled back; keep what was indexed before, mark the file
        `failed` (so `status` says so and the next sync retries it) and say why."""
        message = f"{type(exc).__name__}: {exc}"[:500]
        with self._file_tx(stats):
            stats.files_failed += 1
            if row is None:
                cur = self.conn.execute(
                    "INSERT INTO source_files(provider, path, status) VALUES (?, ?, 'failed')",
                    (provider, str(path)),
                )
                file_id = int(cur.lastrowid or 0)
            else:
                file_id = row.id
                self.conn.execute(
                    "UPDATE source_files SET status = 'failed' WHERE id = ?", (file_id,)
                )
            self._record_diagnostic(file_id, path, Diagnostic("file-failed", message), stats)

    def _record_diagnostic(
        self, file_id: int, path: Path, event: Diagnostic, stats: SyncStats, *, store: bool = True
    ) -> int:
        """Count `event` (and report it); store its row when `store`. Returns rows stored."""
        if store:
            self.conn.execute(
                "INSERT INTO diagnostics(source_file_id, code, line, message, at)"
                " VALUES (?,?,?,?,?)",
                (file_id, event.code, event.line, event.message[:500], _now()),
            )
        stats.add_diagnostic(
            DiagnosticRecord(event.code, display_path(path), event.line, event.message)
        )
        return int(store)

    def _follow_moved_files(
        self,
        files: list[tuple[Source, str]],
        identities: dict[str, os.stat_result | OSError],
        known: dict[str, FileRow],
    ) -> None:
        """The index follows each file `moved_files` finds to its new path, so its session
        stays one session and nothing is read again."""
        moves = moved_files(self.conn, files, identities, known)
        if not moves:
            return
        with db.write_tx(self.conn):
            for old, new in moves:
                self.conn.execute(
                    "UPDATE source_files SET path = ? WHERE id = ?", (new, known[old].id)
                )
                known[new] = known.pop(old)

    def _mark_missing(
        self, sources: list[Source], known: dict[str, FileRow], seen: set[str], stats: SyncStats
    ) -> None:
        roots = [(s.provider, str(s.root)) for s in sources]
        missing: list[int] = []
        for path, row in known.items():
            if path in seen or row.status == "unavailable":
                continue
            in_scope = any(
                row.provider == provider
                and (path == root or path.startswith(root.rstrip("/") + "/"))
                for provider, root in roots
            )
            if in_scope and not os.path.exists(path):
                missing.append(row.id)
        if not missing:
            return
        with db.write_tx(self.conn):
            for file_id in missing:
                self.conn.execute(
                    "UPDATE source_files SET status = 'unavailable' WHERE id = ?", (file_id,)
                )
                self.conn.execute(
                    "UPDATE sessions SET available = 0 WHERE id ="
                    " (SELECT session_id FROM source_files WHERE id = ?)",
                    (file_id,),
                )
        stats.files_unavailable += len(missing)


def _bytes_to_read(
    identities: dict[str, os.stat_result | OSError],
    known: dict[str, FileRow],
    *,
    rebuild: bool,
    enough: int,
) -> int:
    """About how much this sync will read (new files whole, grown ones from their offset),
    counted until `enough`."""
    total = 0
    for key, st in identities.items():
        if isinstance(st, OSError):
            continue
        row = known.get(key)
        grown = (
            row is not None
            and not rebuild
            and row.inode == st.st_ino
            and st.st_size >= row.resume_offset
        )
        total += st.st_size - (row.resume_offset if grown and row is not None else 0)
        if total >= enough:
            break
    return total


class _BatchRolledBack(Exception):
    """A first build's file failed outside a savepoint: its batch was rolled back."""


def _index_in_trouble(exc: Exception) -> bool:
    """SQLite errors about the database itself, as opposed to a value it was handed."""
    if isinstance(exc, sqlite3.OperationalError | sqlite3.InternalError):
        return True
    return type(exc) is sqlite3.DatabaseError


def _line_error_message(kind: str, size: int) -> str:
    if kind == "too-large":
        return f"line of {size} bytes exceeds the line limit; skipped"
    if kind == "not-utf8":
        return "line is not valid UTF-8; skipped"
    return "line is not valid JSON; skipped"
