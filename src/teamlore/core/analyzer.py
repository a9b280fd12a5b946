"""The one text analyzer behind every FTS table.

Text is analyzed in Python and stored in FTS5 already tokenized (space-separated tokens that
SQLite's `unicode61` tokenizer keeps intact); queries pass through the same analyzer.

- NFKC, then case folding.
- Identifiers (`snake_case`, `kebab-case`, `dotted.name`, `a/path`, `camelCase`) are split into
  their parts, and the whole identifier is kept too (separators dropped), so `parse_line`,
  `parseLine` and `parse line` all meet.
- CJK runs (Han, kana, hangul) become unigrams plus overlapping bigrams, so one- and
  two-character Chinese queries match and Chinese near-duplicates share many tokens.

Changing any rule here changes `ANALYZER_VERSION`; every FTS table records the version it was
built with and is rebuilt when it differs.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

ANALYZER_VERSION = "teamlore-analyzer@1"

_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
# a word: letters/digits (no CJK), optionally joined by identifier separators
_WORD = re.compile(rf"(?:(?![{_CJK}])[^\W_])+(?:[_\-./](?:(?![{_CJK}])[^\W_])+)*")
_TOKEN = re.compile(rf"[{_CJK}]+|(?:(?![{_CJK}])[^\W_])+(?:[_\-./](?:(?![{_CJK}])[^\W_])+)*")
_SEPARATORS = re.compile(r"[_\-./]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_a-zA-Z]+")

MAX_TOKEN_CHARS = 64  # longer runs (base64, minified blobs) are noise for search


@dataclass(frozen=True, slots=True)
class TermGroup:
    """One query unit: matches when `whole` occurs, or when every part occurs."""

    whole: str
    parts: tuple[str, ...]


def _split_identifier(raw: str) -> list[str]:
    parts: list[str] = []
    for piece in _SEPARATORS.split(raw):
        if not piece:
            continue
        if piece.isascii() and not piece.islower() and not piece.isupper():
            parts.extend(_CAMEL.findall(piece) or [piece])
        else:
            parts.append(piece)
    return [p.casefold() for p in parts if p]


def _cjk_tokens(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    unigrams = list(run)
    bigrams = [run[i : i + 2] for i in range(len(run) - 1)]
    return unigrams + bigrams


def _groups(text: str) -> list[TermGroup]:
    text = unicodedata.normalize("NFKC", text)
    groups: list[TermGroup] = []
    for match in _TOKEN.finditer(text):
        raw = match.group()
        if _CJK_RUN.fullmatch(raw):
            run = raw.casefold()
            if len(run) == 1:
                groups.append(TermGroup(run, (run,)))
            else:
                bigrams = tuple(run[i : i + 2] for i in range(len(run) - 1))
                groups.append(TermGroup("", bigrams))
            continue
        if len(raw) > MAX_TOKEN_CHARS * 4:
            continue
        parts = [p for p in _split_identifier(raw) if len(p) <= MAX_TOKEN_CHARS]
        if not parts:
            continue
        whole = "".join(parts)
        groups.append(TermGroup(whole if len(parts) > 1 else parts[0], tuple(parts)))
    return groups


_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[_\-./][A-Za-z0-9]+)*")


@lru_cache(maxsize=1 << 16)
def _word_tokens(raw: str) -> tuple[str, ...]:
    """Index tokens of one non-CJK word or identifier (cached: code repeats its names)."""
    if len(raw) > MAX_TOKEN_CHARS * 4:
        return ()
    if raw.isascii() and raw.isalnum() and (raw.islower() or raw.isupper() or raw.isdigit()):
        return (raw.casefold(),) if len(raw) <= MAX_TOKEN_CHARS else ()
    parts = [p for p in _split_identifier(raw) if len(p) <= MAX_TOKEN_CHARS]
    if len(parts) > 1:
        whole = "".join(parts)
        if len(whole) <= MAX_TOKEN_CHARS:
            return (whole, *parts)
    return tuple(parts)


def _ascii_tokens(text: str) -> list[str]:
    return [token for word in _ASCII_TOKEN.findall(text) for token in _word_tokens(word)]


def tokens(text: str) -> list[str]:
    """Every index token of `text`, in order (with repeats, so BM25 sees term frequency)."""
    # A pure-ASCII text is already NFKC-normal and has no CJK, which allows the much faster
    # ASCII pattern. Tokens never span a newline, so other texts are analyzed line by line and
    # only their non-ASCII lines take the general path.
    if text.isascii():
        return _ascii_tokens(text)
    out: list[str] = []
    for line in text.split("\n"):
        if line.isascii():
            out.extend(_ascii_tokens(line))
            continue
        for match in _TOKEN.finditer(unicodedata.normalize("NFKC", line)):
            raw = match.group()
            if raw[0] >= "\u1100" and _CJK_RUN.fullmatch(raw):
                out.extend(_cjk_tokens(raw.casefold()))
            else:
                out.extend(_word_tokens(raw))
    return out


def analyze(text: str) -> str:
    """The FTS document form of `text`."""
    return " ".join(tokens(text))


def query_groups(text: str) -> list[TermGroup]:
    seen: set[TermGroup] = set()
    out: list[TermGroup] = []
    for group in _groups(text):
        if group not in seen:
            seen.add(group)
            out.append(group)
    return out


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def _group_expr(group: TermGroup) -> str:
    conj = " AND ".join(_quote(p) for p in group.parts)
    if len(group.parts) == 1:
        return conj
    if group.whole:
        return f"({_quote(group.whole)} OR ({conj}))"
    return f"({conj})"


def fts_query(text: str, *, mode: str = "all") -> str:
    """An FTS5 MATCH expression for `text`; '' when it has no searchable terms.

    mode "all": every term group must match (search). mode "any": any token may match, ranked by
    BM25 (near-duplicate recall).
    """
    groups = query_groups(text)
    if not groups:
        return ""
    if mode == "all":
        return " AND ".join(_group_expr(g) for g in groups)
    if mode == "any":
        distinct: dict[str, None] = {}
        for g in groups:
            for t in (g.whole, *g.parts):
                if t:
                    distinct[t] = None
        return " OR ".join(_quote(t) for t in distinct)
    raise ValueError(f"unknown mode {mode!r}")
