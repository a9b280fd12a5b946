"""`literal(value)`: text a terminal prints exactly; `json_text(value)`: JSON any stdout carries.
Below both `output` (the lean text helpers) and `literal_console` (the Rich console), so neither
imports the other."""

from __future__ import annotations

import json
import sys
from typing import Any

from teamlore.cli import writes_utf8


def literal(value: object) -> str:
    r"""`value` as text a terminal prints exactly: control characters and characters that show
    as nothing become visible escapes (ESC shows as `\x1b`, a zero-width space as `\u200b`;
    tabs and newlines stay: `core.text.hidden`). The consoles below never parse markup, so
    nothing else is needed; this is the one helper every text renderer uses
    (docs/cli-output.md)."""
    from teamlore.core.text.hidden import shown  # the text view's: JSON output never needs it

    return shown(str(value))


def json_text(value: Any, indent: int | None = None) -> str:
    r"""`value` as JSON for stdout, on one line or indented: characters as they are when stdout
    is UTF-8, `\u` escapes (which every JSON reader reads back as the same characters) when it
    is not (`teamlore.cli.any_character_gets_out`)."""
    separators = (",", ":") if indent is None else None  # one compact line, or indented
    return json.dumps(
        value, indent=indent, separators=separators, ensure_ascii=not writes_utf8(sys.stdout)
    )
