"""Tool output that a Windows program wrote as UTF-16LE and the agent read as bytes.

Windows PowerShell 5.1 redirections, `wsl.exe`, `sqlcmd` and others write UTF-16LE; an agent that
decodes their output as UTF-8 records every character followed by a NUL (`H\\x00i\\x00`), or by
the high byte of its code unit (`\\x1f\\x04` for Cyrillic `П`). Such text matches no search.
`decode_utf16_runs` turns each run of those two-character units back into the characters meant
(docs/sessions.md, "Windows tool output"). Bytes the agent already replaced by U+FFFD stay
replaced; code units with a high byte above 0x1F (CJK, for example) are not recognised: their
pairs look like ordinary text.
"""

from __future__ import annotations

import re

# a code unit as it reaches the transcript: any low byte (or U+FFFD for a byte the agent could
# not decode), then a high byte that ordinary text never holds (NUL or a control other than
# tab, newline, carriage return)
_UNIT = "[\x00-\xff\ufffd][\x00-\x08\x0b\x0c\x0e-\x1f]"
MIN_UNITS = 4
# a byte order mark read as UTF-8 (two U+FFFD) or kept as U+FEFF, dropped with its run
_RUN = re.compile(f"(?P<bom>\ufffd\ufffd|\ufeff)?(?P<units>(?:{_UNIT}){{{MIN_UNITS},}})")


def decode_utf16_runs(text: str) -> str:
    """`text` with its UTF-16LE runs decoded (text without a NUL is returned as is)."""
    if "\x00" not in text:
        return text
    return _RUN.sub(_decode_run, text)


def _decode_run(match: re.Match[str]) -> str:
    units = match.group("units")
    lows, highs = units[::2], units[1::2]
    if "\x00" not in highs or 2 * lows.count("\x00") > len(lows):
        return match.group()  # control characters or zero bytes: not UTF-16 text
    return "".join(
        "\ufffd" if low == "\ufffd" else chr(ord(low) | ord(high) << 8)
        for low, high in zip(lows, highs, strict=True)
    )
