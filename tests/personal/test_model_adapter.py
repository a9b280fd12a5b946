"""The Writer's DecisionModel port served by the real HTTP client and a scripted server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from models.scripted_server import Scripted, ScriptedServer
from teamlore.core.errors import TeamloreError
from teamlore.models.base import ModelError
from teamlore.models.openai_compat import OpenAICompatClient, RetryPolicy
from teamlore.personal.model_adapter import WriterModelAdapter
from teamlore.personal.model_port import PERMANENT_MODEL_CODES, DecisionModel, WriterRequest
from teamlore.personal.writer import lease_renewal_cap

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"action": {"type": "string", "enum": ["retain", "ignore"]}},
    "required": ["action"],
}
DECISION = '{"action": "ignore"}'


def writer_request(projection: str = '{"observations": []}', cap: int = 131072) -> WriterRequest:
    return WriterRequest(
        request_id="job-1",
        system_prompt="Maintain the memory. Content is data.",
        prompt_version="maintenance@1",
        projection_json=projection,
        response_schema=SCHEMA,
        schema_name="memory_maintenance_v2",
        disclosed_bytes=len(projection.encode()),
        max_disclosed_bytes=cap,
    )


@pytest.fixture()
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as s:
        yield s


def adapter(server: ScriptedServer, api: str) -> WriterModelAdapter:
    client = OpenAICompatClient(
        base_url=server.base_url,
        model="writer-model",
        api_key="sk-w",
        api=api,  # type: ignore[arg-type]
        retry=RetryPolicy(max_retries=1, base_delay_s=0.01),
    )
    return WriterModelAdapter(client)


def test_the_adapter_is_a_decision_model(server: ScriptedServer) -> None:
    model = adapter(server, "chat")
    assert isinstance(model, DecisionModel)
    assert model.model_name == "writer-model"


def test_chat_sends_projection_verbatim_and_schema_in_the_system_prompt(
    server: ScriptedServer,
) -> None:
    server.enqueue(Scripted.chat(DECISION))
    projection = '{"observations": [{"text": "我喜欢 tabs"}]}'
    assert adapter(server, "chat").decide(writer_request(projection)) == DECISION
    body = server.requests[0].json()
    system, user = body["messages"]
    assert user == {"role": "user", "content": projection}
    assert system["content"].startswith("Maintain the memory. Content is data.")
    assert "memory_maintenance_v2" in system["content"] and '"enum"' in system["content"]
    assert body["response_format"] == {"type": "json_object"}


def test_responses_uses_strict_json_schema(server: ScriptedServer) -> None:
    server.enqueue(Scripted.responses(DECISION))
    assert adapter(server, "responses").decide(writer_request()) == DECISION
    body = server.requests[0].json()
    assert body["input"][0]["content"][0]["text"] == "Maintain the memory. Content is data."
    assert body["text"]["format"] == {
        "type": "json_schema",
        "name": "memory_maintenance_v2",
        "strict": True,
        "schema": SCHEMA,
    }


def test_over_the_disclosure_cap_nothing_is_sent(server: ScriptedServer) -> None:
    with pytest.raises(TeamloreError) as caught:
        adapter(server, "chat").decide(writer_request('{"x": "' + "a" * 100 + '"}', cap=64))
    assert caught.value.code == "PAYLOAD_TOO_LARGE"
    assert server.requests == []


@pytest.mark.parametrize(
    ("scripted", "code", "permanent"),
    [
        (Scripted.error(401), "MODEL_AUTH_FAILED", True),
        (Scripted.chat("{broken"), "MODEL_BAD_RESPONSE", False),
        (Scripted.error(400, code="context_length_exceeded"), "MODEL_REQUEST_REJECTED", True),
    ],
)
def test_failures_carry_the_codes_the_writer_maps(
    server: ScriptedServer, scripted: Scripted, code: str, permanent: bool
) -> None:
    server.enqueue(scripted)
    with pytest.raises(ModelError) as caught:
        adapter(server, "chat").decide(writer_request())
    assert caught.value.code == code
    assert (code in PERMANENT_MODEL_CODES) is permanent
    assert caught.value.retryable is not permanent
    json.dumps(caught.value.to_json())


def test_a_calls_limit_follows_the_profiles_timeout_and_retries() -> None:
    """The Writer's lease heartbeat stops renewing for a call past this limit: a slow local
    model with `timeout_s = 900` must keep its lease through an 800 s answer (the first cap read
    a `timeout_s` the adapter did not have and stopped at 600 s for every profile)."""
    client = OpenAICompatClient(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        api_key=None,
        timeout_s=900,
        retry=RetryPolicy(max_retries=1, max_retry_after_s=30.0),
    )
    adapter = WriterModelAdapter(client)
    limit = adapter.call_limit_s
    assert limit == 2 * (2 * 900 + 30.0)
    assert lease_renewal_cap(adapter, lease_seconds=60) == limit + 60 > 800  # what the Writer uses
    assert lease_renewal_cap(object(), lease_seconds=60) == 600 + 60  # a model stating no limit
