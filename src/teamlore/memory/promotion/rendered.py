"""`RenderContext` (what rendering needs from the working tree) and `RenderedFile` (one file a
candidate would write: bytes, lint findings, evidence)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from teamlore.contracts import digests
from teamlore.core.canonical import LONG_HEX
from teamlore.core.text.diffs import unified_diff
from teamlore.memory.promotion.duplicates import ApprovedTexts
from teamlore.memory.promotion.targets import existing_entry_ids, read_memory_file
from teamlore.memory.store.lint import (
    Finding,
)
from teamlore.memory.store.slugs import EMPTY_ASCII_PREFIX, unique_entry_slug
from teamlore.repo.binding import RepositoryIdentity
from teamlore.sessions.index_db import provider_session_uuids

# -- rendering -----------------------------------------------------------------------------------


@dataclass(slots=True)
class RenderContext:
    """What rendering needs from the working tree; `assigned` grows as ids are handed out."""

    worktree_root: Path
    public_identity: str | None
    existing_ids: set[str]
    # provider session ids this machine has indexed: rendered text carrying one is blocked
    known_session_ids: frozenset[str] = frozenset()
    assigned: set[str] = field(default_factory=set)
    # the approved entries' texts, read when a candidate adding an entry is rendered
    approved: ApprovedTexts | None = None
    # the prefixes `[paths] aliases` map to the worktree (`repo.worktrees.worktree_roots`)
    aliases: tuple[str, ...] = ()

    @classmethod
    def open(
        cls,
        identity: RepositoryIdentity,
        public_identity: str | None,
        index: sqlite3.Connection,
        roots: tuple[str, ...] = (),
    ) -> RenderContext:
        """`roots`: the worktree's roots (`repo.worktrees.worktree_roots`), its root first."""
        root = Path(identity.worktree_root)
        ids, known = existing_entry_ids(root), provider_session_uuids(index)
        return cls(root, public_identity, ids, known, aliases=tuple(roots[1:]))

    @property
    def roots(self) -> tuple[str, ...]:
        """What text is sanitized against: the worktree root and its aliases."""
        return (str(self.worktree_root), *self.aliases)

    def fresh(self) -> RenderContext:
        return RenderContext(
            self.worktree_root,
            self.public_identity,
            set(self.existing_ids),
            self.known_session_ids,
            approved=self.approved_texts(),
            aliases=self.aliases,
        )

    def approved_texts(self) -> ApprovedTexts:
        if self.approved is None:
            self.approved = ApprovedTexts(self.worktree_root)
        return self.approved

    def read(self, target_path: str) -> bytes | None:
        return read_memory_file(self.worktree_root, target_path)

    def new_id(
        self, text: str, fallback: str = EMPTY_ASCII_PREFIX, whole: str | None = None
    ) -> str:
        """A fresh slug named by `text` (`fallback` names one with no ASCII word), its hash
        suffix of `whole` (the whole entry text) when given; long hex runs (commit hashes)
        shortened so the id stays readable and never looks like a high-entropy token."""

        def shortened(value: str) -> str:
            return LONG_HEX.sub(lambda m: m[0][:7], value)

        taken = self.existing_ids | self.assigned
        slug = unique_entry_slug(
            shortened(text), taken, fallback, None if whole is None else shortened(whole)
        )
        self.assigned.add(slug)
        return slug


@dataclass(frozen=True, slots=True)
class RenderedFile:
    target_path: str
    entry_id: str
    role: str  # new | update | deprecate
    candidate_id: str
    content: bytes
    current: bytes | None
    warnings: tuple[Finding, ...] = ()

    @property
    def target_blob_hash(self) -> str | None:
        return None if self.current is None else digests.git_blob_oid(self.current)

    @property
    def sanitized_digest(self) -> str:
        return digests.sanitized_content_digest(self.content)

    def diff(self) -> str:
        return unified_diff(
            None if self.current is None else self.current.decode("utf-8", "replace"),
            self.content.decode("utf-8"),
            fromfile="/dev/null" if self.current is None else f"a/{self.target_path}",
            tofile=f"b/{self.target_path}",
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "targetPath": self.target_path,
            "entryId": self.entry_id,
            "role": self.role,
            "candidateId": self.candidate_id,
            "operation": "write",
            "targetBlobHash": self.target_blob_hash,
            "sanitizedContentDigest": self.sanitized_digest,
            "bytes": len(self.content),
            "preview": self.content.decode("utf-8"),
            "diff": self.diff(),
            "warnings": [w.model_dump() for w in self.warnings],
        }
