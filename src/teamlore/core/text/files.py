"""What people's tools do to the text files teamlore reads and edits.

- A file a person saved with CRLF line ends (on Windows) keeps them when teamlore edits it: what
  teamlore adds to `CLAUDE.md`, `AGENTS.md` or a client's TOML config is written with the file's
  own line ends (docs/assemble.md, docs/agents.md).
- A merge (or a rebase, cherry-pick or `stash pop`) that stops leaves both sides of each
  conflict in the file, between a `<<<<<<< <label>` line, a `=======` line and a
  `>>>>>>> <label>` line. Memory files (docs/memory.md, "Merge conflicts") and client configs
  kept in a dotfiles repository (docs/agents.md) can be in that state; readers name it rather
  than misread the file.
- A clone with `core.autocrlf=true` (a Windows checkout) has every text file with CRLF line ends
  while git holds it with LF: the digest that tells one version of a memory file from another
  (`lf_sha256`) reads CRLF as LF, so both checkouts of one commit agree on what changed.
"""

from __future__ import annotations

import hashlib
import re


def all_crlf(text: str) -> bool:
    """Whether every line of `text` ends in CRLF; a file that mixes both kinds counts as LF."""
    return "\r\n" in text and text.count("\r\n") == text.count("\n")


def with_line_ends_of(original: str, text: str) -> str:
    """`text` with CRLF line ends when every line of `original` has them, else as it is."""
    if not all_crlf(original):
        return text
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def lf_sha256(data: bytes) -> str:
    """The sha256 (hex) of `data` with every CRLF read as LF: of an LF file, its bytes' sha256
    (the digest it always had); of its CRLF checkout, the same."""
    if b"\r\n" in data:
        data = data.replace(b"\r\n", b"\n")
    return hashlib.sha256(data).hexdigest()


# the three markers at the start of a line, as git writes them (seven characters each), in a
# file with LF or CRLF line ends
_OURS = re.compile(r"^<{7}(?: |\r?$)", re.MULTILINE)
_SPLIT = re.compile(r"^={7}\r?$", re.MULTILINE)
_THEIRS = re.compile(r"^>{7}(?: |\r?$)", re.MULTILINE)


def conflict_start(text: str) -> int | None:
    """The offset of the first unresolved conflict's `<<<<<<<` line, if `text` holds one: the
    three markers at line starts, in git's order."""
    if "<<<<<<<" not in text:
        return None
    ours = _OURS.search(text)
    split = _SPLIT.search(text, ours.end()) if ours else None
    if ours is None or split is None or _THEIRS.search(text, split.end()) is None:
        return None
    return ours.start()


def conflict_regions(text: str) -> list[tuple[int, int]]:
    """Each unresolved conflict of `text` as (offset of its `<<<<<<<` line, offset after its
    `>>>>>>>` line), in file order."""
    regions: list[tuple[int, int]] = []
    position = 0
    while "<<<<<<<" in text[position:]:
        ours = _OURS.search(text, position)
        split = _SPLIT.search(text, ours.end()) if ours else None
        theirs = _THEIRS.search(text, split.end()) if split else None
        if ours is None or theirs is None:
            break
        line_end = text.find("\n", theirs.end())
        position = len(text) if line_end < 0 else line_end + 1
        regions.append((ours.start(), position))
    return regions
