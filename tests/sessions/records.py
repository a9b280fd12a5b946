"""Builders for provider session records, the one place tests write them by hand.

Codex rollouts are envelopes `{"timestamp", "type", "payload"}` (docs/sessions.md); Claude Code
transcripts are one object per line with `type`, `sessionId`, `uuid`, `timestamp` and a
`message`. Import as `from records import ...` from tests/sessions, or
`from sessions.records import ...` elsewhere.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

AT = "2026-01-01T00:00:00Z"


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# -- Codex ------------------------------------------------------------------------------------


def codex_record(kind: str, payload: dict[str, Any], at: str = AT) -> dict[str, Any]:
    return {"timestamp": at, "type": kind, "payload": payload}


def codex_meta(session_id: str, *, cwd: str = "/w", at: str = AT, **extra: Any) -> dict[str, Any]:
    return codex_record("session_meta", {"id": session_id, "cwd": cwd, **extra}, at)


def codex_user_message(text: str, at: str = AT) -> dict[str, Any]:
    return codex_record("event_msg", {"type": "user_message", "message": text}, at)


def codex_user_item(text: str, at: str = AT) -> dict[str, Any]:
    content = [{"type": "input_text", "text": text}]
    return codex_record(
        "response_item", {"type": "message", "role": "user", "content": content}, at
    )


def codex_agent_message(text: str, at: str = AT) -> dict[str, Any]:
    return codex_record("event_msg", {"type": "agent_message", "message": text}, at)


def codex_assistant_item(text: str, at: str = AT) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text}]
    payload = {"type": "message", "role": "assistant", "content": content}
    return codex_record("response_item", payload, at)


def codex_function_call(
    call_id: str, name: str, arguments: dict[str, Any], at: str = AT
) -> dict[str, Any]:
    payload = {"type": "function_call", "name": name, "call_id": call_id}
    return codex_record("response_item", {**payload, "arguments": json.dumps(arguments)}, at)


def codex_function_output(call_id: str, output: str, at: str = AT) -> dict[str, Any]:
    payload = {"type": "function_call_output", "call_id": call_id, "output": output}
    return codex_record("response_item", payload, at)


def codex_custom_call(call_id: str, name: str, body: str, at: str = AT) -> dict[str, Any]:
    payload = {"type": "custom_tool_call", "status": "completed", "call_id": call_id}
    return codex_record("response_item", {**payload, "name": name, "input": body}, at)


def codex_custom_output(call_id: str, output: str, at: str = AT) -> dict[str, Any]:
    payload = {"type": "custom_tool_call_output", "call_id": call_id, "output": output}
    return codex_record("response_item", payload, at)


def codex_event(kind: str, at: str = AT, **fields: Any) -> dict[str, Any]:
    return codex_record("event_msg", {"type": kind, **fields}, at)


def codex_turn_aborted(at: str = AT, reason: str = "interrupted") -> dict[str, Any]:
    return codex_event("turn_aborted", at, turn_id="t-aborted", reason=reason)


def codex_rolled_back(num_turns: int, at: str = AT) -> dict[str, Any]:
    return codex_event("thread_rolled_back", at, num_turns=num_turns)


# -- Claude Code ------------------------------------------------------------------------------


def claude_record(
    kind: str, content: Any, *, session_id: str, uuid: str, at: str = AT, **extra: Any
) -> dict[str, Any]:
    role = "assistant" if kind == "assistant" else "user"
    return {
        "type": kind,
        "sessionId": session_id,
        "uuid": uuid,
        "timestamp": at,
        "cwd": extra.pop("cwd", "/w"),
        "message": {"role": role, "content": content},
        **extra,
    }


def claude_assistant(
    text: str,
    *,
    session_id: str,
    uuid: str,
    model: str = "claude-sonnet-4-5",
    message_id: str | None = None,
    at: str = AT,
    **extra: Any,
) -> dict[str, Any]:
    """An assistant text record; `model="<synthetic>"` and `isApiErrorMessage=True` make the
    records Claude Code writes itself (placeholders, API errors)."""
    record = claude_record(
        "assistant", [{"type": "text", "text": text}], session_id=session_id, uuid=uuid, at=at
    )
    record["message"].update({"model": model, "id": message_id or f"msg_{uuid}", "type": "message"})
    record.update(extra)
    return record


def claude_api_error(text: str, *, session_id: str, uuid: str, at: str = AT) -> dict[str, Any]:
    """What Claude Code 2.1.x writes when the API call failed for good."""
    return claude_assistant(
        text,
        session_id=session_id,
        uuid=uuid,
        model="<synthetic>",
        at=at,
        isApiErrorMessage=True,
        error="unknown",
    )
