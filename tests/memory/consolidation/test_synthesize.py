"""`memory synthesize` on a repository holding the reference tree: the task, the baseline, the
due gate, the pending-review block and the coverage refusal."""

from __future__ import annotations

import pytest
from consolidation_world import SCENE, World, patch_for, update_scene_and_create_doctrine

from teamlore.contracts.consolidation import ConsolidationTask
from teamlore.core import errors


def test_full_synthesis_carries_every_approved_entry_and_the_existing_scene(world: World) -> None:
    result = world.synthesize(full=True)

    assert result["status"] == "task" and result["mode"] == "full"
    task = ConsolidationTask.from_wire(result["task"]).to_wire()  # a valid contract document
    assert len(task["entries"]) == 17 == result["entryCount"]
    assert [e["entryId"] for e in task["entries"]] == sorted(e["entryId"] for e in task["entries"])
    (scene,) = task["scenes"]
    assert scene["name"] == "team-memory-design" and scene["heat"] == 1
    assert scene["content"].encode() == world.read(SCENE)
    assert task["doctrine"] is None and task["binding"]["doctrineDigest"] is None
    assert task["binding"]["replay"] == {"mode": "full", "afterSuccessfulRunId": None}
    assert task["policy"]["maxScenes"] == 15
    prompt = task["contract"]["prompts"]["consolidation"]
    for words in ("five filters", "four strategies", "DATA", "cannot fit", "Evolution"):
        assert words in prompt


def test_synthesizing_again_returns_the_same_open_task(world: World) -> None:
    first = world.synthesize()
    assert world.synthesize()["taskId"] == first["taskId"]
    assert first["mode"] == "incremental" and first["entryCount"] == 17  # no baseline yet


def test_if_due_returns_no_task_below_20_new_entries(world: World) -> None:
    result = world.synthesize(ifDue=True)
    assert result["status"] == "not-due" and result["task"] is None
    assert result["newSinceBaseline"] == 17 and result["dueAt"] == 20
    assert "17/20" in result["note"]


def test_if_due_and_full_together_are_a_usage_error(world: World) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        world.synthesize(ifDue=True, full=True)
    assert caught.value.code == "INVALID_ARGUMENT" and caught.value.exit_code == 2
    done = world.cli("memory", "synthesize", "--if-due", "--full")
    assert done.returncode == 2 and "USAGE" in done.stderr


def test_an_empty_patch_becomes_the_baseline_and_nothing_is_new_after_it(world: World) -> None:
    task = world.synthesize()["task"]
    staged = world.stage(patch_for(task, []))
    assert staged["status"] == "no-op" and staged["candidateId"] is None
    assert "17 approved entries marked consolidated with no changes" in staged["note"]

    after = world.synthesize()
    assert after["status"] == "nothing-new" and after["task"] is None
    assert after["baselineRunId"] == staged["runId"]
    replay = world.synthesize(full=True)  # the replay epoch moved: a new task
    assert replay["status"] == "task" and replay["taskId"] != task["taskId"]
    assert replay["task"]["binding"]["replay"]["afterSuccessfulRunId"] == staged["runId"]


def test_a_changed_entry_is_new_again_after_the_baseline(world: World) -> None:
    world.stage(patch_for(world.synthesize()["task"], []))
    entry = world.root / ".threadshare/memory/entries/smoke-canonical-hash-deltaid-fixture.md"
    entry.write_text(entry.read_text() + "Checked again in December.\n")
    result = world.synthesize()
    assert [e["entryId"] for e in result["task"]["entries"]] == [
        "smoke-canonical-hash-deltaid-fixture"
    ]


def test_a_pending_review_blocks_a_second_synthesis(world: World) -> None:
    staged = world.stage(update_scene_and_create_doctrine(world.synthesize(full=True)["task"]))
    before = world.state()

    result = world.synthesize(full=True)

    assert result["status"] == "pending-review" and result["task"] is None
    assert result["pendingRunId"] == staged["runId"]
    assert world.state() == before


def test_an_unreadable_file_refuses_with_coverage_incomplete_and_issues_nothing(
    world: World,
) -> None:
    world.write(".threadshare/memory/entries/broken.md", "no frontmatter\n")
    before = world.state()
    with pytest.raises(errors.TeamloreError) as caught:
        world.synthesize()
    assert caught.value.code == "COVERAGE_INCOMPLETE"
    assert world.state()["tasks"] == before["tasks"] == []


def test_the_cli_prints_the_task_in_json_and_says_what_it_is_in_text(world: World) -> None:
    code, result = world.cli_json("memory", "synthesize", "--full")
    assert code == 0 and result["task"]["taskId"] == result["taskId"]
    text = world.cli("memory", "synthesize").stdout
    said = " ".join(text.split())  # the sentence is wrapped at the terminal's width
    assert "Consolidation task consolidate-" in said and "scene team-memory-design (heat 1)" in text
