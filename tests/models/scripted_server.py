"""A real HTTP server on 127.0.0.1 that replays scripted responses and records requests.

Use it wherever a test needs a model endpoint (the model client, the personal Writer end to end,
the batch runner) without mocks: the code under test opens a real TCP connection and speaks real
HTTP.

    with ScriptedServer() as server:
        server.enqueue(Scripted.json({"choices": [...]}))
        server.enqueue(Scripted(status=429, headers={"Retry-After": "1"}))
        client = OpenAICompatClient(base_url=server.base_url, ...)
        ...
        first = server.requests[0]          # RecordedRequest: method, path, headers, body, at
        assert first.json()["model"] == "m"

Each incoming request takes the next `Scripted` response from the queue (first in, first out);
when the queue is empty the server answers 500 with `{"error": "script exhausted"}` and counts it
in `unexpected` — unless `respond_with(fn)` set a responder, which then answers from the request.
A response may wait `delay` seconds before answering (to provoke client
timeouts) and may carry a raw `body` (to send invalid JSON). `Scripted.chat(text)`,
`Scripted.responses(text)` and `Scripted.embeddings(vectors)` build well-formed Chat Completions,
Responses API and `/v1/embeddings` answers; `embeddings_responder(fn)` answers every embeddings
request from its `input` (a scripted embedding model: `fn(text) -> vector`).

The server runs in a daemon thread (ThreadingHTTPServer, one thread per connection) and binds
port 0, so tests never collide on a port. Timestamps in `RecordedRequest.at` come from
`time.monotonic()`; compare them only loosely (a lower bound), never against wall-clock limits.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Scripted:
    """One scripted answer: status, headers, raw body bytes and a delay before answering."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0

    @classmethod
    def json(
        cls,
        payload: Any,
        status: int = 200,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> Scripted:
        return cls(
            status=status,
            headers={"Content-Type": "application/json", **(headers or {})},
            body=json.dumps(payload).encode("utf-8"),
            delay=delay,
        )

    @classmethod
    def chat(
        cls,
        text: str,
        *,
        model: str = "scripted-model",
        finish_reason: str = "stop",
        usage: tuple[int, int] = (11, 7),
        cost: float | None = None,
        delay: float = 0.0,
    ) -> Scripted:
        """A Chat Completions answer whose first choice says `text`; `cost`: the provider's
        figure for the request in its `usage` (as OpenRouter reports it)."""
        spent: dict[str, Any] = {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        }
        if cost is not None:
            spent["cost"] = cost
        return cls.json(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": finish_reason,
                    }
                ],
                "usage": spent,
            },
            delay=delay,
        )

    @classmethod
    def responses(
        cls,
        text: str,
        *,
        model: str = "scripted-model",
        usage: tuple[int, int] = (11, 7),
        delay: float = 0.0,
    ) -> Scripted:
        """A Responses API answer with one assistant message saying `text`."""
        return cls.json(
            {
                "id": "resp_scripted",
                "object": "response",
                "status": "completed",
                "model": model,
                "output": [
                    {
                        "type": "message",
                        "id": "msg_scripted",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}],
                    }
                ],
                "usage": {
                    "input_tokens": usage[0],
                    "output_tokens": usage[1],
                    "total_tokens": usage[0] + usage[1],
                },
            },
            delay=delay,
        )

    @classmethod
    def embeddings(
        cls, vectors: list[list[float]], *, model: str = "scripted-embedder", delay: float = 0.0
    ) -> Scripted:
        """An `/v1/embeddings` answer with one `data` item per vector, in order."""
        return cls.json(
            {
                "object": "list",
                "model": model,
                "data": [
                    {"object": "embedding", "index": i, "embedding": vector}
                    for i, vector in enumerate(vectors)
                ],
                "usage": {"prompt_tokens": len(vectors), "total_tokens": len(vectors)},
            },
            delay=delay,
        )

    @classmethod
    def error(
        cls, status: int, code: str = "scripted_error", headers: dict[str, str] | None = None
    ) -> Scripted:
        """An OpenAI-style error body with `error.code`."""
        return cls.json(
            {"error": {"message": f"scripted {status}", "type": "error", "code": code}},
            status=status,
            headers=headers,
        )


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    at: float  # time.monotonic() when the request arrived

    def json(self) -> Any:
        return json.loads(self.body)


class ScriptedServer:
    """See the module docstring. Use as a context manager (starts and stops the thread)."""

    def __init__(self, script: list[Scripted] | None = None) -> None:
        self._queue: deque[Scripted] = deque(script or [])
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.unexpected = 0
        self._responder: Callable[[RecordedRequest], Scripted] | None = None
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        # `shutdown` waits for the loop's next poll: at the default 0.5 s every test that
        # started a server spent up to half a second stopping it
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.01,), name="scripted-http", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The API root to give a client, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *responses: Scripted) -> None:
        with self._lock:
            self._queue.extend(responses)

    def respond_with(self, responder: Callable[[RecordedRequest], Scripted]) -> None:
        """Answer every request (once the queue is empty) with `responder(request)`: for a
        model whose answer depends on what it was sent."""
        with self._lock:
            self._responder = responder

    @property
    def pending(self) -> int:
        """Scripted responses not consumed yet."""
        with self._lock:
            return len(self._queue)

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, recorded: RecordedRequest) -> Scripted:
        with self._lock:
            self.requests.append(recorded)
            if self._queue:
                return self._queue.popleft()
            responder = self._responder
            if responder is None:
                self.unexpected += 1
        if responder is not None:
            return responder(recorded)
        return Scripted.json({"error": "script exhausted"}, status=500)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self
        answer: Callable[[RecordedRequest], Scripted] = server._next

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                recorded = RecordedRequest(
                    method=self.command,
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                    at=time.monotonic(),
                )
                scripted = answer(recorded)
                if scripted.delay:
                    time.sleep(scripted.delay)
                try:
                    self.send_response(scripted.status)
                    for name, value in scripted.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(scripted.body)))
                    self.end_headers()
                    self.wfile.write(scripted.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (e.g. it timed out): nothing to tell it

            do_POST = _serve
            do_GET = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        return Handler


def embeddings_responder(
    embed: Callable[[str], list[float]], *, model: str = "scripted-embedder"
) -> Callable[[RecordedRequest], Scripted]:
    """A responder (`ScriptedServer.respond_with`) that embeds each `input` text with `embed`."""

    def respond(request: RecordedRequest) -> Scripted:
        body = request.json()
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        return Scripted.embeddings([embed(text) for text in texts], model=model)

    return respond
