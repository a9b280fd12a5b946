"""`literal(value)`: text a terminal prints exactly. Below both `output` (the lean text helpers)
and `literal_console` (the Rich console), so neither imports the other."""

from __future__ import annotations

import re

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
