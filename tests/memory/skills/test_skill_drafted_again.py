"""A staged Skill whose SKILL.md a teammate changed is drafted again, not lost: review blocks
it (`SKILL_TARGET_DRIFT`) and says to discard it with `--extract-again`, which puts the turns
of its recall chunk back; the next recall offers them as a new task, with the current SKILL.md
in its skillContext, and a Skill drafted from it against that file is not blocked."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_skill_flow import existing_skill, op, recall, refusal, skill_candidate

from support import release_repository
from teamlore.core import errors
from teamlore.ops.memory.review import short_candidate_id

# the discard a run without a terminal can run as printed (`memory discard` needs a reason)
AGAIN = "--reason 'it cannot be promoted as it is' --extract-again"


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    return release_repository(tmp_path, home)


def test_a_skill_whose_target_changed_after_staging_is_discarded_and_drafted_again(
    repo: Path, home: Path
) -> None:
    folder, old = existing_skill(repo)
    recalled = recall(repo, home)
    first_digest = recalled["skillContext"]["skills"][0]["contentDigest"]
    staged = op(
        repo,
        home,
        "memory.stage",
        skill_candidate(recalled, action="update", expected=first_digest),
    )
    (first,) = [c["candidateId"] for c in staged["candidates"]]
    (folder / "SKILL.md").write_text(old + "2. Push the tag from main only.\n")

    (item,) = op(repo, home, "memory.review", {"kind": "skill"})["items"]
    (finding,) = item["lintFindings"]
    assert item["blocked"] and finding["rule"] == "SKILL_TARGET_DRIFT"
    # the command is runnable as written: the candidate's id, not a placeholder
    assert finding["message"] == (
        "Skill 'shop-release' changed since the candidate was staged; discard it and draft it "
        f"again (`teamlore memory discard --candidate {first} {AGAIN}`, then recall)"
    )
    assert "--extract-again" in errors.next_step(errors.SKILL_TARGET_DRIFT)
    drift = refusal(repo, home, "memory.confirm", {"kind": "skill", "candidateIds": [first]})
    assert drift.code == "SKILL_TARGET_DRIFT"
    runnable = f"teamlore memory discard --candidate {short_candidate_id(first)} {AGAIN}"
    assert f"discard it (`{runnable}`)" in drift.message
    assert drift.to_json()["next"] == f"Discard it with `{runnable}`, then recall."
    # its turns are extracted: recalling again alone offers nothing to draft it from
    assert recall(repo, home)["sources"] == []

    put_back = op(repo, home, "memory.discard", {"candidateId": first, "extractAgain": True})
    (turns,) = put_back["turnsPutBack"]
    assert turns["turnRange"]["start"] == 1

    again = recall(repo, home)
    (task,) = again["sources"]
    assert task["taskId"] != recalled["sources"][0]["taskId"]
    current = again["skillContext"]["skills"][0]["contentDigest"]
    assert current != first_digest
    redrafted = op(
        repo, home, "memory.stage", skill_candidate(again, action="update", expected=current)
    )
    (item,) = op(repo, home, "memory.review", {"kind": "skill"})["items"]
    assert item["candidateId"] == redrafted["candidates"][0]["candidateId"] != first
    assert not item["blocked"]
    (file,) = item["files"]
    assert "-2. Push the tag from main only." in file["diff"]


def test_a_skill_recalled_against_an_old_skill_md_is_told_to_recall_again(
    repo: Path, home: Path
) -> None:
    """Before staging, nothing is consumed: recalling again is the way (no discard)."""
    folder, old = existing_skill(repo)
    recalled = recall(repo, home)
    digest = recalled["skillContext"]["skills"][0]["contentDigest"]
    (folder / "SKILL.md").write_text(old + "2. Push the tag from main only.\n")

    err = refusal(
        repo, home, "memory.stage", skill_candidate(recalled, action="update", expected=digest)
    )

    assert err.code == "SKILL_TARGET_DRIFT"
    assert err.to_json()["next"] == "Recall again and write the Skill against the current SKILL.md."
    (task,) = recall(repo, home)["sources"]
    assert task["taskId"] == recalled["sources"][0]["taskId"]


def test_a_staged_skill_whose_team_memory_changed_is_told_to_be_extracted_again(
    repo: Path, home: Path
) -> None:
    """Review, confirm and promote advised "recall again" for a staged Skill whose team memory
    changed (MEMORY_CONTEXT_DRIFT): its turns are extracted, so a recall offers nothing; the
    way out is the discard with --extract-again, as for an entry whose target changed."""
    from teamlore.ops.memory.review import left_out_of_a_plan

    recalled = recall(repo, home)
    staged = op(repo, home, "memory.stage", skill_candidate(recalled))
    (first,) = [c["candidateId"] for c in staged["candidates"]]
    (item,) = op(repo, home, "memory.review", {"kind": "skill"})["items"]
    request = {
        "format": "threadshare-memory-prepare-request@v1",
        "kind": "skill",
        "candidates": [
            {
                "candidateId": first,
                "expectedRevision": item["revision"],
                "statements": [
                    {k: s[k] for k in ("statementId", "statementTextDigest", "citationsDigest")}
                    for s in item["statements"]
                ],
            }
        ],
    }
    plan = op(repo, home, "memory.prepare", request)
    (repo / ".threadshare/memory/doctrine.md").write_text("- Tag releases with a v prefix.\n")

    voided = refusal(repo, home, "memory.promote", {"planId": plan["planId"]})
    assert voided.code == "MEMORY_CONTEXT_DRIFT"
    assert voided.to_json()["next"] == (
        f"Discard it with `teamlore memory discard --candidate {first} {AGAIN}`, then recall."
    )

    (item,) = op(repo, home, "memory.review", {"kind": "skill"})["items"]
    (finding,) = item["lintFindings"]
    assert finding["rule"] == "MEMORY_CONTEXT_DRIFT"
    assert finding["message"] == (
        "the team memory (entries, scenes, doctrine) changed since the candidate was staged; "
        "discard it and draft it again "
        f"(`teamlore memory discard --candidate {first} {AGAIN}`, then recall)"
    )
    out = left_out_of_a_plan(item)
    assert out is not None
    assert out["next"] == (
        f"teamlore memory discard --candidate {short_candidate_id(first)} {AGAIN}"
    )
    confirm = refusal(repo, home, "memory.confirm", {"kind": "skill", "candidateIds": [first]})
    assert confirm.code == "MEMORY_CONTEXT_DRIFT" and "--extract-again" in confirm.message
    assert recall(repo, home)["sources"] == []  # recalling again alone offers nothing

    op(repo, home, "memory.discard", {"candidateId": first, "extractAgain": True})
    (task,) = recall(repo, home)["sources"]
    assert task["taskId"] != recalled["sources"][0]["taskId"]


def test_a_skill_drafted_against_old_team_memory_is_still_told_to_recall_again(
    repo: Path, home: Path
) -> None:
    """Before staging nothing is extracted: recalling again is the way (no discard)."""
    recalled = recall(repo, home)
    (repo / ".threadshare/memory/doctrine.md").write_text("- Tag releases with a v prefix.\n")
    err = refusal(repo, home, "memory.stage", skill_candidate(recalled))
    assert err.code == "MEMORY_CONTEXT_DRIFT"
    assert "--extract-again" not in err.message + err.to_json()["next"]
