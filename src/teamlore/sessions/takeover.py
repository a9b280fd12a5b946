"""A session file read again from its start, and the session it held before (docs/sessions.md,
"Incremental by design").

What the file held is replaced only once the file says which session it holds now:

- the same session (the file was rewritten or truncated): its turns are replaced;
- another session (a backup restored over it, a tool that wrote another session's transcript at
  its path): the file was taken over. The session it held keeps its history and is marked
  unavailable, as when its file disappears; the new content is indexed as the session it is;
- none yet (the file is empty, its first line half written): its turns are dropped.

A session the index holds that no other file holds (one whose file was taken over, brought back
at that path or another) is read again whole, its history replaced by what the file says. So is
one whose transcript moved: the file holds all the bytes the index read of the session's
file (both digests, to its offset), which is gone or starts with other bytes now (two files
that swapped transcripts, three that rotated them, one moved over another, one copied
elsewhere and deleted). The session follows its transcript to the file read now; its old file
lets go of it before it is read itself (or marked unavailable, gone). A file that still holds
what the index read of it is the file it was (read again by a rebuild, or a copy saved anew):
it keeps its own session. An old file shorter than the bytes the index read first (being
rewritten, perhaps) or known without its digests keeps the session.

Before any of that, the index's row of each file (`FileRow`) tells whether a file changed
(`holds`) or was moved or renamed (`moved_files`: followed to its new path, read no further);
doctor's check of the index asks the same questions (ops/sessions/index.py `files_behind`).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from typing import Any

from teamlore.core.timeutil import instant_ns
from teamlore.sessions.providers import Source
from teamlore.sessions.reader import holds_all_known, reads_as_known, starts_as_known


def drop_session_content(conn: sqlite3.Connection, session_db_id: int) -> None:
    """The session's turns (with their search rows and passages) are gone, the session stays."""
    turn_ids = [
        (r[0],) for r in conn.execute("SELECT id FROM turns WHERE session_id = ?", (session_db_id,))
    ]
    conn.executemany("DELETE FROM turns_fts WHERE rowid = ?", turn_ids)
    conn.executemany("DELETE FROM turn_passages WHERE turn_id = ?", turn_ids)
    conn.execute("DELETE FROM turns WHERE session_id = ?", (session_db_id,))
    conn.execute("UPDATE sessions SET turn_count = 0 WHERE id = ?", (session_db_id,))


class FileReadAgain:
    """One file's read from its start: what becomes of the session it held (`held`, None for a
    file new to the index or one whose session followed its transcript to another file)."""

    def __init__(self, conn: sqlite3.Connection, file_id: int, handle: Any) -> None:
        self.conn = conn
        self.file_id = file_id
        self.handle = handle  # the file being read (not reopened: its path may change meanwhile)
        found = conn.execute(
            "SELECT session_id, resume_offset, head_sha256 FROM source_files WHERE id = ?",
            (file_id,),
        ).fetchone()
        self.held: int | None = None if found is None else found[0]
        # what the index read of this file: its offset and `reader.known_bytes`
        self.read_before: tuple[int, str | None] = (
            (0, None) if found is None else (found[1], found[2])
        )

    def takes_session(self, session_db_id: int) -> bool:
        """The file names a session other files hold in the index: whether it is their
        transcript (it holds all the index read of one of them) and none of them still is (each
        gone, or starting with other bytes now). The session then follows its transcript here:
        they let go of it, and `session_reused` follows."""
        holders = self.conn.execute(
            "SELECT path, resume_offset, head_sha256 FROM source_files"
            " WHERE session_id = ? AND id != ?",
            (session_db_id, self.file_id),
        ).fetchall()
        if not self._is_transcript_of(holders):
            return False
        if any(_starts_as_read(path, offset, head) is not False for path, offset, head in holders):
            return False  # a copy: the file the index read is still there
        self.conn.execute(
            "UPDATE source_files SET session_id = NULL WHERE session_id = ? AND id != ?",
            (session_db_id, self.file_id),
        )
        return True

    def _is_transcript_of(self, holders: list[Any]) -> bool:
        """Whether the file holds all the index read of one of `holders` (path, offset, digests)
        and is not the file the index read of itself."""
        position = self.handle.tell()  # the file is being parsed: its reader goes on from there
        try:
            if holds_all_known(self.handle, *self.read_before):
                return False  # the file it was, read again (a rebuild, a copy saved anew)
            # none: an older backup of the transcript, a Codex continuation file
            return any(holds_all_known(self.handle, offset, head) for _, offset, head in holders)
        finally:
            self.handle.seek(position)

    def session_reused(self, session_db_id: int) -> None:
        """The file names a session the index held already and no other file holds, before any
        of its turns is written: that session is read again whole. Its turns' search rows are
        written: the sync settled them before this file (its own session), or an earlier sync
        wrote them (no other file of this sync reads a session whose file was taken over, and a
        file this sync read still holds its session: `takes_session` leaves it there)."""
        drop_session_content(self.conn, session_db_id)

    def finish(self, session_db_id: int | None) -> None:
        """The file has been read; `session_db_id` is the session it holds now, if any."""
        held = self.held
        if held is None or held == session_db_id:
            return
        if session_db_id is None:
            drop_session_content(self.conn, held)  # the file still holds it, with no turns
            return
        self.conn.execute(
            "UPDATE sessions SET available = 0 WHERE id = ? AND NOT EXISTS (SELECT 1 FROM"
            " source_files WHERE session_id = ? AND status != 'unavailable')",
            (held, held),
        )


def _starts_as_read(path: str, offset: int, head: str | None) -> bool | None:
    """Whether the file at `path` starts with the bytes the index read of a file to `offset`
    (`head`: `reader.known_bytes`); None when that cannot be told (no digest, the file cannot
    be read now or is shorter than those bytes), False when no file is there."""
    if not head:
        return None
    try:
        with open(path, "rb") as handle:
            return starts_as_known(handle, offset, head)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return None


@dataclass(slots=True)
class FileRow:
    id: int
    provider: str
    dev: int | None
    inode: int | None
    size: int | None
    mtime_ns: int | None
    resume_offset: int
    resume_line: int
    session_id: int | None
    status: str

    def holds(self, st: os.stat_result) -> bool:
        """Whether the index read the file as it is: same device, inode, size and mtime."""
        held = (self.dev, self.inode, self.size, self.mtime_ns)
        return held == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def load_file_rows(conn: sqlite3.Connection) -> dict[str, FileRow]:
    """Every file the index holds, by path: what tells whether a file changed and where to
    resume. Its saved parser state is read only for a file that changed (`resume_state`):
    loading every file's state made a third of a no-op resync of 10k files."""
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: one positional call per row
    cursor.execute(
        "SELECT path, id, provider, dev, inode, size, mtime_ns, resume_offset, resume_line,"
        " session_id, status FROM source_files"
    )
    return {row[0]: FileRow(*row[1:]) for row in cursor}


def resume_state(conn: sqlite3.Connection, file_id: int) -> tuple[str | None, bytes | None]:
    """The head digest and saved parser state of a file the index holds."""
    found = conn.execute(
        "SELECT head_sha256, parser_state FROM source_files WHERE id = ?", (file_id,)
    ).fetchone()
    return (found[0], found[1]) if found else (None, None)


def failed_at(conn: sqlite3.Connection) -> dict[int, int]:
    """When each file held as failed last failed, in ns since the epoch, by its row id: a
    failure keeps the size and time of the file's last good read, not of the file it failed on."""
    rows = conn.execute(
        "SELECT d.source_file_id, max(d.at) FROM diagnostics d"
        " JOIN source_files f ON f.id = d.source_file_id"
        " WHERE f.status = 'failed' AND d.code = 'file-failed' GROUP BY d.source_file_id"
    )
    return {file_id: instant_ns(at) for file_id, at in rows}


def moved_files(
    conn: sqlite3.Connection,
    files: list[tuple[Source, str]],
    identities: dict[str, os.stat_result | OSError],
    known: dict[str, FileRow],
) -> list[tuple[str, str]]:
    """(old path, new path) of each session file moved or renamed since the last sync (Codex's
    archive, a project folder renamed): same device and inode, its old path gone, the same
    bytes up to where the index read it. Any other new path is a new file."""
    arrived = [(source, path) for source, path in files if path not in known]
    if not arrived:  # a no-op resync: nothing to look up
        return []
    discovered = {path for _, path in files}
    gone = {
        (row.dev, row.inode): path
        for path, row in known.items()
        if path not in discovered and row.inode is not None and row.status != "unavailable"
    }
    moves: list[tuple[str, str]] = []
    for source, path in arrived:
        st = identities[path]
        if isinstance(st, OSError):
            continue
        identity = (st.st_dev, st.st_ino)
        old = gone.get(identity)
        if old is None or os.path.exists(old):
            continue
        row = known[old]
        if row.provider == source.provider and _same_head(conn, path, row):
            moves.append((old, path))
            del gone[identity]  # a second hard link to the same file is a new file
    return moves


def _same_head(conn: sqlite3.Connection, path: str, row: FileRow) -> bool:
    """Whether `path` starts with the bytes the index read of `row`'s file (an inode that
    was freed and reused by another file does not)."""
    head_sha256, _ = resume_state(conn, row.id)
    try:
        with open(path, "rb") as handle:
            return reads_as_known(handle, row.resume_offset, head_sha256)
    except OSError:
        return False


def stat_files(files: list[tuple[Source, str]]) -> dict[str, os.stat_result | OSError]:
    """Each discovered file's `stat`, or why it failed, by path."""
    identities: dict[str, os.stat_result | OSError] = {}
    stat = os.stat
    for _, path in files:
        try:
            identities[path] = stat(path)
        except OSError as exc:
            identities[path] = exc
    return identities
