"""Bearer tokens of `org serve` and their rate limit (docs/org.md "Serving: `teamlore org serve`").

A token is 32 random bytes, URL-safe, shown once by `org token create`; the store keeps only its
SHA-256 (a token has full entropy, so a plain hash is enough: there is nothing to brute-force a
salt against).
"""

from __future__ import annotations

import hashlib
import re
import secrets

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
