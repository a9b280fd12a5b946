"""Canonical JSON (RFC 8785 / JCS) and the digests built on it.

Strings are NFC-normalized, object keys sorted by UTF-16 code units, no insignificant whitespace,
integers only within +-2^53. `digest(x) = sha256(canonical(x))` as lowercase hex.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1
# a run of 16 or more hex digits standing alone (a digest or commit hash in an id or a text,
# between separators): what views shorten. Not one inside a word: `0xdeadbeef…` stays whole
LONG_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{16,}(?![0-9A-Za-z])")


class CanonicalizationError(ValueError):
    pass


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be")


def _normalize(value: Any) -> Any:
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise CanonicalizationError(f"integer {value} is outside +-2^53")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CanonicalizationError("NaN and infinities have no JSON form")
        if value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
            return int(value)
        return value
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalizationError(f"object key {key!r} is not a string")
            items.append((unicodedata.normalize("NFC", key), _normalize(item)))
        items.sort(key=lambda kv: _utf16_key(kv[0]))
        return dict(items)
    if isinstance(value, list | tuple):
        return [_normalize(v) for v in value]
    raise CanonicalizationError(f"{type(value).__name__} has no canonical JSON form")


def canonical_json(value: Any) -> bytes:
    # orjson keeps dict insertion order, which _normalize has made the JCS order; it writes
    # shortest round-trip floats, which matches ECMAScript number serialization for the
    # values we produce (digests never hash floats in practice). Imported here: a short command
    # that hashes with `sha256_hex` loads no orjson (docs/architecture.md, "A short CLI process")
    import orjson

    return orjson.dumps(_normalize(value))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    return sha256_hex(canonical_json(value))
