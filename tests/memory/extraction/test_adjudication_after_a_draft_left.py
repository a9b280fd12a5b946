"""A staged batch whose draft left it before adjudication: the drafts left are still adjudicated.

A draft leaves its batch when a person discards it (`memory discard`) or when another batch's
`merge` consumes it. The batch's adjudication task then no longer holds the drafts that wait:
submitting it is refused as stale (`drafts-changed`), and staging the same draft batch again —
what the refusal says to do — issues a fresh task over the drafts left. `memory status` counts
them and the batch runner plans their adjudication; none stays a draft forever.

Real git repository, real Codex session, real sync, recall, stage and discard operations over
real SQLite (`test_review.Flow`).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from recall_world import BASE, WINDOW, CodexSession, sync
from test_review import Flow, candidate, store

from teamlore.contracts.adjudication import ADJUDICATION_RESULT_FORMAT
from teamlore.core import errors

TAGS = "Release tags need a v prefix; run the release tests before pushing a tag."
COMMIT_AFTER = "Commit the release fix only after pytest tests/test_release.py passes."
RUNNER = {"runner": "openai", "runnerModel": "m", "runnerEndpoint": "http://127.0.0.1:9/v1"}


@pytest.fixture()
def flow(tmp_path: Path, home: Path) -> Flow:
    return Flow(tmp_path, home)


def result(task: dict[str, Any], decisions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "format": ADJUDICATION_RESULT_FORMAT,
        "taskId": task["taskId"],
        "binding": task["binding"],
        "adjudications": decisions,
    }


def draft_ids(staged: dict[str, Any]) -> list[str]:
    return [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]


def statuses(flow: Flow) -> dict[str, tuple[str, str]]:
    with flow.state() as state:
        rows = state.execute("SELECT candidate_id, status, adjudication FROM candidates")
        return {str(r[0]): (str(r[1]), str(r[2])) for r in rows}


def waiting(flow: Flow) -> int:
    adjudication = flow.op("memory.status", {})["adjudication"]
    return 0 if adjudication is None else int(adjudication["drafts"])


def test_the_drafts_left_after_a_discard_get_a_fresh_adjudication_task(flow: Flow) -> None:
    batch = [
        candidate(TAGS, [(TAGS, [flow.turn_ev(1)])]),
        candidate(COMMIT_AFTER, [(COMMIT_AFTER, [flow.turn_ev(2)])]),
    ]
    staged = flow.stage(batch)
    discarded, kept = draft_ids(staged)

    flow.op("memory.discard", {"candidateId": discarded})

    assert waiting(flow) == 1
    old = staged["adjudicationTask"]
    refusal = flow.refused("memory.stage", result(old, [store(discarded), store(kept)]))
    assert refusal.code == errors.ADJUDICATION_STALE.code
    assert refusal.details["reason"] == "drafts-changed"
    assert refusal.details["waitingCandidateIds"] == [kept]
    assert "stage the same draft batch again" in refusal.message

    again = flow.stage(batch)  # what the refusal says to do
    assert again["idempotent"] is True
    fresh = again["adjudicationTask"]
    assert fresh["taskId"] != old["taskId"]
    assert [d["candidateId"] for d in fresh["drafts"]] == [kept]
    assert flow.stage(batch)["adjudicationTask"]["taskId"] == fresh["taskId"]  # stays put

    decided = flow.op("memory.stage", result(fresh, [store(kept)]))
    assert [c["candidateStatus"] for c in decided["candidates"]] == ["quarantined"]
    assert statuses(flow) == {discarded: ("discarded", "pending"), kept: ("quarantined", "done")}
    assert [i["candidateId"] for i in flow.review()["items"]] == [kept]
    assert waiting(flow) == 0
    with flow.state() as state:
        assert state.execute("SELECT status FROM chunks").fetchone()[0] == "extracted"


def test_the_batch_runner_plans_the_adjudication_of_the_drafts_left(flow: Flow) -> None:
    batch = [
        candidate(TAGS, [(TAGS, [flow.turn_ev(1)])]),
        candidate(COMMIT_AFTER, [(COMMIT_AFTER, [flow.turn_ev(2)])]),
    ]
    discarded, kept = draft_ids(flow.stage(batch))
    flow.op("memory.discard", {"candidateId": discarded})

    preview = flow.op("memory.extract_preview", {**RUNNER, **WINDOW})

    (plan,) = preview["plans"]
    assert plan["taskKind"] == "adjudication"
    assert flow.op("memory.status", {})["adjudication"]["plans"] == [plan["planDigest"]]
    planned = flow.stage(batch)["adjudicationTask"]  # the task the plan adjudicates
    assert planned["taskId"] == plan["taskId"]
    assert [d["candidateId"] for d in planned["drafts"]] == [kept]


def test_the_drafts_left_after_another_batch_merged_one_get_a_fresh_task(flow: Flow) -> None:
    later = CodexSession("b2", flow.repo, start=BASE + timedelta(days=1))
    later.user("Pushing the release tag failed again")
    later.shell("git push origin v2", "rejected: tag needs a v prefix", exit_code=1)
    later.answer("Tags need the v prefix.")
    later.turn("run the release tests first", "They pass.")
    later.turn("push the tag now", "Pushed v2.0.0.")
    later.write(flow.codex)
    sync(flow.home, flow.codex, flow.repo)
    first, second = flow.op("memory.recall", WINDOW)["sources"]
    flow._task = first
    batch = [
        candidate(TAGS, [(TAGS, [flow.turn_ev(1)])]),
        candidate(COMMIT_AFTER, [(COMMIT_AFTER, [flow.turn_ev(2)])]),
    ]
    staged = flow.stage(batch)
    merged, kept = draft_ids(staged)
    flow._task = second
    other = flow.stage([candidate(TAGS, [(TAGS, [flow.turn_ev(1)])])])
    (merging,) = draft_ids(other)
    assert merged in {item["id"] for item in other["adjudicationTask"]["pool"]}
    merge = {"draftRef": merging, "action": "merge", "targetIds": [merged]}
    flow.adjudicate(other, [{**merge, "mergedFields": {"content": TAGS}}])
    assert statuses(flow)[merged] == ("discarded", "done")  # consumed by the merge

    flow._task = first
    again = flow.stage(batch)
    fresh = again["adjudicationTask"]
    assert fresh["taskId"] != staged["adjudicationTask"]["taskId"]
    assert [d["candidateId"] for d in fresh["drafts"]] == [kept]
    flow.op("memory.stage", result(fresh, [store(kept)]))
    assert statuses(flow)[kept] == ("quarantined", "done")
    assert waiting(flow) == 0


def test_when_every_draft_of_a_batch_left_nothing_is_left_to_decide(flow: Flow) -> None:
    batch = [
        candidate(TAGS, [(TAGS, [flow.turn_ev(1)])]),
        candidate(COMMIT_AFTER, [(COMMIT_AFTER, [flow.turn_ev(2)])]),
    ]
    staged = flow.stage(batch)
    for candidate_id in draft_ids(staged):
        flow.op("memory.discard", {"candidateId": candidate_id})

    assert waiting(flow) == 0
    again = flow.stage(batch)
    assert again["idempotent"] is True
    assert again["adjudicationTask"]["taskId"] == staged["adjudicationTask"]["taskId"]
    decisions = [store(i) for i in draft_ids(staged)]
    refusal = flow.refused("memory.stage", result(staged["adjudicationTask"], decisions))
    assert refusal.code == errors.ADJUDICATION_STALE.code
    assert refusal.details["waitingCandidateIds"] == []
    assert refusal.message.endswith("nothing is left to decide")
