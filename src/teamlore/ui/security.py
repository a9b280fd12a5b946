"""Who may talk to the review page: only the person's own browser, on this machine.

- The server listens on 127.0.0.1 only.
- **One-time login token.** `teamlore ui` prints (and opens) a URL carrying a random token. The
  first GET with it gets a session cookie (HttpOnly, SameSite=Strict) and a redirect to the
  same page without the token, always on this server; the token is then spent. A refused request
  carrying it (a POST, a foreign Host or Origin) does not spend it. The spent link opened again
  (a GET) in a browser that holds a valid session redirects to the page; without one it is
  refused. Every other request needs the cookie.
- **DNS rebinding.** A page on another site that rebinds its name to 127.0.0.1 still sends its
  own name in `Host`: only `127.0.0.1:<port>` and `localhost:<port>` are served.
- **Cross-site requests.** A request whose `Origin` is not this server's is refused.
- **CSRF.** Every state-changing form carries a token derived from the session (HMAC with a
  per-process secret); a POST without the right one is refused before anything runs.
- **Content-Security-Policy** allows only this server's own scripts, styles and forms, no
  frames, no inline script; plus nosniff, no referrer to other sites, no caching.

Each refusal answers 401/403 with a stable error code (`core.errors`: `UI_TOKEN_REQUIRED`,
`UI_HOST_REFUSED`, `UI_ORIGIN_REFUSED`, `UI_CSRF_INVALID`) and changes nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import secrets
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from teamlore.core import errors

COOKIE = "teamlore_ui"
CSRF_FIELD = "csrf"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would make forms send `Origin: null`
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass
class Guard:
    """The secrets of one running server: login tokens, sessions and the CSRF key."""

    port: int = 0
    _secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    _login_tokens: set[str] = field(default_factory=set)
    _sessions: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts)

    def issue_login_token(self) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._login_tokens.add(token)
        return token

    def login_url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}?token={self.issue_login_token()}"

    def spend(self, token: str) -> str | None:
        """A new session id for a valid login token (which is then spent), else None."""
        with self._lock:
            match = next((t for t in self._login_tokens if hmac.compare_digest(t, token)), None)
            if match is None:
                return None
            self._login_tokens.discard(match)
            session = secrets.token_urlsafe(32)
            self._sessions.add(session)
            return session

    def valid_session(self, session: str | None) -> bool:
        if not session:
            return False
        with self._lock:
            return any(hmac.compare_digest(s, session) for s in self._sessions)

    def csrf_token(self, session: str) -> str:
        return hmac.new(self._secret, b"csrf\0" + session.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, session: str, value: str | None) -> bool:
        return bool(value) and hmac.compare_digest(self.csrf_token(session), str(value))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def session_of(scope: Scope) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed cookie header is no session
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel else None


async def refuse(send: Send, status: int, error: errors.ErrorCode, detail: str = "") -> None:
    text = detail or error.summary
    body = (
        "<!doctype html><meta charset=utf-8><title>teamlore: refused</title>"
        f"<h1>Refused: {error.code}</h1><p>{html.escape(text)}</p>"
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"x-teamlore-error", error.code.encode()),
                (b"content-length", str(len(body)).encode()),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class GuardMiddleware:
    """Host, Origin and session checks for every request; security headers on every answer."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = (_header(scope, b"host") or "").lower()
        if host not in self.guard.hosts:
            await refuse(send, 403, errors.UI_HOST_REFUSED)
            return
        origin = _header(scope, b"origin")
        if origin is not None and origin.lower() not in self.guard.origins:
            await refuse(send, 403, errors.UI_ORIGIN_REFUSED)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query:
            await self._login(scope, send, query)
            return
        session = session_of(scope)
        if not self.guard.valid_session(session):
            await refuse(send, 401, errors.UI_TOKEN_REQUIRED)
            return
        scope.setdefault("state", {})["session"] = session

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)

    async def _login(self, scope: Scope, send: Send, query: dict[str, str]) -> None:
        # only a successful login spends the token: a POST (or HEAD, …) carrying it is refused
        # and the person's link keeps working
        token = query.pop("token")
        session = self.guard.spend(token) if scope["method"] == "GET" else None
        location = local_location(str(scope.get("path", "/")), urlencode(query))
        if (
            session is None
            and scope["method"] == "GET"
            and self.guard.valid_session(session_of(scope))
        ):
            # the printed link opened again in the browser it logged in: that browser already
            # has a session, so it goes to the page (the link stays spent, nothing is issued)
            await _see_other(send, location)
            return
        if session is None:
            await refuse(
                send, 401, errors.UI_TOKEN_REQUIRED, "this login link was already used or is wrong"
            )
            return
        cookie = f"{COOKIE}={session}; HttpOnly; SameSite=Strict; Path=/"
        await _see_other(send, location, (b"set-cookie", cookie.encode()))


async def _see_other(send: Send, location: str, *headers: tuple[bytes, bytes]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", location.encode()),
                *headers,
                (b"content-length", b"0"),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})


def local_location(path: str, query: str = "") -> str:
    """A `Location` on this server for the (decoded) request path: every byte a browser could
    read as a scheme, a host or a separator is percent-encoded (`\\` → `%5C`, tab, newline),
    and leading slashes collapse to one, so `/%5Cevil.example` and `//evil.example` stay here."""
    encoded = quote(path, safe="/-._~!$&'()*+,;=:@")
    location = "/" + encoded.lstrip("/")
    return f"{location}?{query}" if query else location
