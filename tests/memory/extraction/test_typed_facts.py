"""Typed facts: fixed templates, recall offers, verification, and that nothing forges one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_review import Flow, candidate, request_for

from teamlore.memory.extraction.typed_facts import (
    COMMAND_EXIT,
    COMMIT_CHANGED_PATH,
    TypedFactError,
    parse_fact_text,
    render_command_exit,
    render_commit_changed_path,
)

HASH = "0123456789abcdef0123456789abcdef01234567"


def test_renderers_use_fixed_templates_and_refuse_bad_params() -> None:
    assert render_commit_changed_path(HASH, "src/a.py") == f"Commit {HASH} changed src/a.py."
    assert render_command_exit("make test", 2) == "Command `make test` exited with code 2."
    for bad in (
        lambda: render_commit_changed_path(HASH[:7], "a"),
        lambda: render_commit_changed_path(HASH, "/etc/passwd"),
        lambda: render_commit_changed_path(HASH, "a\nb"),
        lambda: render_command_exit("echo `id`", 0),
        lambda: render_command_exit("make", -1),
    ):
        with pytest.raises(TypedFactError):
            bad()


@pytest.mark.parametrize(
    "text",
    [
        f"Commit {HASH} changed src/a.py",  # no final dot
        f"commit {HASH} changed src/a.py.",
        f"Commit {HASH.upper()} changed src/a.py.",
        "Command `make test` exited with code 02.",
        "Command `make test` exited with code 2. Also it was flaky.",
    ],
)
def test_only_exact_template_output_parses(text: str) -> None:
    assert parse_fact_text(text) is None


def test_parse_inverts_render() -> None:
    fact = parse_fact_text(render_command_exit("make test", 2))
    assert fact is not None and fact.renderer == COMMAND_EXIT
    assert fact.params == {"command": "make test", "exitCode": 2}


@pytest.fixture()
def flow(tmp_path: Path, home: Path) -> Flow:
    return Flow(tmp_path, home)


def _facts(flow: Flow) -> dict[str, dict[str, Any]]:
    return {f"{f['renderer']}:{f['params']}": f for f in flow.typed_facts()}


def test_recall_offers_a_failed_then_passing_command_and_the_commit_paths(flow: Flow) -> None:
    facts = flow.typed_facts()
    commands = [f for f in facts if f["renderer"] == COMMAND_EXIT]
    assert [(f["params"]["exitCode"], f["evidenceIds"]) for f in commands] == [
        (1, [flow.turn_ev(1)]),
        (0, [flow.turn_ev(2)]),
    ]
    assert commands[0]["pairedWith"] == commands[1]["factId"]
    (changed,) = [f for f in facts if f["renderer"] == COMMIT_CHANGED_PATH]
    assert changed["text"] == f"Commit {flow.fixed} changed src/release.py."
    assert changed["evidenceIds"] == [flow.commit_ev()]


def _as_statements(facts: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    return [(f["text"], list(f["evidenceIds"])) for f in facts]


def test_copied_typed_facts_are_verified_and_approve_all_is_offered(flow: Flow) -> None:
    facts = flow.typed_facts()
    (cid,) = flow.quarantine(
        [candidate("The release tests failed, then passed after the fix.", _as_statements(facts))]
    )
    item = flow.item(cid)
    assert [s["typedFact"] for s in item["statements"]] == [
        COMMAND_EXIT,
        COMMAND_EXIT,
        COMMIT_CHANGED_PATH,
    ]
    assert {s["claimSupport"] for s in item["statements"]} == {"typed-fact"}
    assert item["needsConfirmation"] == [] and item["approveAll"]["offered"] is True
    plan = flow.op("memory.prepare", item["prepareRequest"])
    assert {c["claimSupport"] for c in plan["confirmed"]} == {"typed-fact"}
    previews = [f["preview"] for f in plan["files"]]
    assert all("claim_support: typed-fact" in p for p in previews)
    assert any('"paths":["src/release.py"]' in p for p in previews)
    conn = flow.state()
    rows = conn.execute(
        "SELECT DISTINCT claim_support, assessed_by FROM assessments WHERE candidate_id = ?", (cid,)
    ).fetchall()
    assert [tuple(r) for r in rows] == [("typed-fact", "deterministic")]
    conn.close()


def _mutations(flow: Flow, fact: dict[str, Any]) -> list[tuple[str, list[str]]]:
    text, ids = fact["text"], fact["evidenceIds"]
    other_turn = flow.turn_ev(3)
    if fact["renderer"] == COMMAND_EXIT:
        changed = (
            text.replace("code 1", "code 0")
            if "code 1" in text
            else text.replace("code 0", "code 1")
        )
    else:
        changed = text.replace("src/release.py", "src/other.py")
    return [
        (changed, ids),  # text changed, same citation
        (text + " ", ids),  # one byte more
        (text, [*ids, other_turn]),  # an extra citation
        (text, [other_turn]),  # a different citation
    ]


def test_a_changed_text_or_citation_is_never_a_typed_fact(flow: Flow) -> None:
    statements = [m for fact in flow.typed_facts() for m in _mutations(flow, fact)]
    drafts = [candidate(f"mutation {n}", [s]) for n, s in enumerate(statements[:8])]
    ids = flow.quarantine(drafts)
    review = {i["candidateId"]: i for i in flow.review()["items"]}
    for cid in ids:
        item = review[cid]
        (statement,) = item["statements"]
        assert statement["typedFact"] is None, statement["text"]
        assert statement["claimSupport"] == "unverified"
        assert item["approveAll"]["offered"] is False


def test_an_unlisted_forged_fact_blocks_the_plan(flow: Flow) -> None:
    fact = next(f for f in flow.typed_facts() if f["renderer"] == COMMAND_EXIT)
    forged = fact["text"].replace("code 1", "code 0")  # the run that failed, claimed as passing
    (cid,) = flow.quarantine(
        [
            candidate(
                "Release tests",
                [("The tests cover tags.", [flow.turn_ev(1)]), (forged, fact["evidenceIds"])],
            )
        ]
    )
    item = flow.item(cid)
    error = flow.refused("memory.prepare", request_for(item, only=["s1"]))
    assert error.code == "UNVERIFIED_CLAIM" and error.details["statementIds"] == ["s2"]
    conn = flow.state()
    assert conn.execute("SELECT count(*) FROM promotion_journal").fetchone()[0] == 0
    conn.close()
