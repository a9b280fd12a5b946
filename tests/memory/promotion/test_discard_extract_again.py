"""memory discard --extract-again: a lesson whose update target a teammate changed is not lost.

bo's candidate updates an approved entry; ana deletes that entry and bo pulls it (real git
repositories, the git binary). The candidate is blocked (`TARGET_DRIFT`) and the refusal says
what happened to the entry. Discarding it with `--extract-again` puts the turns it came from
back: the next recall offers them as a new task, adjudicated against memory as it is now. A
plain discard (a person rejecting a claim) leaves them extracted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from recall_world import git
from test_review import TEXT, WINDOW, Flow, candidate, store, write_approved_entry

from support import teamlore_cli
from teamlore.core import errors

ENTRY = "release-tag-prefix"
WRONG = "Release tags may be pushed without running any test."


@pytest.fixture()
def flow(tmp_path: Path, home: Path) -> Flow:
    return Flow(tmp_path, home)


def teammate_clone(flow: Flow, name: str) -> Path:
    """Commit bo's memory tree and clone it as a teammate's worktree (bo pulls from it)."""
    git(flow.repo, "add", ".threadshare")
    git(flow.repo, "commit", "-q", "-m", "team memory")
    clone = flow.repo.parent / name
    git(flow.repo.parent, "clone", "-q", str(flow.repo), str(clone))
    git(clone, "config", "user.name", name)
    git(clone, "config", "user.email", f"{name}@example.com")
    git(flow.repo, "remote", "add", name, str(clone))
    return clone


def pull(flow: Flow, teammate: str) -> None:
    git(flow.repo, "pull", "-q", "--ff-only", teammate, "main")


def _recall(flow: Flow) -> dict[str, Any]:
    return flow.op("memory.recall", WINDOW)


def test_a_candidate_whose_target_a_teammate_deleted_can_be_extracted_again(flow: Flow) -> None:
    write_approved_entry(flow.repo, ENTRY, "Release tags need a v prefix.")
    ana = teammate_clone(flow, "ana")
    staged = flow.stage(
        [
            candidate(TEXT, [(TEXT, [flow.turn_ev(1)])]),
            candidate(WRONG, [(WRONG, [flow.turn_ev(1)])]),
        ]
    )
    updater, wrong = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    update = {"draftRef": updater, "action": "update", "targetIds": [ENTRY]}
    flow.adjudicate(staged, [{**update, "mergedFields": {"content": TEXT}}, store(wrong)])
    git(ana, "rm", "-q", f".threadshare/memory/entries/{ENTRY}.md")
    git(ana, "commit", "-q", "-m", "drop the tag rule")
    pull(flow, "ana")

    (item,) = [i for i in flow.review()["items"] if i["candidateId"] == updater]
    assert item["blocked"] and item["lintFindings"][0]["rule"] == "TARGET_DRIFT"
    # it says what happened: the entry is gone, not "changed"
    assert item["lintFindings"][0]["message"].startswith(
        f"entry {ENTRY} was deleted or renamed since the candidate was adjudicated;"
    )
    shown = teamlore_cli(
        "memory", "review", cwd=flow.repo, env={"TEAMLORE_HOME": str(flow.home), "COLUMNS": "80"}
    ).stdout.splitlines()
    assert f"    teamlore memory discard --candidate {updater[:20]}-c1 --extract-again" in shown
    assert all(len(line) <= 80 for line in shown)
    refused = flow.refused("memory.confirm", {"candidateIds": [updater]})
    assert refused.code == errors.TARGET_DRIFT.code
    assert "--extract-again" in refused.message

    # a person rejecting a wrong claim: its turns stay extracted
    rejected = flow.op("memory.discard", {"candidateId": wrong})
    assert rejected["turnsPutBack"] == []
    again = _recall(flow)
    assert again["sources"] == [] and again["coverage"]["alreadyExtractedTurns"] == 4

    put_back = flow.op("memory.discard", {"candidateId": updater, "extractAgain": True})
    (turns,) = put_back["turnsPutBack"]
    assert turns["turnRange"] == {"start": 1, "end": 4}

    recalled = _recall(flow)
    assert recalled["coverage"]["alreadyExtractedTurns"] == 0
    (task,) = recalled["sources"]
    assert task["taskId"] != flow.task["taskId"]  # a new task, new evidence ids
    flow._task = task
    fresh = flow.stage([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    (draft,) = fresh["adjudicationTask"]["drafts"]
    assert draft["candidateId"] not in (updater, wrong)
    # adjudicated against memory as it is now: the deleted entry is no neighbour
    assert ENTRY not in json.dumps(fresh["adjudicationTask"])
    flow.adjudicate(fresh, [store(draft["candidateId"])])
    (new,) = flow.review()["items"]
    assert not new["blocked"] and [f["role"] for f in new["files"]] == ["new"]

    # once is once: the turns are extracted again, and stay so
    assert _recall(flow)["coverage"]["alreadyExtractedTurns"] == 4


def test_the_cli_names_the_turns_it_puts_back_at_80_columns(
    flow: Flow,
) -> None:
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    done = teamlore_cli(
        "memory",
        "discard",
        "--candidate",
        cid[:20],
        "--extract-again",
        "--reason",
        "right, but cannot be promoted as it is",
        cwd=flow.repo,
        env={"TEAMLORE_HOME": str(flow.home), "COLUMNS": "80"},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"Discarded {cid[:20]}-c1 (was quarantined)."
    assert lines[1].startswith("Turns 1-4 of session ")
    assert lines[2] == "  the next `teamlore memory recall` offers them again."
    assert all(len(line) <= 80 for line in lines)
    assert _recall(flow)["coverage"]["alreadyExtractedTurns"] == 0


def test_turns_put_back_while_a_draft_of_theirs_awaits_adjudication_stay_put_back(
    flow: Flow,
) -> None:
    """The put-back wins: a draft of an earlier round, adjudicated after a person put its
    chunk's turns back again, is kept (or not) on its own merits, but its adjudication no
    longer marks the chunk extracted, so the next recall still offers the turns."""
    first, second = flow.quarantine(
        [
            candidate(TEXT, [(TEXT, [flow.turn_ev(1)])]),
            candidate(WRONG, [(WRONG, [flow.turn_ev(1)])]),
        ]
    )
    flow.op("memory.discard", {"candidateId": first, "extractAgain": True})
    recalled = _recall(flow)
    (flow._task,) = recalled["sources"]
    redraft = [candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])]
    (draft,) = flow.stage(redraft)["adjudicationTask"]["drafts"]  # round 1, awaiting adjudication

    # meanwhile the other candidate of the same turns goes back too: round 2
    put_back = flow.op("memory.discard", {"candidateId": second, "extractAgain": True})
    assert put_back["turnsPutBack"][0]["turnRange"] == {"start": 1, "end": 4}
    staged = flow.stage(redraft)  # the same batch again: a live adjudication task
    flow.adjudicate(staged, [store(draft["candidateId"])])

    assert flow.item(draft["candidateId"])["status"] == "quarantined"
    again = _recall(flow)
    assert again["coverage"]["alreadyExtractedTurns"] == 0
    (task,) = again["sources"]
    assert task["taskId"] not in (flow.task["taskId"], recalled["sources"][0]["taskId"])
    with flow.state() as state:
        (row,) = state.execute("SELECT status, extraction_round FROM chunks").fetchall()
    assert tuple(row) == ("pending", 2)
