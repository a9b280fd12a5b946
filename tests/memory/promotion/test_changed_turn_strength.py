"""A cited turn counts as its delivery edges give it, whatever it was staged with (an earlier
teamlore staged every turn `direct`): also when the turn changed since staging. A changed turn's
entry names no commit of it (`delivered_commits` is read only from the turn as staged), so it is
written `unknown`, not the `direct` an earlier teamlore recorded. Real git repository, real
sessions, real operations; the index's revision of the turn changed as a later sync changes it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from test_review import TEXT, Flow, candidate, request_for

FEEDBACK = "turn {index} (changed since staging)"


@pytest.fixture()
def flow(tmp_path: Path, home: Path) -> Flow:
    return Flow(tmp_path, home)


def change_turn(home: Path, index: int) -> None:
    conn = sqlite3.connect(home / "index.sqlite3")
    try:
        with conn:
            changed = conn.execute(
                "UPDATE turns SET revision = revision || '-later' WHERE ordinal = ?", (index,)
            ).rowcount
        assert changed == 1
    finally:
        conn.close()


def test_an_old_direct_turn_changed_since_staging_is_promoted_unknown(
    flow: Flow, home: Path
) -> None:
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    with flow.state() as conn:  # as an earlier teamlore staged it
        conn.execute("UPDATE evidence_refs SET strength = 'direct' WHERE candidate_id = ?", (cid,))
        conn.execute(
            "UPDATE assessments SET provenance_strength = 'direct' WHERE candidate_id = ?", (cid,)
        )
    change_turn(home, 1)

    item = flow.item(cid)
    (statement,) = item["statements"]
    (cited,) = statement["evidence"]
    assert "changed since staging" in cited["display"]
    assert (statement["provenanceStrength"], item["provenanceStrength"]) == ("unknown", "unknown")

    plan = flow.op("memory.prepare", request_for(item))
    promoted = flow.op("memory.promote", {"planId": plan["planId"]})
    (written,) = promoted["files"]
    text = (flow.repo / written["targetPath"]).read_text()
    assert '\nevidence: {"commits":[],"paths":[]}\n' in text
    assert "\nprovenance_strength: unknown\n" in text
