"""The batch runner across an upgrade that changes the adjudication prompt's version.

An adjudication plan carries its task, prompt text included: after an upgrade that changes the
prompt, approving a plan written before it is refused before anything is sent
(RUNNER_PLAN_MISMATCH, the plan swept), the drafts it covered still wait, and planning again
gives an adjudication under the current prompt that runs. No draft and no answer is lost.

The fake runner is a real process; the operations run in this process so that "the version the
code issues" can change between the two passes, as an upgrade changes it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from runner_world import World, make_world

from teamlore.contracts.adjudication import ADJUDICATION_PROMPT_VERSION
from teamlore.memory.extraction import adjudication_tasks

NEXT_VERSION = "memory-adjudication@99"


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return make_world(tmp_path, home)


def upgrade_to(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    """Issue tasks under `version` from now on, and read answers under it as well."""
    answerable = adjudication_tasks.ANSWERABLE_PROMPT_VERSIONS | {version}
    monkeypatch.setattr(adjudication_tasks, "ADJUDICATION_PROMPT_VERSION", version)
    monkeypatch.setattr(adjudication_tasks, "ANSWERABLE_PROMPT_VERSIONS", answerable)


def test_an_adjudication_plan_from_before_a_prompt_bump_is_replanned_not_lost(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.reverify()
    extraction = world.plan()["plans"][0]
    first_pass = world.run_approved(extraction["planDigest"])
    planned = first_pass["results"][0]["adjudicationPlan"]
    assert planned is not None
    sent_before = len(world.fake.sent())
    upgrade_to(monkeypatch, NEXT_VERSION)

    code, refused = world.op("memory.run_plan", {"approvePlan": planned["planDigest"]})

    assert code == 1 and refused["error"]["code"] == "RUNNER_PLAN_MISMATCH", refused
    assert len(world.fake.sent()) == sent_before  # nothing left this machine
    assert [status for _, status in world.candidates()] == ["draft"]
    (replanned,) = world.plan()["plans"]
    assert replanned["taskKind"] == "adjudication"
    assert replanned["planDigest"] != planned["planDigest"]
    second_pass = world.run_approved(replanned["planDigest"])
    assert second_pass["results"][0]["quarantined"] == 1
    assert [status for _, status in world.candidates()] == ["quarantined"]
    versions = (
        world.state()
        .execute(
            "SELECT status, json_extract(binding_json, '$.promptVersion') FROM tasks "
            "WHERE kind = 'adjudication' ORDER BY created_at, rowid"
        )
        .fetchall()
    )
    assert [tuple(row) for row in versions] == [
        ("stale", ADJUDICATION_PROMPT_VERSION),
        ("submitted", NEXT_VERSION),
    ]
