"""The OpenAI-compatible client against a real HTTP server on 127.0.0.1 (no mocks)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from models.scripted_server import Scripted, ScriptedServer
from teamlore.models.base import JsonSchemaFormat, ModelError, ModelRequest, Usage
from teamlore.models.openai_compat import OpenAICompatClient, RetryPolicy, parse_retry_after

KEY = "sk-test-0123456789abcdef-SECRET"
FAST = RetryPolicy(max_retries=2, base_delay_s=0.01, max_delay_s=0.05)


@pytest.fixture()
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as s:
        yield s


def client(server: ScriptedServer, **options: object) -> OpenAICompatClient:
    settings: dict[str, object] = {
        "base_url": server.base_url,
        "model": "gpt-test",
        "api_key": KEY,
        "timeout_s": 5.0,
        "retry": FAST,
    }
    settings.update(options)
    return OpenAICompatClient(**settings)  # type: ignore[arg-type]


def ask(c: OpenAICompatClient, **options: object) -> ModelRequest:
    return ModelRequest.chat("You are terse.", "Say hi.", **options)  # type: ignore[arg-type]


def failure(c: OpenAICompatClient, request: ModelRequest | None = None) -> ModelError:
    with pytest.raises(ModelError) as caught:
        c.complete(request or ask(c))
    return caught.value


def assert_no_key(err: ModelError, caplog: pytest.LogCaptureFixture) -> None:
    assert KEY not in str(err)
    assert KEY not in json.dumps(err.to_json())
    assert KEY not in caplog.text


# -- success ----------------------------------------------------------------------------------


def test_chat_completions_sends_model_messages_and_bearer_key(server: ScriptedServer) -> None:
    server.enqueue(Scripted.chat("hi", model="gpt-test-2025", usage=(12, 3)))
    with client(server) as c:
        response = c.complete(ask(c, max_output_tokens=50))

    assert response.text == "hi"
    assert response.model == "gpt-test-2025"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 3)
    assert response.usage.total_tokens == 15
    assert response.finish_reason == "stop"
    assert response.attempts == 1

    [sent] = server.requests
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["content-type"] == "application/json"
    assert sent.json() == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Say hi."},
        ],
        "max_tokens": 50,
    }


def test_without_a_key_no_authorization_is_sent(server: ScriptedServer) -> None:
    server.enqueue(Scripted.chat("hi"), Scripted.error(401, code="missing_api_key"))
    with client(server, api_key=None) as c:
        assert c.complete(ask(c)).text == "hi"
        err = failure(c)

    assert "authorization" not in server.requests[0].headers
    assert err.code == "MODEL_AUTH_FAILED"
    assert "asks for an API key (HTTP 401)" in err.message
    assert "api_key_env" in err.message


def test_responses_api_sends_input_items_and_does_not_store(server: ScriptedServer) -> None:
    server.enqueue(Scripted.responses('{"ok": true}', usage=(20, 4)))
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    with client(server, api="responses") as c:
        request = ask(c, output=JsonSchemaFormat(name="answer_v1", schema=schema))
        response = c.complete(request)

    assert response.text == '{"ok": true}'
    assert response.usage.input_tokens == 20
    assert response.response_id == "resp_scripted"

    [sent] = server.requests
    assert sent.path == "/v1/responses"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    body = sent.json()
    assert body["model"] == "gpt-test"
    assert body["store"] is False
    assert body["max_output_tokens"] == 4096
    assert body["input"] == [
        {"role": "system", "content": [{"type": "input_text", "text": "You are terse."}]},
        {"role": "user", "content": [{"type": "input_text", "text": "Say hi."}]},
    ]
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "answer_v1", "strict": True, "schema": schema}
    }


def test_a_providers_own_cost_figure_is_kept_and_anything_else_is_not(
    server: ScriptedServer,
) -> None:
    """OpenRouter reports what a request cost in `usage.cost` (USD): the batch runner uses that
    figure (docs/runner.md "What a run spent"); what is not a number of dollars is no figure."""
    responses = json.loads(Scripted.responses("hi").body)
    responses["usage"]["cost"] = 0.0125
    server.enqueue(
        Scripted.chat("hi", cost=0.0042),
        Scripted.json(responses),
        *(Scripted.chat("hi", cost=bad) for bad in (True, -1, "0.1")),  # type: ignore[arg-type]
    )
    with client(server) as c:
        assert c.complete(ask(c)).usage.cost_usd == 0.0042
    with client(server, api="responses") as c:
        assert c.complete(ask(c)).usage.cost_usd == 0.0125
    with client(server) as c:
        assert [c.complete(ask(c)).usage.cost_usd for _ in range(3)] == [None, None, None]


def test_chat_json_object_mode_sets_response_format_and_checks_the_output(
    server: ScriptedServer,
) -> None:
    server.enqueue(Scripted.chat('{"decision": "ignore"}'), Scripted.chat("not json at all"))
    with client(server) as c:
        ok = c.complete(ask(c, output="json_object"))
        err = failure(c, ask(c, output="json_object"))

    assert json.loads(ok.text) == {"decision": "ignore"}
    assert server.requests[0].json()["response_format"] == {"type": "json_object"}
    assert err.code == "MODEL_BAD_RESPONSE"
    assert err.details["reason"] == "invalid_json_output"


def test_json_output_in_one_markdown_fence_is_the_object_itself(server: ScriptedServer) -> None:
    """An endpoint that ignores the requested format lets a model fence its JSON; a string
    value holding a code block of its own does not stop the unwrapping."""
    answer = {"body": "Run:\n```sh\nuv sync\n```\nthen test."}
    server.enqueue(
        Scripted.chat(f"```json\n{json.dumps(answer)}\n```"),
        Scripted.responses(f"```\n{json.dumps(answer)}\n```\n"),
    )
    with client(server) as c:
        chat = c.complete(ask(c, output="json_object"))
    with client(server, api="responses") as c:
        responses = c.complete(ask(c, output="json_object"))

    assert json.loads(chat.text) == json.loads(responses.text) == answer


# -- refusals that are not retried ------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failure_is_not_retried(
    server: ScriptedServer, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.enqueue(Scripted.error(status, code="invalid_api_key"), Scripted.chat("never sent"))
    with client(server) as c:
        err = failure(c)

    assert err.code == "MODEL_AUTH_FAILED"
    assert err.details["status"] == status
    assert err.details["errorCode"] == "invalid_api_key"
    assert not err.retryable
    assert len(server.requests) == 1
    assert server.pending == 1
    assert_no_key(err, caplog)


def test_other_client_errors_are_rejected_without_retry_and_without_provider_text(
    server: ScriptedServer,
) -> None:
    server.enqueue(
        Scripted.json(
            {"error": {"message": f"echo of your key {KEY}", "code": "model_not_found"}},
            status=404,
        )
    )
    with client(server) as c:
        err = failure(c)
    assert err.code == "MODEL_REQUEST_REJECTED"
    assert err.details["errorCode"] == "model_not_found"
    assert "echo" not in err.message and KEY not in str(err.to_json())
    assert len(server.requests) == 1


# -- retries -----------------------------------------------------------------------------------


def test_429_with_retry_after_waits_then_succeeds(
    server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="teamlore.models")
    server.enqueue(Scripted.error(429, headers={"Retry-After": "1"}), Scripted.chat("after wait"))
    waits: list[float] = []
    with client(server, sleep=waits.append) as c:
        response = c.complete(ask(c))

    assert response.text == "after wait"
    assert response.attempts == 2
    first, second = server.requests
    assert second.json() == first.json()
    # Retry-After: 1 was honoured (backoff alone would wait at most 0.05 s)
    assert waits == [1.0]
    assert "HTTP 429" in caplog.text
    assert KEY not in caplog.text


def test_429_on_every_attempt_is_rate_limited(
    server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.enqueue(*[Scripted.error(429, code="rate_limit_exceeded")] * 3)
    with client(server) as c:
        err = failure(c)
    assert err.code == "MODEL_RATE_LIMITED"
    assert err.retryable
    assert err.details["attempts"] == 3
    assert len(server.requests) == 3
    assert_no_key(err, caplog)


def test_5xx_until_retries_are_exhausted_is_unavailable(
    server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.enqueue(*[Scripted.error(500)] * 4, Scripted.chat("too late"))
    with client(server, retry=RetryPolicy(max_retries=3, base_delay_s=0.01)) as c:
        err = failure(c)
    assert err.code == "MODEL_UNAVAILABLE"
    assert err.details["status"] == 500
    assert len(server.requests) == 4  # 1 + max_retries
    assert server.pending == 1
    assert_no_key(err, caplog)


def test_a_503_then_success_recovers(server: ScriptedServer) -> None:
    server.enqueue(Scripted.error(503), Scripted.error(502), Scripted.chat("recovered"))
    with client(server) as c:
        assert c.complete(ask(c)).attempts == 3


def test_connection_refused_is_retried_then_unavailable(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with ScriptedServer() as gone:
        base_url = gone.base_url  # the port is closed once the server stops
    c = OpenAICompatClient(base_url=base_url, model="m", api_key=KEY, retry=FAST)
    err = failure(c)
    assert err.code == "MODEL_UNAVAILABLE"
    assert err.details["attempts"] == 3
    assert caplog.text.count("connection error") == 2
    assert_no_key(err, caplog)


def test_zero_retries_means_one_attempt(server: ScriptedServer) -> None:
    server.enqueue(Scripted.error(500), Scripted.chat("unused"))
    with client(server, retry=RetryPolicy(max_retries=0)) as c:
        assert failure(c).code == "MODEL_UNAVAILABLE"
    assert len(server.requests) == 1


# -- timeouts and bad bodies -------------------------------------------------------------------


def test_slow_answer_is_a_timeout_and_not_retried(
    server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.enqueue(Scripted.chat("too slow", delay=2.0), Scripted.chat("unused"))
    with client(server, timeout_s=0.3) as c:
        err = failure(c)
    assert err.code == "MODEL_TIMEOUT"
    assert err.retryable
    assert len(server.requests) == 1
    assert_no_key(err, caplog)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "invalid_json"),
        (b"", "empty"),
        (b"[1, 2]", "invalid_json"),
        (b'{"choices": []}', "no_choices"),
        (b'{"choices": [{"message": {"role": "assistant", "content": ""}}]}', "empty_output"),
    ],
)
def test_unusable_bodies_are_bad_responses(
    server: ScriptedServer, body: bytes, reason: str
) -> None:
    server.enqueue(Scripted(status=200, headers={"Content-Type": "application/json"}, body=body))
    with client(server) as c:
        err = failure(c)
    assert err.code == "MODEL_BAD_RESPONSE"
    assert err.details["reason"] == reason
    assert len(server.requests) == 1


def test_truncated_output_is_a_bad_response(server: ScriptedServer) -> None:
    server.enqueue(Scripted.chat('{"half": ', finish_reason="length"))
    with client(server) as c:
        assert failure(c).details["reason"] == "output_truncated"


def test_responses_refusal_is_a_bad_response(server: ScriptedServer) -> None:
    server.enqueue(
        Scripted.json(
            {
                "status": "completed",
                "output": [{"type": "message", "content": [{"type": "refusal", "refusal": "no"}]}],
            }
        )
    )
    with client(server, api="responses") as c:
        assert failure(c).details["reason"] == "refusal"


def test_an_unusable_answer_keeps_what_it_says_the_call_used_and_cost(
    server: ScriptedServer,
) -> None:
    """The provider billed the call whatever its text holds: the refusal carries the answer's
    usage; a body that is not JSON has none to carry."""
    responses = json.loads(Scripted.responses('{"half": ').body)
    responses.update(status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    responses["usage"]["cost"] = 0.0125
    server.enqueue(
        Scripted.chat("not json at all", usage=(12, 3), cost=0.0042),
        Scripted.json(responses),
        Scripted(status=200, headers={"Content-Type": "text/html"}, body=b"<html>oops</html>"),
    )
    with client(server) as c:
        unusable = failure(c, ask(c, output="json_object"))
    with client(server, api="responses") as c:
        truncated = failure(c)
    with client(server) as c:
        not_json = failure(c)

    assert unusable.details["reason"] == "invalid_json_output"
    assert unusable.usage == Usage(
        input_tokens=12, output_tokens=3, total_tokens=15, cost_usd=0.0042
    )
    assert truncated.details["reason"] == "output_truncated"
    assert truncated.usage == Usage(
        input_tokens=11, output_tokens=7, total_tokens=18, cost_usd=0.0125
    )
    assert not_json.details["reason"] == "invalid_json" and not_json.usage is None


def test_oversized_body_is_refused(server: ScriptedServer) -> None:
    server.enqueue(Scripted(status=200, body=b"x" * (1024 * 1024 + 1)))
    with client(server) as c:
        assert failure(c).details["reason"] == "too_large"


# -- small parts -------------------------------------------------------------------------------


def test_repr_and_errors_never_show_the_key() -> None:
    c = OpenAICompatClient(base_url="http://127.0.0.1:9/v1", model="m", api_key=KEY)
    assert KEY not in repr(c)
    assert KEY not in repr(vars(c))


def test_retry_after_forms() -> None:
    import httpx2

    assert parse_retry_after(httpx2.Headers({"Retry-After": "3"})) == 3.0
    assert parse_retry_after(httpx2.Headers({"retry-after-ms": "250"})) == 0.25
    assert parse_retry_after(httpx2.Headers({"Retry-After": "soon"})) is None
    assert parse_retry_after(httpx2.Headers({})) is None
    from datetime import UTC, datetime

    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    date = httpx2.Headers({"Retry-After": "Thu, 01 Jan 2026 12:00:05 GMT"})
    assert parse_retry_after(date, now=now) == 5.0


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=4.0)
    assert policy.backoff(0, rng=lambda: 1.0) == 1.0
    assert policy.backoff(1, rng=lambda: 1.0) == 2.0
    assert policy.backoff(5, rng=lambda: 1.0) == 4.0
    assert policy.backoff(1, rng=lambda: 0.0) == 1.0  # jitter keeps at least half
