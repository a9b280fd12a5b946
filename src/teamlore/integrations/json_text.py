"""Format-preserving JSON edits: a client's JSON config changed as text, not load-and-dump.

A strict JSON tokenizer (RFC 8259) locates every value's span in the file; an edit splices new
text into one span and leaves every other byte as it was: numbers such as `1e400`, duplicated
keys, escapes, key order, indentation and line endings survive. A new member copies the
indentation and separators of its siblings (two spaces when there are none to copy).

What cannot be preserved or located is refused with CLIENT_CONFIG_INVALID naming the line: text
that is not strict JSON, a lone surrogate escape (`"\\ud800"`: it has no UTF-8 form, and the
file's JSON readers disagree about it), nesting deeper than `MAX_DEPTH`, and a duplicated key on
the path teamlore edits (the client reads the last one; we would not know which to change).
See docs/agents.md, "How install edits your files".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from teamlore.core import errors
from teamlore.core.paths import display_path

MAX_DEPTH = 200
DEFAULT_UNIT = "  "
_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = ("true", "false", "null")


@dataclass
class Node:
    """One value: its span [start, end) in the text, and its members or items."""

    kind: Literal["object", "array", "scalar"]
    start: int
    end: int = 0
    members: list[Member] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)
    expanded: bool = True  # False: children not located yet (`JsonText.open`)


@dataclass
class Member:
    key: str
    start: int  # where the key's opening quote is
    value: Node


class _Parser:
    """The strict reader that names the line of what is wrong. It runs only when the fast path
    (the C `json` module) refuses a file or when the file has surrogate escapes to check."""

    def __init__(self, text: str, path: Path) -> None:
        self.text = text
        self.path = path
        self.pos = 0

    def fail(self, why: str, pos: int | None = None) -> errors.TeamloreError:
        return invalid(self.path, self.text, self.pos if pos is None else pos, why)

    def skip_ws(self) -> None:
        match = _WS.match(self.text, self.pos)
        assert match is not None
        self.pos = match.end()

    def document(self) -> Node:
        self.skip_ws()
        root = self.value(0)
        self.skip_ws()
        if self.pos != len(self.text):
            raise self.fail("unexpected text after the top-level value")
        if root.kind != "object":
            raise self.fail("the file is not a JSON object", 0)
        return root

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
        char = self.text[self.pos : self.pos + 1]
        if char == "{":
            return self.container(depth, "object", "}")
        if char == "[":
            return self.container(depth, "array", "]")
        start = self.pos
        if char == '"':
            self.string()
        else:
            match = _NUMBER.match(self.text, self.pos)
            literal = next((w for w in _LITERALS if self.text.startswith(w, self.pos)), None)
            if match is None and literal is None:
                raise self.fail("expected a value" if char else "the file ends too early")
            self.pos = match.end() if match is not None else start + len(literal or "")
        return Node("scalar", start, self.pos)

    def string(self) -> str:
        match = _STRING.match(self.text, self.pos)
        if match is None:
            raise self.fail("a string that is not valid JSON (control character or bad escape)")
        self.pos = match.end()
        token = match.group()
        if "\\" not in token:
            return token[1:-1]
        decoded: str = json.loads(token)
        try:
            decoded.encode("utf-8")
        except UnicodeEncodeError:
            raise self.fail("a lone surrogate escape (\\ud800-\\udfff)", match.start()) from None
        return decoded

    def container(self, depth: int, kind: Literal["object", "array"], close: str) -> Node:
        node = Node(kind, self.pos)
        self.pos += 1
        self.skip_ws()
        if self.text.startswith(close, self.pos):
            self.pos += 1
            node.end = self.pos
            return node
        while True:
            if kind == "object":
                node.members.append(self.member(depth))
            else:
                node.items.append(self.value(depth + 1))
            self.skip_ws()
            char = self.text[self.pos : self.pos + 1]
            self.pos += 1
            if char == close:
                node.end = self.pos
                return node
            if char != ",":
                raise self.fail(f"expected ',' or '{close}'", self.pos - 1)
            self.skip_ws()

    def member(self, depth: int) -> Member:
        start = self.pos
        if self.text[self.pos : self.pos + 1] != '"':
            raise self.fail("expected a quoted key")
        key = self.string()
        self.skip_ws()
        if self.text[self.pos : self.pos + 1] != ":":
            raise self.fail("expected ':' after a key")
        self.pos += 1
        self.skip_ws()
        return Member(key, start, self.value(depth + 1))


def line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def invalid(path: Path, text: str, pos: int, why: str) -> errors.TeamloreError:
    return errors.TeamloreError(
        errors.CLIENT_CONFIG_INVALID,
        f"{display_path(path)}: line {line_of(text, pos)}: {why}; nothing was changed",
    )


_DECODER = json.JSONDecoder()
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def validate(text: str, path: Path) -> None:
    """Refuse what is not a strict JSON object, naming the line (the C reader does the common
    case; the strict Python reader explains a refusal and checks surrogate escapes)."""
    try:
        parsed = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        _Parser(text, path).document()
        raise invalid(path, text, 0, "not strict JSON") from None
    if not isinstance(parsed, dict):
        raise invalid(path, text, 0, "the file is not a JSON object")
    if _SURROGATE_ESCAPE.search(text):
        _Parser(text, path).document()


def _kind(char: str) -> Literal["object", "array", "scalar"]:
    return "object" if char == "{" else "array" if char == "[" else "scalar"


class JsonText:
    """A JSON object file held as text, edited in place. Children are located on demand, so an
    edit costs a few passes of the C decoder over the file, not a Python walk of every value."""

    def __init__(self, text: str, path: Path) -> None:
        self.path = path
        self.text = text if text.strip() else "{}\n"
        validate(self.text, path)
        self.root = self._locate_root()

    def _skip_ws(self, pos: int) -> int:
        match = _WS.match(self.text, pos)
        assert match is not None
        return match.end()

    def _locate_root(self) -> Node:
        return self.open(Node("object", self._skip_ws(0), expanded=False))

    def open(self, node: Node) -> Node:
        """`node` with its direct children located (their spans; theirs in turn on demand)."""
        if node.expanded or node.kind == "scalar":
            return node
        text, close = self.text, "}" if node.kind == "object" else "]"
        pos = self._skip_ws(node.start + 1)
        while text[pos] != close:
            start = pos
            if node.kind == "object":
                key, pos = _DECODER.raw_decode(text, pos)
                pos = self._skip_ws(self._skip_ws(pos) + 1)  # past the colon
            end = _DECODER.raw_decode(text, pos)[1]
            child = Node(_kind(text[pos]), pos, end, expanded=False)
            if node.kind == "object":
                node.members.append(Member(key, start, child))
            else:
                node.items.append(child)
            pos = self._skip_ws(end)
            if text[pos] == ",":
                pos = self._skip_ws(pos + 1)
        node.end = pos + 1
        node.expanded = True
        return node

    def _splice(self, start: int, end: int, new: str) -> None:
        """Replace [start, end) with `new` (valid JSON by construction), then locate again."""
        self.text = self.text[:start] + new + self.text[end:]
        self.root = self._locate_root()

    # -- reading --------------------------------------------------------------------------------

    def member(self, node: Node, key: str) -> Member | None:
        """The member `key` of `node`; a key given twice is refused (which one would we edit?)."""
        found = [m for m in self.open(node).members if m.key == key]
        if len(found) > 1:
            raise invalid(
                self.path,
                self.text,
                found[-1].start,
                f'the key "{key}" appears {len(found)} times; remove all but one',
            )
        return found[0] if found else None

    def find(self, key: tuple[str | int, ...]) -> Node | None:
        """The value at `key`: member names, and indexes into arrays (None: not there)."""
        node: Node | None = self.root
        for part in key:
            if node is None:
                return None
            if isinstance(part, int):
                items = self.open(node).items if node.kind == "array" else []
                node = items[part] if 0 <= part < len(items) else None
                continue
            if node.kind != "object":
                return None
            found = self.member(node, part)
            node = found.value if found else None
        return node

    def value_of(self, node: Node) -> Any:
        return json.loads(self.text[node.start : node.end])

    def get(self, key: tuple[str, ...]) -> tuple[bool, Any]:
        node = self.find(key)
        return (False, None) if node is None else (True, self.value_of(node))

    # -- layout ---------------------------------------------------------------------------------

    def _newline(self) -> str:
        return "\r\n" if "\r\n" in self.text else "\n"

    def _line_indent(self, pos: int) -> str:
        line_start = self.text.rfind("\n", 0, pos) + 1
        match = _WS.match(self.text, line_start)
        assert match is not None
        return re.sub(r"[\r\n]", "", match.group())

    def _unit(self) -> str:
        """The file's indentation step: the indentation of the root's first member."""
        first = self.root.members[0].start if self.root.members else None
        if first is None or "\n" not in self.text[self.root.start : first]:
            return DEFAULT_UNIT
        return self._line_indent(first) or DEFAULT_UNIT

    def _one_line(self, node: Node) -> bool:
        """Whether `node`'s children sit on its own line (`{"a": 1}`) rather than below it."""
        self.open(node)
        children = [m.start for m in node.members] or [i.start for i in node.items]
        if children:
            return "\n" not in self.text[node.start : children[0]]
        return self._minified()

    def _minified(self) -> bool:
        """A file written on one line (an empty object is not: new members go one per line)."""
        return bool(self.root.members) and "\n" not in self.text.strip()

    @staticmethod
    def _inline(value: Any, *, spaced: bool) -> str:
        separators = (", ", ": ") if spaced else (",", ":")
        return json.dumps(value, ensure_ascii=False, separators=separators)

    def _render(self, value: Any, indent: str, *, one_line: bool) -> str:
        if one_line:
            return self._inline(value, spaced=not self._minified())
        rendered = json.dumps(value, indent=self._unit(), ensure_ascii=False)
        return rendered.replace("\n", self._newline() + indent)

    # -- editing --------------------------------------------------------------------------------

    def raw(self, key: tuple[str, ...]) -> str | None:
        """The text of the value at `key`, exactly as in the file (None: absent)."""
        node = self.find(key)
        return None if node is None else self.text[node.start : node.end]

    def set(self, key: tuple[str, ...], value: Any, *, raw: str | None = None) -> None:
        """Make `key` hold `value`: replace the value's span (with `raw`, the exact text a
        `raw()` gave, when there is one), or add the member (and any missing parent objects)
        after the last sibling."""
        node = self.root
        for depth, part in enumerate(key):
            if node.kind != "object":
                where = ".".join(key[:depth]) or "the top level"
                raise invalid(self.path, self.text, node.start, f"`{where}` is not an object")
            found = self.member(node, part)
            if found is None:
                rest: Any = value
                for name in reversed(key[depth + 1 :]):
                    rest = {name: rest}
                self._insert(node, part, rest)
                return
            node = found.value
        if raw is None:
            indent = self._line_indent(node.start)
            raw = self._render(value, indent, one_line=self._minified())
        self._splice(node.start, node.end, raw)

    def _insert(self, node: Node, key: str | None, value: Any) -> None:
        """Add a member (object) or an item (array, `key` None) at the end of `node`."""
        self.open(node)
        children: list[tuple[int, int]] = (
            [(m.start, m.value.end) for m in node.members]
            if node.kind == "object"
            else [(i.start, i.end) for i in node.items]
        )
        colon = ": "
        if node.members:
            first = node.members[0]
            colon = self.text[first.start : first.value.start].split('"')[-1] or ":"
        one_line = self._one_line(node)
        prefix = "" if key is None else json.dumps(key, ensure_ascii=False) + colon
        if children:
            lead = self.text[node.start + 1 : children[0][0]]
            indent = self._line_indent(children[0][0])
            if one_line:
                spaced = colon.endswith(" ")
                sep = (
                    self.text[children[0][1] : children[1][0]]
                    if len(children) > 1
                    else (", " if spaced else ",")
                )
                text = sep + prefix + self._inline(value, spaced=spaced)
                self._splice(children[-1][1], children[-1][1], text)
                return
            text = "," + lead + prefix + self._render(value, indent, one_line=False)
            self._splice(children[-1][1], children[-1][1], text)
            return
        if one_line:
            text = prefix + self._inline(value, spaced=not self._minified())
        else:
            outer = self._line_indent(node.start)
            inner = outer + self._unit()
            newline = self._newline()
            body = self._render(value, inner, one_line=False)
            text = newline + inner + prefix + body + newline + outer
        self._splice(node.start + 1, node.end - 1, text)

    def append(self, key: tuple[str, ...], item: Any) -> None:
        """Append `item` to the array at `key` (created, with its parents, when absent)."""
        node = self.find(key)
        if node is None:
            self.set(key, [item])
            return
        if node.kind != "array":
            raise invalid(self.path, self.text, node.start, f"`{'.'.join(key)}` is not a list")
        self._insert(node, None, item)

    def delete(self, key: tuple[str, ...], *, prune: bool = True) -> None:
        """Remove `key`, then (`prune`) every parent object it leaves empty."""
        for depth in range(len(key), 0, -1):
            parent = self.find(key[: depth - 1])
            if parent is None or parent.kind != "object":
                return
            found = self.member(parent, key[depth - 1])
            if found is None:
                return
            index = parent.members.index(found)
            self._remove_child(parent, [(m.start, m.value.end) for m in parent.members], index)
            emptied = self.find(key[: depth - 1])
            if not prune or depth == 1 or emptied is None or self.open(emptied).members:
                return

    def remove_items(self, key: tuple[str | int, ...], drop: list[int]) -> None:
        """Remove the items at indexes `drop` of the array at `key`."""
        for index in sorted(drop, reverse=True):
            node = self.find(key)
            assert node is not None and node.kind == "array"
            self.open(node)
            self._remove_child(node, [(i.start, i.end) for i in node.items], index)

    def _remove_child(self, node: Node, spans: list[tuple[int, int]], index: int) -> None:
        """The inverse of `_insert`: a later child takes the separator before it with it."""
        if len(spans) == 1:
            self._splice(node.start + 1, node.end - 1, "")
        elif index > 0:
            self._splice(spans[index - 1][1], spans[index][1], "")
        else:
            self._splice(spans[0][0], spans[1][0], "")

    def items(self, key: tuple[str | int, ...]) -> list[Any]:
        """The items of the array at `key` as plain data ([] when absent or not an array)."""
        node = self.find(key)
        if node is None or node.kind != "array":
            return []
        return [self.value_of(item) for item in self.open(node).items]

    def render(self) -> bytes:
        return self.text.encode("utf-8")
