"""Review → prepare → promote of a consolidation on the reference tree: all of the patch's files
in one plan, re-checked at prepare and at every apply step, crash-safe at every failpoint."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from consolidation_world import (
    DOCTRINE,
    DOCTRINE_TEXT,
    MEMORY,
    RECORD,
    SCENE,
    UPDATED_BODY,
    World,
    confirm_all,
    operation,
    patch_for,
    scene_text,
    update_scene_and_create_doctrine,
)

from teamlore.core import errors
from teamlore.memory.promotion import apply as promotion


def staged_and_reviewed(world: World, patch: dict[str, Any] | None = None) -> dict[str, Any]:
    task = world.synthesize(full=True)["task"]
    world.stage(patch or update_scene_and_create_doctrine(task))
    review = world.op("memory.review", {"kind": "consolidation"})
    (item,) = review["items"]
    return item


def today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def test_the_acceptance_flow_leaves_a_heat_2_scene_and_a_doctrine(world: World) -> None:
    item = staged_and_reviewed(world)
    assert item["blocked"] is False and item["drift"] is None
    scene_op, doctrine_op = item["statements"]
    assert scene_op["text"].startswith(
        "UPDATE scene team-memory-design\nTarget: .threadshare/memory/scenes/"
        "team-memory-design.md\nMerge sources: none\nRationale: "
    )
    assert "--- current\n-----META-START-----\ncreated: 2026-08-21" in scene_op["text"]
    assert "+++ proposed\n-----META-START-----" in scene_op["text"]
    assert (
        "--- current\n(file does not exist)\n+++ proposed\n### Core principles"
        in (doctrine_op["text"])
    )
    assert (
        scene_op["evidence"][0]["kind"] == "approved-entry" and scene_op["evidence"][0]["excerpt"]
    )
    assert [f["targetPath"] for f in item["files"]] == [RECORD, DOCTRINE, SCENE]

    prepared = world.op("memory.prepare", confirm_all(item))
    assert [f["targetPath"] for f in prepared["plan"]["perFile"]] == [RECORD, DOCTRINE, SCENE]
    promoted = world.op("memory.promote", {"planId": prepared["planId"]})

    assert promoted["status"] == "applied"
    assert world.read(SCENE).decode() == (
        "-----META-START-----\n"
        "created: 2026-08-21\n"
        f"updated: {today()}\n"
        'summary: "Threadshare memory pipeline"\n'
        "heat: 2\n"
        "-----META-END-----\n" + UPDATED_BODY
    )
    doctrine = world.read(DOCTRINE).decode()
    assert doctrine == DOCTRINE_TEXT and len(doctrine) <= 1200
    after = world.synthesize()
    assert after["status"] == "nothing-new" and after["task"] is None
    status = world.op("memory.status", {})["consolidation"]
    assert status["runs"]["applied"] == 1 and status["pendingRunId"] is None
    assert status["newSinceBaseline"] == 0 and status["due"] is False
    lint = world.cli("memory", "lint", "--format", "json")
    assert orjson.loads(lint.stdout)["blocked"] is False


def test_review_is_read_only_and_stable(world: World) -> None:
    first = staged_and_reviewed(world)
    before = world.state()
    again = world.op("memory.review", {"kind": "consolidation"})["items"][0]
    assert again["approvalDigest"] == first["approvalDigest"]
    assert world.state() == before


def test_every_diff_review_shows_applies_with_git_to_the_bytes_it_previews(
    world: World, tmp_path: Path
) -> None:
    # the reference tree's scene has no final newline: its last line and the text added after
    # it must be two lines of the diff, or the added text reads as removed
    assert not (world.root / SCENE).read_bytes().endswith(b"\n")
    item = staged_and_reviewed(world)
    check = tmp_path / "apply"
    for file in item["files"]:
        target = check / file["targetPath"]
        target.parent.mkdir(parents=True, exist_ok=True)
        if file["role"] != "new":
            target.write_bytes((world.root / file["targetPath"]).read_bytes())
        patch = tmp_path / "review.diff"
        patch.write_text(file["diff"], encoding="utf-8")
        subprocess.run(["git", "apply", "-p1", str(patch)], cwd=check, check=True)
        assert target.read_bytes() == file["preview"].encode("utf-8")


def test_a_partial_confirmation_is_refused_and_nothing_changes(world: World) -> None:
    item = staged_and_reviewed(world)
    request = confirm_all(item)
    request["candidates"][0]["statements"].pop()
    before = world.state()
    with pytest.raises(errors.TeamloreError) as caught:
        world.op("memory.prepare", request)
    assert caught.value.code == "UNVERIFIED_CLAIM"
    assert world.state() == before


def test_a_digest_that_is_not_what_review_showed_is_refused(world: World) -> None:
    item = staged_and_reviewed(world)
    request = confirm_all(item)
    request["candidates"][0]["statements"][0]["statementTextDigest"] = "0" * 64
    before = world.state()
    with pytest.raises(errors.TeamloreError) as caught:
        world.op("memory.prepare", request)
    assert caught.value.code == "CONFIRMATION_DRIFT"
    assert world.state() == before


def test_a_hand_edit_of_the_scene_before_prepare_is_drift(world: World) -> None:
    item = staged_and_reviewed(world)
    world.write(SCENE, world.read(SCENE) + b"\n- edited by hand")
    drifted = world.op("memory.review", {"kind": "consolidation"})["items"][0]
    assert drifted["blocked"] is True and drifted["drift"]["code"] == "CONSOLIDATION_DRIFT"
    before = world.state()
    with pytest.raises(errors.TeamloreError) as caught:
        world.op("memory.prepare", confirm_all(item))
    assert caught.value.code == "CONSOLIDATION_DRIFT"
    assert world.state() == before


def test_a_hand_edit_of_the_scene_after_prepare_voids_the_plan_and_unblocks_synthesis(
    world: World,
) -> None:
    item = staged_and_reviewed(world)
    plan_id = world.op("memory.prepare", confirm_all(item))["planId"]
    edited = world.read(SCENE) + b"\n- edited by hand"
    world.write(SCENE, edited)

    with pytest.raises(errors.TeamloreError) as caught:
        world.op("memory.promote", {"planId": plan_id})

    assert caught.value.code == "PROMOTION_TARGET_DRIFT"
    assert caught.value.details["driftedPath"] == SCENE
    assert world.read(SCENE) == edited and not (world.root / DOCTRINE).exists()
    status = world.op("memory.status", {})["consolidation"]
    assert status["runs"]["stale"] == 1 and status["pendingRunId"] is None
    assert world.synthesize(full=True)["status"] == "task"


def test_a_new_entry_after_prepare_voids_the_plan_with_consolidation_drift(world: World) -> None:
    item = staged_and_reviewed(world)
    plan_id = world.op("memory.prepare", confirm_all(item))["planId"]
    source = world.root / MEMORY / "entries/smoke-canonical-hash-deltaid-fixture.md"
    (world.root / MEMORY / "entries/smoke-copy.md").write_text(
        source.read_text().replace("id: smoke-canonical-hash-deltaid-fixture", "id: smoke-copy")
    )
    with pytest.raises(errors.TeamloreError) as caught:
        world.op("memory.promote", {"planId": plan_id})
    assert caught.value.code == "CONSOLIDATION_DRIFT"
    assert not (world.root / DOCTRINE).exists()


def test_discarding_a_consolidation_ends_its_run(world: World) -> None:
    item = staged_and_reviewed(world)
    world.op("memory.discard", {"candidateId": item["candidateId"]})
    status = world.op("memory.status", {})["consolidation"]
    assert status["runs"] == {"pendingReview": 0, "noOp": 0, "applied": 0, "stale": 1}
    assert world.synthesize(full=True)["status"] == "task"


def test_a_consolidation_has_no_turns_to_extract_again(world: World) -> None:
    item = staged_and_reviewed(world)
    with pytest.raises(errors.TeamloreError) as caught:
        world.op("memory.discard", {"candidateId": item["candidateId"], "extractAgain": True})
    assert caught.value.code == errors.INVALID_ARGUMENT.code
    assert caught.value.message == (
        f"{item['candidateId']} was not extracted from session turns (a consolidation-patch "
        "candidate); discard it without --extract-again"
    )


def merge_world(world: World) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Two more scenes, then a patch that merges all three into the reference scene."""
    text = world.read(SCENE).decode()
    for name in ("release-flow", "review-flow"):
        world.write(f"{MEMORY}/scenes/{name}.md", text.replace("heat: 1", "heat: 3"))
    task = world.synthesize(full=True)["task"]
    ids = [e["entryId"] for e in task["entries"]]
    patch = patch_for(
        task,
        [
            operation(
                "merge-all",
                "merge",
                "scene",
                "team-memory-design",
                scene_text("Memory pipeline and releases", UPDATED_BODY),
                ids[:2],
                merge_sources=["team-memory-design", "release-flow", "review-flow"],
            )
        ],
    )
    return patch, {SCENE: b""}


def test_a_merge_writes_the_target_and_deletes_the_other_sources_in_one_plan(
    world: World,
) -> None:
    patch, _ = merge_world(world)
    item = staged_and_reviewed(world, patch)
    assert [(f["targetPath"], f["operation"]) for f in item["files"]] == [
        (RECORD, "write"),
        (SCENE, "write"),
        (f"{MEMORY}/scenes/release-flow.md", "delete"),
        (f"{MEMORY}/scenes/review-flow.md", "delete"),
    ]
    assert "Delete: .threadshare/memory/scenes/release-flow.md" in item["statements"][0]["text"]
    plan_id = world.op("memory.prepare", confirm_all(item))["planId"]
    world.op("memory.promote", {"planId": plan_id})
    assert "\nheat: 8\n" in world.read(SCENE).decode()  # 1 + 1 + 3 + 3
    assert sorted(p.name for p in (world.root / MEMORY / "scenes").glob("*.md")) == [
        "team-memory-design.md"
    ]


@pytest.mark.parametrize("failpoint", promotion.FAILPOINTS)
def test_a_kill_at_any_apply_failpoint_never_leaves_a_partial_consolidation(
    world: World, failpoint: str
) -> None:
    patch, _ = merge_world(world)
    item = staged_and_reviewed(world, patch)
    plan_id = world.op("memory.prepare", confirm_all(item))["planId"]

    killed = world.cli(
        "memory", "promote", "--plan", plan_id, env={"TEAMLORE_FAILPOINT": failpoint}
    )
    assert killed.returncode == -9, killed.stdout + killed.stderr

    code, result = world.cli_json("memory", "promote", "--plan", plan_id)
    assert code == 0, result
    assert result["status"] == "applied"
    assert "\nheat: 8\n" in world.read(SCENE).decode()
    assert sorted(p.name for p in (world.root / MEMORY / "scenes").glob("*.md")) == [
        "team-memory-design.md"
    ]
    status = world.op("memory.status", {})["consolidation"]
    assert status["runs"]["applied"] == 1 and status["baselineRunId"] is not None
    assert world.synthesize()["status"] == "nothing-new"


def test_memory_status_in_a_new_process_finishes_a_consolidation_a_crash_interrupted(
    world: World,
) -> None:
    """A `memory status` process resumes the plan with the consolidation kind's hooks, which it
    loads itself: nothing it imports otherwise registers the kind."""
    patch, _ = merge_world(world)
    item = staged_and_reviewed(world, patch)
    plan_id = world.op("memory.prepare", confirm_all(item))["planId"]
    killed = world.cli(
        "memory", "promote", "--plan", plan_id, env={"TEAMLORE_FAILPOINT": "promotion.after-mark"}
    )
    assert killed.returncode == -9, killed.stdout + killed.stderr

    code, status = world.cli_json("memory", "status")

    assert code == 0, status
    (resumed,) = status["promotionRecovery"]["resumed"]
    assert (resumed["planId"], resumed["status"]) == (plan_id, "applied"), resumed
    assert "\nheat: 8\n" in world.read(SCENE).decode()


def test_the_kill_before_the_plan_is_journaled_leaves_nothing(world: World) -> None:
    item = staged_and_reviewed(world)
    before = world.state()
    killed = world.cli(
        "memory",
        "prepare",
        "--request",
        "-",
        env={"TEAMLORE_FAILPOINT": "consolidation.prepare.before-journal"},
        input=orjson.dumps(confirm_all(item)).decode(),
    )
    assert killed.returncode == -9
    assert world.state() == before
