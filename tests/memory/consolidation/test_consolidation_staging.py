"""Staging a ConsolidationPatch@v1 through `memory stage`: one transaction, every refusal with a
stable code and the state unchanged, real SIGKILLs inside the transaction."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from consolidation_world import (
    SCENE,
    World,
    operation,
    patch_for,
    refused,
    scene_text,
    update_scene_and_create_doctrine,
)

from teamlore.contracts.consolidation import CONSOLIDATION_PROMPT_VERSION
from teamlore.core import errors
from teamlore.memory.consolidation import task as consolidation_task
from teamlore.memory.consolidation.staging import FAILPOINTS


def test_a_valid_patch_becomes_one_quarantined_candidate_with_an_assessment_per_operation(
    world: World, task: dict[str, Any]
) -> None:
    staged = world.stage(update_scene_and_create_doctrine(task))

    assert staged["status"] == "staged" and staged["runStatus"] == "pending_review"
    assert [(o["operationId"], o["heat"]) for o in staged["operations"]] == [
        ("op-scene", 2),
        ("op-doctrine", None),
    ]
    assert [a["claimSupport"] for a in staged["assessments"]] == ["unverified", "unverified"]
    assert {a["provenanceStrength"] for a in staged["assessments"]} == {"contextual"}
    conn = world.db()
    row = conn.execute(
        "SELECT candidate_kind, status FROM candidates WHERE candidate_id = ?",
        (staged["candidateId"],),
    ).fetchone()
    assert tuple(row) == ("consolidation-patch", "quarantined")
    assert conn.execute("SELECT count(*) FROM candidate_fts").fetchone()[0] == 0  # not L1 dedup
    run = conn.execute(
        "SELECT status, entry_count FROM consolidation_runs WHERE run_id = ?", (staged["runId"],)
    ).fetchone()
    assert tuple(run) == ("pending_review", 17)
    assert world.read(SCENE).startswith(b"-----META-START-----\ncreated: 2026-08-21\n")  # untouched


def test_a_seed_shaped_patch_is_accepted_with_operation_ids_from_positions(
    world: World, task: dict[str, Any]
) -> None:
    """The seed's operation has no operationId and no rationale (docs/seed-conformance.md)."""
    seed_shaped = update_scene_and_create_doctrine(task)
    for op in seed_shaped["operations"]:
        del op["operationId"], op["rationale"]

    staged = world.stage(seed_shaped)

    assert [o["operationId"] for o in staged["operations"]] == ["op-1", "op-2"]
    assert staged["status"] == "staged"
    review = world.op("memory.review", {"kind": "consolidation"})
    assert "Rationale: none given" in orjson.dumps(review).decode()


def test_restaging_the_same_patch_replays_and_another_patch_conflicts(
    world: World, task: dict[str, Any]
) -> None:
    patch = update_scene_and_create_doctrine(task)
    first = world.stage(patch)
    again = world.stage(patch)
    assert again["idempotent"] is True and again["candidateId"] == first["candidateId"]
    with pytest.raises(errors.TeamloreError) as caught:
        world.stage(patch_for(task, []))
    assert caught.value.code == "SUBMISSION_CONFLICT"
    conn = world.db()  # the refused digest is audited, nothing else changed
    assert conn.execute("SELECT count(*) FROM submission_conflicts").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM consolidation_runs").fetchone()[0] == 1


def test_a_wrong_binding_is_refused(world: World, task: dict[str, Any]) -> None:
    patch = update_scene_and_create_doctrine(task)
    patch["binding"] = {**patch["binding"], "doctrineDigest": "f" * 64}
    assert refused(world, patch).code == "BINDING_MISMATCH"
    patch = update_scene_and_create_doctrine(task)
    patch["binding"] = {
        **patch["binding"],
        "replay": {"mode": "incremental", "afterSuccessfulRunId": None},
    }
    assert refused(world, patch).code == "BINDING_MISMATCH"


def test_an_unknown_task_is_not_found(world: World, task: dict[str, Any]) -> None:
    patch = update_scene_and_create_doctrine(task)
    patch["taskId"] = "consolidate-" + "0" * 64
    assert refused(world, patch).code == "TASK_NOT_FOUND"


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda ops: ops[0].update(name="missing-scene"), "target-not-found"),
        (lambda ops: ops.append(dict(ops[0])), "duplicate-operation-id"),
        (
            lambda ops: ops.append(dict(ops[0], operationId="op-2")),
            "conflicting-file-operation",
        ),
        (lambda ops: ops[0].update(basedOnEntryIds=["no-such-entry"]), "unknown-entry"),
        (lambda ops: ops[0].update(newContent="\ufeff" + ops[0]["newContent"]), "invalid-content"),
        (
            lambda ops: ops[0].update(newContent=ops[0]["newContent"].replace("\n-", "\r-", 1)),
            "invalid-content",
        ),
        (
            lambda ops: ops[0].update(newContent=scene_text("s" * 41, "## body")),
            "invalid-scene-content",
        ),
        (
            lambda ops: ops[0].update(newContent=scene_text("ok", "x" * 1501)),
            "invalid-scene-content",
        ),
        (lambda ops: ops[1].update(newContent="d" * 1201), "invalid-doctrine-content"),
        (
            lambda ops: ops[0].update(op="merge", mergeSources=["team-memory-design"]),
            "unknown-merge-source",
        ),
        (lambda ops: ops[0].update(op="create"), "target-already-exists"),
    ],
)
def test_every_bad_patch_is_refused_with_its_reason_and_nothing_changes(
    world: World, task: dict[str, Any], mutate: Any, reason: str
) -> None:
    patch = update_scene_and_create_doctrine(task)
    mutate(patch["operations"])
    error = refused(world, patch)
    if reason is None:  # an op on a name the task does not know: update of a missing scene
        assert error.code == "CONSOLIDATION_INVALID"
        return
    assert error.code == "CONSOLIDATION_INVALID", error.message
    assert error.details["reason"] == reason


@pytest.mark.parametrize("name", ["../escape", "Scenes", "a..b/c", "doc.md"])
def test_a_name_that_is_not_a_slug_is_refused(
    world: World, task: dict[str, Any], name: str
) -> None:
    patch = update_scene_and_create_doctrine(task)
    patch["operations"][0]["name"] = name
    assert refused(world, patch).code == "STAGE_REQUEST_INVALID"


def test_a_forged_heat_line_is_dropped_and_the_host_heat_written(
    world: World, task: dict[str, Any]
) -> None:
    patch = update_scene_and_create_doctrine(task)
    patch["operations"][0]["newContent"] = scene_text("Pipeline", "## body", "heat: 999999")
    staged = world.stage(patch)
    assert staged["operations"][0]["heat"] == 2


def test_a_hand_edit_of_a_scene_after_synthesize_stales_the_task(
    world: World, task: dict[str, Any]
) -> None:
    world.write(SCENE, world.read(SCENE) + b"\n- A hand-written line.")
    with pytest.raises(errors.TeamloreError) as caught:
        world.stage(update_scene_and_create_doctrine(task))
    assert caught.value.code == "CONSOLIDATION_DRIFT"
    assert caught.value.details["path"] == SCENE
    conn = world.db()
    assert (
        conn.execute("SELECT status FROM tasks WHERE task_id = ?", (task["taskId"],)).fetchone()[0]
        == "stale"
    )
    assert conn.execute("SELECT count(*) FROM consolidation_runs").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM candidates").fetchone()[0] == 0


def test_a_task_issued_before_an_upgrade_of_the_prompt_is_refused_as_stale_and_nothing_changes(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """memory-consolidation@5 handed over every approved entry: a patch to such a task rests on
    entries today's task may not carry, so it is refused as stale, not judged as today's."""
    earlier = "memory-consolidation@5"
    prompts = consolidation_task.CONTRACT["prompts"] | {"promptVersion": earlier}
    monkeypatch.setattr(
        consolidation_task, "CONTRACT", consolidation_task.CONTRACT | {"prompts": prompts}
    )
    monkeypatch.setattr(consolidation_task, "CONSOLIDATION_PROMPT_VERSION", earlier)
    issued = world.synthesize()["task"]  # by the teamlore before the upgrade
    monkeypatch.undo()

    error = refused(world, update_scene_and_create_doctrine(issued))

    assert error.code == "CONSOLIDATION_DRIFT"
    assert error.details["reason"] == "prompt-version-changed"
    assert error.details["issuedPromptVersion"] == earlier
    assert error.details["promptVersion"] == CONSOLIDATION_PROMPT_VERSION
    assert "\n" not in error.message and "`teamlore memory synthesize`" in error.message
    fresh = world.synthesize()["task"]
    assert fresh["taskId"] != issued["taskId"]
    assert world.stage(update_scene_and_create_doctrine(fresh))["status"] == "staged"


def test_a_second_patch_while_one_awaits_review_is_refused(
    world: World, task: dict[str, Any]
) -> None:
    incremental = world.synthesize()["task"]  # issued before anything was staged
    world.stage(update_scene_and_create_doctrine(task))
    error = refused(world, patch_for(incremental, []))
    assert error.code == "CONSOLIDATION_PENDING"


@pytest.mark.parametrize("failpoint", FAILPOINTS)
def test_a_kill_inside_the_stage_transaction_leaves_nothing_and_the_patch_stages_again(
    world: World, task: dict[str, Any], failpoint: str
) -> None:
    patch = orjson.dumps(update_scene_and_create_doctrine(task)).decode()
    before = world.state()

    killed = world.cli(
        "memory", "stage", "--request", "-", env={"TEAMLORE_FAILPOINT": failpoint}, input=patch
    )

    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert world.state() == before
    done = world.cli("memory", "stage", "--request", "-", "--format", "json", input=patch)
    assert done.returncode == 0, done.stdout + done.stderr
    assert orjson.loads(done.stdout)["status"] == "staged"


def test_cli_and_registry_give_the_same_refusal(world: World, task: dict[str, Any]) -> None:
    patch = update_scene_and_create_doctrine(task)
    patch["operations"][0]["basedOnEntryIds"] = ["no-such-entry"]
    code, result = world.cli_json(
        "memory", "stage", "--request", "-", input=orjson.dumps(patch).decode()
    )
    assert code == 1
    assert result["error"]["code"] == "CONSOLIDATION_INVALID"
    assert result["error"]["details"]["reason"] == "unknown-entry"


@pytest.mark.parametrize(
    ("scenes", "rationale", "reason"),
    [
        (12, "The entries refine the release practice.", "create-rationale-required"),
        (14, "This cannot fit into any existing scene.", "create-forbidden"),
    ],
)
def test_a_create_near_capacity_is_refused_through_stage(
    world: World, scenes: int, rationale: str, reason: str
) -> None:
    text = world.read(SCENE).decode()
    for number in range(scenes - 1):  # the reference scene is one of them
        world.write(f".threadshare/memory/scenes/area-{number:02d}.md", text)
    task = world.synthesize(full=True)["task"]
    assert len(task["scenes"]) == scenes
    create = operation(
        "op-new",
        "create",
        "scene",
        "brand-new",
        scene_text("A new area", "## New"),
        [task["entries"][0]["entryId"]],
        rationale=rationale,
    )
    error = refused(world, patch_for(task, [create]))
    assert error.code == "CONSOLIDATION_INVALID" and error.details["reason"] == reason
