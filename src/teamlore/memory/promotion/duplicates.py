"""Whether an approved entry already says what a new candidate says.

Adjudication compares a draft with the approved memory of its moment; an entry a teammate
promoted and this worktree pulled afterwards was never compared. Rendering a candidate that adds
a new entry asks here (review shows it blocked, prepare refuses: `DUPLICATE_ENTRY`), so the same
lesson is not written twice under two file names.

Texts are compared normalized (NFKC, case folded, punctuation and spacing ignored): the same
words are a duplicate; word sets that overlap by at least `NEAR_DUPLICATE` (Jaccard, each CJK
character a word) of at least `MIN_WORDS` words are a near-duplicate. An entry body is compared
whole and by its lead paragraph (the content, before the `Statements:` list promotion writes).

A candidate is compared only with the entries that could be its duplicate (prefix filtering, as
set-similarity joins do): two word sets with a Jaccard of at least `NEAR_DUPLICATE` share at
least that share of the larger one, so such an entry holds at least one of the candidate's
`len(words) - shared + 1` rarest words. An inverted index of the entries' words finds those
few; the rest could be neither the same words nor a near-duplicate. Same verdicts, a few
comparisons instead of one per approved entry.
"""

from __future__ import annotations

import math
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


# the words of each approved entry file of the worktree reviewed last, by its bytes: a review
# (the page loads one on each click) reads every file again, and parses only those that changed
_READ: dict[Path, dict[str, tuple[bytes, list[list[str]] | None]]] = {}


@dataclass(slots=True)
class ApprovedTexts:
    """The bodies of the approved entries of a worktree's tree, read once when first asked."""

    worktree_root: Path
    _bodies: dict[str, list[list[str]]] | None = None
    # word → the entries whose body holds it (the lead's words are the body's)
    _holding: dict[str, set[str]] | None = None

    def _load(self) -> dict[str, list[list[str]]]:
        if self._bodies is None:
            self._bodies = {}
            self._holding = {}
            read = _READ.get(self.worktree_root, {})
            now: dict[str, tuple[bytes, list[list[str]] | None]] = {}
            for entry_id in sorted(existing_entry_ids(self.worktree_root)):
                path = layout.entry_path(entry_id)
                raw = read_memory_file(self.worktree_root, path)
                if raw is None:
                    continue
                before = read.get(entry_id)
                if before is not None and before[0] == raw:  # the same bytes: the same words
                    now[entry_id] = before
                    continue
                body = _approved_body(raw, path)
                if body is None:
                    now[entry_id] = (raw, None)
                    continue
                lead = body.split(_STATEMENTS, 1)[0]
                now[entry_id] = (raw, [words(body), words(lead)])
            _READ.clear()  # one worktree's entries are kept: the one reviewed last
            _READ[self.worktree_root] = now
            for entry_id, (_, texts) in now.items():
                if texts is not None:
                    self._bodies[entry_id] = texts
                    for word in set(texts[0]):
                        self._holding.setdefault(word, set()).add(entry_id)
        return self._bodies

    def _could_match(self, mine: list[list[str]]) -> set[str]:
        """The entries that could say one of `mine` (the same words, or a near-duplicate): those
        holding one of its `len - shared + 1` rarest words, `shared` the fewest words a match
        shares with it (see the module's docstring)."""
        holding = self._holding or {}
        found: set[str] = set()
        for one in mine:
            distinct = set(one)
            # the same words share all of them; a near-duplicate at least NEAR_DUPLICATE of the
            # larger set (floored, and a little less, so rounding never drops a match)
            shared = max(1, math.floor(NEAR_DUPLICATE * len(distinct) - 1e-9))
            rarest = sorted(distinct, key=lambda w: (len(holding.get(w, ())), w))
            for word in rarest[: len(distinct) - shared + 1]:
                found |= holding.get(word, set())
        return found

    def duplicate_of(self, texts: Iterable[str], *, besides: set[str]) -> Duplicate | None:
        """The approved entry (other than `besides`) saying one of `texts`; exact ones first."""
        mine = [w for w in (words(t) for t in texts) if w]
        near: Duplicate | None = None
        bodies = self._load()
        # in the entries' order (by id), as if each were compared: the first exact one wins,
        # else the first near one
        for entry_id in sorted(self._could_match(mine) - besides):
            theirs = bodies[entry_id]
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
