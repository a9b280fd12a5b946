"""An entry that left the approved set — deprecated, or its file removed — is a change a
consolidation must hear of: the scenes and doctrine built from it still say what it said. On a
new user's walk (`teamlore demo`, the real CLI): status counts it, synthesize hands over a task
naming it (`leftEntries`) with every approved entry, and once a consolidation of that task is
promoted (or the agent's empty patch recorded) nothing is left to hand over."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from consolidation_world import confirm_all
from demo_walk import EXPORT_ENTRY, LOCK_ENTRY, SCENE, KeptAside, Walk

from support import git

EXPORT = "invoice-export-must-sort-rows-by-id-unordered-exports-made"
LOCK = "staging-30-lock-timeout-30s-alembic-upgrade-head-9f909c8920"
NEW_SCENE = (
    "-----META-START-----\n"
    'summary: "Releasing acme-billing safely"\n'
    "-----META-END-----\n"
    "## Release\n"
    "### When it applies\n"
    "Any release job or migration run on staging.\n"
    "### Core procedure\n"
    "1. Set LOCK_TIMEOUT='30s' before `alembic upgrade head` on staging.\n"
    "### Evolution\n"
    "- The rule to sort exported invoice rows was deprecated.\n"
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> KeptAside:
    return KeptAside(tmp_path_factory.mktemp("demo"))


@pytest.fixture()
def walk(demo: KeptAside) -> Walk:
    return demo.walk()


def deprecate_the_export_rule(walk: Walk) -> None:
    """`sed -i 's/^status: approved/status: deprecated/' entries/invoice-export-….md`"""
    text = walk.read(EXPORT_ENTRY)
    walk.write(EXPORT_ENTRY, text.replace("status: approved", "status: deprecated", 1))


def stage(walk: Walk, task: dict[str, Any], operations: list[dict[str, Any]]) -> dict[str, Any]:
    patch = {
        "format": "threadshare-memory-consolidation-patch@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "operations": operations,
    }
    request = walk.root.parent / "patch.json"
    request.write_text(json.dumps(patch))
    code, staged = walk.json("memory", "stage", "--request", str(request))
    assert code == 0, staged
    return staged


def rewrite_the_scene(task: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "operationId": "o1",
            "op": "update",
            "target": "scene",
            "name": "release",
            "newContent": NEW_SCENE,
            "basedOnEntryIds": [LOCK],
            "mergeSources": [],
            "rationale": "The export rule this scene taught was deprecated.",
        }
    ]


def promote_the_consolidation(walk: Walk) -> None:
    code, review = walk.json("memory", "review", "--kind", "consolidation")
    (item,) = review["items"]
    path = walk.root.parent / "prepare.json"
    path.write_text(json.dumps(confirm_all(item)))
    code, prepared = walk.json("memory", "prepare", "--request", str(path))
    assert code == 0, prepared
    code, promoted = walk.json("memory", "promote", "--plan", prepared["planId"])
    assert code == 0, promoted


def test_a_deprecated_entry_is_a_change_the_task_names(walk: Walk) -> None:
    deprecate_the_export_rule(walk)

    code, status = walk.json("memory", "status")
    consolidation = status["consolidation"]
    assert (consolidation["newSinceBaseline"], consolidation["leftSinceBaseline"]) == (0, 1)
    text = walk.cli("memory", "status").stdout
    assert "1 entry no longer approved" in " ".join(text.split())

    code, synthesized = walk.json("memory", "synthesize")
    assert code == 0 and synthesized["status"] == "task", synthesized
    task = synthesized["task"]
    assert task["leftEntries"] == [
        {"entryId": EXPORT, "status": "deprecated", "supersededBy": None}
    ]
    # every approved entry comes with it: the rewritten scene rests on what still holds
    assert [e["entryId"] for e in task["entries"]] == [LOCK]
    assert "Keep exports deterministic" in task["scenes"][0]["content"]
    assert "leftEntries" in task["contract"]["prompts"]["consolidation"]
    assert synthesized["leftEntries"] == [EXPORT]

    code, full = walk.json("memory", "synthesize", "--full")
    assert [e["entryId"] for e in full["task"]["leftEntries"]] == [EXPORT]

    stage(walk, task, rewrite_the_scene(task))
    promote_the_consolidation(walk)
    assert "Keep exports deterministic" not in walk.read(SCENE)
    code, again = walk.json("memory", "synthesize")
    assert again["status"] == "nothing-new", again
    code, status = walk.json("memory", "status")
    assert status["consolidation"]["leftSinceBaseline"] == 0


def test_a_removed_entry_is_named_as_removed_and_an_empty_patch_settles_it(walk: Walk) -> None:
    git(walk.root, "rm", "-q", EXPORT_ENTRY)

    synthesized = walk.answer("memory", "synthesize")
    assert synthesized["status"] == "task", synthesized
    left = synthesized["task"]["leftEntries"]
    assert left == [{"entryId": EXPORT, "status": "removed", "supersededBy": None}]

    staged = stage(walk, synthesized["task"], [])  # the agent finds nothing to change
    assert staged["status"] == "no-op"
    again = walk.answer("memory", "synthesize")
    assert again["status"] == "nothing-new", again


def test_a_clone_with_no_runs_of_its_own_learns_it_from_the_committed_record(
    walk: Walk, tmp_path: Path
) -> None:
    """A teammate's clone has consolidated nothing; the tree's consolidated.json says what the
    scenes rest on, so a deprecation pulled in is a change there too."""
    deprecate_the_export_rule(walk)
    git(walk.root, "commit", "-q", "-am", "deprecate the export rule")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(walk.root), str(clone))
    home = tmp_path / "teammate-state"
    from support import teamlore_cli

    synced = teamlore_cli("sync", "--repository", ".", cwd=clone, env={"TEAMLORE_HOME": str(home)})
    assert synced.returncode == 0, synced.stdout + synced.stderr
    done = teamlore_cli(
        "memory", "synthesize", "--format", "json", cwd=clone, env={"TEAMLORE_HOME": str(home)}
    )
    synthesized = json.loads(done.stdout)
    assert synthesized["status"] == "task", synthesized
    assert [e["entryId"] for e in synthesized["task"]["leftEntries"]] == [EXPORT]
    assert git(clone, "status", "--porcelain") == ""
    assert (clone / LOCK_ENTRY).exists()


def test_a_task_with_no_entry_that_left_is_the_v1_document_as_first_published(
    walk: Walk,
) -> None:
    """`leftEntries` appears only when some entry left: a consumer validating against the
    ConsolidationTask@v1 schema published before it (additionalProperties: false) still reads
    every other task."""
    synthesized = walk.answer("memory", "synthesize", "--full")
    assert synthesized["status"] == "task", synthesized
    assert "leftEntries" not in synthesized["task"]
