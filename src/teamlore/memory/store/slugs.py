"""Entry ids (slugs) that work for any language.

An entry id is the file name stem of `entries/<id>.md`: lowercase ASCII words joined by single
dashes, at most 128 characters (`^[a-z0-9]+(?:-[a-z0-9]+)*$`). Generated ids are at most 60.

`entry_slug` builds one from a title or the entry text: its words, each once, in order. Latin
letters with diacritics fold to ASCII ("Café" -> "cafe"). When the text carries letters or digits
that have no ASCII form (Chinese, Japanese, Cyrillic, ...) or no ASCII word at all, a short
content hash is appended, so two Chinese entries get two distinct ids instead of the reference
product's shared `memory-entry` placeholder.
Such a text's ASCII words are mostly what a Chinese developer writes in ASCII anyway (file names,
commands, identifiers: `conftest-py-alembic-upgrade-head-…`): each is taken once, and a run that
reads as a random token (a password or key inside a Chinese sentence) never is. A text with no
ASCII word at all is named by the caller's `fallback` (the entry's scene or kind) and its hash.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

from teamlore.core.canonical import sha256_hex
from teamlore.core.secrets.heuristics import looks_like_words

SLUG_MAX_LENGTH = 128
GENERATED_SLUG_MAX_LENGTH = 60
HASH_SUFFIX_LENGTH = 10
EMPTY_ASCII_PREFIX = "entry"

SLUG_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_ASCII_WORD = re.compile(r"[a-z0-9]+")
# a shorter ASCII run in a text of another script is a word, a number or an abbreviation; from
# this length on it must read as words (`looks_like_words`) to name an entry: `zh8kp2qlm9vx` not
_JUDGED_WORD_LENGTH = 6


def is_slug(value: str, *, max_length: int = SLUG_MAX_LENGTH) -> bool:
    return len(value) <= max_length and SLUG_PATTERN.fullmatch(value) is not None


def slug_problem(value: str, *, max_length: int = SLUG_MAX_LENGTH) -> str | None:
    """Why `value` is not a valid slug, or None when it is."""
    if not value:
        return "is empty"
    if len(value) > max_length:
        return f"is {len(value)} characters long (at most {max_length})"
    if SLUG_PATTERN.fullmatch(value) is None:
        return "must be lowercase ASCII letters and digits in words joined by single dashes"
    return None


def validate_slug(value: str, *, max_length: int = SLUG_MAX_LENGTH) -> str:
    problem = slug_problem(value, max_length=max_length)
    if problem is not None:
        raise ValueError(f"slug {value!r} {problem}")
    return value


def content_hash(text: str) -> str:
    """The hash suffix: sha256 of the NFC text with whitespace runs collapsed."""
    normalized = " ".join(unicodedata.normalize("NFC", text).split())
    return sha256_hex(normalized.encode("utf-8"))[:HASH_SUFFIX_LENGTH]


def _fold_to_ascii(text: str) -> str:
    compatible = unicodedata.normalize("NFKC", text)
    decomposed = unicodedata.normalize("NFKD", compatible)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


def _has_non_ascii_word_chars(folded: str) -> bool:
    return any(ch.isalnum() and not ch.isascii() for ch in folded)


def _cut_words(words: list[str], limit: int) -> str:
    """Join words with dashes within `limit` chars, cutting at a word boundary when possible."""
    joined = "-".join(words)
    if len(joined) <= limit:
        return joined
    kept: list[str] = []
    length = 0
    for word in words:
        extra = len(word) + (1 if kept else 0)
        if length + extra > limit:
            break
        kept.append(word)
        length += extra
    if kept:
        return "-".join(kept)
    return joined[:limit].rstrip("-")


def names_itself(text: str) -> bool:
    """Whether `text` alone names an entry the English way: it has an ASCII word and no letter
    or digit of another script (its id is its words, with no hash suffix)."""
    folded = _fold_to_ascii(text)
    return _ASCII_WORD.search(folded) is not None and not _has_non_ascii_word_chars(folded)


def _name_words(folded: str) -> list[str]:
    """The ASCII words of a text in another script, each once, in order; none that reads as a
    random token rather than words."""
    words = _ASCII_WORD.findall(folded)
    return list(
        dict.fromkeys(w for w in words if len(w) < _JUDGED_WORD_LENGTH or looks_like_words(w))
    )


def entry_slug(
    title_or_text: str, fallback: str = EMPTY_ASCII_PREFIX, whole: str | None = None
) -> str:
    """A stable id for an entry with this title or text. Raises ValueError on blank text.

    `fallback` (a slug: the entry's scene or kind) names a text with no ASCII word to name it
    by, before its content hash; the hash is of `whole` when given (the whole entry text, of
    which `title_or_text` is what it is named by), else of `title_or_text`."""
    if not title_or_text.strip():
        raise ValueError("cannot build an entry id from blank text")
    folded = _fold_to_ascii(title_or_text)
    words = _ASCII_WORD.findall(folded)
    if words and not _has_non_ascii_word_chars(folded):
        return _cut_words(list(dict.fromkeys(words)), GENERATED_SLUG_MAX_LENGTH)
    suffix = content_hash(title_or_text if whole is None else whole)
    room = GENERATED_SLUG_MAX_LENGTH - HASH_SUFFIX_LENGTH - 1
    words = _name_words(folded)
    if not words:
        named = fallback if is_slug(fallback) else EMPTY_ASCII_PREFIX
        return f"{_cut_words(named.split('-'), room)}-{suffix}"
    return f"{_cut_words(words, room)}-{suffix}"


def unique_entry_slug(
    title_or_text: str,
    taken: Collection[str],
    fallback: str = EMPTY_ASCII_PREFIX,
    whole: str | None = None,
) -> str:
    """`entry_slug`, disambiguated against ids already in use (never silently reuses one).

    A clash first gets the content-hash suffix; if even that is taken, a counter follows.
    """
    base = entry_slug(title_or_text, fallback, whole)
    if base not in taken:
        return base
    suffix = content_hash(title_or_text if whole is None else whole)
    if base.endswith(f"-{suffix}"):
        stem = base
    else:
        room = GENERATED_SLUG_MAX_LENGTH - HASH_SUFFIX_LENGTH - 1
        stem = f"{base[:room].rstrip('-')}-{suffix}"
    if stem not in taken:
        return stem
    counter = 2
    while f"{stem}-{counter}" in taken:
        counter += 1
    return f"{stem}-{counter}"
