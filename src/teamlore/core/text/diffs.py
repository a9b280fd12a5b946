"""Unified diffs of text files as git prints them: the one diff a review, a plan and an
install preview show (docs/cli-output.md).

Only a newline ends a line (`str.splitlines` also cuts at U+2028, a form feed, …, and the diff
showed lines the file does not have), and a last line without one is followed by git's
`\\ No newline at end of file`. Without that marker difflib glues the next `+` line onto it:
the added text read as part of the removed line.
"""

from __future__ import annotations

import difflib
import re

NO_NEWLINE = "\\ No newline at end of file\n"

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def file_lines(text: str) -> list[str]:
    """`text`'s lines with their ends, as git counts them (see the module docstring)."""
    return _LINE.findall(text)


def unified_diff(before: str | None, after: str | None, *, fromfile: str, tofile: str) -> str:
    """The unified diff from `before` to `after` (None: the file is absent), every line of it
    ending in a newline."""
    lines = difflib.unified_diff(
        file_lines(before or ""), file_lines(after or ""), fromfile=fromfile, tofile=tofile
    )
    return "".join(line if line.endswith("\n") else line + "\n" + NO_NEWLINE for line in lines)
