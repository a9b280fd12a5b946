"""memory discard --extract-again: a lesson whose update target a teammate changed is not lost.

bo's candidate updates an approved entry; ana deletes that entry and bo pulls it (real git
repositories, the git binary). The candidate is blocked (`TARGET_DRIFT`) and the refusal says
what happened to the entry. Discarding it with `--extract-again` puts the turns it came from
back: the next recall offers them as a new task, adjudicated against memory as it is now. A
plain discard (a person rejecting a claim) leaves them extracted.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from recall_world import git
from test_review import TEXT, WINDOW, Flow, candidate, request_for, store, write_approved_entry

from support import in_process, teamlore_cli
from teamlore.core import errors
from teamlore.core.canonical import digest
from teamlore.memory.extraction.evidence import task_scope

ENTRY = "release-tag-prefix"
WRONG = "Release tags may be pushed without running any test."
TAGS = "Release tags need a v prefix."
TESTS = "Run the release tests before pushing a tag."


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
    # a command to run as printed, with the --reason a run without a terminal needs: at 80
    # columns broken before a flag, the lines joined by the shell's ` \`
    at = shown.index(f"    teamlore memory discard --candidate {updater[:20]}-c1 \\")
    assert shown[at + 1] == "      --reason 'it cannot be promoted as it is' --extract-again"
    assert all(len(line) <= 80 for line in shown)
    refused = flow.refused("memory.confirm", {"candidateIds": [updater]})
    assert refused.code == errors.TARGET_DRIFT.code
    assert "--extract-again" in refused.message

    # a person rejecting a wrong claim: its turns stay extracted
    rejected = flow.op("memory.discard", {"candidateId": wrong})
    assert rejected["turnsPutBack"] == []
    again = _recall(flow)
    assert again["sources"] == [] and again["coverage"]["alreadyExtractedTurns"] == 4

    # run as the review printed it, without a terminal
    printed = shlex.split(shown[at].removesuffix("\\") + shown[at + 1])
    done = in_process(
        *printed[1:], "--format", "json", cwd=flow.repo, env={"TEAMLORE_HOME": str(flow.home)}
    )
    assert done.returncode == 0, done.stderr
    (turns,) = json.loads(done.stdout)["turnsPutBack"]
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


def _evidence_of(item: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["kind"], e["display"]) for s in item["statements"] for e in s["evidence"]]


def test_a_candidate_extracted_again_keeps_its_evidence_through_review_and_prepare(
    flow: Flow,
) -> None:
    """The task of turns put back is cut with its round in the evidence scope: review and
    prepare resolve its citations (dates, commits, excerpts) as they do a first round's, and
    the candidates of earlier rounds of the same chunk keep theirs."""

    def cited() -> list[tuple[str, list[str]]]:  # two claim units: a Statements: list
        return [(TAGS, [flow.turn_ev(1)]), (TESTS, [flow.turn_ev(3)])]

    first, sibling = flow.quarantine(
        [candidate(TEXT, cited()), candidate(WRONG, [(WRONG, [flow.turn_ev(3)])])]
    )
    shown = _evidence_of(flow.item(first))
    assert [kind for kind, _ in shown] == ["turn", "turn"]
    sibling_before = flow.item(sibling)

    flow.op("memory.discard", {"candidateId": first, "extractAgain": True})
    (flow._task,) = _recall(flow)["sources"]  # round 1
    staged = flow.stage([candidate(TEXT, cited())])
    (draft,) = staged["adjudicationTask"]["drafts"]
    flow.adjudicate(staged, [store(draft["candidateId"])])

    again = flow.item(draft["candidateId"])
    assert _evidence_of(again) == shown  # the same turns, resolved (not `unresolved`)
    assert again["publicEvidence"] == {
        "repository": "github.com/acme/shop",
        "commits": [flow.fixed],
        "paths": [],
        "occurred": ["2026-03-02"],
    }
    # a candidate of round 0 of the same chunk (now at round 1) still resolves, unchanged
    assert flow.item(sibling) == sibling_before

    planned = flow.op("memory.prepare", request_for(again))
    assert planned["status"] == "generated"
    with flow.state() as state:
        (content,) = [
            bytes(row[0]).decode()
            for row in state.execute("SELECT sanitized_content FROM promotion_files")
        ]
    assert content == again["files"][0]["preview"]
    assert 'occurred: ["2026-03-02"]' in content and f'"hash":"{flow.fixed}"' in content
    assert f"- {TAGS} (evidence: turn of 2026-03-02)" in content
    assert f"- {TESTS} (evidence: turn of 2026-03-02; commit {flow.fixed})" in content


def test_a_round_one_candidate_resolves_after_its_chunk_went_to_round_two(flow: Flow) -> None:
    """The round is the task's, not the chunk's current one: a draft of round 1 adjudicated
    after its turns were put back once more (round 2) keeps its evidence."""
    first, second = flow.quarantine(
        [
            candidate(TEXT, [(TEXT, [flow.turn_ev(1)])]),
            candidate(WRONG, [(WRONG, [flow.turn_ev(1)])]),
        ]
    )
    flow.op("memory.discard", {"candidateId": first, "extractAgain": True})
    (flow._task,) = _recall(flow)["sources"]
    staged = flow.stage([candidate(TEXT, [(TEXT, [flow.turn_ev(3)])])])
    (draft,) = staged["adjudicationTask"]["drafts"]
    flow.op("memory.discard", {"candidateId": second, "extractAgain": True})
    flow.adjudicate(
        flow.stage([candidate(TEXT, [(TEXT, [flow.turn_ev(3)])])]), [store(draft["candidateId"])]
    )
    item = flow.item(draft["candidateId"])
    assert [kind for kind, _ in _evidence_of(item)] == ["turn"]
    assert item["publicEvidence"]["commits"] == [flow.fixed]


def test_a_first_round_task_keeps_the_scope_its_evidence_ids_were_made_with() -> None:
    """Round 0 leaves the round out of the scope: candidates and plans recorded before rounds
    existed keep resolving; a later round is another scope, so other evidence ids."""
    owner = {"repositoryKey": "r" * 64, "worktreeKey": "w" * 64}
    before = digest({"owner": owner, "sessionKey": "s" * 64, "chunk": "c" * 64})
    assert task_scope(owner, "s" * 64, "c" * 64) == before
    assert task_scope(owner, "s" * 64, "c" * 64, 0) == before
    rounds = {task_scope(owner, "s" * 64, "c" * 64, n) for n in (0, 1, 2)}
    assert len(rounds) == 3
