"""memory.stage end to end: real repository, sessions, sync, recall and projection."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import BASE, WINDOW, CodexSession, make_repo, sync

from teamlore.contracts.adjudication import ADJUDICATION_RESULT_FORMAT
from teamlore.core import errors
from teamlore.ops.registry import REGISTRY, OpContext

ENTRY = """---
id: {id}
type: work_method
status: approved
priority: 50
confidence: high
provenance_strength: direct
claim_support: human-confirmed
limitations: ["source-local-only"]
scope: repo
scene: null
occurred: []
evidence: {{"commits":[],"paths":[]}}
superseded_by: null
---
{body}
"""


def op(name: str, cwd: Path, home: Path, payload: dict[str, Any]) -> dict[str, Any]:
    return REGISTRY.get(name).run(OpContext(cwd=cwd, home=home), payload)


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> dict[str, Any]:
    repo = make_repo(tmp_path / "shop")
    session = CodexSession("a1", repo)
    session.user("The release script fails on tag push; fix it")
    session.shell("pytest -q tests/test_release.py", "1 failed: test_tag_push", exit_code=1)
    session.answer("The tag check compared against the wrong prefix.")
    session.turn("use the v prefix", "Changed the tag check to expect a v prefix.")
    session.turn("anything else?", "Run pytest tests/test_release.py before pushing tags.")
    session.write(tmp_path / "codex")
    sync(home, tmp_path / "codex", repo)
    op("memory.init", repo, home, {})
    return {"repo": repo, "codex": tmp_path / "codex", "session": session, "tmp": tmp_path}


def recall_task(world: dict[str, Any], home: Path) -> dict[str, Any]:
    sources = op("memory.recall", world["repo"], home, WINDOW)["sources"]
    assert sources
    return sources[0]


def drafts_for(task: dict[str, Any], text: str) -> dict[str, Any]:
    turn_ev = task["chunk"]["turnEvidence"][0]["evidenceId"]
    return {
        "format": "threadshare-memory-candidate-draft-batch@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "candidates": [
            {
                "content": text,
                "type": "work_method",
                "priority": 60,
                "confidence": "medium",
                "scene": "release",
                "statements": [{"statementId": "s1", "text": text, "evidenceIds": [turn_ev]}],
            }
        ],
    }


def adjudicate(staged: dict[str, Any], action: str = "store") -> dict[str, Any]:
    task = staged["adjudicationTask"]
    return {
        "format": ADJUDICATION_RESULT_FORMAT,
        "taskId": task["taskId"],
        "binding": task["binding"],
        "adjudications": [
            {"draftRef": d["candidateId"], "action": action, "targetIds": [], "mergedFields": None}
            for d in task["drafts"]
        ],
    }


TEXT = "Tag checks in the release script expect a v prefix; run the release tests before pushing."


def test_registered_for_the_team_capability() -> None:
    stage = REGISTRY.get("memory.stage")
    assert (stage.capability, stage.mcp_tool, stage.side_effect) == (
        "team",
        "threadshare_memory_stage",
        "state-write",
    )


def test_recall_to_quarantine_through_the_operation(world: dict[str, Any], home: Path) -> None:
    task = recall_task(world, home)
    staged = op("memory.stage", world["repo"], home, drafts_for(task, TEXT))
    assert staged["status"] == "adjudication-required"
    assessment = staged["assessments"][0]
    assert assessment["provenanceStrength"] == "unknown"  # a turn alone links no delivery
    assert "source-local-only" in assessment["limitations"]
    done = op("memory.stage", world["repo"], home, adjudicate(staged))
    assert [c["candidateStatus"] for c in done["candidates"]] == ["quarantined"]
    assert op("memory.recall", world["repo"], home, WINDOW)["sources"] == []  # chunk extracted


def test_an_unrelated_sync_does_not_make_the_task_stale(world: dict[str, Any], home: Path) -> None:
    task = recall_task(world, home)
    other = make_repo(world["tmp"] / "other")
    CodexSession("c3", other).turn("unrelated").turn("more").turn("still").write(world["codex"])
    CodexSession("d4", world["repo"], start=BASE + timedelta(days=20)).turn("later").write(
        world["codex"]
    )
    sync(home, world["codex"], other)
    staged = op("memory.stage", world["repo"], home, drafts_for(task, TEXT))
    assert staged["status"] == "adjudication-required"


def test_a_rewritten_related_turn_makes_the_task_stale(world: dict[str, Any], home: Path) -> None:
    task = recall_task(world, home)
    session: CodexSession = world["session"]
    session.records[1]["payload"]["message"] = "The release script fails; FIX IT NOW"
    session.records[2]["payload"]["content"][0]["text"] = "The release script fails; FIX IT NOW"
    session.write(world["codex"])
    sync(home, world["codex"], None)
    with pytest.raises(errors.TeamloreError) as refused:
        op("memory.stage", world["repo"], home, drafts_for(task, TEXT))
    assert refused.value.code == "TASK_STALE"
    assert "a turn it holds was rewritten or is gone from the index (turn-revision-changed)" in (
        refused.value.message
    )


def test_an_approved_entry_landing_before_adjudication_makes_it_stale(
    world: dict[str, Any], home: Path
) -> None:
    task = recall_task(world, home)
    staged = op("memory.stage", world["repo"], home, drafts_for(task, TEXT))
    entry = world["repo"] / ".threadshare/memory/entries/release-tag-prefix.md"
    entry.write_text(
        ENTRY.format(id="release-tag-prefix", body="Release tag checks expect a v prefix.")
    )
    with pytest.raises(errors.TeamloreError) as refused:
        op("memory.stage", world["repo"], home, adjudicate(staged))
    assert refused.value.code == "ADJUDICATION_STALE"
    again = op("memory.stage", world["repo"], home, drafts_for(task, TEXT))
    hits = again["adjudicationTask"]["recallSets"][0]["ordered"]
    assert {"rank": 1, "sourceKind": "approved", "id": "release-tag-prefix"} in hits
    skipped = op(
        "memory.stage",
        world["repo"],
        home,
        {
            **adjudicate(again),
            "adjudications": [
                {
                    "draftRef": again["adjudicationTask"]["drafts"][0]["candidateId"],
                    "action": "skip",
                    "targetIds": ["release-tag-prefix"],
                    "mergedFields": None,
                }
            ],
        },
    )
    assert skipped["candidates"][0]["candidateStatus"] == "discarded"
    assert skipped["next"] is None


def test_an_unknown_format_is_refused(world: dict[str, Any], home: Path) -> None:
    with pytest.raises(errors.TeamloreError) as refused:
        op("memory.stage", world["repo"], home, {"format": "threadshare-memory-other@v1"})
    assert refused.value.code == "STAGE_REQUEST_INVALID"
