"""Refusals on the wire: ours (`code`, `message`) and the seed's (`problem`, `next`) side by
side (docs/seed-conformance.md)."""

from __future__ import annotations

from teamlore.core import errors


def test_a_refusal_carries_the_seeds_problem_and_next_beside_code_and_message() -> None:
    wire = errors.TeamloreError(errors.MEMORY_NOT_INITIALIZED).to_json()
    assert wire["code"] == "MEMORY_NOT_INITIALIZED"
    assert wire["message"] == wire["problem"] == errors.MEMORY_NOT_INITIALIZED.summary
    assert wire["next"] == "Run `teamlore memory init`."


def test_every_code_has_a_one_line_next_step() -> None:
    for error in errors.registered_codes().values():
        step = errors.next_step(error)
        assert step and "\n" not in step and step[0].isupper() and step.endswith("."), error.code
    assert "`--help`" in errors.next_step(errors.USAGE)
    assert errors.next_step(errors.INTERNAL) == errors.INTERNAL_NEXT
    assert errors.next_step(errors.TASK_STALE) == "Recall again."


def test_details_stay_where_they_were() -> None:
    wire = errors.TeamloreError(errors.QUERY_TOO_BROAD, "201 turns", limit=200).to_json()
    assert wire["details"] == {"limit": 200}
    assert set(wire) == {"code", "message", "problem", "next", "details"}
