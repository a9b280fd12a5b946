"""A `ModelClient` for OpenAI-compatible HTTP endpoints (Chat Completions and Responses).

Plain HTTP over httpx2 rather than the `openai` SDK: teamlore sends two endpoints' worth of JSON
and needs exact control of retries (one policy, not the SDK's stacked on ours), of what an error
message may contain (never the key, never the provider's body text) and of the response size.

Behaviour:
- `POST {base_url}/chat/completions` (api="chat", the default) or `POST {base_url}/responses`
  (api="responses", sent with `store: false`), `Authorization: Bearer <key>` when there is a key.
- Retries on 429, 5xx and connection errors: up to `max_retries` extra attempts, exponential
  backoff with jitter, `Retry-After` / `retry-after-ms` honoured (capped).
- 401/403 → MODEL_AUTH_FAILED (never retried); 429 after the retries → MODEL_RATE_LIMITED;
  5xx or connection failure after the retries → MODEL_UNAVAILABLE; no answer within
  `timeout_s` → MODEL_TIMEOUT (not retried: the caller's queue decides); other 4xx →
  MODEL_REQUEST_REJECTED; a body that is not the expected JSON, is empty, is cut by the length
  limit, or larger than 1 MiB (`max_response_bytes`) → MODEL_BAD_RESPONSE.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx2
from pydantic import SecretStr

from teamlore import __version__
from teamlore.core import errors
from teamlore.models.base import (
    ModelError,
    ModelRequest,
    ModelResponse,
    Usage,
    model_error,
    without_code_fence,
)
from teamlore.models.profiles import ApiKind, ModelProfile, normalize_base_url

log = logging.getLogger("teamlore.models")

MAX_RESPONSE_BYTES = 1024 * 1024
# error.code values an endpoint may send that are safe and useful to pass on (never its message)
KNOWN_ERROR_CODES = frozenset(
    {
        "invalid_api_key",
        "model_not_found",
        "context_length_exceeded",
        "insufficient_quota",
        "invalid_json_schema",
        "unsupported_parameter",
        "rate_limit_exceeded",
    }
)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait between attempts.

    The n-th retry waits `min(max_delay_s, base_delay_s * 2**n)` scaled by a random factor in
    [0.5, 1.0] (jitter), unless the endpoint says how long with `Retry-After`; that is honoured up
    to `max_retry_after_s`.
    """

    max_retries: int = 2
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    max_retry_after_s: float = 60.0

    def backoff(self, retry_index: int, rng: Callable[[], float] = random.random) -> float:
        ceiling = min(self.max_delay_s, self.base_delay_s * (2**retry_index))
        return float(ceiling * (0.5 + 0.5 * rng()))


def parse_retry_after(headers: httpx2.Headers, now: datetime | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `Retry-After` (seconds or an HTTP-date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            value = float(millis) / 1000
            return value if value >= 0 else None
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        seconds = float(raw)
        return seconds if seconds >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class OpenAICompatClient:
    """Talks to one OpenAI-compatible endpoint with one model. Thread-safe; reuse it."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | SecretStr | None,
        api: ApiKind = "chat",
        timeout_s: float = 60.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx2.BaseTransport | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        self.max_response_bytes = max_response_bytes
        self._model = model
        self.api: ApiKind = api
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self._key = SecretStr(api_key) if isinstance(api_key, str) else api_key
        self._sleep = sleep
        self._http = httpx2.Client(
            timeout=httpx2.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
            transport=transport,
            follow_redirects=False,
        )

    @classmethod
    def from_profile(cls, profile: ModelProfile, **overrides: Any) -> OpenAICompatClient:
        options: dict[str, Any] = {
            "base_url": profile.base_url,
            "model": profile.model,
            "api_key": profile.api_key,
            "api": profile.api,
            "timeout_s": profile.timeout_s,
            "retry": RetryPolicy(max_retries=profile.max_retries),
        }
        options.update(overrides)
        return cls(**options)

    @property
    def model(self) -> str:
        return self._model

    def __repr__(self) -> str:
        return (
            f"OpenAICompatClient(base_url={self.base_url!r}, model={self._model!r}, "
            f"api={self.api!r})"
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> OpenAICompatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- request ---------------------------------------------------------------------------

    def endpoint(self) -> str:
        return f"{self.base_url}/{'chat/completions' if self.api == 'chat' else 'responses'}"

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact JSON body sent for `request` (public so callers can size or log it)."""
        return (
            _chat_body(self._model, request)
            if self.api == "chat"
            else _responses_body(self._model, request)
        )

    def complete(self, request: ModelRequest) -> ModelResponse:
        payload, attempts = self._exchange(self.endpoint(), self.request_body(request))
        return self._parse(request, payload, attempts)

    def embed(self, texts: Sequence[str], *, dimensions: int | None = None) -> EmbeddingResponse:
        """`POST {base_url}/embeddings` for `texts` (one request): one vector per text, in order.

        Same retries and error codes as `complete`; a body without exactly one numeric vector
        of one common length per input is MODEL_BAD_RESPONSE.
        """
        body: dict[str, Any] = {"model": self._model, "input": list(texts)}
        if dimensions is not None:
            body["dimensions"] = dimensions
        payload, attempts = self._exchange(f"{self.base_url}/embeddings", body)
        try:
            vectors, reported = _parse_embeddings(payload, len(texts))
        except _Unusable as exc:
            raise model_error(
                errors.MODEL_BAD_RESPONSE,
                f"{self.base_url}: {exc.message}",
                reason=exc.reason,
                attempts=attempts,
            ) from None
        return EmbeddingResponse(vectors, reported or self._model, attempts)

    def _exchange(self, url: str, request_body: dict[str, Any]) -> tuple[bytes, int]:
        """POST one JSON body with the retry policy; the 2xx payload and the attempts made."""
        body = json.dumps(request_body, ensure_ascii=False).encode("utf-8")
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"teamlore/{__version__}",
        }
        if self._key is not None:
            headers["Authorization"] = f"Bearer {self._key.get_secret_value()}"
        attempts_allowed = self.retry.max_retries + 1
        for attempt in range(1, attempts_allowed + 1):
            last_try = attempt == attempts_allowed
            try:
                status, response_headers, payload = self._post(url, headers, body)
            except httpx2.TimeoutException as exc:
                if isinstance(exc, httpx2.ConnectTimeout | httpx2.PoolTimeout) and not last_try:
                    self._wait(attempt, None, "connect timeout")
                    continue
                raise model_error(
                    errors.MODEL_TIMEOUT,
                    f"no answer from {self.base_url} within {self.timeout_s:g}s",
                    attempts=attempt,
                ) from None
            except httpx2.TransportError as exc:
                if not last_try:
                    self._wait(attempt, None, f"connection error ({type(exc).__name__})")
                    continue
                raise model_error(
                    errors.MODEL_UNAVAILABLE,
                    f"cannot reach {self.base_url} ({type(exc).__name__}) after {attempt} attempts",
                    attempts=attempt,
                ) from None
            if 200 <= status < 300:
                return payload, attempt
            error_code = _error_code(payload)
            if status in (401, 403):
                raise model_error(
                    errors.MODEL_AUTH_FAILED,
                    f"{self.base_url} refused the API key (HTTP {status}); "
                    "check the key and its permissions"
                    if self._key is not None
                    else f"{self.base_url} asks for an API key (HTTP {status}); "
                    "put one in the profile's api_key_env variable",
                    status=status,
                    errorCode=error_code,
                    attempts=attempt,
                )
            retryable = status == 429 or status >= 500 or status == 408
            if retryable and not last_try:
                self._wait(attempt, parse_retry_after(response_headers), f"HTTP {status}")
                continue
            if status == 429:
                raise model_error(
                    errors.MODEL_RATE_LIMITED,
                    f"{self.base_url} is rate limiting (HTTP 429) after {attempt} attempts",
                    status=status,
                    errorCode=error_code,
                    attempts=attempt,
                )
            if retryable:
                raise model_error(
                    errors.MODEL_UNAVAILABLE,
                    f"{self.base_url} failed with HTTP {status} after {attempt} attempts",
                    status=status,
                    errorCode=error_code,
                    attempts=attempt,
                )
            raise model_error(
                errors.MODEL_REQUEST_REJECTED,
                f"{self.base_url} rejected the request (HTTP {status}"
                + (f", {error_code}" if error_code else "")
                + ")",
                status=status,
                errorCode=error_code,
                attempts=attempt,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _post(
        self, url: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, httpx2.Headers, bytes]:
        request = self._http.build_request("POST", url, headers=headers, content=body)
        response = self._http.send(request, stream=True)
        try:
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > self.max_response_bytes:
                    raise model_error(
                        errors.MODEL_BAD_RESPONSE,
                        f"the response from {self.base_url} exceeds "
                        f"{self.max_response_bytes} bytes",
                        status=response.status_code,
                        reason="too_large",
                        maxResponseBytes=self.max_response_bytes,
                    )
                chunks.append(chunk)
            return response.status_code, response.headers, b"".join(chunks)
        finally:
            response.close()

    def _wait(self, attempt: int, retry_after: float | None, why: str) -> None:
        if retry_after is not None:
            delay = min(retry_after, self.retry.max_retry_after_s)
        else:
            delay = self.retry.backoff(attempt - 1)
        log.info(
            "model call to %s: %s; retry %d/%d in %.2fs",
            self.base_url,
            why,
            attempt,
            self.retry.max_retries,
            delay,
        )
        self._sleep(delay)

    # -- response --------------------------------------------------------------------------

    def _parse(self, request: ModelRequest, payload: bytes, attempts: int) -> ModelResponse:
        usage: Usage | None = None  # what the answer says the call spent, once it is read

        def bad(reason: str, message: str) -> ModelError:
            refusal = model_error(
                errors.MODEL_BAD_RESPONSE,
                f"{self.base_url}: {message}",
                reason=reason,
                attempts=attempts,
            )
            refusal.usage = usage
            return refusal

        if not payload.strip():
            raise bad("empty", "the response body is empty")
        try:
            data = json.loads(payload)
        except (ValueError, UnicodeDecodeError):
            raise bad("invalid_json", "the response body is not JSON") from None
        if not isinstance(data, dict):
            raise bad("invalid_json", "the response body is not a JSON object")
        usage = _reported_usage(data, self.api)
        parse = _parse_chat if self.api == "chat" else _parse_responses
        try:
            text, finish_reason = parse(data)
        except _Unusable as exc:
            raise bad(exc.reason, exc.message) from None
        if request.wants_json:
            # an endpoint that ignores the requested format lets a model fence its JSON: every
            # caller gets the object itself
            text = without_code_fence(text)
            try:
                parsed = json.loads(text)
            except ValueError:
                raise bad("invalid_json_output", "the model output is not valid JSON") from None
            if not isinstance(parsed, dict):
                raise bad("invalid_json_output", "the model output is not a JSON object")
        reported = data.get("model")
        response_id = data.get("id")
        return ModelResponse(
            text=text,
            model=reported if isinstance(reported, str) and reported else self._model,
            usage=usage,
            finish_reason=finish_reason,
            response_id=response_id if isinstance(response_id, str) else None,
            attempts=attempts,
        )


# -- wire formats ---------------------------------------------------------------------------


def _chat_body(model: str, request: ModelRequest) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "max_tokens": request.max_output_tokens,
    }
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.output == "json_object":
        body["response_format"] = {"type": "json_object"}
    elif not isinstance(request.output, str):
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": request.output.name,
                "strict": request.output.strict,
                "schema": request.output.schema_,
            },
        }
    return body


def _responses_body(model: str, request: ModelRequest) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "input": [
            {
                "role": m.role,
                "content": [
                    {
                        "type": "output_text" if m.role == "assistant" else "input_text",
                        "text": m.content,
                    }
                ],
            }
            for m in request.messages
        ],
        "max_output_tokens": request.max_output_tokens,
        "store": False,
    }
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.output == "json_object":
        body["text"] = {"format": {"type": "json_object"}}
    elif not isinstance(request.output, str):
        body["text"] = {
            "format": {
                "type": "json_schema",
                "name": request.output.name,
                "strict": request.output.strict,
                "schema": request.output.schema_,
            }
        }
    return body


@dataclass(frozen=True, slots=True)
class EmbeddingResponse:
    vectors: list[list[float]]  # one per input, in input order
    model: str  # the model id the endpoint reports (else the one requested)
    attempts: int


def _parse_embeddings(payload: bytes, expected: int) -> tuple[list[list[float]], str | None]:
    """The `data[*].embedding` lists of an embeddings answer, ordered by `index`."""
    try:
        data = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        raise _Unusable("invalid_json", "the response body is not JSON") from None
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != expected:
        raise _Unusable("wrong_count", f"the response does not hold {expected} embeddings")
    by_index: dict[int, list[float]] = {}
    for position, item in enumerate(items):
        vector = item.get("embedding") if isinstance(item, dict) else None
        index = _int(item.get("index")) if isinstance(item, dict) else None
        index = position if index is None else index
        if (
            not isinstance(vector, list)
            or not vector
            or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in vector)
        ):
            raise _Unusable("no_embedding", "an embedding is missing or not a list of numbers")
        by_index[index] = [float(x) for x in vector]
    if sorted(by_index) != list(range(expected)):
        raise _Unusable("wrong_count", "the embeddings' indexes do not match the inputs")
    vectors = [by_index[i] for i in range(expected)]
    if len({len(v) for v in vectors}) != 1:
        raise _Unusable("ragged", "the embeddings do not all have the same length")
    reported = data.get("model")
    return vectors, reported if isinstance(reported, str) and reported else None


class _Unusable(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _cost(value: Any) -> float | None:
    """A provider's own figure for what a request cost (OpenRouter's `usage.cost`, in USD)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _reported_usage(data: dict[str, Any], api: str) -> Usage:
    """The `usage` of an answer (Chat Completions' `prompt_tokens`/`completion_tokens`, the
    Responses API's `input_tokens`/`output_tokens`), read whatever the rest of it holds."""
    raw_usage = _dict(data.get("usage"))
    inputs, outputs = (
        ("prompt_tokens", "completion_tokens")
        if api == "chat"
        else ("input_tokens", "output_tokens")
    )
    return Usage(
        input_tokens=_int(raw_usage.get(inputs)),
        output_tokens=_int(raw_usage.get(outputs)),
        total_tokens=_int(raw_usage.get("total_tokens")),
        cost_usd=_cost(raw_usage.get("cost")),
    )


def _parse_chat(data: dict[str, Any]) -> tuple[str, str | None]:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _Unusable("no_choices", "the response has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise _Unusable("no_message", "the first choice has no message")
    finish = choice.get("finish_reason")
    if finish == "length":
        raise _Unusable("output_truncated", "the output was cut at the token limit")
    if message.get("refusal"):
        raise _Unusable("refusal", "the model refused to answer")
    content = message.get("content")
    if isinstance(content, list):  # some compatible servers send content parts
        content = "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    if not isinstance(content, str) or not content.strip():
        if message.get("tool_calls"):
            raise _Unusable("tool_call", "the model answered with a tool call, not text")
        raise _Unusable("empty_output", "the model output is empty")
    return content, finish if isinstance(finish, str) else None


def _parse_responses(data: dict[str, Any]) -> tuple[str, str | None]:
    status = data.get("status")
    if status == "incomplete":
        details = data.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        if reason == "max_output_tokens":
            raise _Unusable("output_truncated", "the output was cut at the token limit")
        raise _Unusable("incomplete", "the response is incomplete")
    if status == "failed":
        raise _Unusable("failed", "the endpoint reports the response as failed")
    output = data.get("output")
    texts: list[str] = []
    if isinstance(output, list):
        for item in output:
            if not isinstance(item, dict) or item.get("type") != "message":
                continue
            for part in item.get("content") or []:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "refusal":
                    raise _Unusable("refusal", "the model refused to answer")
                if part.get("type") == "output_text" and isinstance(part.get("text"), str):
                    texts.append(part["text"])
    elif isinstance(data.get("output_text"), str):
        texts.append(data["output_text"])
    else:
        raise _Unusable("no_output", "the response has no output")
    text = "".join(texts)
    if not text.strip():
        has_calls = isinstance(output, list) and any(
            isinstance(i, dict) and i.get("type") == "function_call" for i in output
        )
        if has_calls:
            raise _Unusable("tool_call", "the model answered with a tool call, not text")
        raise _Unusable("empty_output", "the model output is empty")
    return text, status if isinstance(status, str) else None


def _error_code(payload: bytes) -> str | None:
    """An allow-listed `error.code` from an error body; the body itself is never kept."""
    try:
        data = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    error = data.get("error") if isinstance(data, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) and code in KNOWN_ERROR_CODES else None
