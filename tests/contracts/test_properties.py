"""Property tests: generated draft batches and adjudication results round-trip exactly."""

from __future__ import annotations

from typing import Any

import contract_examples as ex
from hypothesis import given, settings
from hypothesis import strategies as st

from teamlore.contracts import (
    AdjudicationResult,
    AdjudicationTask,
    CandidateDraftBatch,
    check_adjudication_result,
)
from teamlore.contracts._base import SCENE_NAME, is_scene_name
from teamlore.core.canonical import digest

IDENT = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True)
TEXT = st.text(min_size=1, max_size=60)
# a scene's name, in any script (lowercase: `Release` names no scene)
SCENE = st.from_regex(SCENE_NAME, fullmatch=True).map(str.lower).filter(is_scene_name)

STATEMENT = st.fixed_dictionaries(
    {"statementId": IDENT, "text": TEXT, "evidenceIds": st.lists(IDENT, max_size=3)}
)
DRAFT = st.fixed_dictionaries(
    {
        "content": TEXT,
        "type": st.sampled_from(["work_fact", "work_task", "work_method", "work_artifact"]),
        "priority": st.integers(0, 100),
        "confidence": st.sampled_from(["high", "medium", "low"]),
        "scene": st.none() | SCENE,
        "statements": st.lists(STATEMENT, max_size=3),
    }
)


@settings(max_examples=60, deadline=None)
@given(st.lists(DRAFT, max_size=8))
def test_draft_batch_round_trips(candidates: list[dict[str, Any]]) -> None:
    document = {**ex.draft_batch(), "candidates": candidates}
    parsed = CandidateDraftBatch.from_wire(document)
    assert parsed.to_wire() == document
    again = CandidateDraftBatch.model_validate_json(parsed.to_json())
    assert again == parsed
    assert again.canonical_digest() == digest(document)


TASK = AdjudicationTask.from_wire(ex.adjudication_task())
POOL_IDS = [item.id for item in TASK.pool if item.id not in ex.DRAFT_IDS]
FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "content": TEXT,
        "type": st.sampled_from(["work_fact", "work_method"]),
        "priority": st.integers(0, 100),
        "scene": st.none() | SCENE,
        "occurred": st.lists(st.text(min_size=1, max_size=10), max_size=2),
    },
)


@st.composite
def valid_results(draw: st.DrawFn) -> dict[str, Any]:
    """Results that satisfy every host rule: stored drafts first, skips point at them/the pool."""
    actions = {
        ref: draw(st.sampled_from(["store", "skip", "update", "merge"])) for ref in ex.DRAFT_IDS
    }
    stored = [ref for ref, action in actions.items() if action != "skip"]
    free = list(POOL_IDS)
    decisions: list[dict[str, Any]] = []
    for ref, action in actions.items():
        if action == "store" or (action in ("update", "merge") and not free):
            decisions.append(
                {"draftRef": ref, "action": "store", "targetIds": [], "mergedFields": None}
            )
        elif action == "skip":
            choices = POOL_IDS + [r for r in stored if r != ref]
            targets = draw(st.lists(st.sampled_from(choices), min_size=1, max_size=3, unique=True))
            decisions.append(
                {"draftRef": ref, "action": "skip", "targetIds": targets, "mergedFields": None}
            )
        else:
            target = free.pop(draw(st.integers(0, len(free) - 1)))
            decisions.append(
                {
                    "draftRef": ref,
                    "action": action,
                    "targetIds": [target],
                    "mergedFields": draw(FIELDS),
                }
            )
    order = draw(st.permutations(decisions))
    return {**ex.adjudication_result(), "adjudications": list(order)}


@settings(max_examples=80, deadline=None)
@given(valid_results())
def test_adjudication_result_round_trips_and_passes_host_rules(document: dict[str, Any]) -> None:
    parsed = AdjudicationResult.from_wire(document)
    assert parsed.to_wire() == document
    again = AdjudicationResult.model_validate_json(parsed.to_json())
    assert again == parsed
    assert again.canonical_digest() == digest(document)
    assert check_adjudication_result(TASK, parsed) == []
