"""The `consolidation-patch` candidate kind, as promotion sees it (registered in
`memory/promotion/kinds.py`): it prepares its own plans, binds the approved tree it was
synthesized from, and moves its consolidation run along when it is applied, voided or
discarded."""

from __future__ import annotations

import sqlite3
from typing import Any

from teamlore.contracts.promotion import PrepareRequest
from teamlore.memory.consolidation import journal
from teamlore.memory.consolidation.prepare import prepare_consolidation
from teamlore.memory.consolidation.staging import CANDIDATE_KIND
from teamlore.memory.promotion.kinds import CandidateKindHooks, register
from teamlore.repo.binding import RepositoryIdentity


def _prepare(
    state: sqlite3.Connection, identity: RepositoryIdentity, request: PrepareRequest, now: int
) -> dict[str, Any]:
    return prepare_consolidation(state, identity, request, now=now)


CONSOLIDATION = register(
    CandidateKindHooks(
        CANDIDATE_KIND,
        prepare=_prepare,
        check_plan=journal.check_plan,
        on_applied=journal.on_applied,
        on_voided=journal.on_voided,
        on_discarded=journal.mark_run_stale,  # its run ends: the next synthesize is unblocked
    )
)
