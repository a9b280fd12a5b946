"""What a consolidation's refusals and `memory status` tell a person to run is the command that
helps (on a new user's walk, the real CLI): synthesize for a task staged twice, not recall; the
drift promote will refuse a voided plan with, and synthesize to make it again, not `memory
confirm` (the entry kind); `memory review` and its CANDIDATE_NOT_FOUND name the consolidation
that awaits review; `memory confirm --kind consolidation` asks about operations."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from consolidation_world import confirm_all
from demo_walk import LOCK_ENTRY, KeptAside, Walk
from test_consolidation_left_entries import rewrite_the_scene, stage

from support import teamlore_in_pty


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> KeptAside:
    return KeptAside(tmp_path_factory.mktemp("demo"))


@pytest.fixture()
def walk(demo: KeptAside) -> Walk:
    return demo.walk()


def staged_consolidation(walk: Walk) -> dict[str, Any]:
    synthesized = walk.answer("memory", "synthesize", "--full")
    task = synthesized["task"]
    stage(walk, task, rewrite_the_scene(task))
    return task


def test_a_second_patch_for_one_task_points_to_synthesize_not_recall(walk: Walk) -> None:
    task = staged_consolidation(walk)
    other = rewrite_the_scene(task)
    other[0]["rationale"] = "Worded otherwise."
    patch = {
        "format": "threadshare-memory-consolidation-patch@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "operations": other,
    }
    request = walk.root.parent / "other.json"
    request.write_text(json.dumps(patch))
    refused = walk.answer("memory", "stage", "--request", str(request))
    error = refused["error"]
    assert error["code"] == "SUBMISSION_CONFLICT"
    assert "recall" not in error["next"]
    assert "`teamlore memory synthesize`" in error["next"]
    assert "`teamlore memory review --kind consolidation`" in error["next"]


def test_review_of_entries_names_the_consolidation_that_awaits_review(walk: Walk) -> None:
    staged_consolidation(walk)
    done = walk.cli("memory", "review", columns=80)
    assert done.returncode == 0
    said = " ".join(done.stdout.split())
    assert said == (
        "No entry candidates are awaiting review; 1 consolidation candidate awaits review: see"
        " it with `teamlore memory review --kind consolidation`."
    )
    assert "`teamlore memory review --kind consolidation`" in done.stdout.splitlines()[-1]
    review = walk.answer("memory", "review")
    assert review["count"] == 0 and review["awaitingOtherKinds"] == {"consolidation": 1}
    confirm = walk.answer("memory", "confirm", "--yes")
    assert confirm["status"] == "nothing-to-confirm"
    assert "--kind consolidation" in confirm["next"]

    refused = walk.answer("memory", "review", "--candidate", "no-such-candidate")
    error = refused["error"]
    assert error["code"] == "CANDIDATE_NOT_FOUND"
    assert "`teamlore memory review --kind consolidation`" in error["next"]


def test_confirm_of_a_consolidation_asks_about_each_operation(walk: Walk) -> None:
    staged_consolidation(walk)
    code, printed = teamlore_in_pty(
        "memory",
        "confirm",
        "--kind",
        "consolidation",
        cwd=walk.root,
        env={"TEAMLORE_HOME": str(walk.state)},
        answers=["n"],
    )
    assert code == 0, printed
    assert "Apply operation o1? [y/d/q/N]" in printed
    assert "Is statement o1 true?" not in printed


def test_a_consolidation_plan_a_pull_voided_says_promotes_drift_and_synthesize(
    walk: Walk,
) -> None:
    staged_consolidation(walk)
    code, review = walk.json("memory", "review", "--kind", "consolidation")
    (item,) = review["items"]
    code, prepared = walk.json("memory", "prepare", "--request", str(_prepare_request(walk, item)))
    assert code == 0, prepared
    # what a pull brings: a teammate changed an entry the consolidation read, and the scene
    walk.write(LOCK_ENTRY, walk.read(LOCK_ENTRY) + "Raise it for the big tables.\n")
    scene = walk.root / ".threadshare/memory/scenes/release.md"
    scene.write_text(scene.read_text() + "\n- a teammate's line")

    code, status = walk.json("memory", "status")
    [voided] = status["plansVoided"]
    assert voided["voidCode"] == "CONSOLIDATION_DRIFT"  # what promote refuses it with, below
    assert "memory confirm" not in voided["next"]
    assert "`teamlore memory synthesize`" in voided["next"]
    text = walk.cli("memory", "status", columns=80).stdout
    assert all(len(line) <= 80 for line in text.splitlines()), text
    said = " ".join(text.split())
    assert "can no longer be promoted: discard the consolidation" in said
    assert "(CONSOLIDATION_DRIFT)" in said

    code, refused = walk.json("memory", "promote", "--plan", prepared["planId"])
    assert refused["error"]["code"] == voided["voidCode"]
    assert "review and prepare again" not in refused["error"]["message"]
    code, again = walk.json("memory", "synthesize")
    assert again["status"] == "task", again  # promote discarded it: synthesize makes it again


def test_following_status_on_a_voided_consolidation_plan_gets_a_new_task(walk: Walk) -> None:
    staged_consolidation(walk)
    review = walk.answer("memory", "review", "--kind", "consolidation")
    (item,) = review["items"]
    walk.json("memory", "prepare", "--request", str(_prepare_request(walk, item)))
    walk.write(LOCK_ENTRY, walk.read(LOCK_ENTRY) + "Raise it for the big tables.\n")
    status = walk.answer("memory", "status")
    [voided] = status["plansVoided"]
    discard = voided["next"].split("`")[1]  # the first command it names
    assert discard.startswith("teamlore memory discard --candidate patch-consolidate-")
    assert discard.endswith(" --reason 'it cannot be promoted as it is'")
    done = walk.cli(*shlex.split(discard)[1:])  # as printed: no terminal, so it needs its reason
    assert done.returncode == 0, done.stdout + done.stderr
    again = walk.answer("memory", "synthesize")
    assert again["status"] == "task", again


def _prepare_request(walk: Walk, item: dict[str, Any]) -> Path:
    path = walk.root.parent / "prepare.json"
    path.write_text(json.dumps(confirm_all(item)))
    return path
