"""Promotion-journal helpers shared by prepare, discard and promote: the assessment digest a plan
binds, the plans touching a candidate, the locked-plan refusal and voiding generated plans."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from teamlore.contracts import digests
from teamlore.core import errors
from teamlore.memory.promotion.review import (
    assessment_docs,
)
from teamlore.repo.binding import RepositoryIdentity

LOCKED_PLAN_STATES = ("approved", "applying")
# -- journal helpers (shared with discard and promote) -------------------------------------------


def current_assessment_digest(conn: sqlite3.Connection, candidate_ids: Iterable[str]) -> str:
    """assessmentDigest over every stored assessment of these candidates (the plan binds it;
    promote recomputes it with this function)."""
    docs: list[dict[str, Any]] = []
    for candidate_id in candidate_ids:
        docs.extend(assessment_docs(conn, candidate_id).values())
    return digests.assessment_digest(docs)


def plans_touching(
    conn: sqlite3.Connection,
    identity: RepositoryIdentity,
    candidate_ids: Iterable[str],
    statuses: Sequence[str],
) -> list[str]:
    wanted = set(candidate_ids)
    marks = ", ".join("?" * len(statuses))
    found: list[str] = []
    for row in conn.execute(
        "SELECT plan_id, candidate_ids_json FROM promotion_journal WHERE repository_key = ? "
        f"AND worktree_key = ? AND status IN ({marks}) ORDER BY plan_id",
        (identity.repository_key, identity.worktree_key, *statuses),
    ):
        if wanted & set(orjson.loads(row[1])):
            found.append(str(row[0]))
    return found


def refuse_if_locked(
    conn: sqlite3.Connection, identity: RepositoryIdentity, candidate_ids: Sequence[str]
) -> None:
    locked = plans_touching(conn, identity, candidate_ids, LOCKED_PLAN_STATES)
    if locked:
        raise errors.TeamloreError(
            errors.CANDIDATE_LOCKED,
            f"plan {locked[0]} holds this candidate: it was approved for promotion and is not "
            "applied yet (a promote stopped before it finished); finish it with `teamlore "
            f"memory promote --plan {locked[0]}`",
            planIds=locked,
        )


def void_generated_plans(
    conn: sqlite3.Connection, identity: RepositoryIdentity, candidate_ids: Sequence[str], now: int
) -> list[str]:
    """Earlier `generated` plans sharing a candidate: superseded, hence `voided`."""
    voided = plans_touching(conn, identity, candidate_ids, ("generated",))
    conn.executemany(
        "UPDATE promotion_journal SET status = 'voided', updated_at = ? "
        "WHERE plan_id = ? AND status = 'generated'",
        [(now, plan_id) for plan_id in voided],
    )
    return voided
