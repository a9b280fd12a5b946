"""Masking secrets out of text that leaves for a reader: what an agent reads of personal
memory (personal/reader.py), and every transcript chunk recall hands an agent or the batch
runner sends a model (memory/extraction/recall.py, docs/runner.md "What is sent").

A secret is what the lint blocks as one: a `secret.*` block rule of `scan_content`. Each is
replaced by its redacted preview (`…[40 chars]`: no character of it, since a password's first
letters are a part of it); a private key block, BEGIN line to END line, by `PRIVATE_KEY_MASK`,
without its length.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from teamlore.core.secrets.rules import Hit

# what a private key block is masked as: not its length, which tells a key's type and size
# (a 4096-bit RSA key's block is some 3,200 characters, an Ed25519 key's some 400)
PRIVATE_KEY_MASK = "…[private key]"
# what a mask looks like in masked text (`redact(secret, 0)`, PRIVATE_KEY_MASK)
MASKED = re.compile(r"…\[(?:[0-9]+ chars|private key)\]")

# the END line of a private key block (the scanner's `secret.private-key` finds its BEGIN line)
_PRIVATE_KEY_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")


def secret_hits(text: str) -> list[Hit]:
    """The scanner's hits that are secrets: `secret.*` block rules."""
    from teamlore.core.secrets.scan import scan_content

    return [h for h in scan_content(text) if h.severity == "block" and h.rule.startswith("secret.")]


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _whole_key_blocks(text: str, hits: list[Hit]) -> list[Hit]:
    """`hits` (sorted) with each private key block one hit from its BEGIN line to its END line:
    the scanner reports the BEGIN line, and its body lines at most one by one (a short last line,
    the END line and the number of lines would reach the reader). A block with no END runs to
    the end of the text, not to a blank line: a legacy encrypted key has one between its
    headers and its body. The hits inside a block go with it."""
    merged: list[Hit] = []
    for hit in hits:
        if merged and merged[-1].rule == "secret.private-key" and hit.start < merged[-1].end:
            block = merged[-1]
            merged[-1] = block._replace(end=max(block.end, hit.end))  # inside the block
            continue
        if hit.rule == "secret.private-key":
            end = _PRIVATE_KEY_END.search(text, hit.end)
            last = max(hit.end, len(text.rstrip("\r\n")))  # the text's last line, not its end
            hit = hit._replace(end=last if end is None else end.end())
        merged.append(hit)
    return merged


def mask_secrets(text: str) -> tuple[str, list[tuple[int, str]]]:
    """`text` with each secret replaced by its redacted preview, and the line (1-based) and rule
    of each, in order; a private key block is one secret, BEGIN to END line, masked as
    `PRIVATE_KEY_MASK`. Never the secret."""
    from teamlore.core.secrets.heuristics import redact

    hits = _whole_key_blocks(text, sorted(secret_hits(text), key=lambda h: h.start))
    pieces: list[str] = []
    position = 0
    for hit in hits:
        secret = text[hit.start : hit.end]
        mask = PRIVATE_KEY_MASK if hit.rule == "secret.private-key" else redact(secret, 0)
        pieces += [text[position : hit.start], mask]
        position = hit.end
    found = [(_line_of(text, h.start), h.rule) for h in hits]
    return "".join(pieces) + text[position:], found


def masked_text(text: str) -> str:
    """`text` with its secrets masked (`mask_secrets`); the scanner runs only on a text the
    secret rules' own cheap test says may hold one (core/secrets/shapes.py)."""
    from teamlore.core.secrets.shapes import may_hold_secret

    return mask_secrets(text)[0] if may_hold_secret(text) else text


def masks_in(text: str) -> int:
    """How many masks (`…[40 chars]`, `…[private key]`) `text` holds."""
    return len(MASKED.findall(text))
