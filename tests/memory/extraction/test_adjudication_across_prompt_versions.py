"""A result to an adjudication task issued before teamlore's adjudication prompt changed.

A person may upgrade teamlore between staging a draft batch and their agent sending its
decisions. When only the prompt's words changed (the earlier version is in
ANSWERABLE_PROMPT_VERSIONS: its task and result have today's shape), the judgement still holds
and the result is applied. A task under a version this teamlore does not read is refused as stale
(`prompt-version-changed`) with nothing changed, and staging the same draft batch again issues a
fresh task under the current prompt. A live task is shown again only under the current prompt.

Real state DB; "the version the code issues" is changed the way an upgrade changes it, by the
module constant that stage and the batch runner read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_adjudication import decide, result, status_of, submit, two_drafts
from test_staging import OWNER, World, changed_tables, draft, dump, refused

from teamlore.contracts.adjudication import ADJUDICATION_PROMPT_VERSION
from teamlore.memory.extraction import adjudication_tasks
from teamlore.memory.store.state_db import open_state_db

NEXT_VERSION = "memory-adjudication@99"
UNREAD_VERSION = "memory-adjudication@0"


@pytest.fixture()
def world(home: Path) -> World:
    return World(open_state_db(home))


def issue_under(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    """From now on stage and the runner issue adjudication tasks under `version`."""
    monkeypatch.setattr(adjudication_tasks, "ADJUDICATION_PROMPT_VERSION", version)


def task_statuses(world: World) -> dict[str, str]:
    rows = world.conn.execute("SELECT task_id, status FROM tasks WHERE kind = 'adjudication'")
    return dict(rows.fetchall())


def test_a_result_to_a_task_issued_under_the_previous_prompt_is_applied(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged, a, b = two_drafts(world)
    assert staged["adjudicationTask"]["binding"]["promptVersion"] == ADJUDICATION_PROMPT_VERSION
    issue_under(monkeypatch, NEXT_VERSION)  # upgraded before the agent answered

    response = submit(world, result(staged, [decide(a, "store"), decide(b, "skip", [a])]))

    assert response["status"] == "staged"
    assert status_of(world, a) == ("quarantined", "done", 2)
    assert status_of(world, b) == ("discarded", "done", 2)
    assert task_statuses(world) == {staged["adjudicationTaskId"]: "submitted"}


def test_a_result_to_a_task_issued_under_memory_adjudication_2_is_applied_after_the_bump(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    issue_under(monkeypatch, "memory-adjudication@2")  # the teamlore before the upgrade
    staged, a, b = two_drafts(world)
    monkeypatch.undo()

    response = submit(world, result(staged, [decide(a, "store"), decide(b, "store")]))

    assert [c["candidateStatus"] for c in response["candidates"]] == ["quarantined"] * 2
    assert task_statuses(world) == {staged["adjudicationTaskId"]: "submitted"}


def test_a_result_to_a_task_under_a_prompt_this_teamlore_does_not_read_is_refused_unchanged(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    issue_under(monkeypatch, UNREAD_VERSION)
    staged, a, b = two_drafts(world)
    monkeypatch.undo()  # now this teamlore issues ADJUDICATION_PROMPT_VERSION again
    decisions = [decide(a, "store"), decide(b, "store")]
    before = dump(world.conn)

    error = refused(submit, world, result(staged, decisions))

    assert error.code == "ADJUDICATION_STALE"
    assert error.details["reason"] == "prompt-version-changed"
    assert error.details["issuedPromptVersion"] == UNREAD_VERSION
    assert error.details["waitingCandidateIds"] == [a, b]
    assert UNREAD_VERSION in error.message and "stage the same draft batch again" in error.message
    assert changed_tables(before, dump(world.conn)) == set()

    # what the refusal says to do: stage the batch again for a task under the current prompt
    task_id = staged["taskId"]
    ev = list(world.sources.evidence[task_id])
    again = world.stage(
        task_id,
        [
            draft("Run the migrations before starting the API server.", [ev[0]]),
            draft("Start the API server only after migrations ran.", [ev[1]]),
        ],
    )
    fresh = again["adjudicationTask"]
    assert fresh["binding"]["promptVersion"] == ADJUDICATION_PROMPT_VERSION
    assert fresh["contract"]["prompts"]["promptVersion"] == ADJUDICATION_PROMPT_VERSION
    assert task_statuses(world)[staged["adjudicationTaskId"]] == "stale"
    submit(world, result(again, decisions))
    assert status_of(world, a)[0] == status_of(world, b)[0] == "quarantined"


def test_the_runner_shows_a_live_task_again_only_under_the_current_prompt(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged, _, _ = two_drafts(world)
    issued = staged["adjudicationTask"]
    ids = staged["taskId"]
    assert adjudication_tasks.live_adjudication_task(world.conn, OWNER, ids) == issued
    issue_under(monkeypatch, NEXT_VERSION)

    assert adjudication_tasks.live_adjudication_task(world.conn, OWNER, ids) is None  # read-only
    assert task_statuses(world) == {issued["taskId"]: "pending"}
    fresh = adjudication_tasks.live_adjudication_task(world.conn, OWNER, ids, reissue=True)

    assert fresh is not None and fresh["taskId"] != issued["taskId"]
    assert fresh["binding"]["promptVersion"] == NEXT_VERSION
    assert task_statuses(world) == {issued["taskId"]: "stale", fresh["taskId"]: "pending"}
