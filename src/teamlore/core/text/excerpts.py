"""Short excerpts of a memory text, as the review and the dedup list show them: whitespace runs
collapsed, at most `EXCERPT_CELLS` terminal cells, and when cut, cut where a reader expects it
and marked `…` (docs/cli-output.md: nothing is cut without saying so).

Width is counted in cells, as a terminal shows it: a Chinese, Japanese or Korean character (and
any East Asian wide or fullwidth one) takes two, a combining mark none. 240 cells keep an
English excerpt at 240 characters and a Chinese one at some 120, the same room on a screen
(240 Chinese characters would fill some 480 columns), and the excerpt never exceeds the 240
characters a `summary` may hold (contracts/adjudication.py).

A cut falls between two words: at a space, or between two characters where one is wide (Chinese
has no spaces; a character is its own boundary, and a clause's end `，` `。` a few characters
back is preferred), never inside a run of narrow characters such as `conftest.py`, `2026-11-20`
or a number, unless no boundary is near (a path or URL longer than the excerpt): then after
its last path separator (`src/app/…`), or on a character when that is far back too.
"""

from __future__ import annotations

import re
import unicodedata

EXCERPT_CELLS = 240
ELLIPSIS = "…"
# how far back a cut looks for a boundary before it cuts inside a run of narrow characters
_BOUNDARY_REACH = 40
# a Chinese cut this near after a clause's end moves back to it (`运行，失…` reads `运行…`)
_PAUSE_REACH = 16
_PAUSES = "，。；！？、："
# what an excerpt does not end in before its `…`
_TRAILING = " ,;:(（[【「『，、；：—-–"
# where a path with no space near the cut is cut instead of inside a name
PATH_SEPARATORS = "/\\"


def cell_width(ch: str) -> int:
    """The terminal cells `ch` takes: 2 for East Asian wide/fullwidth, 0 for a combining mark
    or a zero-width format character, else 1."""
    if unicodedata.combining(ch) or unicodedata.category(ch) == "Cf":
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def text_width(text: str) -> int:
    return sum(cell_width(ch) for ch in text)


def _narrow_word_char(ch: str) -> bool:
    return not ch.isspace() and cell_width(ch) == 1


def _boundary(text: str, at: int) -> bool:
    """Whether `text` may be cut before `text[at]`."""
    before, after = text[at - 1], text[at]
    if cell_width(after) == 0:
        return False  # a combining mark stays with its letter
    return not (_narrow_word_char(before) and _narrow_word_char(after))


def _after_a_separator(text: str, end: int) -> int:
    """Where a run with no word boundary near `end` is cut: after its last path separator in
    the second half (`src/app/…`, never `src/ap…`), else at `end`, on a character."""
    cut = max(text.rfind(separator, 0, end) for separator in PATH_SEPARATORS) + 1
    return cut if cut > end // 2 else end


def excerpt(text: str, cells: int = EXCERPT_CELLS) -> str:
    """`text` on one line, within `cells` terminal cells: whole, or cut at a word (or CJK
    character) boundary and ended with `…`."""
    flat = " ".join(text.split())
    # characters are counted too: combining marks (a German or Vietnamese text in NFD, as
    # macOS pastes it) and zero-width characters take no cell, and a summary holds 240 at most;
    # counted first, so a huge text (a 5 MB command) is not measured in cells to its end
    if len(flat) <= cells and text_width(flat) <= cells:
        return flat
    room = cells - text_width(ELLIPSIS)
    used = end = 0
    for index, ch in enumerate(flat):
        used += cell_width(ch)
        if used > room or index + len(ELLIPSIS) >= cells:
            break
        end = index + 1
    cut = end
    reach = 0
    while cut > 0 and reach < _BOUNDARY_REACH and not _boundary(flat, cut):
        reach += cell_width(flat[cut - 1])
        cut -= 1
    pause, back = cut, 0
    while pause > 0 and back < _PAUSE_REACH and flat[pause - 1] not in _PAUSES:
        back += cell_width(flat[pause - 1])
        pause -= 1
    if pause > 0 and flat[pause - 1] in _PAUSES:
        cut = pause
    elif cut == 0 or reach >= _BOUNDARY_REACH:
        cut = _after_a_separator(flat, end)
        while 0 < cut < len(flat) and cell_width(flat[cut]) == 0:
            cut -= 1
    return flat[:cut].rstrip(_TRAILING) + ELLIPSIS


# what opens a Markdown line as structure, not as words: a heading, a list item (a `>` is
# kept: in a lesson it is more often "> 5 ms" than a quote)
_LINE_MARK = re.compile(r"^\s{0,3}(?:#{1,6}\s+|[-*+]\s+|\d{1,3}[.)]\s+)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_FENCE = re.compile(r"^\s{0,3}(?:```|~~~)")
_HEADING_ENDS = (":", ".", "!", "?", "：", "。", "！", "？")


def without_markup(text: str) -> str:
    """A text as words, for a one-line summary or snippet: the doctrine opens with a heading
    and a list (`### Core principles` / `- Make release inputs…`), shown as `Core principles:
    Make release inputs…` rather than its raw Markdown; each heading ends in a colon. A fenced
    block's lines are kept as written (`- old_flag` in a diff, `# build` in a script), without
    their fences."""
    words = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        said = line.strip() if fenced else _LINE_MARK.sub("", line).strip()
        if not said:
            continue
        if not fenced and _HEADING.match(line) and not said.endswith(_HEADING_ENDS):
            said += ":"
        words.append(said)
    return " ".join(words) if words else text
