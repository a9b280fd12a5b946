"""The one seam between the personal-memory Writer and a model.

The Writer builds a `WriterRequest` (our system prompt, the projection as exact JSON text, the
response JSON Schema) and asks a `DecisionModel` for the model's raw text. Everything else —
parsing, validation, guards, commit — stays in the Writer, so a model can never do more than
propose a decision.

An implementation (e.g. the OpenAI-compatible client in `teamlore.models`) sends `system_prompt`
as the system message and `projection_json` verbatim as the user message, asks for a JSON object
conforming to `response_schema` (named `schema_name`), and returns the text it got back. It
reports failures by raising `TeamloreError` with a stable code (the `MODEL_*` codes); the Writer
records the code on the job and retries with backoff, except for the codes in
`PERMANENT_MODEL_CODES`, which dead-letter the job at once.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from teamlore.core.shapes.records import Record

#: Failures that another attempt with the same configuration cannot fix.
PERMANENT_MODEL_CODES = frozenset(
    {"MODEL_NOT_CONFIGURED", "MODEL_AUTH_FAILED", "MODEL_REQUEST_REJECTED"}
)


class WriterRequest(Record, frozen=True):
    """One model request. `disclosed_bytes` is the UTF-8 size of `projection_json`: the user
    data this request discloses, never above `max_disclosed_bytes` (128 KiB by default)."""

    request_id: str
    system_prompt: str
    prompt_version: str
    projection_json: str
    response_schema: dict[str, Any]
    schema_name: str
    disclosed_bytes: int
    max_disclosed_bytes: int


@runtime_checkable
class DecisionModel(Protocol):
    """Anything that turns a `WriterRequest` into the model's raw text answer."""

    @property
    def model_name(self) -> str:
        """The configured model name; recorded in receipts."""
        ...

    def decide(self, request: WriterRequest) -> str:
        """Return the model's raw text (expected: one JSON object). Raise `TeamloreError`."""
        ...
