"""Claude Code session adapter (`~/.claude/projects/<encoded-cwd>/<session>.jsonl`).

Format: research/session-formats.md §1. What this adapter decides:

- A user turn is a human prompt only: tool-result carriers, `isMeta` injections, compaction
  summaries, slash-command / local-command / task-notification / bash-mode records, hook
  notices and interrupt markers are not turns (§1.3). `<system-reminder>` and `<ide_…>` context
  is stripped from prompt text; images become placeholders.
- The client writes one record per content block and sometimes re-logs a whole exchange, so
  assistant text and tool calls are de-duplicated per `message.id`, tool results per
  `tool_use_id`, and a prompt record with the same timestamp as the previous prompt whose
  pieces it repeats is dropped. An image-only prompt record waits for the text record written
  with the same timestamp, so a prompt split into several records stays one turn.
- With parallel tool calls, 2.1.112+ may write a tool result before the assistant record that
  holds its call (they are linked by `parentUuid`): the result is emitted as it comes, without
  the call's name, and the assembler pairs it with the call that follows in its turn.
- A turn ends (TurnEnd) at `system/turn_duration` and `system/stop_hook_summary` (§1.11) and at an
  interrupt marker. The client may write the end record before the last text block of the
  final response; the TurnEnd then waits until that response shows visible content or another
  record arrives. It also ends at `cost-state`, which the client writes when its process ends
  (`claude -p` writes no other end record without a Stop hook), if the last assistant message
  ended the model's turn (`stop_reason` `end_turn`, or `stop_sequence` of the client's own
  final message): an `end_turn` alone does not end it, since a background task's notification
  may wake the agent again in the same turn.
- Subagent files (`<session>/subagents/agent-<id>.jsonl`) are sessions of their own:
  `<sessionId>/agent-<id>`, with the main sessionId as parent. The compaction summariser's file
  (`agent-acompact-*`) only yields its session facts: it restates the main session.
- `isSidechain` records inside a main file belong to a subagent and are skipped there.
- Assistant records the client wrote itself (model `<synthetic>`: "No response requested.", and
  `isApiErrorMessage` API errors) are notices of the turn, not assistant prose. So is each
  `system/api_error` record (a model call failed and is retried: overloaded, rate limit, no
  connection), in the turn it interrupted. The other `system` subtypes carry nothing a person
  would search for: `compact_boundary` says "Conversation compacted", `away_summary` restates the
  session for a returning user.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from teamlore.sessions.model import (
    AssistantText,
    Diagnostic,
    Event,
    NoticeKind,
    ProviderNotice,
    ToolCall,
    ToolFamily,
    ToolResult,
    TurnEnd,
    Unreadable,
    UserTurn,
)
from teamlore.sessions.providers import default_roots
from teamlore.sessions.providers.common import (
    RecordParser,
    as_dict,
    as_nonempty_str,
    as_str,
    content_pieces,
    content_text,
    jsonl_files,
    parse_guarded,
    remember,
    remember_key,
    short_digest,
    strip_system_reminders,
    strip_tagged_families,
    timestamp_of,
)

STATE_VERSION = 1
RECENT_MESSAGES = 32  # message ids whose emitted blocks are remembered for de-duplication
RECENT_RESULTS = 64  # tool_use ids whose results were emitted
OPEN_CALLS = 256  # calls still waiting for a result (name only)
UNKNOWN_TYPES = 32

CONVERSATION_TYPES = frozenset({"user", "assistant", "system", "progress", "attachment"})
SIDE_TYPES = frozenset(
    {
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "last-prompt",
        "ai-title",
        "permission-mode",
        # Claude Code 2.1.x bookkeeping: nothing a person said or a tool did
        "atis-latch",
        "tools-used",
        "cost-state",
        "mode",
        "relocated",
        "worktree-state",
        "file-history-delta",
        "pr-link",
    }
)
SIDE_PREFIXES = ("api-request",)  # api-request, api-request-shape, api-request-blob
END_SUBTYPES = frozenset({"turn_duration", "stop_hook_summary"})
API_RETRY = "api_error"  # system subtype: a model call failed and the client retries it
PROCESS_END = "cost-state"  # written when the client's process ends (Claude Code 2.1.3xx)
INTERRUPT_MARKERS = frozenset(
    {"[Request interrupted by user]", "[Request interrupted by user for tool use]"}
)
# Client-written user records that are not human prompts (§1.3).
INJECTED_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<task-notification>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "Operation stopped by hook:",
    "This session is being continued from a previous conversation",
)
_EXIT_CODE = re.compile(r"^(?:Error: )?Exit code (\d+)")

_FAMILIES: dict[str, ToolFamily] = {
    "Bash": "shell",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "edit",
    "NotebookEdit": "edit",
    "Read": "read",
    "NotebookRead": "read",
    "Grep": "search",
    "Glob": "search",
    "LS": "search",
    "WebFetch": "web",
    "WebSearch": "web",
    "Task": "agent",
    "Agent": "agent",
}


def tool_family(name: str) -> ToolFamily:
    if name.startswith("mcp__"):
        return "mcp"
    return _FAMILIES.get(name, "other")


def _input_path(tool_input: Any) -> str | None:
    data = as_dict(tool_input)
    if data is None:
        return None
    return as_nonempty_str(data.get("file_path")) or as_nonempty_str(data.get("notebook_path"))


class ClaudeAdapter:
    provider: ClassVar[str] = "claude"
    unread_lines: ClassVar[re.Pattern[bytes] | None] = None

    def default_roots(self) -> list[Path]:
        return default_roots(self.provider)

    def discover(self, root: Path, *, newest_first: bool = False) -> Iterator[str | Unreadable]:
        if root.is_file():
            if root.suffix == ".jsonl":
                yield str(root)
            return
        if root.is_dir():
            yield from jsonl_files(root, newest_first=newest_first)

    def new_state(self, path: Path) -> dict[str, Any]:
        agent_id = None
        if path.name.startswith("agent-") and "subagents" in path.parent.parts:
            agent_id = path.stem[len("agent-") :] or None
        return {
            "v": STATE_VERSION,
            "agent_id": agent_id,  # from the file name; records may supply it instead
            "kind": "agent" if agent_id else None,  # "main" | "agent", decided on first record
            "sent": [],  # SessionMeta fields already emitted
            "session_id": None,
            "turn_open": False,  # activity since the last TurnEnd
            "final": False,  # the last assistant message ended the model's turn (stop_reason)
            "end_pending": None,  # [timestamp] of an end record waiting for the final block
            "last_msg_id": None,
            "last_msg_visible": False,
            "messages": {},  # message id -> digests of emitted text blocks and tool ids
            "results": [],  # recent tool_use ids with an emitted result
            "calls": {},  # open tool_use id -> tool name
            "last_prompt": None,  # {"at", "digests"} of the last emitted user turn
            "pending_prompt": None,  # {"at", "pieces"}: image-only prompt awaiting its text
            "unknown": [],
        }

    def parse(self, record: Any, line: int, state: dict[str, Any]) -> list[Event]:
        if isinstance(record, dict) and _nothing_to_index(record, state):
            return []
        return parse_guarded(_Parser, record, line, state)


# session facts every conversation record repeats (SessionMeta field names)
ENVELOPE_FACTS = frozenset({"cwd", "git_branch", "client_version", "started_at"})
SESSION_FACTS = ENVELOPE_FACTS | {"provider_session_id"}
# records that never yield an event of their own (summary and ai-title carry the title)
QUIET_CONVERSATION_TYPES = frozenset({"progress", "attachment"})
QUIET_SIDE_TYPES = SIDE_TYPES - {"summary", "ai-title", PROCESS_END}


def _nothing_to_index(record: dict[str, Any], state: dict[str, Any]) -> bool:
    """A record the parser would pass over without a trace, told apart before a parser is built
    for it (progress, attachment and side records: about half of a transcript's lines). That
    holds while no prompt or turn end waits for the next record and, for a conversation record,
    once the file's kind is known and every session fact it repeats has been sent."""
    kind = record.get("type")
    if not isinstance(kind, str):
        return False
    if state["pending_prompt"] is not None or state["end_pending"] is not None:
        return False
    if kind in QUIET_SIDE_TYPES:
        return True
    return (
        kind in QUIET_CONVERSATION_TYPES
        and state["kind"] is not None
        and SESSION_FACTS.issubset(state["sent"])
    )


class _Parser(RecordParser):
    __slots__ = ()

    def handle(self, record: Any) -> None:
        if not isinstance(record, dict):
            self.bad("record is not a JSON object")
            return
        rec: dict[str, Any] = record
        kind = rec.get("type")
        if not isinstance(kind, str):
            self.bad("record has no string 'type'")
            return
        at = timestamp_of(rec)
        if kind in CONVERSATION_TYPES and not self.conversation_envelope(rec, at):
            return
        if self.st["pending_prompt"] is not None or self.st["end_pending"] is not None:
            self.flush_pending(rec, kind, at)
        # the frequent kinds first
        if kind == "assistant":
            self.assistant(rec, at)
        elif kind == "user":
            self.user(rec, at)
        elif kind == "system":
            subtype = as_str(rec.get("subtype"))
            if subtype in END_SUBTYPES:
                self.end_marker(at)
            elif subtype == API_RETRY:
                self.st["turn_open"] = True
                self.out.append(ProviderNotice(kind="api-error", text=_retry_text(rec), at=at))
        elif kind == PROCESS_END:
            if self.st["turn_open"] and self.st.get("final"):  # states saved before: no key
                self.end_turn(at)
        elif kind in ("summary", "ai-title"):
            title = as_nonempty_str(rec.get("summary" if kind == "summary" else "aiTitle"))
            self.meta(title=title)
        elif kind in CONVERSATION_TYPES or kind in SIDE_TYPES or kind.startswith(SIDE_PREFIXES):
            pass  # progress, attachment and side records carry nothing we index
        else:
            self.unknown(kind)

    def unknown(self, kind: str) -> None:
        seen: list[str] = self.st["unknown"]
        if kind in seen:
            return
        remember(seen, kind, UNKNOWN_TYPES)
        message = f"line {self.line}: unknown record type {kind!r}"
        self.out.append(Diagnostic("unknown-record", message, self.line))

    def conversation_envelope(self, rec: dict[str, Any], at: str | None) -> bool:
        """Session facts from a conversation record. False when the record is to be skipped."""
        st = self.st
        sidechain = rec.get("isSidechain") is True
        file_kind = st["kind"]
        if file_kind is None:
            record_agent = as_nonempty_str(rec.get("agentId"))
            file_kind = st["kind"] = "agent" if sidechain and record_agent else "main"
            if file_kind == "agent":
                st["agent_id"] = record_agent
        if file_kind == "main" and sidechain:
            return False  # an inline sidechain record belongs to a subagent, not this session
        agent_id: str | None = st["agent_id"]
        sent: list[str] = st["sent"]
        if not SESSION_FACTS.issubset(sent):  # once all are sent, nothing to read
            self.session_facts(rec, at, file_kind, agent_id, sent)
        return not (file_kind == "agent" and (agent_id or "").startswith("acompact"))

    def session_facts(
        self,
        rec: dict[str, Any],
        at: str | None,
        file_kind: str,
        agent_id: str | None,
        sent: list[str],
    ) -> None:
        session_id = as_nonempty_str(rec.get("sessionId"))
        if session_id is not None and "provider_session_id" not in sent:
            self.st["session_id"] = session_id
            if file_kind == "agent" and agent_id:
                self.meta(
                    provider_session_id=f"{session_id}/agent-{agent_id}",
                    parent_session_id=session_id,
                    agent_id=agent_id,
                )
            else:
                self.meta(provider_session_id=session_id)
        if not ENVELOPE_FACTS.issubset(sent):
            self.meta(
                cwd=as_nonempty_str(rec.get("cwd")),
                git_branch=as_nonempty_str(rec.get("gitBranch")),
                client_version=as_nonempty_str(rec.get("version")),
                started_at=at,
            )

    def flush_pending(self, rec: dict[str, Any], kind: str, at: str | None) -> None:
        pending = self.st["pending_prompt"]
        if pending is not None and not (kind == "user" and at is not None and at == pending["at"]):
            self.flush_prompt()
        if self.st["end_pending"] is None:
            return
        if kind == "system" and as_str(rec.get("subtype")) in END_SUBTYPES:
            return
        if kind == "assistant":
            message = as_dict(rec.get("message")) or {}
            msg_id = as_str(message.get("id"))
            if msg_id is not None and msg_id == self.st["last_msg_id"]:
                return  # the rest of the final response: the end waits for it
        self.end_turn(self.st["end_pending"][0])

    # -- turns ------------------------------------------------------------------------------

    def flush_prompt(self) -> None:
        pending = self.st["pending_prompt"]
        if pending is not None:
            self.st["pending_prompt"] = None
            self.emit_prompt(list(pending["pieces"]), pending["at"])

    def end_turn(self, at: str | None) -> None:
        self.st["end_pending"] = None
        if self.st["turn_open"]:
            self.st["turn_open"] = False
            self.out.append(TurnEnd(at=at))

    def end_marker(self, at: str | None) -> None:
        if not self.st["turn_open"] or self.st["end_pending"] is not None:
            return
        if self.st["last_msg_visible"]:
            self.end_turn(at)
        else:
            self.st["end_pending"] = [at]

    def emit_prompt(self, pieces: list[str], at: str | None) -> None:
        self.out.append(UserTurn(text="\n".join(pieces), at=at))
        self.st["last_prompt"] = {"at": at, "digests": [short_digest(p) for p in pieces]}
        self.st["turn_open"] = True
        self.st["final"] = False

    def user(self, rec: dict[str, Any], at: str | None) -> None:
        message = as_dict(rec.get("message"))
        if message is None:
            self.bad("user record without a message object")
            return
        content = message.get("content")
        if not isinstance(content, (str, list)):
            self.bad("user message content is neither a string nor a list")
            return
        if isinstance(content, list) and _has_tool_result(content):
            self.tool_results(rec, content, at)
            return
        if rec.get("isMeta") is True or rec.get("isCompactSummary") is True:
            return
        if rec.get("isVisibleInTranscriptOnly") is True:
            return
        pieces = [p for p in (_strip_ide(p) for p in content_pieces(content)) if p]
        if not pieces:
            return
        joined = "\n".join(pieces).strip()
        if joined in INTERRUPT_MARKERS:
            self.flush_prompt()
            self.end_turn(at)
            return
        if joined.startswith(INJECTED_PREFIXES):
            return
        if self.repeats_last_prompt(pieces, at):
            return
        pending = self.st["pending_prompt"]
        if all(_is_placeholder(p) for p in pieces):
            prior = list(pending["pieces"]) if pending is not None else []
            self.st["pending_prompt"] = {"at": at, "pieces": prior + pieces}
            if at is None:  # nothing can join it: emit now
                self.st["pending_prompt"] = None
                self.emit_prompt(prior + pieces, at)
            return
        self.st["pending_prompt"] = None
        prefix = list(pending["pieces"]) if pending is not None else []
        self.emit_prompt(prefix + pieces, at)

    def repeats_last_prompt(self, pieces: list[str], at: str | None) -> bool:
        last = self.st["last_prompt"]
        if last is None or at is None or last.get("at") != at:
            return False
        known = set(last.get("digests") or [])
        return all(short_digest(p) in known for p in pieces)

    # -- assistant ----------------------------------------------------------------------------

    def assistant(self, rec: dict[str, Any], at: str | None) -> None:
        message = rec.get("message")
        if not isinstance(message, dict):
            self.bad("assistant record without a message object")
            return
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            self.bad("assistant message content is not a list")
            return
        st = self.st
        model = message.get("model")
        if not isinstance(model, str) or not model:
            model = None
        elif model != "<synthetic>" and "model" not in st["sent"]:
            self.meta(model=model)
        notice = _notice_kind(rec, model)
        msg_id = message.get("id")
        if not isinstance(msg_id, str) or not msg_id:
            msg_id = None
        if msg_id is None or msg_id != st["last_msg_id"]:
            st["last_msg_id"] = msg_id
            st["last_msg_visible"] = False
        seen: list[str] = []
        if msg_id is not None:
            messages: dict[str, list[str]] = st["messages"]
            seen = list(messages.get(msg_id) or [])
        st["turn_open"] = True
        stop = message.get("stop_reason")
        st["final"] = stop == "end_turn" or stop == "stop_sequence"
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_use":
                st["last_msg_visible"] = True
                call = self.tool_call(block, at)
                if call is None:
                    continue
                key = f"call:{call.call_id}"
                if key in seen:
                    continue
                seen.append(key)
                if call.call_id not in st["results"]:  # else its result came first
                    remember_key(st["calls"], call.call_id, call.name, OPEN_CALLS)
                self.out.append(call)
            elif kind == "text":
                text = block.get("text")
                if not isinstance(text, str) or not text or text.isspace():
                    continue
                st["last_msg_visible"] = True
                key = short_digest(text)
                if key in seen:
                    continue
                seen.append(key)
                if notice is None:
                    self.out.append(AssistantText(text=text, at=at))
                else:
                    self.out.append(ProviderNotice(kind=notice, text=text, at=at))
        if msg_id is not None:
            remember_key(st["messages"], msg_id, seen, RECENT_MESSAGES)
        if st["end_pending"] is not None and st["last_msg_visible"]:
            self.end_turn(st["end_pending"][0])

    def tool_call(self, block: dict[str, Any], at: str | None) -> ToolCall | None:
        call_id = block.get("id")
        name = block.get("name")
        if not (isinstance(call_id, str) and call_id and isinstance(name, str) and name):
            self.bad("tool_use block without id or name")
            return None
        tool_input = block.get("input")
        family = tool_family(name)
        call = ToolCall(call_id=call_id, name=name, family=family, input=tool_input, at=at)
        if family in ("edit", "read", "shell") and isinstance(tool_input, dict):
            if family == "shell":
                command = tool_input.get("command")
                call.command = command if isinstance(command, str) else None
            else:
                path = _input_path(tool_input)
                if path and family == "edit":
                    call.paths_written = [path]
                elif path:
                    call.paths_read = [path]
        return call

    # -- tool results -----------------------------------------------------------------------

    def tool_results(self, rec: dict[str, Any], content: list[Any], at: str | None) -> None:
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        structured = rec.get("toolUseResult") if len(blocks) == 1 else None
        results: list[str] = self.st["results"]
        for block in blocks:
            call_id = block.get("tool_use_id")
            if not isinstance(call_id, str) or not call_id:
                self.bad("tool_result block without tool_use_id")
                continue
            if call_id in results:
                continue
            remember(results, call_id, RECENT_RESULTS)
            name = self.st["calls"].pop(call_id, None)
            self.out.append(_tool_result(call_id, name, block, structured, at))


def _has_tool_result(content: list[Any]) -> bool:
    first = content[0] if content else None  # a tool-result carrier usually holds one block
    if isinstance(first, dict) and first.get("type") == "tool_result":
        return True
    return any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _tool_result(
    call_id: str, name: str | None, block: dict[str, Any], structured: Any, at: str | None
) -> ToolResult:
    content = block.get("content")
    # a string is the one piece content_text would make of it
    text = strip_system_reminders(content) if isinstance(content, str) else content_text(content)
    flag = block.get("is_error")
    # §1.5/§1.6: a result with `is_error` false or absent is a success
    is_error = flag is True
    details = as_dict(structured)
    if details is not None and details.get("interrupted") is True:
        is_error = True
    if (
        isinstance(structured, str)
        and structured.startswith("Error")
        and not isinstance(flag, bool)
    ):
        is_error = True
    bash_shaped = details is not None and "stdout" in details and "interrupted" in details
    exit_code = None
    # a result of a call not seen (yet: 2.1.112+ may write it before its call) keeps what a Bash
    # result would: the exit code of a failure's `Exit code N`, 0 for a plain success
    if name == "Bash" or (name is None and (bash_shaped or is_error)):
        exit_code = _bash_exit_code(text, structured, is_error)
    return ToolResult(call_id=call_id, output=text, exit_code=exit_code, is_error=is_error, at=at)


def _bash_exit_code(text: str, structured: Any, is_error: bool | None) -> int | None:
    """§1.6: no exit-code field exists. Failure text starts `Exit code N`; a plain success
    (structured stdout/stderr, not interrupted, not backgrounded, no reinterpreted return code)
    means 0; anything else is unknown."""
    if is_error:
        for candidate in (text, structured if isinstance(structured, str) else ""):
            match = _EXIT_CODE.match(candidate)
            if match:
                return int(match.group(1))
        return None
    details = as_dict(structured)
    if details is None or "stdout" not in details:
        return None
    if details.get("interrupted") is True or details.get("backgroundTaskId"):
        return None
    if details.get("returnCodeInterpretation"):
        return None  # e.g. grep's exit 1 reported as "No matches found"
    return 0


def _notice_kind(rec: dict[str, Any], model: str | None) -> NoticeKind | None:
    """Whether an assistant record is the client's own message, and which kind."""
    if rec.get("isApiErrorMessage") is True:
        return "api-error"
    return "synthetic" if model == "<synthetic>" else None


def _retry_text(rec: dict[str, Any]) -> str:
    """What the client showed for a failed model call it retries, from a `system/api_error`
    record: `API Error: 529 {…overloaded_error…} · retry 1/10`. Since 2.1.2xx `error` holds the
    API's `message` (status and body) and a `formatted` line; 2.1.15 wrote only the connection
    failure's `cause.code` (`FailedToOpenSocket`)."""
    error = as_dict(rec.get("error"))
    details: list[str] = []
    if error is None:
        message = as_nonempty_str(rec.get("error"))
    else:
        message = as_nonempty_str(error.get("message")) or as_nonempty_str(error.get("formatted"))
    if message:
        details.append(message)
    holders = (error or {}).get("connection"), (error or {}).get("cause"), rec.get("cause")
    for holder in holders:
        code = as_nonempty_str((as_dict(holder) or {}).get("code"))
        if code and not any(code in d for d in details):
            details.append(code)
    text = "API Error: " + " ".join(details) if details else "API Error"
    attempt, most = _count(rec.get("retryAttempt")), _count(rec.get("maxRetries"))
    if attempt is not None:
        text += f" · retry {attempt}/{most}" if most is not None else f" · retry {attempt}"
    return text


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _strip_ide(piece: str) -> str:
    if "<ide_" not in piece:
        return piece
    return strip_tagged_families(piece, "ide_").strip()


def _is_placeholder(piece: str) -> bool:
    return piece.startswith(("[image:", "[document:")) and piece.endswith("]")
