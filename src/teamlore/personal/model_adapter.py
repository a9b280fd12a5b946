"""The personal-memory Writer's view of a model, on top of any `ModelClient`.

`teamlore.personal.model_port.DecisionModel` asks for `decide(WriterRequest) -> str`. This adapter
sends the Writer's system prompt as the system message and the projection JSON verbatim as the
user message, and asks for one JSON object:

- over the Responses API: structured output with the Writer's JSON Schema (`text.format`
  `json_schema`, strict by default);
- over Chat Completions: `response_format: json_object` (what most OpenAI-compatible servers
  support), with the schema appended to the system prompt so the model still sees it.

It refuses a request whose projection is larger than the Writer's disclosure cap before any byte
leaves the machine (`PAYLOAD_TOO_LARGE`). Model failures surface unchanged as `ModelError`s with
the stable MODEL_* codes the Writer maps to retry or dead-letter.
"""

from __future__ import annotations

import json
from typing import Literal

from teamlore.core import errors
from teamlore.models.base import JsonSchemaFormat, ModelClient, ModelRequest
from teamlore.personal.model_port import DecisionModel, WriterRequest

OutputMode = Literal["auto", "json_schema", "json_object"]

SCHEMA_INSTRUCTION = (
    "\n\nReturn exactly one JSON object conforming to this JSON Schema ({name}):\n{schema}"
)


class WriterModelAdapter:
    """Adapts a `ModelClient` (e.g. `OpenAICompatClient`) to the Writer's `DecisionModel`."""

    def __init__(
        self,
        client: ModelClient,
        *,
        max_output_tokens: int = 4096,
        output: OutputMode = "auto",
        strict_schema: bool = True,
    ) -> None:
        self.client = client
        self.max_output_tokens = max_output_tokens
        self.output = output
        self.strict_schema = strict_schema

    @property
    def model_name(self) -> str:
        return self.client.model

    @property
    def call_limit_s(self) -> float | None:
        """How long one `decide` may take before it is taken for hung, when the client says
        (the Writer's lease heartbeat stops renewing then): each attempt twice its per-read
        timeout (a trickling answer reads many times) plus the longest wait before a retry."""
        timeout = getattr(self.client, "timeout_s", None)
        retry = getattr(self.client, "retry", None)
        if not isinstance(timeout, (int, float)) or retry is None:
            return None
        attempts = int(retry.max_retries) + 1
        longest_wait = max(float(retry.max_delay_s), float(retry.max_retry_after_s))
        return attempts * (2 * float(timeout) + longest_wait)

    def _mode(self) -> Literal["json_schema", "json_object"]:
        if self.output != "auto":
            return self.output
        api = getattr(self.client, "api", "chat")
        return "json_schema" if api == "responses" else "json_object"

    def model_request(self, request: WriterRequest) -> ModelRequest:
        """The `ModelRequest` that `decide` sends (exposed for tests and dry runs)."""
        size = max(len(request.projection_json.encode("utf-8")), request.disclosed_bytes)
        if size > request.max_disclosed_bytes:
            raise errors.TeamloreError(
                errors.PAYLOAD_TOO_LARGE,
                f"the projection is {size} bytes; "
                f"at most {request.max_disclosed_bytes} may be sent to the model",
            )
        if self._mode() == "json_schema":
            return ModelRequest.chat(
                request.system_prompt,
                request.projection_json,
                max_output_tokens=self.max_output_tokens,
                output=JsonSchemaFormat(
                    name=request.schema_name,
                    schema=request.response_schema,
                    strict=self.strict_schema,
                ),
            )
        system = request.system_prompt + SCHEMA_INSTRUCTION.format(
            name=request.schema_name,
            schema=json.dumps(request.response_schema, ensure_ascii=False, sort_keys=True),
        )
        return ModelRequest.chat(
            system,
            request.projection_json,
            max_output_tokens=self.max_output_tokens,
            output="json_object",
        )

    def decide(self, request: WriterRequest) -> str:
        return self.client.complete(self.model_request(request)).text


def _conforms(adapter: WriterModelAdapter) -> DecisionModel:
    return adapter  # mypy checks that the adapter satisfies the Protocol
