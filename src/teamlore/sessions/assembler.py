"""Assemble normalized events of one session file into index rows.

The open turn is held in memory and written when it is sealed (the next user turn, or the
provider's end-of-turn record) or when the file's batch ends. Its small resumable state (which
session, which turn is open) is saved with the file's offset; an open turn written unsealed is
read back from the index when the file grows.
"""

from __future__ import annotations

import hashlib
import sqlite3
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from teamlore.core.canonical import MAX_SAFE_INTEGER, digest, sha256_hex
from teamlore.sessions.analysis_helper import SearchRows
from teamlore.sessions.commits import ObservedCommit, observe_commits
from teamlore.sessions.index_db import fts_scope
from teamlore.sessions.model import (
    AssistantText,
    Event,
    HistoryCut,
    ProviderNotice,
    SessionMeta,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnsRolledBack,
    UserTurn,
)
from teamlore.sessions.passages import (
    FTS_RESULT_EDGE_CHARS,
    FTS_TOOL_CHARS,
    analyze_passages,
    passage_text,
)
from teamlore.sessions.turn_vectors import turn_text
from teamlore.sessions.utf16 import decode_utf16_runs

# Tool payloads up to this size are stored whole; larger ones keep a head and a tail excerpt
# plus the sha256 and byte size of the whole payload.
RESULT_FULL_MAX = 64 * 1024
RESULT_EXCERPT = 16 * 1024
MAX_TEXT_CHARS = 1 << 20
# the tool use a result becomes when its call is not (yet) known
ORPHAN_NAME = "unknown"


@dataclass(slots=True)
class ToolRecord:
    call_id: str
    name: str
    family: str
    input: str | None
    command: str | None
    paths_written: list[str]
    paths_read: list[str]
    started_at: str | None
    result_head: str | None = None
    result_tail: str | None = None
    result_bytes: int | None = None
    result_sha256: str | None = None
    result_truncated: bool = False
    exit_code: int | None = None
    status: str = "pending"
    ended_at: str | None = None
    commits: list[ObservedCommit] = field(default_factory=list)
    # characters of the turn's assistant text written before this call (the order of speech
    # and tool calls); None for uses indexed before it was recorded
    assistant_offset: int | None = None

    def search_excerpt(self) -> str:
        whole = self.result_head or ""
        end = self.result_tail if self.result_truncated and self.result_tail else whole
        if not self.result_truncated and len(whole) <= 2 * FTS_RESULT_EDGE_CHARS:
            return whole
        return whole[:FTS_RESULT_EDGE_CHARS] + "\n" + end[-FTS_RESULT_EDGE_CHARS:]

    def set_result(self, result: ToolResult) -> None:
        output = decode_utf16_runs(result.output)
        data = output.encode("utf-8", "surrogatepass")
        self.result_bytes = len(data)
        self.result_sha256 = hashlib.sha256(data).hexdigest()
        if len(data) <= RESULT_FULL_MAX:
            self.result_head, self.result_tail, self.result_truncated = output, None, False
        else:
            self.result_head = data[:RESULT_EXCERPT].decode("utf-8", "ignore")
            self.result_tail = data[-RESULT_EXCERPT:].decode("utf-8", "ignore")
            self.result_truncated = True
        self.exit_code = result.exit_code
        if result.is_error is True or (result.exit_code not in (None, 0)):
            self.status = "error"
        elif result.is_error is False or result.exit_code == 0:
            self.status = "ok"
        else:
            self.status = "unknown"
        self.ended_at = result.at or self.ended_at
        if self.family == "shell":
            self.commits = observe_commits(self.command, output)

    def is_orphan(self) -> bool:
        """A result kept without its call (`SessionAssembler._apply_result`)."""
        return self.name == ORPHAN_NAME and self.input is None and self.command is None

    def take_result(self, orphan: ToolRecord) -> None:
        """The result an orphan holds, for its call written after it (Claude Code 2.1.112+ with
        parallel calls may write a result before the call it answers). The orphan's stored
        fields, not the event, so a pairing across two syncs stores what one sync would."""
        self.result_head, self.result_tail = orphan.result_head, orphan.result_tail
        self.result_bytes, self.result_sha256 = orphan.result_bytes, orphan.result_sha256
        self.result_truncated = orphan.result_truncated
        # read from its text as a shell's would be (the call's name was not known yet): only a
        # shell call has an exit code, as when its result comes after it
        self.exit_code = orphan.exit_code if self.family == "shell" else None
        self.status, self.ended_at = orphan.status, orphan.ended_at or self.ended_at
        if self.family == "shell":
            output = orphan.result_head or ""
            if orphan.result_truncated and orphan.result_tail:
                output += "\n" + orphan.result_tail
            self.commits = observe_commits(self.command, output)


@dataclass(slots=True)
class TurnRecord:
    ordinal: int
    user_text: str
    started_at: str | None
    first_line: int
    db_id: int | None = None
    assistant_parts: list[str] = field(default_factory=list)  # appended by `add_assistant`
    tools: list[ToolRecord] = field(default_factory=list)
    ended_at: str | None = None
    last_line: int = 0
    sealed: bool = False
    # the provider cut the turn short (docs/sessions.md, "turns as the provider meant them")
    aborted: bool = False
    # messages the client wrote in the assistant's place: [{"kind", "text"}]
    notices: list[dict[str, str]] = field(default_factory=list)
    # `len(self.assistant_text)`, kept as parts are added: each tool call asks for it, and
    # summing the parts each time grew with the square of a long agentic turn's parts
    assistant_chars: int = 0
    # orphan tool uses by call id: results whose call has not been seen (yet)
    orphans: dict[str, ToolRecord] = field(default_factory=dict)

    @property
    def assistant_text(self) -> str:
        return "\n\n".join(self.assistant_parts)

    def add_assistant(self, text: str) -> None:
        if self.assistant_parts:
            self.assistant_chars += 2  # the blank line that joins it to the previous part
        self.assistant_parts.append(text)
        self.assistant_chars += len(text)

    def assistant_length(self) -> int:
        """`len(self.assistant_text)` without joining the parts."""
        return self.assistant_chars

    def revision(self) -> str:
        """The turn's revision digest: `canonical.digest` of its markings, ordinal, texts and
        tools (name, input digest, result digest, exit code, status), built here directly in
        canonical form (keys already in JCS order, strings NFC) because it runs once per turn
        written."""
        tools = []
        for t in self.tools:
            if t.exit_code is not None and abs(t.exit_code) > MAX_SAFE_INTEGER:
                return digest(self._revision_value())  # refuses the value, as it always did
            tools.append(
                {
                    "exit": t.exit_code,
                    "input": hashlib.sha256((t.input or "").encode()).hexdigest(),
                    "name": _nfc(t.name),
                    "result": t.result_sha256,
                    "status": t.status,
                }
            )
        value: dict[str, Any] = {"aborted": True} if self.aborted else {}
        value["assistant"] = _nfc(self.assistant_text)
        if self.notices:
            value["notices"] = [{"kind": n["kind"], "text": _nfc(n["text"])} for n in self.notices]
        value.update({"ordinal": self.ordinal, "tools": tools, "user": _nfc(self.user_text)})
        return sha256_hex(orjson.dumps(value))

    def _revision_value(self) -> dict[str, Any]:
        """The revision's value in plain form (what `revision` digests). The markings join it
        only when present: unmarked turns keep the revision they always had."""
        marks: dict[str, Any] = {"aborted": True} if self.aborted else {}
        if self.notices:
            marks["notices"] = self.notices
        return {
            **marks,
            "ordinal": self.ordinal,
            "user": self.user_text,
            "assistant": self.assistant_text,
            "tools": [
                {
                    "name": t.name,
                    "input": hashlib.sha256((t.input or "").encode()).hexdigest(),
                    "result": t.result_sha256,
                    "exit": t.exit_code,
                    "status": t.status,
                }
                for t in self.tools
            ],
        }

    def search_text(self) -> str:
        """The turn's searchable text: what it said, its tool calls, paths written and the
        edges of each tool result, as passages (sessions/passages.py: the prompt, the answer,
        each notice, each tool use)."""
        pieces = [self.user_text, self.assistant_text, *(n["text"] for n in self.notices)]
        for tool in self.tools:
            call = tool.command or (tool.input or "")[:FTS_TOOL_CHARS]
            parts = (call, *tool.paths_written, tool.search_excerpt())
            pieces.append("\n".join(p for p in parts if p))
        return passage_text(pieces)

    def search_body(self) -> tuple[str, bytes]:
        """The analyzed body and where its passages start (`passages.analyze_passages`)."""
        return analyze_passages(self.search_text())


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _cap(text: str) -> str:
    return text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS]


def _json_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return _cap(value)
    try:
        return _cap(orjson.dumps(value).decode())
    except TypeError:
        return _cap(str(value))


class SessionAssembler:
    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        provider: str,
        file_id: int,
        fallback_session_id: str,
        key_for: Callable[[str], str],
        state: dict[str, Any] | None,
        search_rows: SearchRows | None = None,
        on_session_reused: Callable[[int], None] | None = None,
        takes_session: Callable[[int], bool] | None = None,
    ) -> None:
        self.conn = conn
        # told when the file names a session the index holds and no other file does, before
        # any of its turns is written (takeover.py: a file read again from its start)
        self.on_session_reused = on_session_reused
        # asked whether a session other files hold follows its transcript to this file
        # (takeover.py: they hold it no more)
        self.takes_session = takes_session
        # where the turns' FTS rows go: analyzed here or by the analysis helper
        self.search_rows = search_rows or SearchRows(conn)
        self.provider = provider
        self.file_id = file_id
        self.fallback_session_id = fallback_session_id
        self.key_for = key_for
        state = state or {}
        self.session_db_id: int | None = state.get("session")
        self.next_ordinal: int = state.get("next_ordinal", 1)
        self.open_turn_db_id: int | None = state.get("open_turn")
        self.pending_meta = SessionMeta()
        self.turn: TurnRecord | None = None
        self.turns_written = 0
        self._scope_tokens: str | None = None
        # search texts (and the text a vector is made of) by turn id, analyzed and inserted
        # together when the file ends: FTS5 then builds one segment per file instead of
        # flushing a tiny one per turn
        self._fts_pending: dict[int, tuple[str, str]] = {}

    def state(self) -> dict[str, Any]:
        return {
            "session": self.session_db_id,
            "next_ordinal": self.next_ordinal,
            "open_turn": self.open_turn_db_id,
        }

    # -- events ---------------------------------------------------------------------------

    def apply(self, event: Event, line: int) -> None:
        # the most frequent events first (an agentic turn is mostly tool calls and results)
        if isinstance(event, ToolResult):
            self._apply_result(event, line)
        elif isinstance(event, ToolCall):
            turn = self._current_turn(event.at, line)
            tool = ToolRecord(
                event.call_id,
                event.name,
                event.family,
                _json_text(event.input),
                event.command,
                list(event.paths_written),
                list(event.paths_read),
                event.at,
                assistant_offset=turn.assistant_length(),
            )
            if turn.orphans:
                self._pair_orphan(turn, tool)
            turn.tools.append(tool)
            self._touch(turn, event.at, line)
        elif isinstance(event, AssistantText):
            turn = self._current_turn(event.at, line)
            if event.text:
                turn.add_assistant(_cap(event.text))
            self._touch(turn, event.at, line)
        elif isinstance(event, UserTurn):
            self._close_turn(sealed=True)
            self._seal_written_open_turn()
            self._open_turn(event.text, event.at, line)
        elif isinstance(event, SessionMeta):
            self._apply_meta(event)
        elif isinstance(event, TurnEnd) and (
            self.turn is not None or self.open_turn_db_id is not None
        ):
            turn = self._current_turn(event.at, line)
            turn.aborted = turn.aborted or event.aborted
            self._touch(turn, event.at, line)
            self._close_turn(sealed=True)
        elif isinstance(event, ProviderNotice):
            turn = self._current_turn(event.at, line)
            turn.notices.append({"kind": event.kind, "text": _cap(event.text)})
            self._touch(turn, event.at, line)
        elif isinstance(event, TurnsRolledBack):
            self._roll_back(event.count)
        elif isinstance(event, HistoryCut):
            self._cut_history(event)

    def flush(self) -> None:
        """Write the open turn (unsealed), the turns' FTS rows and the session's metadata."""
        self._close_turn(sealed=False)
        if self._fts_pending:
            scope, pending = self._scope(), self._fts_pending
            self.search_rows.write_file_rows(
                [(turn_id, text, scope, embed) for turn_id, (text, embed) in pending.items()]
            )
            self._fts_pending.clear()
        if self.session_db_id is not None:
            self._write_meta()

    # -- session --------------------------------------------------------------------------

    def _apply_meta(self, meta: SessionMeta) -> None:
        pending = self.pending_meta
        for name in SessionMeta.__slots__:
            value = getattr(meta, name)
            if value is not None and getattr(pending, name) is None:
                setattr(pending, name, value)
        if self.session_db_id is None and meta.provider_session_id:
            self._ensure_session()

    def _ensure_session(self) -> int:
        if self.session_db_id is not None:
            return self.session_db_id
        provider_id = self.pending_meta.provider_session_id or self.fallback_session_id
        # another file may already hold this provider session id (a copy, a resume that reuses
        # the id, a project folder moved or renamed): this file is then indexed as its own
        # session rather than interleave turns, under the file's name, and when that is taken
        # too (a third copy of one file name), under this file's own row id
        candidates = [
            provider_id,
            f"{provider_id}#{self.fallback_session_id}",
            f"{provider_id}#{self.fallback_session_id}#{self.file_id}",
        ]
        for provider_id in candidates:
            key = self.key_for(provider_id)
            row = self.conn.execute(
                "SELECT s.id, (SELECT count(*) FROM source_files f WHERE f.session_id = s.id"
                " AND f.id != ?) AS others FROM sessions s WHERE s.session_key = ?",
                (self.file_id, key),
            ).fetchone()
            held_elsewhere = row is not None and bool(row["others"])
            if held_elsewhere and self.takes_session is not None:
                held_elsewhere = not self.takes_session(int(row["id"]))
            if not held_elsewhere:
                break
        if row is None:
            cur = self.conn.execute(
                "INSERT INTO sessions(session_key, provider, provider_session_id) VALUES (?,?,?)",
                (key, self.provider, provider_id),
            )
            self.session_db_id = int(cur.lastrowid or 0)
        else:
            self.session_db_id = int(row["id"])
            if not held_elsewhere and self.on_session_reused is not None:
                self.on_session_reused(self.session_db_id)
        self.conn.execute(
            "UPDATE source_files SET session_id = ? WHERE id = ?",
            (self.session_db_id, self.file_id),
        )
        return self.session_db_id

    def _write_meta(self) -> None:
        meta = self.pending_meta
        parent_key = self.key_for(meta.parent_session_id) if meta.parent_session_id else None
        self.conn.execute(
            "UPDATE sessions SET"
            " cwd = COALESCE(cwd, ?), git_branch = COALESCE(git_branch, ?),"
            " model = COALESCE(model, ?), client_version = COALESCE(client_version, ?),"
            " title = COALESCE(title, ?), agent_id = COALESCE(agent_id, ?),"
            " git_remote = COALESCE(git_remote, ?), git_commit = COALESCE(git_commit, ?),"
            " parent_session_key = COALESCE(parent_session_key, ?),"
            # the earliest of what is known: a branched Pi session's header is later than
            # the messages it copied, and "started → ended" must not run backwards
            " started_at = (SELECT min(at) FROM (SELECT started_at AS at UNION ALL SELECT ?"
            "   UNION ALL SELECT min(started_at) FROM turns WHERE session_id = ?)),"
            " ended_at = (SELECT max(coalesce(ended_at, started_at)) FROM turns"
            "   WHERE session_id = ?),"
            " turn_count = (SELECT count(*) FROM turns WHERE session_id = ?)"
            " WHERE id = ?",
            (
                meta.cwd,
                meta.git_branch,
                meta.model,
                meta.client_version,
                meta.title,
                meta.agent_id,
                meta.git_remote,
                meta.git_commit,
                parent_key,
                meta.started_at,
                self.session_db_id,
                self.session_db_id,
                self.session_db_id,
                self.session_db_id,
            ),
        )

    # -- turns ----------------------------------------------------------------------------

    def _open_turn(self, text: str, at: str | None, line: int) -> TurnRecord:
        self._ensure_session()
        self.turn = TurnRecord(self.next_ordinal, _cap(text), at, line, ended_at=at, last_line=line)
        self.next_ordinal += 1
        return self.turn

    def _current_turn(self, at: str | None, line: int) -> TurnRecord:
        if self.turn is not None:
            return self.turn
        if self.open_turn_db_id is not None:
            self.turn = self._load_turn(self.open_turn_db_id)
            if self.turn is not None:
                return self.turn
            self.open_turn_db_id = None
        # activity before any user prompt (a resumed session, a subagent's preamble)
        return self._open_turn("", at, line)

    def _touch(self, turn: TurnRecord, at: str | None, line: int) -> None:
        if at and (turn.ended_at is None or at > turn.ended_at):
            turn.ended_at = at
        if turn.started_at is None and at:
            turn.started_at = at
        if line > turn.last_line:
            turn.last_line = line

    def _apply_result(self, result: ToolResult, line: int) -> None:
        turn = self._current_turn(result.at, line)
        for tool in reversed(turn.tools):
            if tool.call_id == result.call_id:
                tool.set_result(result)
                self._touch(turn, result.at, line)
                return
        if self._update_earlier_tool(result):
            return
        # a result whose call we have not seen: keep it, so no output is lost; its call may
        # still come later in the turn (`_pair_orphan`)
        orphan = ToolRecord(result.call_id, ORPHAN_NAME, "other", None, None, [], [], result.at)
        orphan.set_result(result)
        turn.tools.append(orphan)
        turn.orphans[result.call_id] = orphan
        self._touch(turn, result.at, line)

    @staticmethod
    def _pair_orphan(turn: TurnRecord, tool: ToolRecord) -> None:
        """A call whose result came first in its turn (even in an earlier sync: `load_turn`
        finds the orphans of a turn written open): the orphan leaves the turn and its result
        joins the call, at the call's place."""
        orphan = turn.orphans.pop(tool.call_id, None)
        if orphan is None:
            return
        tool.take_result(orphan)
        for seq, held in enumerate(turn.tools):
            if held is orphan:
                del turn.tools[seq]
                break

    def _update_earlier_tool(self, result: ToolResult) -> bool:
        """A result for a call of an already written turn: rewrite that turn (revision, FTS)."""
        if self.session_db_id is None:
            return False
        row = self.conn.execute(
            "SELECT tu.turn_id FROM tool_uses tu JOIN turns t ON t.id = tu.turn_id"
            " WHERE t.session_id = ? AND tu.call_id = ? ORDER BY tu.id DESC LIMIT 1",
            (self.session_db_id, result.call_id),
        ).fetchone()
        earlier = self._load_turn(row["turn_id"]) if row is not None else None
        if earlier is None:
            return False
        for tool in reversed(earlier.tools):
            if tool.call_id == result.call_id:
                tool.set_result(result)
                break
        earlier.sealed = bool(
            self.conn.execute("SELECT sealed FROM turns WHERE id = ?", (earlier.db_id,)).fetchone()[
                0
            ]
        )
        self._write_turn(earlier)
        return True

    def _roll_back(self, count: int) -> None:
        """Mark the last `count` prompted turns not yet rolled back: the provider drops them from
        the conversation (turns rolled back before are gone already and do not count)."""
        self._close_turn(sealed=True)
        self._seal_written_open_turn()
        if self.session_db_id is None or count <= 0:
            return
        self.conn.execute(
            "UPDATE turns SET rolled_back = 1 WHERE id IN (SELECT id FROM turns"
            " WHERE session_id = ? AND rolled_back = 0 AND user_text != ''"
            " ORDER BY ordinal DESC LIMIT ?)",
            (self.session_db_id, count),
        )

    def _cut_history(self, cut: HistoryCut) -> None:
        """Mark the turns of the thread's first file from record `cut.ordinal` on rolled back.
        That file numbers its records from 0 on line 1, so record N is line N + 1."""
        self.conn.execute(
            "UPDATE turns SET rolled_back = 1 WHERE first_line > ? AND session_id IN"
            " (SELECT id FROM sessions WHERE provider = ? AND provider_session_id = ?"
            " AND id IS NOT ?)",
            (cut.ordinal, self.provider, cut.provider_session_id, self.session_db_id),
        )

    def _seal_written_open_turn(self) -> None:
        """The turn left open by the previous sync is complete now that a new one starts."""
        if self.turn is None and self.open_turn_db_id is not None:
            self.conn.execute("UPDATE turns SET sealed = 1 WHERE id = ?", (self.open_turn_db_id,))
            self.open_turn_db_id = None

    def _close_turn(self, *, sealed: bool) -> None:
        turn = self.turn
        if turn is None:
            return
        turn.sealed = turn.sealed or sealed
        self._write_turn(turn)
        self.turn = None
        self.open_turn_db_id = None if turn.sealed else turn.db_id

    # -- storage --------------------------------------------------------------------------

    def _load_turn(self, turn_id: int) -> TurnRecord | None:
        return load_turn(self.conn, turn_id)

    def _scope(self) -> str:
        if self._scope_tokens is None:
            row = self.conn.execute(
                "SELECT worktree_key FROM sessions WHERE id = ?", (self.session_db_id,)
            ).fetchone()
            self._scope_tokens = fts_scope(self.provider, row[0] if row else None)
        return self._scope_tokens

    def _write_turn(self, turn: TurnRecord) -> None:
        session_id = self._ensure_session()
        conn = self.conn
        values = (
            turn.user_text,
            turn.assistant_text,
            turn.started_at,
            turn.ended_at,
            int(turn.sealed),
            turn.revision(),
            turn.first_line,
            turn.last_line,
            int(turn.aborted),
            orjson.dumps(turn.notices).decode() if turn.notices else None,
        )
        if turn.db_id is None:
            cur = conn.execute(
                "INSERT INTO turns(user_text, assistant_text, started_at, ended_at, sealed,"
                " revision, first_line, last_line, aborted, notices, session_id, ordinal)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (*values, session_id, turn.ordinal),
            )
            turn.db_id = int(cur.lastrowid or 0)
        else:
            conn.execute(
                "UPDATE turns SET user_text = ?, assistant_text = ?, started_at = ?,"
                " ended_at = ?, sealed = ?, revision = ?, first_line = ?, last_line = ?,"
                " aborted = ?, notices = ? WHERE id = ?",
                (*values, turn.db_id),
            )
            conn.execute("DELETE FROM tool_uses WHERE turn_id = ?", (turn.db_id,))
            if turn.db_id not in self._fts_pending:  # written by an earlier sync
                conn.execute("DELETE FROM turns_fts WHERE rowid = ?", (turn.db_id,))
                conn.execute("DELETE FROM turn_passages WHERE turn_id = ?", (turn.db_id,))
        self._write_tools(turn.db_id, turn.tools)
        self._fts_pending[turn.db_id] = (
            turn.search_text(),
            turn_text(turn.user_text, turn.assistant_text),
        )
        self.turns_written += 1

    def _write_tools(self, turn_id: int, tools: list[ToolRecord]) -> None:
        """A turn's tool uses, their file touches and observed commits, one `executemany` per
        table. Each tool use gets the id SQLite would have given it inserted alone (one more
        than the table's largest: nothing else writes to it in between), so the rows are the
        same; a statement per tool use was a visible share of a cold sync."""
        if not tools:
            return
        conn = self.conn
        first = int(conn.execute("SELECT coalesce(max(id), 0) FROM tool_uses").fetchone()[0]) + 1
        rows = []
        touches: list[tuple[int, int, str, str]] = []
        commits: list[tuple[int, int, str, int, int]] = []
        for seq, tool in enumerate(tools):
            tool_id = first + seq
            rows.append(
                (
                    tool_id,
                    turn_id,
                    seq,
                    tool.call_id,
                    tool.name,
                    tool.family,
                    tool.input,
                    tool.command,
                    tool.started_at,
                    tool.result_head,
                    tool.result_tail,
                    tool.result_bytes,
                    tool.result_sha256,
                    int(tool.result_truncated),
                    tool.exit_code,
                    tool.status,
                    tool.ended_at,
                    tool.assistant_offset,
                )
            )
            # most tool uses touch no file and observe no commit: no comprehension for them
            if tool.paths_written:
                touches += [(turn_id, tool_id, p, "write") for p in tool.paths_written]
            if tool.paths_read:
                touches += [(turn_id, tool_id, p, "read") for p in tool.paths_read]
            if tool.commits:
                commits += [
                    (turn_id, tool_id, c.hash, int(c.is_full), int(c.from_commit_command))
                    for c in tool.commits
                ]
        conn.executemany(
            "INSERT INTO tool_uses(id, turn_id, seq, call_id, name, family, input, command,"
            " started_at, result_head, result_tail, result_bytes, result_sha256,"
            " result_truncated, exit_code, status, ended_at, assistant_offset)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        if touches:
            conn.executemany(
                "INSERT INTO file_touches(turn_id, tool_use_id, path, kind) VALUES (?,?,?,?)",
                touches,
            )
        if commits:
            conn.executemany(
                "INSERT OR IGNORE INTO observed_commits(turn_id, tool_use_id, hash, is_full,"
                " from_commit_command) VALUES (?,?,?,?,?)",
                commits,
            )


def load_turn(conn: sqlite3.Connection, turn_id: int) -> TurnRecord | None:
    """A written turn read back from the index, with its tool uses."""
    row = conn.execute("SELECT * FROM turns WHERE id = ?", (turn_id,)).fetchone()
    if row is None:
        return None
    turn = TurnRecord(
        row["ordinal"],
        row["user_text"],
        row["started_at"],
        row["first_line"] or 0,
        db_id=row["id"],
        ended_at=row["ended_at"],
        last_line=row["last_line"] or 0,
        aborted=bool(row["aborted"]),
        notices=orjson.loads(row["notices"]) if row["notices"] else [],
    )
    if row["assistant_text"]:
        turn.add_assistant(row["assistant_text"])
    for t in conn.execute("SELECT * FROM tool_uses WHERE turn_id = ? ORDER BY seq", (turn_id,)):
        touches = conn.execute(
            "SELECT path, kind FROM file_touches WHERE tool_use_id = ? ORDER BY id", (t["id"],)
        ).fetchall()
        commits = conn.execute(
            "SELECT hash, is_full, from_commit_command FROM observed_commits"
            " WHERE tool_use_id = ? ORDER BY id",
            (t["id"],),
        ).fetchall()
        turn.tools.append(
            ToolRecord(
                call_id=t["call_id"],
                name=t["name"],
                family=t["family"],
                input=t["input"],
                command=t["command"],
                paths_written=[r["path"] for r in touches if r["kind"] == "write"],
                paths_read=[r["path"] for r in touches if r["kind"] == "read"],
                started_at=t["started_at"],
                result_head=t["result_head"],
                result_tail=t["result_tail"],
                result_bytes=t["result_bytes"],
                result_sha256=t["result_sha256"],
                result_truncated=bool(t["result_truncated"]),
                exit_code=t["exit_code"],
                status=t["status"],
                ended_at=t["ended_at"],
                commits=[
                    ObservedCommit(c["hash"], bool(c["is_full"]), bool(c["from_commit_command"]))
                    for c in commits
                ],
                assistant_offset=t["assistant_offset"],
            )
        )
        if turn.tools[-1].is_orphan():
            turn.orphans[t["call_id"]] = turn.tools[-1]
    return turn
