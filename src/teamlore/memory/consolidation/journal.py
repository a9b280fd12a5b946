"""What a promotion of a consolidation plan re-checks and records (memory/promotion.py calls
these for any plan holding a `consolidation-patch` candidate).

- `check_plan` (at the precheck and again before every resumed mutation): the approved tree
  still holds what synthesize bound — entries, the scene set with digests and heat, the
  doctrine, the replay epoch — apart from the plan's own targets, which the plan's per-file
  blob CAS guards; any change voids the plan (`CONSOLIDATION_DRIFT`);
- `on_applied` (in the closing transaction): the run becomes `applied`, the new baseline;
- `on_voided` (in the void transaction): the candidate is discarded and its run `stale`, so the
  next synthesize starts from the tree as it is now.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import orjson

from teamlore.memory.consolidation.drift import revalidate
from teamlore.memory.consolidation.staging import CANDIDATE_KIND
from teamlore.memory.extraction.tasks import Owner


def consolidation_payloads(
    conn: sqlite3.Connection, candidate_ids: Sequence[str]
) -> list[tuple[str, dict[str, Any]]]:
    marks = ", ".join("?" * len(candidate_ids))
    return [
        (str(row[0]), orjson.loads(row[1]))
        for row in conn.execute(
            f"SELECT candidate_id, payload_json FROM candidates WHERE candidate_id IN ({marks}) "
            "AND candidate_kind = ? ORDER BY candidate_id",
            (*candidate_ids, CANDIDATE_KIND),
        )
    ]


def check_plan(
    conn: sqlite3.Connection,
    owner: Owner,
    worktree_root: Path,
    candidate_ids: Sequence[str],
    target_paths: Collection[str],
) -> None:
    """Raise `CONSOLIDATION_DRIFT` if a consolidation of the plan lost its source."""
    for _candidate_id, payload in consolidation_payloads(conn, candidate_ids):
        revalidate(conn, owner, worktree_root, payload["binding"], exclude=target_paths)


def on_applied(conn: sqlite3.Connection, candidate_ids: Sequence[str], now: int) -> None:
    for candidate_id, _payload in consolidation_payloads(conn, candidate_ids):
        conn.execute(
            "UPDATE consolidation_runs SET status = 'applied', updated_at = ? "
            "WHERE candidate_id = ? AND status = 'pending_review'",
            (now, candidate_id),
        )


def on_voided(conn: sqlite3.Connection, candidate_ids: Sequence[str], now: int) -> None:
    for candidate_id, _payload in consolidation_payloads(conn, candidate_ids):
        conn.execute(
            "UPDATE candidates SET status = 'discarded', revision = revision + 1, updated_at = ? "
            "WHERE candidate_id = ? AND status = 'quarantined'",
            (now, candidate_id),
        )
        mark_run_stale(conn, candidate_id, now)


def mark_run_stale(conn: sqlite3.Connection, candidate_id: str, now: int) -> None:
    conn.execute(
        "UPDATE consolidation_runs SET status = 'stale', updated_at = ? "
        "WHERE candidate_id = ? AND status = 'pending_review'",
        (now, candidate_id),
    )
