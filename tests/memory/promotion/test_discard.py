"""memory discard: drafts, quarantined and adjudication-failed candidates leave the pool."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_review import TEXT, Flow, candidate, dump, request_for

from teamlore.core import errors


@pytest.fixture()
def flow(tmp_path: Path, home: Path) -> Flow:
    return Flow(tmp_path, home)


def _state(flow: Flow, cid: str) -> tuple[str, int, int, int]:
    conn = flow.state()
    status, revision, rowid = conn.execute(
        "SELECT status, revision, rowid FROM candidates WHERE candidate_id = ?", (cid,)
    ).fetchone()
    indexed = conn.execute("SELECT count(*) FROM candidate_fts WHERE rowid = ?", (rowid,))
    generation = conn.execute("SELECT max(generation) FROM candidate_projection").fetchone()[0]
    result = (status, int(revision), int(indexed.fetchone()[0]), int(generation))
    conn.close()
    return result


def test_a_quarantined_candidate_is_discarded_and_leaves_the_pool(flow: Flow) -> None:
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    status, revision, indexed, generation = _state(flow, cid)
    assert (status, revision, indexed) == ("quarantined", 2, 1)
    plan = flow.op("memory.prepare", request_for(flow.item(cid)))
    result = flow.op("memory.discard", {"candidateId": cid, "expectedRevision": 2})
    assert result["previousStatus"] == "quarantined" and result["revision"] == 3
    assert result["voidedPlanIds"] == [plan["planId"]]
    assert _state(flow, cid) == ("discarded", 3, 0, generation + 1)
    assert flow.review()["items"] == []


def test_a_draft_and_an_adjudication_failed_draft_can_be_discarded(flow: Flow) -> None:
    staged = flow.stage([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    (cid,) = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    for target in ("nope-1", "nope-2"):
        with pytest.raises(errors.TeamloreError):  # invalid once, then failed
            flow.adjudicate(
                staged,
                [{"draftRef": cid, "action": "skip", "targetIds": [target], "mergedFields": None}],
            )
    assert [f["candidateId"] for f in flow.review()["failed"]] == [cid]
    result = flow.op("memory.discard", {"candidateId": cid})
    assert (result["previousStatus"], result["adjudication"]) == ("draft", "failed")
    assert flow.review()["failed"] == []


def test_refusals_have_stable_codes_and_change_nothing(flow: Flow) -> None:
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    conn = flow.state()
    before = dump(conn)
    assert flow.refused("memory.discard", {"candidateId": "nope"}).code == "CANDIDATE_NOT_FOUND"
    stale = {"candidateId": cid, "expectedRevision": 1}
    assert flow.refused("memory.discard", stale).code == "CANDIDATE_STALE"
    assert dump(conn) == before
    plan = flow.op("memory.prepare", request_for(flow.item(cid)))
    with conn:
        conn.execute(
            "UPDATE promotion_journal SET status = 'applying' WHERE plan_id = ?",
            (plan["planId"],),
        )
    locked = dump(conn)
    assert flow.refused("memory.discard", {"candidateId": cid}).code == "CANDIDATE_LOCKED"
    assert dump(conn) == locked
    with conn:
        conn.execute("UPDATE promotion_journal SET status = 'voided'")
    flow.op("memory.discard", {"candidateId": cid})
    again = flow.refused("memory.discard", {"candidateId": cid})
    assert again.code == "CANDIDATE_STALE" and again.details["status"] == "discarded"
    conn.close()


def test_the_reason_a_person_gives_is_kept_locally(flow: Flow) -> None:
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    result = flow.op(
        "memory.discard", {"candidateId": cid, "reason": "  too specific\n to one run "}
    )
    assert result["reason"] == "too specific to one run"
    conn = flow.state()
    stored = conn.execute("SELECT reason FROM candidate_discards WHERE candidate_id = ?", (cid,))
    assert stored.fetchone()[0] == "too specific to one run"
    conn.close()
    with pytest.raises(errors.TeamloreError) as refused:
        flow.op("memory.discard", {"candidateId": cid, "reason": "x" * 2001})
    assert refused.value.code == "INVALID_ARGUMENT"


def test_a_candidate_held_by_a_promotion_that_stopped_says_which_plan_and_how_to_finish_it(
    flow: Flow,
) -> None:
    """CANDIDATE_LOCKED said "wait for the promotion to finish": nothing finishes a promote
    that stopped after its approval (killed here, as a power cut would) until someone runs
    it again, so the refusal names the plan and the command that finishes it."""
    from support import teamlore_cli

    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    plan_id = flow.op("memory.prepare", request_for(flow.item(cid)))["planId"]
    env = {"TEAMLORE_HOME": str(flow.home)}
    killed = teamlore_cli(
        "memory",
        "promote",
        "--plan",
        plan_id,
        cwd=flow.repo,
        env={**env, "TEAMLORE_FAILPOINT": "promotion.after-approve"},
    )
    assert killed.returncode != 0

    locked = flow.refused("memory.discard", {"candidateId": cid})
    assert locked.code == "CANDIDATE_LOCKED"
    assert plan_id in locked.message
    shown = locked.to_json()
    assert shown["next"] == "Finish the plan it names: `teamlore memory promote --plan ID`."
    assert "being applied" not in errors.CANDIDATE_LOCKED.summary

    done = teamlore_cli("memory", "promote", "--plan", plan_id, cwd=flow.repo, env=env)
    assert done.returncode == 0, done.stderr
    assert flow.review()["items"] == []  # promoted: nothing holds it any more
