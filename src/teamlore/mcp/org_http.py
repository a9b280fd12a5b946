"""`teamlore org serve`: the org index's read-only MCP tools over Streamable HTTP at `/mcp`.

The MCP server is the stdio server's (`build_server` with capability `org`: the same tools,
results and errors); the SDK's Streamable HTTP session manager carries it, stateless, so every
request stands alone. In front of it (docs/org.md "Serving"):
- every request needs `Authorization: Bearer TOKEN` of a live token (`org token create`); a
  missing, wrong or revoked token gets 401 with no detail and no body;
- each token may make `rate` requests a minute (429 with `Retry-After`, the whole seconds until
  the next is allowed, beyond);
- a database that cannot be reached gets 503 (and one line on stderr), not a traceback;
- anything but loopback needs `allow_remote` (the CLI's `--allow-remote`), and a warning says
  that TLS is a reverse proxy's job; on loopback the SDK's DNS-rebinding check holds the Host.
"""

from __future__ import annotations

import math
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from teamlore.core import errors
from teamlore.mcp.server import build_server
from teamlore.ops.org.stores import org_store
from teamlore.ops.org.tokens import authenticate
from teamlore.ops.registry import OpContext

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
DEFAULT_RATE = 120  # requests per minute and token
REMOTE_WARNING = (
    "warning: org serve listens on {host}, beyond this machine. Every request needs a token, "
    "but this is plain HTTP: put a reverse proxy that terminates TLS in front (docs/org.md)."
)


@dataclass(frozen=True, slots=True)
class ServeOptions:
    host: str
    port: int
    cwd: Path
    home: Path | None = None
    database: str | None = None
    rate: int = DEFAULT_RATE
    allow_remote: bool = False


@dataclass
class RateLimiter:
    """Per-token buckets of `per_minute` requests (one minute's worth), refilled continuously;
    they live in the serving process."""

    per_minute: int
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)  # tokens, last time
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wait(self, name: str, now: float | None = None) -> int:
        """0 when `name` may make a request now (it is counted); else the whole seconds until
        it may (a 429's `Retry-After`)."""
        moment = time.monotonic() if now is None else now
        with self._lock:
            level, last = self._buckets.get(name, (float(self.per_minute), moment))
            level = min(float(self.per_minute), level + (moment - last) * self.per_minute / 60.0)
            missing = round(1.0 - level, 9)  # 0.4 + 0.6 of a request is a whole one
            if missing > 0:
                self._buckets[name] = (level, moment)
                return max(1, math.ceil(round(missing * 60.0 / self.per_minute, 6)))
            self._buckets[name] = (level - 1.0, moment)
            return 0


def check_host(options: ServeOptions) -> None:
    if options.host not in LOOPBACK and not options.allow_remote:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT,
            f"org serve binds to loopback only; to listen on {options.host} give --allow-remote "
            "(and put a TLS reverse proxy in front)",
        )


class _Guarded:
    """The /mcp endpoint: token, then rate limit, then the SDK's transport."""

    def __init__(self, manager: StreamableHTTPSessionManager, options: ServeOptions) -> None:
        self.manager = manager
        self.context = OpContext(cwd=options.cwd, home=options.home, org_database=options.database)
        self.limiter = RateLimiter(options.rate)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        header = _header(scope, b"authorization")
        try:
            name = await anyio.to_thread.run_sync(authenticate, self.context, header)
        except errors.TeamloreError as err:  # the database is down: nobody can be let in
            print(f"teamlore org serve: 503, {err.code}: {err.message}", file=sys.stderr)
            await _refuse(send, 503, [])
            return
        if name is None:
            await _refuse(send, 401, [(b"www-authenticate", b"Bearer")])
            return
        seconds = self.limiter.wait(name)
        if seconds:
            await _refuse(send, 429, [(b"retry-after", str(seconds).encode())])
            return
        await self.manager.handle_request(scope, receive, send)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _refuse(send: Send, status: int, headers: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-length", b"0"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": b""})


def org_app(options: ServeOptions) -> Starlette:
    server = build_server(
        ["org"],
        cwd=options.cwd,
        home=options.home,
        org_database=options.database,
        token_holder=True,  # the server's address is the operator's, not theirs
    )
    loopback = options.host in LOOPBACK
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=loopback,
        allowed_hosts=[f"{h}:*" for h in ("127.0.0.1", "localhost", "[::1]")],
        allowed_origins=[f"http://{h}:*" for h in ("127.0.0.1", "localhost", "[::1]")],
    )
    manager = StreamableHTTPSessionManager(app=server, stateless=True, security_settings=security)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    guarded: Any = _Guarded(manager, options)
    return Starlette(
        routes=[Route("/mcp", endpoint=guarded, methods=["GET", "POST", "DELETE"])],
        lifespan=lifespan,
    )


def serve(options: ServeOptions) -> None:
    """Run until interrupted (stderr says where it listens)."""
    import uvicorn

    check_host(options)
    # a database that cannot be used is said now (exit 1), not at the first request
    org_store(OpContext(cwd=options.cwd, home=options.home, org_database=options.database))
    if options.host not in LOOPBACK:
        print(REMOTE_WARNING.format(host=options.host), file=sys.stderr)
    app = org_app(options)
    sock = listen(options.host, options.port)  # refused before it says it is listening
    shown = f"[{options.host}]" if ":" in options.host else options.host  # an IPv6 address
    print(
        f"teamlore org serve: MCP at http://{shown}:{options.port}/mcp "
        f"(bearer tokens: teamlore org token create NAME)",
        file=sys.stderr,
    )
    uvicorn.Server(
        uvicorn.Config(app, host=options.host, port=options.port, log_level="warning")
    ).run(sockets=[sock])


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port` as uvicorn binds one (address reuse on); else
    ORG_PORT_UNAVAILABLE (left to uvicorn, a failed bind was only logged, and the process
    exited 0)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise _unavailable(host, port, exc) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise _unavailable(host, port, exc) from None
    return sock


def _unavailable(host: str, port: int, exc: OSError) -> errors.TeamloreError:
    why = exc.strerror or str(exc)
    return errors.TeamloreError(
        errors.ORG_PORT_UNAVAILABLE, f"cannot listen on {host}:{port}: {why}", port=port
    )
