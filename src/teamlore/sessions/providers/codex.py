"""Codex CLI session adapter (`~/.codex/sessions/**/rollout-*.jsonl`).

Two file generations are read (research/session-formats.md §2.2):

- legacy (pre-envelope, Sep 2025): a header `{id, timestamp, instructions, git}`, bare response
  items and `{"record_type": "state"}` lines; no events, no per-line timestamps;
- envelope (0.58 onwards): `{"timestamp", "type", "payload"}` with `session_meta`, `turn_context`,
  `response_item`, `event_msg`, `compacted`, `world_state` (and an `ordinal` from 0.149).

Duplication rules (§2.7): in envelope files the human prompt is taken from `event_msg/user_message`
or `event_msg/item_completed{item: UserMessage}` (0.171 writes only that one; a twin of the same
text in the same turn is skipped), never from `response_item` user messages (they also carry
injected context); assistant text is taken from whichever of `event_msg/agent_message` and
`response_item/message role=assistant` comes first and its twin is skipped; the first result of a
call wins, except that a conclusive result (exit code or error flag, e.g. `exec_command_end`)
arriving after an inconclusive one (`Process running with session ID …`) is emitted as a second
`ToolResult` for the same call id: it supersedes the first. Orphan `exec_command_end` /
`patch_apply_end` / `web_search_end` events (no call seen, e.g. code-mode `exec-…` ids) get a
synthetic `ToolCall`. An MCP call of 0.171 (`function_call{namespace: "mcp__SERVER", name}`) is
named `mcp__SERVER__TOOL` as Claude Code names it; its outcome is the `item_completed{item:
McpToolCall}` written before its `function_call_output` (which states none).

Turns as the provider meant them: `task_complete` ends a turn, `turn_aborted` ends it marked
aborted, `thread_rolled_back{num_turns}` marks the last turns rolled back (the user undid them);
a file whose `session_meta.history_base` continues a thread from an earlier record (0.171
`thread/revert`) marks the turns the thread's first file holds from that record on rolled back.
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
    HistoryCut,
    SessionMeta,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnsRolledBack,
    Unreadable,
    UserTurn,
)
from teamlore.sessions.providers import default_roots
from teamlore.sessions.providers.codex_records import (
    BadRecord,
    _classify,
    _command_line,
    _content_text,
    _digest,
    _git_facts,
    _image_placeholder,
    _joined_streams,
    _json_or_raw,
    _list,
    _mcp_outcome,
    _parent_session,
    _read_output,
    _require_str,
    _str,
    _tag_content,
)
from teamlore.sessions.providers.common import RecordParser, jsonl_files, parse_guarded

STATE_VERSION = 1
# bounds that keep the per-file state small
MAX_TRACKED_CALLS = 256
MAX_PENDING = 32
MAX_UNKNOWN_KINDS = 64

ENVELOPE_TYPES = frozenset(
    {"session_meta", "turn_context", "response_item", "event_msg", "compacted", "world_state"}
)
# records current Codex versions write that carry nothing the index uses (token accounting)
SKIPPED_TYPES = frozenset({"token_usage_record"})
ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
        "tool_search_call",
        "tool_search_output",
    }
)
# response items that carry nothing to index: reasoning (not assistant text), ghost snapshots,
# compactions, and Codex 0.171's tool search (the model looking up which tools it has, with the
# tools' descriptions as the answer: no work of the session)
UNINDEXED_ITEMS = frozenset(
    {
        "reasoning",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
        "tool_search_call",
        "tool_search_output",
    }
)
# event_msg types that carry nothing the index needs (or duplicate a response item)
IGNORED_EVENTS = frozenset(
    {
        "token_count",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "agent_reasoning_section_break",
        "agent_message_delta",
        "agent_reasoning_delta",
        "task_started",
        "turn_started",
        "session_configured",
        "exec_command_begin",
        "exec_command_output_delta",
        "exec_approval_request",
        "apply_patch_approval_request",
        "patch_apply_begin",
        "web_search_begin",
        "mcp_tool_call_begin",
        "mcp_tool_call_end",
        "mcp_list_tools_response",
        "view_image_tool_call",
        "context_compacted",
        "item_started",
        "plan_update",
        "turn_diff",
        "background_event",
        "error",
        "stream_error",
        "warning",
        "entered_review_mode",
        "exited_review_mode",
        "shutdown_complete",
        "user_message_delta",
        "get_history_entry_response",
    }
)
# the start of `role=user` texts that Codex injects (legacy files have no events to tell them apart)
INJECTED_USER_PREFIXES = (
    "<user_instructions>",
    "<environment_context>",
    "# AGENTS.md instructions for",
    "<INSTRUCTIONS>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<permissions instructions>",
    "<collaboration_mode>",
    "<skill>",
)


def _unread_lines() -> re.Pattern[bytes]:
    """The start of a line that holds an ignored event, an unindexed response item (envelope or
    legacy), or a legacy `{"record_type":"state"}` marker, as Codex writes them (compact JSON,
    `timestamp` first): about a third of a rollout's lines, and most of its reasoning bytes,
    which the reader then never decodes (docs/sessions.md, "Lines passed over unread")."""

    def one_of(names: frozenset[str]) -> str:
        return "|".join(re.escape(name) for name in sorted(names))

    events, items = one_of(IGNORED_EVENTS), one_of(UNINDEXED_ITEMS)
    # shared starts are written once: the regex engine tries alternatives one after the other,
    # so an envelope's timestamp is scanned once per line, not once per kind of envelope
    envelope = (  # Codex 0.171 writes an `ordinal` between the two
        r'timestamp":"[^"\\]*",(?:"ordinal":[0-9]+,)?"type":"(?:'
        rf'event_msg","payload":\{{"type":"(?:{events})"'
        rf'|response_item","payload":\{{"type":"(?:{items})")'
    )
    starts = (
        envelope,
        rf'type":"(?:{items})",',  # a legacy item
        r'record_type":"state"\}\r?\Z',  # the whole line
    )
    return re.compile((r'\{"(?:' + "|".join(starts) + ")").encode())  # every start is `{"`


UNREAD_LINES = _unread_lines()


class CodexAdapter:
    provider: ClassVar[str] = "codex"
    unread_lines: ClassVar[re.Pattern[bytes] | None] = UNREAD_LINES

    def default_roots(self) -> list[Path]:
        return default_roots(self.provider)

    def discover(self, root: Path, *, newest_first: bool = False) -> Iterator[str | Unreadable]:
        if root.is_file():
            if root.name.endswith(".jsonl"):
                yield str(root)
            return
        if not root.is_dir():
            return
        # Codex names rollouts rollout-*.jsonl; copies and exports keep other names, so every
        # *.jsonl under a sessions root counts, except the prompt history Codex keeps beside it
        yield from jsonl_files(root, skip_names=("history.jsonl",), newest_first=newest_first)

    def new_state(self, path: Path) -> dict[str, Any]:
        return {
            "v": STATE_VERSION,
            "session_id": None,  # provider session id, once known
            "model": None,
            "cwd": None,
            "asst_from_event": 0,  # agent_message events emitted, their item twin not yet seen
            "asst_from_item": 0,  # assistant items emitted, their event twin not yet seen
            "prompt_twin": None,  # [source, digest] of the prompt whose twin may follow
            "web_pending": [],  # digests of web_search_end actions whose item twin is pending
            "calls": {},  # call_id -> 1 for calls seen (bounded, oldest dropped)
            "results": {},  # call_id -> 1 if its result was conclusive (exit code or error flag)
            "unknown": {},  # unknown record kind -> count
        }

    def parse(self, record: Any, line: int, state: dict[str, Any]) -> list[Event]:
        return parse_guarded(_Parser, record, line, state)


def unknown_counts(state: dict[str, Any]) -> dict[str, int]:
    """How many records of each unknown kind the file had so far (one diagnostic is emitted per
    kind, at its first occurrence)."""
    return dict(state.get("unknown") or {})


class _Parser(RecordParser):
    # ---- dispatch -----------------------------------------------------------------------------

    def handle(self, record: Any) -> None:
        """One record; a record this adapter cannot read is a `bad-record` diagnostic and
        nothing else (events it started to produce are dropped)."""
        try:
            self.record(record)
        except BadRecord as exc:
            self.out.clear()
            self.bad(str(exc))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            self.out.clear()
            self.bad(f"{type(exc).__name__}: {exc}")

    def record(self, record: Any) -> None:
        if not isinstance(record, dict):
            raise BadRecord(f"a record is an object, not {type(record).__name__}")
        kind = record.get("type")
        if "payload" in record and isinstance(kind, str):
            self.envelope(kind, record["payload"], _str(record.get("timestamp")))
        elif "record_type" in record:
            if record["record_type"] != "state":
                self.unknown(f"record_type:{record['record_type']}")
        elif kind in SKIPPED_TYPES:
            return
        elif isinstance(kind, str):
            if kind in ITEM_TYPES:
                self.item(kind, record, None, legacy=True)
            else:
                self.unknown(f"legacy:{kind}")
        elif kind is None and isinstance(record.get("id"), str) and "timestamp" in record:
            self.legacy_header(record)
        else:
            raise BadRecord("neither an envelope, a legacy item nor a legacy header")

    def envelope(self, kind: str, payload: Any, at: str | None) -> None:
        if kind in SKIPPED_TYPES:
            return
        if kind not in ENVELOPE_TYPES:
            self.unknown(kind)
            return
        if not isinstance(payload, dict):
            raise BadRecord(f"{kind} payload is {type(payload).__name__}, not an object")
        # most frequent kinds first (each test compares two strings)
        if kind == "response_item":
            item_type = payload.get("type")
            if not isinstance(item_type, str):
                raise BadRecord("response_item without a type")
            if item_type in ITEM_TYPES:
                self.item(item_type, payload, at, legacy=False)
            else:
                self.unknown(f"response_item:{item_type}")
        elif kind == "event_msg":
            event_type = payload.get("type")
            if not isinstance(event_type, str):
                raise BadRecord("event_msg without a type")
            self.event(event_type, payload, at)
        elif kind == "turn_context":
            self.settings(payload.get("model"), payload.get("cwd"))
        elif kind == "session_meta":
            self.session_meta(payload, at)
        # compacted (replacement_history re-lists old items) and world_state: nothing to index

    def unknown(self, kind: str) -> None:
        counts: dict[str, int] = self.st.setdefault("unknown", {})
        if kind in counts:
            counts[kind] += 1
            return
        if len(counts) < MAX_UNKNOWN_KINDS:
            counts[kind] = 1
        self.out.append(
            Diagnostic("unknown-record", f"line {self.line}: unknown record {kind!r}", self.line)
        )

    # ---- metadata -----------------------------------------------------------------------------

    def session_meta(self, payload: dict[str, Any], at: str | None) -> None:
        session_id = _str(payload.get("id")) or _str(payload.get("session_id"))
        if self.st.get("session_id") is not None:
            return  # a repeated session_meta (resume/fork copy): the first one names the file
        if session_id is None:
            raise BadRecord("session_meta without an id")
        self.st["session_id"] = session_id
        cwd = _str(payload.get("cwd"))
        self.st["cwd"] = cwd
        git = _git_facts(payload.get("git"))
        self.out.append(
            SessionMeta(
                provider_session_id=session_id,
                cwd=cwd,
                git_branch=git.get("branch"),
                git_remote=git.get("remote"),
                git_commit=git.get("commit"),
                client_version=_str(payload.get("cli_version")),
                started_at=_str(payload.get("timestamp")) or at,
                parent_session_id=_parent_session(payload),
            )
        )
        base = payload.get("history_base")
        if isinstance(base, dict):
            thread, end = _str(base.get("thread_id")), base.get("end_ordinal_exclusive")
            if thread and isinstance(end, int) and not isinstance(end, bool) and end >= 0:
                self.out.append(HistoryCut(thread, end, at))

    def legacy_header(self, record: dict[str, Any]) -> None:
        if self.st.get("session_id") is not None:
            return
        self.st["session_id"] = record["id"]
        git = _git_facts(record.get("git"))
        self.out.append(
            SessionMeta(
                provider_session_id=record["id"],
                git_branch=git.get("branch"),
                git_remote=git.get("remote"),
                git_commit=git.get("commit"),
                started_at=_str(record.get("timestamp")),
            )
        )

    def settings(self, model: Any, cwd: Any) -> None:
        """turn_context / thread_settings_applied: a SessionMeta when model or cwd change."""
        model, cwd = _str(model), _str(cwd)
        changed_model = model is not None and model != self.st.get("model")
        changed_cwd = cwd is not None and cwd != self.st.get("cwd")
        if changed_model:
            self.st["model"] = model
        if changed_cwd:
            self.st["cwd"] = cwd
        if changed_model or changed_cwd:
            self.out.append(
                SessionMeta(
                    model=model if changed_model else None, cwd=cwd if changed_cwd else None
                )
            )

    # ---- response items -----------------------------------------------------------------------

    def item(self, kind: str, item: dict[str, Any], at: str | None, legacy: bool) -> None:
        if kind in UNINDEXED_ITEMS:
            return
        if kind == "message":
            self.message(item, at, legacy)
        elif kind in ("function_call", "custom_tool_call"):
            self.tool_call(kind, item, at)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call_id = _require_str(item, "call_id")
            text, exit_code, is_error = _read_output(item.get("output"))
            self.result(call_id, text, exit_code, is_error, at)
        elif kind == "local_shell_call":
            self.local_shell_call(item, at)
        elif kind == "web_search_call":
            self.web_search_item(item, at)

    def message(self, item: dict[str, Any], at: str | None, legacy: bool) -> None:
        role = item.get("role")
        if not isinstance(role, str):
            raise BadRecord("message without a role")
        text = _content_text(item.get("content"))
        if role == "assistant":
            if not text:
                return
            if self.st.get("asst_from_event", 0) > 0:
                self.st["asst_from_event"] -= 1  # the agent_message twin was emitted
                return
            self.st["asst_from_item"] = min(self.st.get("asst_from_item", 0) + 1, MAX_PENDING)
            self.out.append(AssistantText(text, at))
        elif role == "user" and legacy:
            stripped = text.lstrip()
            if stripped.startswith("<environment_context>"):
                cwd = _tag_content(stripped, "cwd")
                if cwd is not None and self.st.get("cwd") is None:
                    self.st["cwd"] = cwd.strip()
                    self.out.append(SessionMeta(cwd=self.st["cwd"]))
                return
            if not stripped or stripped.startswith(INJECTED_USER_PREFIXES):
                return
            self.user_turn(text, at)
        # envelope role=user items (event_msg/user_message is the authority), developer, system

    def prompt(self, text: str, at: str | None, source: str) -> None:
        """A human prompt from `source` ("event" or "item"), unless it is the twin of the prompt
        the other source just gave."""
        twin = self.st.get("prompt_twin")
        key = _digest(text)
        if twin is not None and twin[0] != source and twin[1] == key:
            self.st["prompt_twin"] = None
            return
        self.user_turn(text, at)
        self.st["prompt_twin"] = [source, key]

    def user_turn(self, text: str, at: str | None) -> None:
        self.st["asst_from_event"] = 0
        self.st["asst_from_item"] = 0
        self.st["web_pending"] = []
        self.out.append(UserTurn(text, at))

    def tool_call(self, kind: str, item: dict[str, Any], at: str | None) -> None:
        call_id = _require_str(item, "call_id")
        name = _require_str(item, "name")
        namespace = item.get("namespace")  # 0.171: an MCP tool is `{namespace: mcp__SERVER, name}`
        if isinstance(namespace, str) and namespace.startswith("mcp__"):
            name = f"{namespace}__{name}"  # named as Claude Code names it: mcp__SERVER__TOOL
        if kind == "function_call":
            raw = item.get("arguments")
            arguments: Any = _json_or_raw(raw) if isinstance(raw, str) else raw
        else:
            arguments = item.get("input")
        self.remember("calls", call_id, 1)
        self.out.append(_classify(call_id, name, arguments, at))

    def local_shell_call(self, item: dict[str, Any], at: str | None) -> None:
        call_id = _str(item.get("call_id")) or _str(item.get("id"))
        if call_id is None:
            raise BadRecord("local_shell_call without call_id")
        action = item.get("action")
        argv = action.get("command") if isinstance(action, dict) else None
        self.remember("calls", call_id, 1)
        self.out.append(
            ToolCall(call_id, "local_shell", "shell", action, at, command=_command_line(argv))
        )

    def web_search_item(self, item: dict[str, Any], at: str | None) -> None:
        action = item.get("action")
        pending: list[str] = self.st.setdefault("web_pending", [])
        digest = _digest(action)
        if digest in pending:
            pending.remove(digest)  # already emitted from its web_search_end event
            return
        call_id = _str(item.get("id")) or f"web_search:{self.line}"
        self.remember("calls", call_id, 1)
        self.out.append(ToolCall(call_id, "web_search", "web", action, at))
        status = _str(item.get("status"))
        if status in ("completed", "failed"):
            self.remember("results", call_id, 0)
            self.out.append(ToolResult(call_id, "", None, status == "failed", at))

    # ---- events -------------------------------------------------------------------------------

    def event(self, kind: str, payload: dict[str, Any], at: str | None) -> None:
        if kind in IGNORED_EVENTS:  # most events: one set lookup, not a test per handled kind
            return
        if kind == "user_message":
            message = payload.get("message")
            if message is not None and not isinstance(message, str):
                raise BadRecord("user_message.message is not a string")
            parts = [message] if message else []
            for image in _list(payload.get("images")):
                parts.append(_image_placeholder(image))
            for image in _list(payload.get("local_images")):
                parts.append(_image_placeholder(image))
            if parts:
                self.prompt("\n".join(parts), at, "event")
        elif kind == "item_completed":
            item = payload.get("item")
            if not isinstance(item, dict):
                return
            item_type = item.get("type")
            if item_type == "UserMessage":
                text = _content_text(item.get("content"))
                if text:
                    self.prompt(text, at, "item")
            elif item_type == "McpToolCall":
                self.mcp_tool_call(item, at)
        elif kind == "agent_message":
            message = payload.get("message")
            if not isinstance(message, str):
                raise BadRecord("agent_message.message is not a string")
            if not message:
                return
            if self.st.get("asst_from_item", 0) > 0:
                self.st["asst_from_item"] -= 1
                return
            self.st["asst_from_event"] = min(self.st.get("asst_from_event", 0) + 1, MAX_PENDING)
            self.out.append(AssistantText(message, at))
        elif kind in ("task_complete", "turn_complete"):
            self.st["prompt_twin"] = None
            self.out.append(TurnEnd(at))
        elif kind == "turn_aborted":
            self.st["prompt_twin"] = None
            self.out.append(TurnEnd(at, aborted=True))
        elif kind == "thread_rolled_back":
            count = payload.get("num_turns")
            if not isinstance(count, int) or isinstance(count, bool) or count < 1:
                raise BadRecord("thread_rolled_back without a positive num_turns")
            self.out.append(TurnsRolledBack(count, at))
        elif kind == "exec_command_end":
            self.exec_command_end(payload, at)
        elif kind == "patch_apply_end":
            self.patch_apply_end(payload, at)
        elif kind == "web_search_end":
            self.web_search_end(payload, at)
        elif kind == "thread_settings_applied":
            settings = payload.get("thread_settings")
            if isinstance(settings, dict):
                self.settings(settings.get("model"), settings.get("cwd"))
        elif kind == "thread_name_updated":
            title = _str(payload.get("thread_name")) or _str(payload.get("name"))
            if title:
                self.out.append(SessionMeta(title=title))
        elif kind not in SKIPPED_TYPES:
            self.unknown(f"event_msg:{kind}")

    def mcp_tool_call(self, item: dict[str, Any], at: str | None) -> None:
        """0.171 `item_completed{item: McpToolCall}`: the call's outcome (`status`,
        `result.isError`, `error`), written before the `function_call_output` of the same call
        id, which states none (`Wall time: …`). A call not seen (no `function_call`) gets a
        synthetic one."""
        call_id = _require_str(item, "id")
        if call_id not in self.st.get("calls", {}):
            server, tool = _str(item.get("server")), _str(item.get("tool"))
            name = f"mcp__{server}__{tool}" if server and tool else tool or "mcp_tool_call"
            self.remember("calls", call_id, 1)
            self.out.append(ToolCall(call_id, name, "mcp", item.get("arguments"), at))
        text, is_error = _mcp_outcome(item)
        if is_error is not None:  # still running: the function_call_output will tell
            self.result(call_id, text, None, is_error, at)

    def exec_command_end(self, payload: dict[str, Any], at: str | None) -> None:
        call_id = _require_str(payload, "call_id")
        argv = payload.get("command")
        if call_id not in self.st.get("calls", {}):
            self.remember("calls", call_id, 1)
            self.out.append(
                ToolCall(
                    call_id,
                    "exec_command",
                    "shell",
                    {"command": argv, "cwd": payload.get("cwd"), "source": payload.get("source")},
                    at,
                    command=_command_line(argv),
                )
            )
        exit_code = payload.get("exit_code")
        exit_code = exit_code if isinstance(exit_code, int) else None
        text = payload.get("aggregated_output")
        if not isinstance(text, str) or not text:
            text = _joined_streams(payload)
        failed = payload.get("status") == "failed"
        is_error: bool | None = (exit_code != 0 or failed) if exit_code is not None else None
        if failed:
            is_error = True
        self.result(call_id, text, exit_code, is_error, at)

    def patch_apply_end(self, payload: dict[str, Any], at: str | None) -> None:
        call_id = _require_str(payload, "call_id")
        changes = payload.get("changes")
        if call_id not in self.st.get("calls", {}):
            paths: dict[str, None] = {}
            summary = []
            if isinstance(changes, dict):
                for path, change in changes.items():
                    paths.setdefault(path, None)
                    change_type = change.get("type") if isinstance(change, dict) else None
                    move = _str(change.get("move_path")) if isinstance(change, dict) else None
                    if move:
                        paths.setdefault(move, None)
                    summary.append({"path": path, "type": change_type, "move_path": move})
            self.remember("calls", call_id, 1)
            self.out.append(
                ToolCall(
                    call_id,
                    "apply_patch",
                    "edit",
                    {"changes": summary},
                    at,
                    paths_written=list(paths),
                )
            )
        success = payload.get("success")
        text = _joined_streams(payload)
        is_error = (not success) if isinstance(success, bool) else None
        self.result(call_id, text, None, is_error, at)

    def web_search_end(self, payload: dict[str, Any], at: str | None) -> None:
        call_id = _require_str(payload, "call_id")
        action = payload.get("action")
        pending: list[str] = self.st.setdefault("web_pending", [])
        pending.append(_digest(action))
        del pending[:-MAX_PENDING]
        if call_id in self.st.get("calls", {}):
            return
        self.remember("calls", call_id, 1)
        self.out.append(
            ToolCall(
                call_id, "web_search", "web", {"query": payload.get("query"), "action": action}, at
            )
        )
        self.remember("results", call_id, 0)
        self.out.append(ToolResult(call_id, "", None, False, at))

    # ---- results ------------------------------------------------------------------------------

    def result(
        self, call_id: str, text: str, exit_code: int | None, is_error: bool | None, at: str | None
    ) -> None:
        results: dict[str, int] = self.st.setdefault("results", {})
        previous = results.get(call_id)
        conclusive = exit_code is not None or is_error is not None
        if previous is not None and (previous == 1 or not conclusive):
            return  # the first result wins, unless it was inconclusive and this one is not
        self.remember("results", call_id, 1 if conclusive else 0)
        self.out.append(ToolResult(call_id, text, exit_code, is_error, at))

    def remember(self, key: str, call_id: str, value: int) -> None:
        table: dict[str, int] = self.st.setdefault(key, {})
        table.pop(call_id, None)
        table[call_id] = value
        while len(table) > MAX_TRACKED_CALLS:
            del table[next(iter(table))]
