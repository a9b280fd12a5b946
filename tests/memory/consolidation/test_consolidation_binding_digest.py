"""A ConsolidationPatch@v1 may echo the task's `bindingDigest` instead of its whole binding (a
big team's binding lists every approved entry: more than a model copies reliably). Exactly one
of the two; the stored task decides, as it does for a verbatim binding."""

from __future__ import annotations

from typing import Any

import pytest
from consolidation_world import SCENE, World, patch_for, refused, update_scene_and_create_doctrine

from teamlore.core import errors
from teamlore.core.canonical import digest


def by_digest(patch: dict[str, Any]) -> dict[str, Any]:
    """`patch` echoing digest(binding) in place of the binding."""
    return {k: v for k, v in patch.items() if k != "binding"} | {
        "bindingDigest": digest(patch["binding"])
    }


def test_the_task_carries_the_digest_of_its_binding(task: dict[str, Any]) -> None:
    assert task["bindingDigest"] == digest(task["binding"])
    assert "bindingDigest" in task["contract"]["prompts"]["consolidation"]


def test_a_patch_echoing_the_binding_digest_stages(world: World, task: dict[str, Any]) -> None:
    staged = world.stage(by_digest(update_scene_and_create_doctrine(task)))

    assert staged["status"] == "staged" and staged["idempotent"] is False
    assert [o["operationId"] for o in staged["operations"]] == ["op-scene", "op-doctrine"]


def test_a_retry_in_either_form_replays_and_another_patch_conflicts(
    world: World, task: dict[str, Any]
) -> None:
    patch = update_scene_and_create_doctrine(task)
    first = world.stage(by_digest(patch))

    for retry in (by_digest(patch), patch):
        again = world.stage(retry)
        assert again["idempotent"] is True and again["candidateId"] == first["candidateId"]
    error = refused(world, by_digest(patch_for(task, [])))
    assert error.code == "SUBMISSION_CONFLICT"


def test_a_wrong_binding_digest_is_a_binding_mismatch(world: World, task: dict[str, Any]) -> None:
    patch = by_digest(update_scene_and_create_doctrine(task))
    patch["bindingDigest"] = "f" * 64

    error = refused(world, patch)

    assert error.code == "BINDING_MISMATCH"
    assert "bindingDigest" in error.message


@pytest.mark.parametrize("form", ["both", "neither"])
def test_a_patch_needs_exactly_one_of_binding_and_binding_digest(
    world: World, task: dict[str, Any], form: str
) -> None:
    patch = update_scene_and_create_doctrine(task)
    if form == "both":
        patch["bindingDigest"] = digest(patch["binding"])
    else:
        del patch["binding"]

    error = refused(world, patch)

    assert error.code == "STAGE_REQUEST_INVALID"
    assert "binding (verbatim) or its bindingDigest: exactly one" in error.message


def test_a_hand_edit_after_synthesize_is_drift_with_the_binding_digest(
    world: World, task: dict[str, Any]
) -> None:
    world.write(SCENE, world.read(SCENE) + b"\n- A hand-written line.")

    with pytest.raises(errors.TeamloreError) as caught:
        world.stage(by_digest(update_scene_and_create_doctrine(task)))

    assert caught.value.code == "CONSOLIDATION_DRIFT"
    assert caught.value.details["path"] == SCENE
