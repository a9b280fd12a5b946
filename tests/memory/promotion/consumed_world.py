"""A candidate a later merge consumes while a plan holding it waits to be promoted.

The release world of `test_review.Flow` (a real repository, a real Codex session, the real
recall and stage): candidate A is quarantined and confirmed into a plan; then a second session
about the same release is recalled and its draft is adjudicated as a `merge` with A, which
discards A (revision 2 → 3). The plan still binds A at revision 2: promote would refuse it
(`PROMOTION_CANDIDATE_DRIFT`), and the plan lists should say so before anyone tries."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from recall_world import BASE, WINDOW, CodexSession, sync
from test_review import TEXT, Flow, candidate, request_for

DRAFT_FORMAT = "threadshare-memory-candidate-draft-batch@v1"
MERGED = "Release tags need a v prefix; run the release tests before pushing a tag: they catch it."


def quarantined_release_candidate(tmp_path: Path, home: Path) -> tuple[Flow, str]:
    """The release world with one quarantined candidate, A: (flow, A's id)."""
    flow = Flow(tmp_path, home)
    (first,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    return flow, first


def prepare_plan(flow: Flow, candidate_id: str) -> str:
    """A person confirmed every statement of the candidate: the plan's id."""
    return str(flow.op("memory.prepare", request_for(flow.item(candidate_id)))["planId"])


def merge_into_a_later_candidate(flow: Flow, consumed: str) -> str:
    """A later session's draft, adjudicated as a merge with `consumed` (which is discarded):
    the merging candidate's id."""
    later = CodexSession("a2", flow.repo, start=BASE + timedelta(hours=2))
    later.user("Why did the tag push fail again?")
    later.answer("Release tags need a v prefix; the release tests catch a missing one.")
    later.turn("run them", "pytest -q tests/test_release.py passes.")
    later.turn("push the tag", "Pushed v2.0.1.")
    later.write(flow.codex)
    sync(flow.home, flow.codex, flow.repo)
    recalled = flow.op("memory.recall", WINDOW)
    (task,) = recalled["sources"]
    evidence = task["chunk"]["turnEvidence"][0]["evidenceId"]
    batch: dict[str, Any] = {
        "format": DRAFT_FORMAT,
        "taskId": task["taskId"],
        "binding": task["binding"],
        "candidates": [candidate(MERGED, [(MERGED, [evidence])])],
    }
    staged = flow.op("memory.stage", batch)
    pool = {item["id"] for item in staged["adjudicationTask"]["pool"]}
    assert consumed in pool, f"recall did not find the candidate to merge: {sorted(pool)}"
    (merger,) = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    decision = {
        "draftRef": merger,
        "action": "merge",
        "targetIds": [consumed],
        "mergedFields": {"content": MERGED},
    }
    flow.adjudicate(staged, [decision])
    return str(merger)
