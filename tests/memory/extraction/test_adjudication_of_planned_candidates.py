"""Adjudication leaves alone a candidate a person approved into a plan.

A plan is `approved` once a person promotes it and stays so until it is applied (a crash or a
refused precheck can leave it there). An `update`/`merge` would consume (discard) the candidate
under it, so the plan could never land; the adjudication is refused with CANDIDATE_LOCKED and
nothing changes, and the same draft can still be stored (or skipped) beside the candidate.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from consumed_world import DRAFT_FORMAT, MERGED, prepare_plan, quarantined_release_candidate
from recall_world import BASE, WINDOW, CodexSession, sync
from test_review import Flow, candidate, store

from teamlore.core import errors
from teamlore.memory.promotion.stored_plan import approve_plan


def _later_draft(flow: Flow) -> dict[str, Any]:
    """A later session about the same release, staged: the stage response (its adjudication
    task recalls the earlier candidate)."""
    later = CodexSession("a2", flow.repo, start=BASE + timedelta(hours=2))
    later.user("Why did the tag push fail again?")
    later.answer("Release tags need a v prefix; the release tests catch a missing one.")
    later.turn("run them", "pytest -q tests/test_release.py passes.")
    later.turn("push the tag", "Pushed v2.0.1.")
    later.write(flow.codex)
    sync(flow.home, flow.codex, flow.repo)
    (task,) = flow.op("memory.recall", WINDOW)["sources"]
    evidence = task["chunk"]["turnEvidence"][0]["evidenceId"]
    return flow.op(
        "memory.stage",
        {
            "format": DRAFT_FORMAT,
            "taskId": task["taskId"],
            "binding": task["binding"],
            "candidates": [candidate(MERGED, [(MERGED, [evidence])])],
        },
    )


def _row(flow: Flow, candidate_id: str) -> tuple[str, int]:
    conn = flow.state()
    status, revision = conn.execute(
        "SELECT status, revision FROM candidates WHERE candidate_id = ?", (candidate_id,)
    ).fetchone()
    conn.close()
    return str(status), int(revision)


@pytest.mark.parametrize("plan_status", ["approved", "applying"])
def test_a_merge_may_not_consume_a_candidate_of_an_approved_plan(
    tmp_path: Path, home: Path, plan_status: str
) -> None:
    flow, planned = quarantined_release_candidate(tmp_path, home)
    plan_id = prepare_plan(flow, planned)
    conn = flow.state()
    approve_plan(conn, plan_id)
    with conn:
        conn.execute(
            "UPDATE promotion_journal SET status = ? WHERE plan_id = ?", (plan_status, plan_id)
        )
    conn.close()
    staged = _later_draft(flow)
    assert planned in {item["id"] for item in staged["adjudicationTask"]["pool"]}
    (draft,) = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    merge = {
        "draftRef": draft,
        "action": "merge",
        "targetIds": [planned],
        "mergedFields": {"content": MERGED},
    }

    with pytest.raises(errors.TeamloreError) as refused:
        flow.adjudicate(staged, [merge])

    assert refused.value.code == "CANDIDATE_LOCKED"
    assert refused.value.message == (
        f"{draft}: merge would consume {planned}, in plan {plan_id} a person approved for "
        "promotion; decide this draft with store or skip, or wait until that plan is promoted "
        "and stage it again"
    )
    assert refused.value.details["candidateIds"] == [planned]
    assert refused.value.details["planIds"] == [plan_id]
    assert _row(flow, planned) == ("quarantined", 2)
    assert _row(flow, draft) == ("draft", 1)
    conn = flow.state()
    (status,) = conn.execute(
        "SELECT status FROM promotion_journal WHERE plan_id = ?", (plan_id,)
    ).fetchone()
    conn.close()
    assert status == plan_status

    flow.adjudicate(staged, [store(draft)])  # the same task, decided without consuming it
    assert _row(flow, draft) == ("quarantined", 2)
    assert _row(flow, planned) == ("quarantined", 2)
