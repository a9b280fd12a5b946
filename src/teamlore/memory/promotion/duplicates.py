"""Whether an approved entry already says what a new candidate says.

Adjudication compares a draft with the approved memory of its moment; an entry a teammate
promoted and this worktree pulled afterwards was never compared. Rendering a candidate that adds
a new entry asks here (review shows it blocked, prepare refuses: `DUPLICATE_ENTRY`), so the same
lesson is not written twice under two file names.

Texts are compared normalized (NFKC, case folded, punctuation and spacing ignored): the same
words are a duplicate; word sets that overlap by at least `NEAR_DUPLICATE` (Jaccard, each CJK
character a word) of at least `MIN_WORDS` words are a near-duplicate. An entry body is compared
whole and by its lead paragraph (the content, before the `Statements:` list promotion writes).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from teamlore.memory.promotion.targets import existing_entry_ids, read_memory_file
from teamlore.memory.store import frontmatter, layout

NEAR_DUPLICATE = 0.9
MIN_WORDS = 6
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\W_]+")
_STATEMENTS = "\n\nStatements:\n"


@dataclass(frozen=True, slots=True)
class Duplicate:
    entry_id: str
    path: str
    exact: bool


def words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def _similar(mine: list[str], theirs: list[str]) -> bool | None:
    """True: the same words; False: a near-duplicate; None: neither."""
    if not mine or not theirs:
        return None
    if mine == theirs:
        return True
    a, b = set(mine), set(theirs)
    if min(len(a), len(b)) < MIN_WORDS:
        return None
    return False if len(a & b) / len(a | b) >= NEAR_DUPLICATE else None


@dataclass(slots=True)
class ApprovedTexts:
    """The bodies of the approved entries of a worktree's tree, read once when first asked."""

    worktree_root: Path
    _bodies: dict[str, list[list[str]]] | None = None

    def _load(self) -> dict[str, list[list[str]]]:
        if self._bodies is None:
            self._bodies = {}
            for entry_id in sorted(existing_entry_ids(self.worktree_root)):
                path = layout.entry_path(entry_id)
                raw = read_memory_file(self.worktree_root, path)
                body = _approved_body(raw, path) if raw is not None else None
                if body is not None:
                    lead = body.split(_STATEMENTS, 1)[0]
                    self._bodies[entry_id] = [words(body), words(lead)]
        return self._bodies

    def duplicate_of(self, texts: Iterable[str], *, besides: set[str]) -> Duplicate | None:
        """The approved entry (other than `besides`) saying one of `texts`; exact ones first."""
        mine = [w for w in (words(t) for t in texts) if w]
        near: Duplicate | None = None
        for entry_id, theirs in self._load().items():
            if entry_id in besides:
                continue
            for one in mine:
                for other in theirs:
                    same = _similar(one, other)
                    if same is None:
                        continue
                    found = Duplicate(entry_id, layout.entry_path(entry_id), same)
                    if same:
                        return found
                    near = near or found
        return near


def _approved_body(raw: bytes, path: str) -> str | None:
    """The Markdown body of an approved entry file (None: deprecated, or no readable front
    matter)."""
    try:
        doc = frontmatter.parse(raw, path)
    except frontmatter.MemoryFormatError:
        return None
    status = doc.fields.get("status")
    return doc.body if status is None or status == "approved" else None
