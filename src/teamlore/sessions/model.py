"""Normalized session events: what every provider adapter emits.

An adapter reads one session file as a stream of JSONL records and turns each into zero or more
events. The indexer (provider-independent) assembles events into sessions, turns, tool uses,
file touches and observed commits. Adapters are resumable: they keep their state in a plain
JSON-serializable dict, which the indexer saves with the byte offset after the last complete line,
so an appended line is parsed alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

ToolFamily = Literal["shell", "edit", "read", "search", "web", "mcp", "agent", "other"]
TOOL_FAMILIES: tuple[str, ...] = ("shell", "edit", "read", "search", "web", "mcp", "agent", "other")


@dataclass(slots=True)
class SessionMeta:
    """Session facts as they become known. None means "not in this record"; the indexer keeps
    the first non-None value of each field, except `ended_at` which keeps the latest."""

    provider_session_id: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    model: str | None = None
    client_version: str | None = None
    started_at: str | None = None
    # subagent / sidechain transcripts: the provider session id of the parent session
    parent_session_id: str | None = None
    agent_id: str | None = None
    title: str | None = None
    # the repository the provider recorded at session start (Codex `session_meta.git`):
    # remote URL without credentials, and the commit checked out
    git_remote: str | None = None
    git_commit: str | None = None


@dataclass(slots=True)
class UserTurn:
    """A real user prompt. Opens a new turn; the previous turn becomes sealed."""

    text: str
    at: str | None = None


@dataclass(slots=True)
class AssistantText:
    text: str
    at: str | None = None


@dataclass(slots=True)
class ToolCall:
    call_id: str
    name: str
    family: ToolFamily
    input: Any
    at: str | None = None
    # repo-relative or absolute paths this call writes (apply_patch, Edit, MultiEdit, Write, ...)
    paths_written: list[str] = field(default_factory=list)
    # paths it reads (Read, view, ...): file touches of kind "read"
    paths_read: list[str] = field(default_factory=list)
    # the shell command line, when the family is "shell"
    command: str | None = None


@dataclass(slots=True)
class ToolResult:
    call_id: str
    output: str
    exit_code: int | None = None
    is_error: bool | None = None
    at: str | None = None


@dataclass(slots=True)
class TurnEnd:
    """The provider recorded that the current turn is complete: it becomes sealed. `aborted`:
    the provider says the turn was cut short (Codex `turn_aborted`, docs/sessions.md)."""

    at: str | None = None
    aborted: bool = False


@dataclass(slots=True)
class TurnsRolledBack:
    """The user undid the last `count` turns (Codex `thread_rolled_back`): they stay in the file
    and in the index, marked rolled back, and are never offered to recall."""

    count: int
    at: str | None = None


@dataclass(slots=True)
class HistoryCut:
    """This file continues the thread `provider_session_id` from the thread's record `ordinal`
    (Codex 0.171 `thread/revert` writes such a file, `session_meta.history_base`): the turns the
    thread's first file holds from that record on were undone, and are marked rolled back."""

    provider_session_id: str
    ordinal: int
    at: str | None = None


NoticeKind = Literal["api-error", "synthetic"]


@dataclass(slots=True)
class ProviderNotice:
    """A message the client wrote itself in the assistant's place (Claude Code `<synthetic>`
    placeholders, `isApiErrorMessage` API errors): kept with the turn, never as assistant prose."""

    kind: NoticeKind
    text: str
    at: str | None = None


@dataclass(slots=True)
class Diagnostic:
    code: str
    message: str
    line: int | None = None


@dataclass(slots=True)
class Unreadable:
    """A folder under a session root that could not be listed: reported, never skipped
    silently (its sessions would otherwise look deleted or never existed)."""

    path: Path
    reason: str


Event = (
    SessionMeta
    | UserTurn
    | AssistantText
    | ToolCall
    | ToolResult
    | TurnEnd
    | TurnsRolledBack
    | HistoryCut
    | ProviderNotice
    | Diagnostic
)

# A process exit status is at most 32 bits wide (Windows reports NTSTATUS values up to 2^32 - 1,
# POSIX shells and Codex report negative values for signals); anything else in a transcript is
# not an exit code, whatever the field is called.
EXIT_CODE_MIN = -(2**31)
EXIT_CODE_MAX = 2**32 - 1


def checked_event(event: Event, line: int) -> tuple[Event, Diagnostic | None]:
    """`event` with out-of-range values replaced by "unknown", and the diagnostic that says so.

    Values from a session file reach canonical JSON, SQLite and the saved parser state; a value
    those cannot hold must stay a problem of its own line, never of the sync."""
    if isinstance(event, ToolResult) and event.exit_code is not None:
        code = event.exit_code
        if not isinstance(code, int) or not EXIT_CODE_MIN <= code <= EXIT_CODE_MAX:
            event.exit_code = None
            shown = str(code) if len(str(code)) <= 40 else str(code)[:40] + "…"
            return event, Diagnostic(
                "value-out-of-range",
                f"line {line}: exit code {shown} is not a process exit status; kept as unknown",
                line,
            )
    return event, None


class Adapter(Protocol):
    """One provider. Adding a provider means adding one module that defines one of these and
    registering it in `teamlore.sessions.providers`."""

    provider: ClassVar[str]
    # lines whose start this matches hold records `parse` would pass over without a trace; the
    # reader skips them undecoded (docs/sessions.md, "Lines passed over unread"). None: every
    # line is decoded
    unread_lines: ClassVar[re.Pattern[bytes] | None]

    def default_roots(self) -> list[Path]:
        """Where this provider keeps sessions on this machine (env vars honoured)."""
        ...

    def discover(self, root: Path, *, newest_first: bool = False) -> Iterator[str | Unreadable]:
        """Every session file under `root` (a directory, or one file) as a path string, and
        every folder under it that could not be listed. Strings, not `Path`s: a no-op resync
        of 10k files spent a fifth of its time making `Path` objects it never used.
        `newest_first`: the most recently modified first, found as they are taken (a caller
        that stops early lists no more than it took)."""
        ...

    def new_state(self, path: Path) -> dict[str, Any]:
        """Fresh parser state for a file read from its first byte."""
        ...

    def parse(self, record: Any, line: int, state: dict[str, Any]) -> Iterable[Event]:
        """Events for one decoded JSONL record (line numbers are 1-based). May update `state`,
        which must stay JSON-serializable and small (no whole payloads)."""
        ...


def has_undecodable_name(path: Path | str) -> bool:
    """Whether the path holds bytes that are not UTF-8 (it cannot be stored or printed as is)."""
    text = str(path)
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
