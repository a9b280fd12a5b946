"""The text secret rules see: NFKC, without invisible characters, look-alike letters folded.

A key spelled with a Cyrillic `А` (`АKIA…`), split by a zero-width space or written in
full-width letters reads the same to a person and works the same when pasted back, so the rules
must see it as the plain key (docs/memory.md, "Lint"). `normalized_view` returns that text
and, for every character of it, the offset of the original character it came from, so a hit is
reported (and redacted) on the original span.

Look-alike letters are folded only inside a run of non-space characters that also holds an
ASCII letter or digit (a mixed-script token): Russian or Greek prose keeps its letters.
"""

from __future__ import annotations

import re
import unicodedata

from teamlore.core.secrets import shapes
from teamlore.core.shapes.records import Record

# characters that render as nothing, and look-alike letters (the rules' table: shapes.py)
INVISIBLE = frozenset(shapes.INVISIBLE)
CONFUSABLES = shapes.CONFUSABLES

_MIXED_TOKEN = re.compile(r"\S+")
_CONFUSABLE = re.compile("[" + "".join(CONFUSABLES) + "]")
_INVISIBLE = re.compile("[" + "".join(sorted(INVISIBLE)) + "]")


class NormalizedView(Record, frozen=True):
    """A text as the scan reads it, with the offset in the original of each of its characters."""

    text: str
    origin: list[int]  # origin[i]: offset in the original of `text[i]`; one more at the end

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span that `text[start:end]` came from."""
        return self.origin[start], self.origin[end - 1] + 1 if end > start else self.origin[start]


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _reads_as_ascii(ch: str) -> bool:
    return ch.isalnum() and (ch.isascii() or unicodedata.normalize("NFKC", ch).isascii())


def _folded_offsets(text: str) -> set[int]:
    """Offsets of look-alike letters inside mixed-script tokens."""
    offsets: set[int] = set()
    for match in _MIXED_TOKEN.finditer(text):
        token = match.group(0)
        if token.isascii() or _CONFUSABLE.search(token) is None:
            continue
        if not any(_reads_as_ascii(ch) for ch in token):
            continue
        offsets.update(match.start() + i for i, ch in enumerate(token) if ch in CONFUSABLES)
    return offsets


def _normalized_char(ch: str, fold: bool) -> str:
    if ch in INVISIBLE:
        return ""
    if fold:
        return CONFUSABLES[ch]
    return unicodedata.normalize("NFKC", ch)


def normalized_view(text: str) -> NormalizedView | None:
    """The text the secret rules see, or None when it is the text itself (plain ASCII, or
    nothing to change). Linear in `len(text)`; ASCII stretches are copied whole."""
    if text.isascii():
        return None
    folded = _folded_offsets(text)
    pieces: list[str] = []
    origin: list[int] = []
    position = 0
    for match in _NON_ASCII_RUN.finditer(text):
        run = match.group(0)
        if (
            unicodedata.is_normalized("NFKC", run)
            and _INVISIBLE.search(run) is None
            and not (folded and _CONFUSABLE.search(run))
        ):
            continue  # copied whole with the ASCII around it
        pieces.append(text[position : match.start()])
        origin.extend(range(position, match.start()))
        for offset in range(match.start(), match.end()):
            out = _normalized_char(text[offset], offset in folded)
            pieces.append(out)
            origin.extend([offset] * len(out))
        position = match.end()
    if not pieces:
        return None  # every non-ASCII run was already what the rules see
    pieces.append(text[position:])
    origin.extend(range(position, len(text)))
    view = "".join(pieces)
    if view == text:
        return None
    origin.append(len(text))
    return NormalizedView(view, origin)
