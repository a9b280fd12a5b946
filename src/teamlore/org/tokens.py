"""Bearer tokens of `org serve` and their rate limit (docs/org.md "Serving: `teamlore org serve`").

A token is 32 random bytes, URL-safe, shown once by `org token create`; the store keeps only its
SHA-256 (a token has full entropy, so a plain hash is enough: there is nothing to brute-force a
salt against).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from urllib.parse import parse_qsl, urlsplit

from teamlore.contracts.formats import ORG_TOKEN_NAME_PATTERN
from teamlore.core import errors

PREFIX = "tlorg_"
TOKEN_NAME = re.compile(ORG_TOKEN_NAME_PATTERN)
MAX_TOKEN_CHARS = 256
# query parameters that carry a secret by their name (`?token=`, `?access_token=`, `?api_key=`)
_SECRET_PARAMETER = re.compile(r"token|key|secret|pass|pwd|auth|sig|credential", re.I)


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


def refuse_credentials_in_url(url: str, token_variable: str) -> None:
    """ORG_URL_HAS_CREDENTIALS when the URL of an org endpoint holds a secret: `install` would
    write it into a client's config file, perhaps a project's that gets committed. The message
    never repeats the URL or a piece of it."""
    where = _credentials_in(url)
    if where is not None:
        raise errors.TeamloreError(
            errors.ORG_URL_HAS_CREDENTIALS,
            f"--org-url holds {where}, which would be written into the client's config file; "
            f"give the URL without it and the token through ${token_variable} "
            "(--org-token-env NAME picks the variable)",
        )


def _credentials_in(url: str) -> str | None:
    parts = urlsplit(url)
    if PREFIX in url:
        return "an org token"
    if "@" in parts.netloc:
        return "a user or password before @"
    names = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True)]
    if any(_SECRET_PARAMETER.search(name) for name in names):
        return "a secret in its query (token=, key=, …)"
    return None
