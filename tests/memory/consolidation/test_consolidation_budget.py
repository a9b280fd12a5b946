"""A consolidation task holds at most TASK_CONTENT_BUDGET bytes for the agent to read: a team's
memory over it is consolidated in passes. The first pass carries the new entries scene by
scene and says how many it left; its promotion records only what it carried, and leaves every
scene it did not touch as it was; the next pass takes the rest."""

from __future__ import annotations

from typing import Any

import orjson
from consolidation_world import (
    MEMORY,
    RECORD,
    SCENE,
    World,
    confirm_all,
    operation,
    patch_for,
    scene_text,
)

from support import git
from teamlore.memory.consolidation.task import TASK_CONTENT_BUDGET, budgeted_bytes
from teamlore.memory.store import documents

REFERENCE_ENTRIES = 17
GENERATED = 120  # ~1.4 KB each in a task: about 90 fit beside the reference tree
WORDS = ["release", "migration", "staging", "export", "invoice", "lock", "timeout", "schema"]
UNTOUCHED_SCENE = f"{MEMORY}/scenes/billing-exports.md"


def add_team_entries(world: World) -> None:
    """GENERATED approved entries over six scenes, and a scene no pass will touch."""
    for i in range(GENERATED):
        words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(150))
        entry = documents.Entry(
            id=f"team-{i:04d}",
            type="work_method",
            status="approved",
            priority=50,
            confidence="medium",
            provenance_strength="direct",
            claim_support="human-confirmed",
            limitations=["source-local-only"],
            scope="repo",
            scene=f"area-{i % 6}",
            occurred=[],
            evidence=documents.Evidence(commits=[], paths=[]),
            superseded_by=None,
            body=f"Entry {i}: {words}.\n",
        )
        world.write(f"{MEMORY}/entries/team-{i:04d}.md", documents.dump_entry(entry))
    scene = documents.Scene(
        name="billing-exports",
        created="2026-11-01",
        updated="2026-11-01",
        summary="Exporting invoices",
        heat=3,
        body="## Billing exports\n- Export invoices after the month closes.\n",
    )
    world.write(UNTOUCHED_SCENE, documents.dump_scene(scene))
    git(world.root, "add", "-A")
    git(world.root, "commit", "-q", "-m", "team entries")


def scenes_of_entries(world: World) -> dict[str, str]:
    """Every entry's scene ("" for none), read from its file."""
    return {
        path.stem: documents.load_entry(path.read_bytes(), str(path)).scene or ""
        for path in (world.root / MEMORY / "entries").glob("*.md")
    }


def all_entry_ids(world: World) -> set[str]:
    return set(scenes_of_entries(world))


def promote_scene_update(world: World, task: dict[str, Any]) -> None:
    """Stage, review, confirm and promote an update of the reference scene alone."""
    ids = [e["entryId"] for e in task["entries"]][:3]
    body = "## Team memory design\n- Consolidate a big memory in passes.\n"
    patch = patch_for(
        task,
        [
            operation(
                "op-scene", "update", "scene", "team-memory-design", scene_text("Memory", body), ids
            )
        ],
    )
    assert world.stage(patch)["status"] == "staged"
    (item,) = world.op("memory.review", {"kind": "consolidation"})["items"]
    prepared = world.op("memory.prepare", confirm_all(item))
    assert world.op("memory.promote", {"planId": prepared["planId"]})["status"] == "applied"


def test_a_task_over_the_budget_carries_the_new_entries_scene_by_scene_and_says_what_it_left(
    world: World,
) -> None:
    add_team_entries(world)
    result = world.synthesize()
    task = result["task"]
    carried = {e["entryId"] for e in task["entries"]}
    left_out = all_entry_ids(world) - carried

    assert budgeted_bytes(task) <= TASK_CONTENT_BUDGET < len(orjson.dumps(task))
    assert 0 < len(left_out) < GENERATED
    assert task["deferred"] == {
        "newOrChanged": len(left_out),
        "alreadyConsolidated": 0,
        "budgetBytes": TASK_CONTENT_BUDGET,
        "next": task["deferred"]["next"],
    }
    assert "`teamlore memory synthesize`" in task["deferred"]["next"]
    assert result["deferredEntries"] == len(left_out)
    assert result["newSinceBaseline"] == REFERENCE_ENTRIES + GENERATED
    assert f"{len(left_out)} new or changed left for a next pass" in result["note"]
    # a scene's new entries travel together: no scene the task reached is cut but the last
    scene_of = scenes_of_entries(world)
    assert max(scene_of[i] for i in carried) <= min(scene_of[i] for i in left_out)

    done = world.cli("memory", "synthesize")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert (
        f"{len(left_out)} entries new or changed left for a next pass (a task holds at most "
        "128 KiB)." in text
    )
    assert "run `teamlore memory synthesize` again for the entries left" in text


def test_a_task_within_the_budget_says_nothing_was_left(world: World) -> None:
    result = world.synthesize()
    assert "deferred" not in result["task"] and result["deferredEntries"] == 0
    assert len(result["task"]["entries"]) == REFERENCE_ENTRIES


def test_a_second_pass_takes_the_rest_and_a_promote_keeps_every_scene_it_did_not_touch(
    world: World,
) -> None:
    add_team_entries(world)
    first = world.synthesize()["task"]
    carried = {e["entryId"]: e["revision"] for e in first["entries"]}
    untouched = world.read(UNTOUCHED_SCENE)

    promote_scene_update(world, first)

    assert world.read(UNTOUCHED_SCENE) == untouched
    assert b"Consolidate a big memory in passes." in world.read(SCENE)
    recorded = documents.load_consolidated(world.read(RECORD))
    assert {k: v[0] for k, v in recorded.items()} == carried  # not the entries left out
    status = world.op("memory.status", {})["consolidation"]
    assert status["newSinceBaseline"] == REFERENCE_ENTRIES + GENERATED - len(carried)

    second = world.synthesize()
    assert second["status"] == "task" and "deferred" not in second["task"]
    assert {e["entryId"] for e in second["task"]["entries"]} == all_entry_ids(world) - set(carried)
    staged = world.stage(patch_for(second["task"], []))
    assert staged["status"] == "no-op"
    assert world.synthesize()["status"] == "nothing-new"
    assert world.read(UNTOUCHED_SCENE) == untouched


def test_an_entry_left_for_the_next_pass_and_then_deprecated_is_not_one_the_scenes_rest_on(
    world: World,
) -> None:
    add_team_entries(world)
    first = world.synthesize()["task"]
    assert world.stage(patch_for(first, []))["status"] == "no-op"  # the pass changes no scene
    left_out = sorted(all_entry_ids(world) - {e["entryId"] for e in first["entries"]})
    path = f"{MEMORY}/entries/{left_out[0]}.md"
    world.write(path, world.read(path).replace(b"status: approved", b"status: deprecated", 1))

    second = world.synthesize()

    assert second["leftSinceBaseline"] == 0 and "leftEntries" not in second["task"]
    assert second["mode"] == "incremental"
    assert {e["entryId"] for e in second["task"]["entries"]} == set(left_out[1:])
