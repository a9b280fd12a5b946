"""A file a person saved with CRLF line ends (on Windows) keeps them when teamlore edits it:
what teamlore adds to `CLAUDE.md`, `AGENTS.md` or a client's TOML config is written with the
file's own line ends (docs/assemble.md, docs/agents.md)."""

from __future__ import annotations


def all_crlf(text: str) -> bool:
    """Whether every line of `text` ends in CRLF; a file that mixes both kinds counts as LF."""
    return "\r\n" in text and text.count("\r\n") == text.count("\n")


def with_line_ends_of(original: str, text: str) -> str:
    """`text` with CRLF line ends when every line of `original` has them, else as it is."""
    if not all_crlf(original):
        return text
    return text.replace("\r\n", "\n").replace("\n", "\r\n")
