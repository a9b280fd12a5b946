"""Candidate kinds promotion does not own: what it calls for them (glossary: candidate).

Promotion's own kind is `entry`. A package that adds a kind of candidate registers its hooks here
when its `kind` module is imported — `teamlore.memory.skills.kind` registers `skill`,
`teamlore.memory.consolidation.kind` registers `consolidation-patch` — so promotion never imports
the packages built on it. The operations load both
(`teamlore.ops.memory.review.load_candidate_kinds`). A candidate whose stored kind has no hooks
is refused loudly (`require`), never promoted or discarded without them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from teamlore.memory.extraction.tasks import Owner

if TYPE_CHECKING:
    from teamlore.contracts.promotion import PrepareRequest
    from teamlore.memory.promotion.rendered import RenderContext, RenderedFile
    from teamlore.memory.promotion.review import CandidateView
    from teamlore.repo.binding import RepositoryIdentity

ENTRY = "entry"

PlanCheck = Callable[[sqlite3.Connection, Owner, Path, Sequence[str], Collection[str]], None]
"""(conn, owner, worktree root, the plan's candidate ids, its target paths): raises a
`TeamloreError` (its code and `path` detail become the drift that voids the plan)."""

Transition = Callable[[sqlite3.Connection, Sequence[str], int], None]
"""(conn, candidate ids, now ms), inside promotion's transaction."""


@dataclass(frozen=True, slots=True)
class CandidateKindHooks:
    stored: str  # `candidates.candidate_kind`
    render: Callable[[CandidateView, RenderContext], list[RenderedFile]] | None = None
    prepare: (
        Callable[[sqlite3.Connection, RepositoryIdentity, PrepareRequest, int], dict[str, Any]]
        | None
    ) = None  # a kind whose PrepareRequest@v1 it plans itself
    check_plan: PlanCheck | None = None  # before applying and again while applying
    check_before_apply: PlanCheck | None = None  # once, before applying
    on_applied: Transition | None = None
    on_voided: Transition | None = None
    on_discarded: Callable[[sqlite3.Connection, str, int], None] | None = None


_REGISTERED: dict[str, CandidateKindHooks] = {}


def register(hooks: CandidateKindHooks) -> CandidateKindHooks:
    """Add a kind (idempotent for the same hooks)."""
    known = _REGISTERED.get(hooks.stored)
    if known is not None and known != hooks:
        raise ValueError(f"candidate kind {hooks.stored} registered twice")
    _REGISTERED[hooks.stored] = hooks
    return hooks


def require(stored: str) -> CandidateKindHooks:
    """The hooks of a kind; a programming error (reported as INTERNAL) when it has none."""
    hooks = _REGISTERED.get(stored)
    if hooks is None:
        raise RuntimeError(f"candidate kind {stored!r} is not registered with promotion")
    return hooks


def registered_kinds_of(
    conn: sqlite3.Connection, candidate_ids: Sequence[str]
) -> list[CandidateKindHooks]:
    """`kinds_of`, leaving out the kinds not registered in this process (a read that did not
    load them: `memory status` predicting a plan's drift)."""
    return [
        _REGISTERED[kind]
        for kind in sorted(stored_kinds(conn, candidate_ids) - {ENTRY})
        if kind in _REGISTERED
    ]


def stored_kinds(conn: sqlite3.Connection, candidate_ids: Sequence[str]) -> set[str]:
    """The stored kinds (`candidates.candidate_kind`) of these candidates."""
    return {
        str(row[0])
        for candidate_id in candidate_ids
        for row in conn.execute(
            "SELECT candidate_kind FROM candidates WHERE candidate_id = ?", (candidate_id,)
        )
    }


def kinds_of(conn: sqlite3.Connection, candidate_ids: Sequence[str]) -> list[CandidateKindHooks]:
    """The hooks of every kind other than `entry` among the candidates, in a stable order."""
    return [require(kind) for kind in sorted(stored_kinds(conn, candidate_ids) - {ENTRY})]
