"""Characters a reader does not see as they are: controls a terminal obeys, marks that reorder
text on screen, and characters that render as nothing.

Text someone else wrote (transcripts, tool output, a candidate an agent staged) can carry them
to hide or restyle what a person reviews: an ESC sequence that conceals a line, U+202E that
reverses it, a zero-width space inside a word, or Unicode tag characters (U+E0000–E007F) that
spell out ASCII a model reads and a person never sees. The text view shows each as an escape
(`cli/literal.py`, docs/cli-output.md) and `memory lint` refuses them in memory files
(`format.hidden-character`, docs/memory.md).

The joiner and the variation selectors that emoji are built with stay visible as what they
make: U+200D between two non-ASCII characters (👩‍💻) and one selector after a non-ASCII
character (⚠️). After ASCII, at the start, or one selector after another (a run of them can
encode bytes), they are shown.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
# bidirectional marks, embeddings, overrides and isolates (the Arabic letter mark too)
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# format and filler characters that render as nothing: soft hyphen, combining grapheme joiner,
# Hangul and Khmer fillers, Mongolian selectors, zero-width space and non-joiner, line and
# paragraph separators, word joiner and invisible operators, deprecated format characters,
# BOM, interlinear annotation, musical format, tags, the variation selectors supplement
_INVISIBLE = (
    "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b\u200c\u2028\u2029"
    "\u2060-\u2064\u206a-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
# a joiner not between two non-ASCII characters; a variation selector not right after a
# non-ASCII character that is itself no selector or joiner
# (each alternative starts with its character, and looks behind from after it: a lookbehind
# first is tried at every position of every text, ten times the cost)
_STRAY_JOINER = "\u200d(?<![^\x00-\x7f\u200d]\u200d)|\u200d(?![^\x00-\x7f])"
_STRAY_SELECTOR = "[\ufe00-\ufe0f](?<![^\x00-\x7f\ufe00-\ufe0f\u200d][\ufe00-\ufe0f])"

HIDDEN = re.compile(f"[{_CONTROLS}{_BIDI}{_INVISIBLE}]|{_STRAY_JOINER}|{_STRAY_SELECTOR}")
# any character HIDDEN may match: one plain class, so a text without any (nearly every one)
# is passed over at the speed of one search
_MAYBE_HIDDEN = re.compile(f"[{_CONTROLS}{_BIDI}{_INVISIBLE}\u200d\ufe00-\ufe0f]")


def shown(text: str) -> str:
    """`text` with each hidden character as its escape (`escaped`)."""
    return HIDDEN.sub(escaped, text) if _MAYBE_HIDDEN.search(text) else text


def escaped(match: re.Match[str]) -> str:
    r"""A hidden character as the escape the text view prints (`\x1b`, `\u200b`,
    `\U000e0069`)."""
    code = ord(match.group())
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
