"""The host rules for an adjudication result, one test per rule.

Task drafts: c1, c2, c3 (DRAFT_IDS). Pool: approved `lock-timeout`, candidate `extract-old-c1`,
and draft c2 itself (drafts of the batch are visible to each other's recall).
"""

from __future__ import annotations

from typing import Any

import contract_examples as ex
import pytest
from pydantic import ValidationError

from teamlore.contracts import (
    AdjudicationResult,
    AdjudicationTask,
    check_adjudication_result,
    validate_adjudication_result,
)
from teamlore.core import errors

C1, C2, C3 = ex.DRAFT_IDS
APPROVED = "lock-timeout"
CANDIDATE = "extract-old-c1"
FIELDS = {"content": "merged"}


def store(ref: str) -> dict[str, Any]:
    return {"draftRef": ref, "action": "store", "targetIds": [], "mergedFields": None}


def skip(ref: str, *targets: str) -> dict[str, Any]:
    return {"draftRef": ref, "action": "skip", "targetIds": list(targets), "mergedFields": None}


def mutate(ref: str, action: str, *targets: str) -> dict[str, Any]:
    return {"draftRef": ref, "action": action, "targetIds": list(targets), "mergedFields": FIELDS}


def result_of(*decisions: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    return {**ex.adjudication_result(), "adjudications": list(decisions), **overrides}


def task() -> AdjudicationTask:
    return AdjudicationTask.from_wire(ex.adjudication_task())


def reasons(document: dict[str, Any]) -> list[str]:
    result = AdjudicationResult.from_wire(document)
    return [issue.reason for issue in check_adjudication_result(task(), result)]


def refused(document: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as failure:
        AdjudicationResult.from_wire(document)
    return str(failure.value)


def test_the_example_result_is_valid() -> None:
    assert reasons(ex.adjudication_result()) == []
    validate_adjudication_result(task(), AdjudicationResult.from_wire(ex.adjudication_result()))


def test_every_draft_must_be_decided() -> None:
    assert reasons(result_of(store(C1), store(C2))) == ["missing-decision"]


def test_a_draft_is_decided_only_once() -> None:
    assert "duplicate-decision" in refused(result_of(store(C1), store(C1), store(C2), store(C3)))


def test_decisions_for_unknown_drafts_are_refused() -> None:
    found = reasons(result_of(store(C1), store(C2), store(C3), store("extract-y-c1")))
    assert found == ["unknown-draft"]


def test_store_takes_no_targets_and_no_merged_fields() -> None:
    with_target = {**store(C1), "targetIds": [APPROVED]}
    assert "store-with-targets" in refused(result_of(with_target, store(C2), store(C3)))
    with_fields = {**store(C1), "mergedFields": FIELDS}
    assert "unexpected-merged-fields" in refused(result_of(with_fields, store(C2), store(C3)))


def test_skip_needs_a_target_and_no_merged_fields() -> None:
    assert "missing-target" in refused(result_of(skip(C1), store(C2), store(C3)))
    with_fields = {**skip(C1, APPROVED), "mergedFields": FIELDS}
    assert "unexpected-merged-fields" in refused(result_of(with_fields, store(C2), store(C3)))


def test_skip_may_point_at_a_pool_item_or_a_stored_draft() -> None:
    assert reasons(result_of(skip(C1, APPROVED, CANDIDATE), store(C2), skip(C3, C2))) == []


def test_skip_cannot_point_at_itself() -> None:
    assert "self-target" in refused(result_of(skip(C1, C1), store(C2), store(C3)))


def test_skip_chains_and_cycles_are_refused() -> None:
    chain = result_of(skip(C1, C3), store(C2), skip(C3, C2))
    assert "skip-chain" in refused(chain)
    cycle = result_of(skip(C1, C3), store(C2), skip(C3, C1))
    assert "skip-chain" in refused(cycle)


def test_skip_to_an_unknown_id_is_refused() -> None:
    assert reasons(result_of(skip(C1, "nowhere"), store(C2), store(C3))) == ["unknown-target"]


def test_update_needs_exactly_one_target() -> None:
    two = mutate(C1, "update", APPROVED, CANDIDATE)
    assert "update-target-count" in refused(result_of(two, store(C2), store(C3)))
    none = mutate(C1, "update")
    assert "update-target-count" in refused(result_of(none, store(C2), store(C3)))


def test_merge_needs_a_target() -> None:
    assert "missing-target" in refused(result_of(mutate(C1, "merge"), store(C2), store(C3)))


def test_update_and_merge_need_merged_fields() -> None:
    bare = {**mutate(C1, "update", CANDIDATE), "mergedFields": None}
    assert "missing-merged-fields" in refused(result_of(bare, store(C2), store(C3)))


def test_no_target_is_named_twice_in_one_decision() -> None:
    twice = mutate(C1, "merge", CANDIDATE, CANDIDATE)
    assert "repeated-target" in refused(result_of(twice, store(C2), store(C3)))


def test_update_cannot_target_a_draft_of_the_same_batch() -> None:
    # c2 is in the pool (as a draft-state candidate) and still may not be mutated.
    found = reasons(result_of(mutate(C1, "update", C2), store(C2), store(C3)))
    assert found == ["mutation-targets-draft"]


def test_merge_cannot_target_a_draft_of_the_same_batch() -> None:
    found = reasons(result_of(mutate(C1, "merge", CANDIDATE, C3), store(C2), store(C3)))
    assert found == ["mutation-targets-draft"]


def test_update_and_merge_may_target_approved_entries() -> None:
    assert reasons(result_of(mutate(C1, "update", APPROVED), store(C2), store(C3))) == []
    assert reasons(result_of(mutate(C1, "merge", APPROVED, CANDIDATE), store(C2), store(C3))) == []


def test_a_pool_item_is_mutated_by_one_decision_at_most() -> None:
    found = reasons(
        result_of(mutate(C1, "update", CANDIDATE), store(C2), mutate(C3, "merge", CANDIDATE))
    )
    assert found == ["target-mutated-twice"]


def test_several_drafts_may_skip_in_favour_of_the_same_entry() -> None:
    assert reasons(result_of(skip(C1, APPROVED), store(C2), skip(C3, APPROVED))) == []


def test_foreign_task_id_and_drifted_binding_are_binding_mismatches() -> None:
    foreign = result_of(store(C1), store(C2), store(C3), taskId="adjudicate-agent-other")
    assert reasons(foreign) == ["task-mismatch"]
    drifted_binding = {**ex.adjudication_task()["binding"], "resultSetDigest": "f" * 64}
    drifted = result_of(store(C1), store(C2), store(C3), binding=drifted_binding)
    assert reasons(drifted) == ["binding-drift"]
    with pytest.raises(errors.TeamloreError) as failure:
        validate_adjudication_result(task(), AdjudicationResult.from_wire(drifted))
    assert failure.value.code == errors.BINDING_MISMATCH.code


def test_validation_raises_the_first_issue_with_its_reason_and_draft() -> None:
    document = result_of(mutate(C1, "update", C2), store(C2), store(C3))
    with pytest.raises(errors.TeamloreError) as failure:
        validate_adjudication_result(task(), AdjudicationResult.from_wire(document))
    assert failure.value.code == errors.ADJUDICATION_INVALID.code
    assert failure.value.details["reason"] == "mutation-targets-draft"
    assert failure.value.details["draftRef"] == C1
    # the draft it names can be skipped to: that is what to do instead
    assert failure.value.to_json()["next"].startswith(f"If {C1} repeats {C2}, skip {C1} to {C2};")


def test_merged_fields_keep_absent_and_null_scene_apart() -> None:
    absent = {**mutate(C1, "update", CANDIDATE), "mergedFields": {"content": "x"}}
    cleared = {**mutate(C1, "update", CANDIDATE), "mergedFields": {"scene": None}}
    parsed_absent = AdjudicationResult.from_wire(result_of(absent, store(C2), store(C3)))
    parsed_cleared = AdjudicationResult.from_wire(result_of(cleared, store(C2), store(C3)))
    assert parsed_absent.to_wire()["adjudications"][0]["mergedFields"] == {"content": "x"}
    assert parsed_cleared.to_wire()["adjudications"][0]["mergedFields"] == {"scene": None}


def test_more_than_64_decisions_are_refused() -> None:
    many = [store(f"d{i}") for i in range(65)]
    assert "adjudications" in refused(result_of(*many))
