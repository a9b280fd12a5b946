"""End of input is not the end of the session: answer every request read before stdin closed.

The SDK's dispatcher cancels the handlers still running when its read stream ends. A client
that writes its requests and closes stdin (`printf '…' | teamlore mcp`, a script, an agent
harness shutting down) still reads stdout, and a call cancelled there goes unanswered. So the
server's inbox stays open after stdin ends until every request it forwarded has been answered,
and only then does the dispatcher see the end.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage


class UnansweredRequests:
    """The ids of requests forwarded to the dispatcher and not yet answered, as the SDK
    correlates them (`coerce_request_id`: `"5"` and `5` are one id, so a cancel naming either
    settles the request)."""

    def __init__(self) -> None:
        self._waiting: Counter[str | int] = Counter()
        self._changed = anyio.Event()

    def forwarded(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, types.JSONRPCRequest):
            self._waiting[coerce_request_id(message.id)] += 1
        elif isinstance(message, types.JSONRPCNotification) and message.method == (
            "notifications/cancelled"
        ):
            # the SDK never answers a request its client cancelled
            self._settle((message.params or {}).get("requestId"))

    def written(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._settle(message.id)

    async def all_answered(self) -> None:
        while +self._waiting:
            await self._changed.wait()

    def _settle(self, request_id: object) -> None:
        if not isinstance(request_id, str | int):
            return
        request_id = coerce_request_id(request_id)
        if self._waiting[request_id] > 0:
            self._waiting[request_id] -= 1
            self._changed.set()
            self._changed = anyio.Event()


class ObservedWrites:
    """The server's write stream, telling `requests` of each answer it carries."""

    def __init__(self, stream: Any, requests: UnansweredRequests) -> None:
        self._stream = stream
        self._requests = requests

    async def send(self, item: SessionMessage) -> None:
        await self._stream.send(item)
        self._requests.written(item)

    async def __aenter__(self) -> ObservedWrites:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        result: bool | None = await self._stream.__aexit__(*exc_info)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
