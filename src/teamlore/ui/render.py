"""Template environment and the few filters the pages need.

Every template is autoescaped: transcript, memory and git text is data and is always escaped.
Every text a template shows goes through `visible` (the environment's `finalize`): a character a
reader would not see as it is (a bidi override, a zero-width space, a control:
`core.text.hidden`) shows as the escape `teamlore memory review` prints (`\\u202e`), marked
`<span class=hidden-char>`, so the person confirms the text as it is. The filters that return
markup (`highlight`, `visible`) escape each piece of text themselves and add nothing but `<mark>`
and those spans; `plain` gives the escapes without markup, for attribute values and titles.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from teamlore.core import errors
from teamlore.core.analyzer import STOPWORDS
from teamlore.core.text.hidden import HIDDEN, escaped, shown
from teamlore.ops.memory.review import (
    claim_support_shown,
    left_out_of_a_plan,
    short_candidate_id,
    what_it_changes,
    what_it_replaces,
)
from teamlore.ops.sessions.titles import listed_title

FOLD_CHARS = 600
_WORD = re.compile(r"\w{3,}", re.UNICODE)
_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """(css class, line) for a unified diff of one or more files; only a newline ends a line
    (core/text/diffs.py). `---` and `+++` name files only outside the lines a hunk's `@@`
    header counts: inside, a removed `--` line (front matter's `---`) is a removed line."""
    out: list[tuple[str, str]] = []
    old_left = new_left = 0
    for line in diff.removesuffix("\n").split("\n") if diff else []:
        marker = line[:1]
        if line.startswith("@@"):
            kind = "hunk"
            counts = _HUNK.match(line)
            old_left, new_left = (int(c or 1) for c in counts.groups()) if counts else (0, 0)
        elif line.startswith(("+++", "---")) and old_left <= 0 and new_left <= 0:
            kind = "file"
        elif line.startswith(("diff --git", "commit ", "index ", "\\ ")):
            kind = "meta"
        else:
            kind = {"+": "add", "-": "del"}.get(marker, "ctx")
            old_left -= marker in ("-", " ")
            new_left -= marker in ("+", " ")
        out.append((kind, line))
    return out


def _terms(text: str) -> frozenset[str]:
    words = {w.casefold() for w in _WORD.findall(text)}
    cjk = {
        text[i : i + 2] for i in range(len(text) - 1) if _is_cjk(text[i]) and _is_cjk(text[i + 1])
    }
    return frozenset((words - STOPWORDS) | cjk)


def _is_cjk(char: str) -> bool:
    return (
        "\u3400" <= char <= "\u9fff" or "\u3040" <= char <= "\u30ff" or "\uac00" <= char <= "\ud7af"
    )


def highlight(text: str | None, against: str) -> Markup:
    """`text` escaped, with the words (and CJK character pairs) it shares with `against` marked:
    the part of a cited excerpt that backs the statement stands out."""
    if not text:
        return Markup("")
    terms = _terms(against)
    if not terms:
        return visible(text)
    # hidden characters are found in the whole text: whether a joiner is hidden depends on its
    # neighbours, which a cut at a mark would take away
    hidden = list(HIDDEN.finditer(text)) if shown(text) != text else []
    pieces: list[str] = []
    position = 0
    for match in _match_spans(text, terms):
        start, end = match
        pieces.append(_visible_part(text, position, start, hidden))
        pieces.append(f"<mark>{_visible_part(text, start, end, hidden)}</mark>")
        position = end
    pieces.append(_visible_part(text, position, len(text), hidden))
    return Markup("".join(pieces))


def visible(text: str) -> Markup:
    r"""`text` HTML-escaped, each hidden character (`core.text.hidden`) as the escape the CLI
    prints (`\u202e`) in `<span class=hidden-char>`, named in its title. The span carries no
    quote, so even inside an attribute value it could not end the attribute."""
    if shown(text) == text:  # nearly every text: nothing hidden
        return escape(text)
    return Markup(_visible_part(text, 0, len(text), list(HIDDEN.finditer(text))))


def _visible_part(text: str, start: int, end: int, hidden: list[re.Match[str]]) -> str:
    """`text[start:end]` as `visible` shows it, `hidden` being the whole text's matches."""
    pieces: list[str] = []
    position = start
    for match in hidden:
        if match.start() < start or match.start() >= end:
            continue
        name = unicodedata.name(match.group(), "").replace(" ", "&#32;")
        title = f"U+{ord(match.group()):04X}" + (f"&#32;{name}" if name else "")
        pieces.append(str(escape(text[position : match.start()])))
        pieces.append(f"<span class=hidden-char title={title}>{escape(escaped(match))}</span>")
        position = match.end()
    pieces.append(str(escape(text[position:end])))
    return "".join(pieces)


def plain(value: object) -> Markup:
    r"""`value` escaped, hidden characters as bare escapes (`\u200b`), no markup: for an
    attribute value or the page title, where a span cannot go."""
    return escape(shown(str(value)))


def _finalize(value: object) -> object:
    """What every `{{ … }}` prints: a text through `visible`; markup (already escaped by the
    filter that made it) and other values as they are."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value)
    return value


def _match_spans(text: str, terms: frozenset[str]) -> list[tuple[int, int]]:
    spans = [m.span() for m in _WORD.finditer(text) if m.group().casefold() in terms]
    for i in range(len(text) - 1):
        if text[i : i + 2] in terms:
            spans.append((i, i + 2))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def ago(instant: str | None, now: datetime | None = None) -> str:
    """'3 h ago' for a canonical UTC instant."""
    if not instant:
        return ""
    try:
        moment = datetime.fromisoformat(instant.replace("Z", "+00:00"))
    except ValueError:
        return instant
    seconds = ((now or datetime.now(UTC)) - moment).total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


def short(value: str | None, length: int = 12) -> str:
    return (value or "")[:length]


def first_line(text: str | None, length: int = 160) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= length else line[: length - 1] + "…"


def candidate_title(item: dict[str, Any], length: int = 160) -> str:
    """A one-line title for any candidate kind: a skill's name and description, else the
    first line of its content."""
    skill = item.get("skill")
    if isinstance(skill, dict) and skill.get("name"):
        return first_line(f"{skill['name']}: {skill.get('description', '')}", length)
    content = item.get("writtenContent", item.get("content"))  # as promotion writes it
    return first_line(content or item.get("candidateId", ""), length)


def why_blocked(item: dict[str, Any]) -> str:
    """Why a candidate cannot go into a plan, in the words `memory confirm` refuses it with:
    `blocked by lint (secret.github-token)`, or the code of what else blocks it and why
    (`TARGET_DRIFT: entry … was edited since the candidate was adjudicated`)."""
    out = left_out_of_a_plan(item)
    if out is None:
        return ""
    return out["why"] if out["code"] == errors.LINT_BLOCKED.code else f"{out['code']}: {out['why']}"


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("teamlore.ui", "templates"),
        autoescape=select_autoescape(["html"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    env.filters.update(
        diff_lines=diff_lines,
        highlight=highlight,
        ago=ago,
        short=short,
        short_id=short_candidate_id,
        plain=plain,
        first_line=first_line,
        candidate_title=candidate_title,
        what_it_replaces=what_it_replaces,
        what_it_changes=what_it_changes,
        left_out=left_out_of_a_plan,
        why_blocked=why_blocked,
        claim_support=claim_support_shown,
        listed_title=listed_title,
    )
    env.globals["FOLD_CHARS"] = FOLD_CHARS
    return env
