"""A claim resting on session turns alone links no delivered work: its provenance strength is
`unknown`, never `direct` (docs/sessions.md: `direct` is a full hash a commit command printed in
the turn; docs/extraction.md). The entry promotion writes says so next to evidence naming no
commit, and a candidate an earlier teamlore staged with its turn recorded `direct` is reviewed
and written the same way. Real git repository, real sessions, real operations."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_review import TEXT, Flow, candidate, request_for, store


@pytest.fixture()
def flow(tmp_path: Path, home: Path) -> Flow:
    return Flow(tmp_path, home)


def promoted_file(flow: Flow, item: dict) -> str:
    plan = flow.op("memory.prepare", request_for(item))
    promoted = flow.op("memory.promote", {"planId": plan["planId"]})
    (written,) = promoted["files"]
    return (flow.repo / written["targetPath"]).read_text()


def test_a_claim_on_a_turn_that_delivered_nothing_is_written_unknown(flow: Flow) -> None:
    staged = flow.stage([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    (assessment,) = staged["assessments"]
    assert assessment["provenanceStrength"] == "unknown"
    assert assessment["limitations"] == ["source-local-only"]
    (cid,) = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    flow.adjudicate(staged, [store(cid)])

    item = flow.item(cid)
    assert item["provenanceStrength"] == "unknown"

    text = promoted_file(flow, item)
    assert "\nprovenance_strength: unknown\n" in text
    assert '\nevidence: {"commits":[],"paths":[]}\n' in text


def test_a_claim_on_the_turn_that_committed_is_as_strong_as_its_commit(flow: Flow) -> None:
    """Turn 3 ran the commit: the entry names that commit (its delivery edge), and the turn
    is as strong as citing the commit itself."""
    other = "The release tests catch a wrong tag prefix."
    staged = flow.stage(
        [
            candidate(other, [(other, [flow.commit_ev()])]),
            candidate(TEXT, [(TEXT, [flow.turn_ev(3)])]),
        ]
    )
    on_commit, on_turn = (a["provenanceStrength"] for a in staged["assessments"])
    assert on_commit in ("direct", "observed") and on_turn == on_commit
    ids = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    flow.adjudicate(staged, [store(i) for i in ids])
    cid = ids[1]
    strength = on_turn

    text = promoted_file(flow, flow.item(cid))
    assert f"\nprovenance_strength: {strength}\n" in text
    assert flow.fixed in text  # the commit, in `evidence`


def test_a_turn_an_earlier_teamlore_staged_direct_is_promoted_unknown(flow: Flow) -> None:
    """What a quarantined candidate staged before the rule holds: its turn recorded `direct`
    (evidence_refs.strength) and the statement's assessment `direct`."""
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    with flow.state() as conn:
        conn.execute("UPDATE evidence_refs SET strength = 'direct' WHERE candidate_id = ?", (cid,))
        conn.execute(
            "UPDATE assessments SET provenance_strength = 'direct' WHERE candidate_id = ?", (cid,)
        )

    item = flow.item(cid)
    (statement,) = item["statements"]
    assert (statement["provenanceStrength"], item["provenanceStrength"]) == ("unknown", "unknown")

    text = promoted_file(flow, item)
    assert "\nprovenance_strength: unknown\n" in text
    assert '\nevidence: {"commits":[],"paths":[]}\n' in text
