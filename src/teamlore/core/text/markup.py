"""Markup in a Markdown document that a rendered view shows otherwise than an agent reads it.

A teammate reads memory files as GitHub (or an editor's preview) renders them; an agent reads
every byte. The two differ where the document holds:

- an HTML comment (`<!-- … -->`), a processing instruction, a declaration or CDATA: rendered as
  nothing;
- an element that hides what it holds: `<script>`, `<style>`, `<template>`, `<noscript>`,
  `<iframe>`, `<object>`, … (a sanitizer drops them with their content), or any element marked
  `hidden`, `display: none` or `visibility: hidden`;
- a link reference definition no link uses: `[//]: # (…)` renders as nothing, a comment by
  another name (a duplicate definition is never used either);
- a link or image whose target is `javascript:` or `vbscript:`: it runs script wherever a
  renderer lets it through (entities, tabs and newlines in the scheme are read as a browser
  reads them);
- any other raw HTML tag, but bare formatting (`<kbd>`, `<sub>`, `<br>`, `<details>`, …):
  dropped with its attributes, never shown as written (a placeholder such as `<service>`
  outside backticks disappears on GitHub; `<img src=… onerror=…>` shows an image, not the
  script).

The document is parsed as CommonMark (markdown-it-py, which rich already brings), so code — a
fenced or indented block, a `code span` — is text shown as written and never reported here, and
what is HTML and what is text follows the rules a renderer follows, not a guess. `memory lint`
turns these into findings (docs/memory.md, "Lint").
"""

from __future__ import annotations

import html
import re
import urllib.parse
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

MarkupKind = Literal["comment", "hidden-element", "hidden-definition", "script-link", "tag"]

# elements whose content a rendered view does not show
HIDING_ELEMENTS = frozenset(
    {
        "script",
        "style",
        "template",
        "noscript",
        "noembed",
        "noframes",
        "iframe",
        "object",
        "embed",
        "title",
        "head",
    }
)
# formatting a rendered view shows with what it holds, when written bare (without attributes,
# which a view does not show)
SHOWN_ELEMENTS = frozenset(
    {
        *("b", "i", "em", "strong", "s", "del", "ins", "sub", "sup", "kbd", "code", "samp"),
        *("var", "q", "small", "mark", "abbr", "cite", "dfn", "br", "hr", "wbr", "p", "pre"),
        *("blockquote", "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody"),
        *("tfoot", "tr", "th", "td", "caption", "details", "summary", "span", "div"),
        *("h1", "h2", "h3", "h4", "h5", "h6"),
    }
)
_HIDDEN_ATTRIBUTE = re.compile(
    r"""\shidden(?=[\s/>=]|$)|display\s*:\s*none|visibility\s*:\s*hidden""", re.IGNORECASE
)
_URL_ATTRIBUTE = re.compile(
    r"""\s(?:href|src|action|formaction|xlink:href|data|poster|background)\s*=\s*"""
    r"""(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""",
    re.IGNORECASE,
)
_SCRIPT_SCHEME = re.compile(r"(?:java|vb)script:", re.IGNORECASE)
# what a browser drops from a URL before it reads the scheme
_URL_NOISE = re.compile(r"[\x00-\x20\x7f]+")

# raw HTML as CommonMark knows it (spec 6.6): an open or closing tag, a comment, a processing
# instruction, a declaration, CDATA
_TAG_NAME = r"[A-Za-z][A-Za-z0-9-]*"
_ATTRIBUTE = r"""(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?)"""
_RAW_HTML = re.compile(
    rf"(?P<comment><!--)|(?P<other><\?|<!\[CDATA\[|<![A-Za-z])"
    rf"|(?P<open><(?P<name>{_TAG_NAME})(?P<attributes>{_ATTRIBUTE}*)\s*/?>)"
    rf"|(?P<close></{_TAG_NAME}\s*>)"
)
_ENDS = {"<!--": "-->", "<?": "?>", "<![CDATA[": "]]>"}


@dataclass(frozen=True, slots=True)
class Markup:
    """One place where the rendered document differs from its text. `line` is 1-based in the
    text given (counted from `first_line`); `shown` names it without echoing content (a tag's
    name, `<!--`, a scheme); `raw` is the start of the markup as written."""

    kind: MarkupKind
    line: int
    shown: str
    raw: str

    @property
    def why(self) -> str:
        """What it does to a reader, and what to do about it (one sentence)."""
        return _WHY[self.kind].format(shown=self.shown)


_WHY: dict[MarkupKind, str] = {
    "comment": "an HTML comment (`{shown}`): GitHub and other Markdown views show nothing of it, "
    "agents read it; remove it, or put it in backticks to show it as text",
    "hidden-element": "`{shown}` hides what it holds in GitHub and other Markdown views, agents "
    "read it; remove it, or put it in backticks to show it as text",
    "hidden-definition": "a link definition no link uses (`{shown} …`) shows as nothing in a "
    "Markdown view, agents read it (`[//]: # (…)` is a comment); remove it, or link to it",
    "script-link": "a link to `{shown}` runs script where a Markdown view lets it through; "
    "remove it",
    "tag": "raw HTML `{shown}`: GitHub drops it or its attributes, so a teammate does not see "
    "what an agent reads; write Markdown, or put it in backticks to show it as text",
}


def might_hold_markup(text: str) -> bool:
    """A question every document holding markup answers yes: raw HTML and autolinks need `<`,
    an inline link `](`, a link reference definition `]:`."""
    return "<" in text or "](" in text or "]:" in text


def markup_in(text: str, *, first_line: int = 1) -> list[Markup]:
    """Every place of `text` (Markdown) that a rendered view shows otherwise than it is written,
    in document order."""
    if not might_hold_markup(text):
        return []
    env: dict[str, Any] = {}
    tokens = _parser().parse(text, env)
    found: list[Markup] = []
    used: set[tuple[str, str]] = set()
    for token in tokens:
        if token.type == "html_block" and token.map:
            found += _raw_html(token.content, first_line + token.map[0])
        if token.type != "inline":
            continue
        source = _Source(token, first_line)
        for child in token.children or []:
            if child.type == "html_inline":
                found += _raw_html(child.content, source.line_of(child.content))
            elif child.type in ("link_open", "image"):
                target = str(child.attrs.get("href", child.attrs.get("src", "")))
                used.add((target, str(child.attrs.get("title", ""))))
                scheme = script_scheme(target)
                if scheme:
                    line = source.line_of(scheme.rstrip(":"), anycase=True)
                    found.append(Markup("script-link", line, scheme, target[:80]))
    definitions = [
        (label, reference)
        for label, reference in env.get("references", {}).items()
        if (reference.get("href", ""), reference.get("title", "")) not in used
    ]
    definitions += [(d.get("label", ""), d) for d in env.get("duplicate_refs", [])]
    for label, definition in definitions:
        where = definition.get("map") or [None]
        line = first_line + where[0] if where[0] is not None else 0
        found.append(Markup("hidden-definition", line, f"[{label[:40]}]:", str(label)))
        scheme = script_scheme(str(definition.get("href", "")))
        if scheme:
            found.append(Markup("script-link", line, scheme, str(definition.get("href"))[:80]))
    return sorted(found, key=lambda m: m.line)


def script_scheme(url: str) -> str | None:
    """`javascript:` or `vbscript:` when `url` runs script in a browser, read as a browser reads
    it: entities and percent escapes decoded, whitespace and controls dropped."""
    plain = _URL_NOISE.sub("", html.unescape(urllib.parse.unquote(url)))
    found = _SCRIPT_SCHEME.match(plain)
    return found.group().lower() if found else None


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    # every target is kept, so a `javascript:` link is seen as the link a renderer makes of it
    parser.validateLink = lambda url: True  # type: ignore[method-assign]
    return parser


class _Source:
    """An inline token's source (a paragraph, a heading, a table cell), read front to back:
    the line of each span found in it, in order."""

    def __init__(self, token: Token, first_line: int) -> None:
        self.text = token.content
        self.folded = token.content.lower()
        self.line = first_line + (token.map[0] if token.map else 0)
        self.cursor = 0

    def line_of(self, needle: str, *, anycase: bool = False) -> int:
        """The line of the next `needle` (where the last one was, if none follows)."""
        text, wanted = (self.folded, needle.lower()) if anycase else (self.text, needle)
        at = text.find(wanted, self.cursor)
        if at >= 0:
            self.cursor = at + len(wanted)
        return self.line + self.text.count("\n", 0, at if at >= 0 else self.cursor)


def _raw_html(source: str, line: int) -> list[Markup]:
    """The comments and tags of raw HTML (an HTML block, or one inline HTML span) starting on
    `line`. What a comment or a hiding element holds is not looked into: it is reported whole."""
    found: list[Markup] = []
    at = 0
    while (match := _RAW_HTML.search(source, at)) is not None:
        here = line + source.count("\n", 0, match.start())
        at = match.end()
        raw = source[match.start() : match.start() + 80]
        if match.group("comment") or match.group("other"):
            opener = next((o for o in _ENDS if match.group().startswith(o)), match.group())
            end = source.find(_ENDS.get(opener, ">"), match.end())
            at = len(source) if end < 0 else end + 1
            kind: MarkupKind = "comment" if match.group("comment") else "hidden-element"
            found.append(Markup(kind, here, opener, raw))
            continue
        if match.group("close"):
            continue  # the element was named at its opening tag
        name = match.group("name")
        attributes = match.group("attributes") or ""
        links = [
            Markup("script-link", here, scheme, raw)
            for value in _URL_ATTRIBUTE.finditer(attributes)
            if (scheme := script_scheme(next(v for v in value.groups() if v is not None)))
        ]
        found += links
        if name.lower() in HIDING_ELEMENTS:
            found.append(Markup("hidden-element", here, f"<{name}>", raw))
            closing = re.compile(rf"</{re.escape(name)}\s*>", re.IGNORECASE).search(source, at)
            at = len(source) if closing is None else closing.end()
        elif _HIDDEN_ATTRIBUTE.search(attributes):
            found.append(Markup("hidden-element", here, f"<{name} hidden>", raw))
        elif not links and (attributes.strip() or name.lower() not in SHOWN_ELEMENTS):
            found.append(Markup("tag", here, f"<{name}>", raw))
    return found
