"""`literal(value)`: text a terminal prints exactly; `json_text(value)`: JSON any stdout carries.
Below both `output` (the lean text helpers) and `literal_console` (the Rich console), so neither
imports the other."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from teamlore.cli import writes_utf8

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional marks, overrides and
# isolates (text that reorders itself on screen)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def literal(value: object) -> str:
    r"""`value` as text a terminal prints exactly: control characters become visible escapes
    (ESC shows as `\x1b`; tabs and newlines stay). The consoles below never parse markup, so
    nothing else is needed; this is the one helper every text renderer uses
    (docs/cli-output.md)."""
    return _CONTROL.sub(_visible, str(value))


def json_text(value: Any, indent: int | None = None) -> str:
    r"""`value` as JSON for stdout, on one line or indented: characters as they are when stdout
    is UTF-8, `\u` escapes (which every JSON reader reads back as the same characters) when it
    is not (`teamlore.cli.any_character_gets_out`)."""
    separators = (",", ":") if indent is None else None  # one compact line, or indented
    return json.dumps(
        value, indent=indent, separators=separators, ensure_ascii=not writes_utf8(sys.stdout)
    )
