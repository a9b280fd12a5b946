"""The `skill` candidate kind, as promotion sees it (registered in `memory/promotion/kinds.py`):
the files promoting a Skill writes, and the memory it was drafted against, re-checked once
before it is applied."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from pathlib import Path

from teamlore.core import errors
from teamlore.memory.extraction.tasks import Owner
from teamlore.memory.promotion.kinds import CandidateKindHooks, register
from teamlore.memory.skills.candidates import render_skill_candidate, stale_skill_candidates
from teamlore.memory.skills.staging import discard_again


def _memory_unchanged(
    conn: sqlite3.Connection,
    owner: Owner,
    worktree_root: Path,
    candidate_ids: Sequence[str],
    target_paths: Collection[str],
) -> None:
    stale = stale_skill_candidates(conn, candidate_ids, worktree_root)
    if stale:
        raise errors.TeamloreError(
            errors.MEMORY_CONTEXT_DRIFT,
            f"the team memory (entries, scenes, doctrine) changed since Skill candidate "
            f"{stale[0]} was staged",
            candidateId=stale[0],
        ).advising(discard_again(stale[0]))


SKILL = register(
    CandidateKindHooks("skill", render=render_skill_candidate, check_before_apply=_memory_unchanged)
)
