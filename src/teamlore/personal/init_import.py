"""`memory_init` and relayed user turns: payload validation and the stored envelopes.

An agent's `memory_init` payload becomes one observation with `source = agent_import`
(provenance `agent_observation`): what another agent reported about the person, never the
person's own statement. `sourceLabel` is recorded, never trusted as identity. A relayed user turn
(`memory_submit_user_turn`) becomes one observation with `source = mcp_user_submission`.

Contexts are granted at launch; a payload can name one of them, never widen them
(`CONTEXT_UNAVAILABLE`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any, Literal

from teamlore.core import errors
from teamlore.core.shapes.records import Record

MAX_UNDERSTANDING_BYTES = 32_768
MAX_GAPS_BYTES = 4_096
ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
CLIENT_ID_PATTERN = ID_PATTERN
LABEL_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,63}$")
CONTEXT_PATTERN = re.compile(r"^(global|project:[A-Za-z0-9_-]{1,128})$")

Basis = Literal[
    "saved_memories", "chat_history", "current_conversation", "project_context", "mixed", "unknown"
]
BASES: tuple[str, ...] = (
    "saved_memories",
    "chat_history",
    "current_conversation",
    "project_context",
    "mixed",
    "unknown",
)
_INIT_FIELDS = {"importId", "contextId", "sourceLabel", "basis", "understanding", "gaps"}


class InitPayload(Record, frozen=True):
    """What an agent's initial import carries."""

    import_id: str
    context_id: str
    source_label: str
    basis: str
    understanding: str
    gaps: str | None

    def envelope(self) -> str:
        """The stored observation text (fixed key order, so the digest is stable)."""
        data: dict[str, Any] = {
            "kind": "agent_import",
            "sourceLabel": self.source_label,
            "basis": self.basis,
            "understanding": self.understanding,
        }
        if self.gaps is not None:
            data["gaps"] = self.gaps
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def check_client_id(client_id: str) -> str:
    if not isinstance(client_id, str) or not CLIENT_ID_PATTERN.match(client_id):
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, "client id must be [A-Za-z0-9_-]{1,128}"
        )
    return client_id


def check_context(context_id: object, launch_contexts: Collection[str]) -> str:
    """The context must be one the process was launched with (callers pass launch contexts
    already intersected with the allowed scopes)."""
    if (
        not isinstance(context_id, str)
        or not CONTEXT_PATTERN.match(context_id)
        or context_id not in launch_contexts
    ):
        raise errors.TeamloreError(
            errors.CONTEXT_UNAVAILABLE, "that context is not available to this process"
        )
    return context_id


def _byte_size(value: str) -> int:
    return len(value.encode("utf-8"))


def validate_init_payload(
    raw: Mapping[str, object], launch_contexts: Collection[str]
) -> InitPayload:
    extra = set(raw) - _INIT_FIELDS
    if extra:
        raise errors.TeamloreError(errors.INVALID_ARGUMENT, f"unknown field {sorted(extra)[0]!r}")
    import_id = raw.get("importId")
    if not isinstance(import_id, str) or not ID_PATTERN.match(import_id):
        raise errors.TeamloreError(errors.INVALID_IMPORT_ID)
    context_id = check_context(raw.get("contextId"), launch_contexts)
    label = raw.get("sourceLabel")
    if not isinstance(label, str) or not LABEL_PATTERN.match(label):
        raise errors.TeamloreError(
            errors.INVALID_IMPORT_LABEL,
            "sourceLabel must be 1-64 ASCII letters, digits, space or ._:- (no control chars)",
        )
    basis = raw.get("basis")
    if basis not in BASES:
        raise errors.TeamloreError(errors.INVALID_IMPORT_BASIS, f"basis must be one of {BASES}")
    understanding = raw.get("understanding")
    if (
        not isinstance(understanding, str)
        or not understanding.strip()
        or _byte_size(understanding) > MAX_UNDERSTANDING_BYTES
    ):
        raise errors.TeamloreError(
            errors.INVALID_TEXT_SIZE,
            f"understanding must be non-empty and at most {MAX_UNDERSTANDING_BYTES} UTF-8 bytes;"
            " split it instead of truncating",
        )
    gaps = raw.get("gaps")
    if gaps is not None and (not isinstance(gaps, str) or _byte_size(gaps) > MAX_GAPS_BYTES):
        raise errors.TeamloreError(
            errors.INVALID_TEXT_SIZE, f"gaps must be text of at most {MAX_GAPS_BYTES} bytes"
        )
    assert isinstance(basis, str)
    return InitPayload(import_id, context_id, label, basis, understanding, gaps)


def init_namespace(client_id: str, import_id: str) -> tuple[str, str]:
    return "mcp-init:" + json.dumps([client_id, import_id], separators=(",", ":")), import_id


def relay_namespace(
    client_id: str, submission_id: str, conversation_id: str | None
) -> tuple[str, str]:
    scope: list[str] = (
        ["conversation", conversation_id]
        if conversation_id is not None
        else ["submission", submission_id]
    )
    return "mcp:" + json.dumps([client_id, scope], separators=(",", ":")), submission_id


def check_relay_ids(submission_id: object, conversation_id: object) -> None:
    if not isinstance(submission_id, str) or not ID_PATTERN.match(submission_id):
        raise errors.TeamloreError(errors.INVALID_ARGUMENT, "submissionId must be [A-Za-z0-9_-]")
    if conversation_id is not None and (
        not isinstance(conversation_id, str) or not ID_PATTERN.match(conversation_id)
    ):
        raise errors.TeamloreError(errors.INVALID_ARGUMENT, "conversationId must be [A-Za-z0-9_-]")


def check_relay_text(text: object, max_bytes: int) -> str:
    if not isinstance(text, str) or not text.strip() or _byte_size(text) > max_bytes:
        raise errors.TeamloreError(
            errors.INVALID_TEXT_SIZE, f"text must be non-empty and at most {max_bytes} bytes"
        )
    return text
