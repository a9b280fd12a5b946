"""Pi coding agent session adapter (`~/.pi/agent/sessions/--<encoded-cwd>--/<ts>_<uuid>.jsonl`).

Format: research/session-formats.md §3 (v1 files, observed). Entry types of the later tree
format (v2/v3: `branch_summary`, `custom`, `custom_message`, `label`, `session_info`; seen in
Pi's own session docs, not in a sample) are accepted; entries are read in file order, so
abandoned branches of a v2+ tree are read as if they were on the main line.

What this adapter decides:
- Every `user` message is a turn (Pi writes no injected user records). Images become
  placeholders.
- An assistant message whose `stopReason` is `stop`, `length`, `aborted` or `error` ends the turn:
  Pi's agent loop only continues after `toolUse`.
- A `bashExecution` message (the user's own `!` command) becomes a shell ToolCall + ToolResult
  with the recorded exit code, call id `bash:<line>`.
- Compaction entries are not turns; their summary restates earlier messages.
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
    timestamp_of,
)

STATE_VERSION = 1
OPEN_CALLS = 256
UNKNOWN_TYPES = 32

KNOWN_ENTRY_TYPES = frozenset(
    {
        "session",
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
# message roles that carry no turn content of their own
QUIET_ROLES = frozenset({"custom", "hookMessage", "branchSummary", "compactionSummary"})
ENDING_STOP_REASONS = frozenset({"stop", "length", "aborted", "error"})
_EXIT_CODE = re.compile(r"Command exited with code (\d+)\s*$")

_FAMILIES: dict[str, ToolFamily] = {
    "bash": "shell",
    "edit": "edit",
    "write": "edit",
    "read": "read",
    "grep": "search",
    "find": "search",
    "ls": "search",
}


def tool_family(name: str) -> ToolFamily:
    if name.startswith("mcp__"):
        return "mcp"
    return _FAMILIES.get(name, "other")


class PiAdapter:
    provider: ClassVar[str] = "pi"
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
        return {
            "v": STATE_VERSION,
            "sent": [],  # SessionMeta fields already emitted
            "turn_open": False,
            "calls": {},  # open tool call id -> tool name
            "unknown": [],
        }

    def parse(self, record: Any, line: int, state: dict[str, Any]) -> list[Event]:
        return parse_guarded(_Parser, record, line, state)


class _Parser(RecordParser):
    def handle(self, record: Any) -> None:
        rec = as_dict(record)
        if rec is None:
            self.bad("record is not a JSON object")
            return
        kind = rec.get("type")
        if not isinstance(kind, str):
            self.bad("record has no string 'type'")
            return
        at = timestamp_of(rec)
        if kind == "session":
            self.header(rec, at)
        elif kind == "message":
            self.message(rec, at)
        elif kind == "model_change":
            self.meta(model=as_nonempty_str(rec.get("modelId")))
        elif kind == "session_info":
            self.meta(title=as_nonempty_str(rec.get("name")))
        elif kind not in KNOWN_ENTRY_TYPES:
            seen: list[str] = self.st["unknown"]
            if kind not in seen:
                remember(seen, kind, UNKNOWN_TYPES)
                message = f"line {self.line}: unknown entry type {kind!r}"
                self.out.append(Diagnostic("unknown-record", message, self.line))

    def header(self, rec: dict[str, Any], at: str | None) -> None:
        session_id = as_nonempty_str(rec.get("id"))
        if session_id is None:
            self.bad("session header without an id")
            return
        version = rec.get("version")
        self.meta(
            provider_session_id=session_id,
            cwd=as_nonempty_str(rec.get("cwd")),
            model=as_nonempty_str(rec.get("modelId")),
            started_at=at,
            client_version=f"session-v{version}" if isinstance(version, int) else None,
        )

    def message(self, rec: dict[str, Any], at: str | None) -> None:
        message = as_dict(rec.get("message"))
        if message is None:
            self.bad("message entry without a message object")
            return
        role = message.get("role")
        if role == "user":
            self.user(message, at)
        elif role == "assistant":
            self.assistant(message, at)
        elif role == "toolResult":
            self.tool_result(message, at)
        elif role == "bashExecution":
            self.bash_execution(message, at)
        elif as_str(role) in QUIET_ROLES:
            pass
        else:
            self.bad(f"message with unknown role {role!r}")

    def user(self, message: dict[str, Any], at: str | None) -> None:
        content = message.get("content")
        if not isinstance(content, (str, list)):
            self.bad("user message content is neither a string nor a list")
            return
        pieces = content_pieces(content)
        if not pieces:
            return
        self.out.append(UserTurn(text="\n".join(pieces), at=at))
        self.st["turn_open"] = True

    def assistant(self, message: dict[str, Any], at: str | None) -> None:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            self.bad("assistant message content is not a list")
            return
        self.meta(model=as_nonempty_str(message.get("model")))
        self.st["turn_open"] = True
        for raw in content:
            block = as_dict(raw)
            if block is None:
                continue
            kind = block.get("type")
            if kind == "text":
                text = as_str(block.get("text"))
                if text and text.strip():
                    self.out.append(AssistantText(text=text, at=at))
            elif kind == "toolCall":
                self.tool_call(block, at)
        if as_str(message.get("stopReason")) in ENDING_STOP_REASONS:
            self.end_turn(at)

    def end_turn(self, at: str | None) -> None:
        if self.st["turn_open"]:
            self.st["turn_open"] = False
            self.out.append(TurnEnd(at=at))

    def tool_call(self, block: dict[str, Any], at: str | None) -> None:
        call_id = as_nonempty_str(block.get("id"))
        name = as_nonempty_str(block.get("name"))
        if call_id is None or name is None:
            self.bad("toolCall block without id or name")
            return
        arguments = block.get("arguments")
        family = tool_family(name)
        call = ToolCall(call_id=call_id, name=name, family=family, input=arguments, at=at)
        args = as_dict(arguments) or {}
        path = as_nonempty_str(args.get("path"))
        if family == "edit" and path:
            call.paths_written = [path]
        elif family == "read" and path:
            call.paths_read = [path]
        elif family == "shell":
            call.command = as_str(args.get("command"))
        remember_key(self.st["calls"], call_id, name, OPEN_CALLS)
        self.out.append(call)

    def tool_result(self, message: dict[str, Any], at: str | None) -> None:
        call_id = as_nonempty_str(message.get("toolCallId"))
        if call_id is None:
            self.bad("toolResult message without toolCallId")
            return
        name = self.st["calls"].pop(call_id, None) or as_str(message.get("toolName"))
        text = content_text(message.get("content"))
        flag = message.get("isError")
        is_error = flag if isinstance(flag, bool) else None
        exit_code = None
        if name == "bash":
            if is_error:
                match = _EXIT_CODE.search(text)
                exit_code = int(match.group(1)) if match else None
            elif is_error is False:
                exit_code = 0
        self.out.append(
            ToolResult(call_id=call_id, output=text, exit_code=exit_code, is_error=is_error, at=at)
        )

    def bash_execution(self, message: dict[str, Any], at: str | None) -> None:
        command = as_str(message.get("command"))
        if command is None:
            self.bad("bashExecution message without a command")
            return
        call_id = f"bash:{self.line}"
        self.out.append(
            ToolCall(
                call_id=call_id,
                name="bashExecution",
                family="shell",
                input={"command": command},
                at=at,
                command=command,
            )
        )
        raw_exit = message.get("exitCode")
        exit_code = None
        if isinstance(raw_exit, int) and not isinstance(raw_exit, bool):
            exit_code = raw_exit
        cancelled = message.get("cancelled") is True
        is_error = cancelled or (exit_code is not None and exit_code != 0)
        output = as_str(message.get("output")) or ""
        result = ToolResult(call_id, output, exit_code=exit_code, is_error=is_error, at=at)
        self.out.append(result)
