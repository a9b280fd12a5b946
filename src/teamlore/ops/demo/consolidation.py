"""The consolidation part of `teamlore demo`: the reviewed entries become one scene and a short
doctrine (synthesize → the scripted agent's ConsolidationPatch@v1 → review → confirm → promote),
and `memory assemble` shows them in the managed block.

The demo's agent is scripted (fixed answers, no model): it writes the patch a real agent would
write from the task, basing each operation on the task's own entry ids."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from teamlore.memory.promotion.queue import prepare_request_from_review
from teamlore.ops.registry import OpContext, run_operation

Step = Callable[..., None]

SCENE_NAME = "release"
SCENE_CONTENT = (
    "-----META-START-----\n"
    'summary: "Releasing acme-billing safely"\n'
    "-----META-END-----\n"
    "## Release\n"
    "### When it applies\n"
    "Any release job or migration run on staging.\n"
    "### Core procedure\n"
    "1. Keep exports deterministic: sort invoice rows by id.\n"
    "2. Set LOCK_TIMEOUT='30s' before `alembic upgrade head` on staging.\n"
    "### Anti-patterns\n"
    "- Retrying a flaky export test instead of fixing the row order.\n"
    "- Raising lock waits without a timeout."
)
DOCTRINE_CONTENT = (
    "### Core principles\n"
    "- Make release inputs deterministic before trusting a green run.\n"
    "\n"
    "### Agent rules\n"
    "- Check the release scene before touching the release job or migrations.\n"
)


def scripted_patch(task: dict[str, Any]) -> dict[str, Any]:
    """The ConsolidationPatch@v1 the demo's scripted agent answers the task with."""
    ids = [entry["entryId"] for entry in task["entries"]]
    return {
        "format": "threadshare-memory-consolidation-patch@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "operations": [
            {
                "operationId": "create-release-scene",
                "op": "create",
                "target": "scene",
                "name": SCENE_NAME,
                "newContent": SCENE_CONTENT,
                "basedOnEntryIds": ids,
                "mergeSources": [],
                "rationale": "Both entries are steps of the same release work.",
            },
            {
                "operationId": "create-doctrine",
                "op": "create",
                "target": "doctrine",
                "name": "doctrine",
                "newContent": DOCTRINE_CONTENT,
                "basedOnEntryIds": ids,
                "mergeSources": [],
                "rationale": "Determinism before trust holds across the team's release work.",
            },
        ],
    }


def demo_consolidation(inner: OpContext, repo: Path, step: Step) -> None:
    """Steps `synthesize` … `consolidation-assemble` of the demo (after entries and Skill)."""
    synthesized = run_operation("memory.synthesize", inner, {})
    step(
        "synthesize",
        f"a consolidation task over {synthesized['entryCount']} approved entries and "
        f"{synthesized['sceneCount']} scenes",
        result=synthesized,
    )
    staged = run_operation("memory.stage", inner, scripted_patch(synthesized["task"]))
    step(
        "consolidation-stage",
        "the scripted agent (fixed answer, no model) proposes a scene create and a doctrine "
        "create; teamlore checked capacity, computed heat and quarantined it",
        result=staged,
    )
    review = run_operation("memory.review", inner, {"kind": "consolidation"})
    prepared = run_operation("memory.prepare", inner, prepare_request_from_review(review["items"]))
    promoted = run_operation(
        "memory.promote",
        inner,
        {"planId": prepared["planId"], "planDigest": prepared["planDigest"]},
    )
    written = [f["targetPath"] for f in promoted["files"]]
    step(
        "consolidation-promote",
        "reviewed operation by operation (current vs proposed), confirmed in your place, "
        "promoted in one plan",
        review=review,
        files={p: (repo / p).read_text(encoding="utf-8") for p in written},
    )
    # both files, as the first assemble wrote both: AGENTS.md left as it was would be stale
    assembled, for_codex = (
        run_operation("memory.assemble", inner, {"provider": provider})
        for provider in ("claude", "codex")
    )
    step(
        "consolidation-assemble",
        "the managed blocks in CLAUDE.md and AGENTS.md now carry the doctrine and the scene",
        block=assembled["block"],
        result=assembled,
        codex=for_codex,
    )
