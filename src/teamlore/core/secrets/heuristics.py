"""The judgement calls of secret scanning: redaction previews and the tests that tell words,
identifiers, placeholders and encoded plain text from random tokens (the entropy thresholds and
the base64 decoder are the rules' table's: shapes.py)."""

from __future__ import annotations

import re
from typing import Literal

from teamlore.core.secrets.shapes import base64_text

SESSION_CONTEXT_WINDOW = 48
# the length of the content-hash suffix of teamlore's slugs (`memory/store/slugs.py`; a test
# keeps the two equal): a slug of words plus such a suffix is an id, not a secret
SLUG_HASH_SUFFIX_LENGTH = 10

Severity = Literal["block", "warn"]

# --- redaction ------------------------------------------------------------------------------


def redact(secret: str, keep: int = 4) -> str:
    """A preview that never reveals the secret: a short head and the length."""
    shown = secret[: min(keep, len(secret) // 4)]
    return f"{shown}…[{len(secret)} chars]"


# --- heuristics -----------------------------------------------------------------------------

_SUBWORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_VOWELS = frozenset("aeiouyAEIOUY")
_CONSONANT_RUN = re.compile(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{5,}")
_HEX_OR_UUID = re.compile(r"[0-9a-fA-F-]+")
_PLACEHOLDER = re.compile(
    r"(?:<[^>]*>|\$\{[^}]*\}|\{\{.*\}\}|\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_(]\S*|\*+|[xX]{3,}|"
    r"\.{3,}|…|null|none|nil|true|false|undefined|redacted|\[redacted\]|"
    r".*(?:your[_-]?|example|placeholder|dummy|changeme|redacted|\{\{.*\}\}).*)",
    re.IGNORECASE,
)
_CODE_REFERENCE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(.*)?|"  # settings.API_KEY, a.b()
    r"[A-Z][A-Z0-9_]*|"  # API_KEY (a variable name)
    r".*[(\[].*"  # calls, subscripts, generic types
)


def _wordish(subword: str) -> bool:
    if subword.isdigit():
        return len(subword) <= 4
    if subword.isupper():
        return len(subword) <= 5
    if len(subword) <= 3:
        return True
    vowels = sum(ch in _VOWELS for ch in subword)
    return vowels / len(subword) >= 0.2 and _CONSONANT_RUN.search(subword) is None


def looks_like_words(token: str) -> bool:
    """Identifiers, slugs and paths made of words (`lastUsedAt`, `src/memory/lint`), as opposed
    to random strings (`Zq8Lr2VwPn5TyKc0MbXa7Hd`)."""
    subwords = _SUBWORD.findall(token)
    if not subwords:
        return False
    average = sum(map(len, subwords)) / len(subwords)
    short = sum(1 for s in subwords if len(s) <= 2) / len(subwords)
    wordish_chars = sum(len(s) for s in subwords if _wordish(s))
    total_chars = sum(map(len, subwords))
    return average >= 3.0 and short <= 0.4 and wordish_chars >= 0.8 * total_chars


def _decodes_to_text(token: str) -> bool:
    """True when `token` is base64 (standard or URL-safe) of readable UTF-8 text."""
    return decoded_text(token) is not None


def decoded_text(token: str) -> str | None:
    """The readable UTF-8 text `token` is the base64 (standard or URL-safe) of, else None."""
    text = base64_text(token)
    if not text:
        return None
    readable = sum(ch.isprintable() or ch in "\n\t" for ch in text)
    alphanumeric = sum(ch.isalnum() for ch in text)
    if readable / len(text) >= 0.97 and alphanumeric / len(text) >= 0.3:
        return text
    return None


# a name in braces, lower-case or upper-case words (`{local-path}`, teamlore's own, or
# `{API_TOKEN}`); a mixed-case token in braces is judged as a value
_BRACED_NAME = re.compile(r"\{([a-z]+(?:[-_][a-z]+)*|[A-Z]+(?:_[A-Z]+)*)\}")


def _is_placeholder(value: str) -> bool:
    if _PLACEHOLDER.fullmatch(value) is not None:
        return True
    # each word of a name in braces reads as a word: random letters in braces are a value
    braced = _BRACED_NAME.fullmatch(value)
    return braced is not None and all(
        _wordish(word.lower()) for word in re.split("[-_]", braced.group(1))
    )


def _random_enough(value: str) -> bool:
    return not looks_like_words(value) and not _is_placeholder(value)
