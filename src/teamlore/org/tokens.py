"""Bearer tokens of `org serve` and their rate limit (docs/org.md "Tokens").

A token is 32 random bytes, URL-safe, shown once by `org token create`; the store keeps only its
SHA-256 (a token has full entropy, so a plain hash is enough: there is nothing to brute-force a
salt against). Each live token may make `rate` requests per minute (a token bucket holding one
minute's worth); the bucket lives in the serving process.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from dataclasses import dataclass, field

PREFIX = "tlorg_"
TOKEN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_TOKEN_CHARS = 256


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def bearer(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer TOKEN` header, or None."""
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() != "bearer" or not value or len(value) > MAX_TOKEN_CHARS:
        return None
    return value


@dataclass
class RateLimiter:
    """Per-token buckets: `per_minute` requests, refilled continuously."""

    per_minute: int
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)  # tokens, last time
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def allow(self, name: str, now: float | None = None) -> bool:
        moment = time.monotonic() if now is None else now
        with self._lock:
            level, last = self._buckets.get(name, (float(self.per_minute), moment))
            level = min(float(self.per_minute), level + (moment - last) * self.per_minute / 60.0)
            if level < 1.0:
                self._buckets[name] = (level, moment)
                return False
            self._buckets[name] = (level - 1.0, moment)
            return True
