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
