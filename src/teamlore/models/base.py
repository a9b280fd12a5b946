"""The model adapter interface: one chat-style request in, one text response out.

Everything in teamlore that talks to a language model (the personal-memory Writer, the optional
team-memory batch runner) goes through a `ModelClient`. A request is a short list of system/user
messages plus output limits; a response is the model's text with the model id and token usage.

Failures are `ModelError`s (a `TeamloreError` with one of the stable `MODEL_*` codes). The codes
say what a caller can do next: `retryable` failures (rate limit, unavailable endpoint, timeout,
unusable answer) may succeed later; the others need a person (credentials, configuration, a
request the endpoint rejects).
"""

from __future__ import annotations

import re
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from teamlore.core import errors
from teamlore.core.shapes.strict import STRICT_FROZEN

Role = Literal["system", "user", "assistant"]

RETRYABLE_CODES = frozenset(
    {"MODEL_RATE_LIMITED", "MODEL_UNAVAILABLE", "MODEL_TIMEOUT", "MODEL_BAD_RESPONSE"}
)


_FENCE = re.compile(r"`{3,}")  # a Markdown code fence: three or more backticks


def without_code_fence(text: str) -> str:
    """A model's answer without the one Markdown code fence (```` ```json ````) models wrap a
    JSON answer in when the endpoint does not enforce the output format: an answer that opens
    with a fence and ends with its closing fence is unwrapped once, whatever fences its JSON
    strings hold. Any other text is returned stripped, for the caller's parser to refuse."""
    stripped = text.strip()
    fence = _FENCE.match(stripped)
    if fence is None or len(stripped) < 2 * len(fence[0]) or not stripped.endswith(fence[0]):
        return stripped
    inner = stripped[len(fence[0]) : -len(fence[0])]
    tag, newline, body = inner.partition("\n")
    if newline and not tag.lstrip().startswith(("{", "[")):
        inner = body  # the fence's language tag (`json`), or nothing
    return inner.strip()


class _Strict(BaseModel):
    model_config = STRICT_FROZEN


class ChatMessage(_Strict):
    role: Role
    content: str


class JsonSchemaFormat(_Strict):
    """Ask for output that conforms to a JSON Schema (structured outputs)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    schema_: dict[str, Any] = Field(alias="schema")
    strict: bool = True


class ModelRequest(_Strict):
    """One model call. `output` chooses plain text, any JSON object, or a JSON Schema."""

    messages: tuple[ChatMessage, ...] = Field(min_length=1)
    max_output_tokens: int = Field(4096, ge=1, le=65536)
    output: Literal["text", "json_object"] | JsonSchemaFormat = "text"
    temperature: float | None = Field(None, ge=0, le=2)

    @classmethod
    def chat(
        cls,
        system: str,
        user: str,
        *,
        max_output_tokens: int = 4096,
        output: Literal["text", "json_object"] | JsonSchemaFormat = "text",
        temperature: float | None = None,
    ) -> ModelRequest:
        """The common shape: one system message, one user message."""
        return cls(
            messages=(
                ChatMessage(role="system", content=system),
                ChatMessage(role="user", content=user),
            ),
            max_output_tokens=max_output_tokens,
            output=output,
            temperature=temperature,
        )

    @property
    def wants_json(self) -> bool:
        return self.output != "text"


class Usage(_Strict):
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    # what the provider says the request cost, in USD, when it says (OpenRouter's `usage.cost`)
    cost_usd: float | None = None


class ModelResponse(_Strict):
    text: str
    model: str = Field(description="the model id the endpoint reports (else the one requested)")
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    response_id: str | None = None
    attempts: int = Field(1, ge=1, description="HTTP attempts made, retries included")


@runtime_checkable
class ModelClient(Protocol):
    """What every model adapter offers."""

    @property
    def model(self) -> str: ...

    def complete(self, request: ModelRequest) -> ModelResponse:
        """Send one request; return the response or raise `ModelError`."""
        ...


class ModelError(errors.TeamloreError):
    """A failed model call: a stable MODEL_* code; message and details never hold secrets."""

    # what the provider's answer says the failed call used and cost (an answer whose text is
    # unusable was still billed); None when no answer with a usage was read
    usage: Usage | None = None

    @property
    def retryable(self) -> bool:
        return self.code in RETRYABLE_CODES


def model_error(error: errors.ErrorCode, message: str, **details: Any) -> ModelError:
    return ModelError(error, message, **{k: v for k, v in details.items() if v is not None})
