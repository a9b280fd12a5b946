"""Every contract: a valid example parses, round-trips by alias to an equal value with an equal
canonical digest, and validates against its exported JSON Schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import contract_examples as ex
import jsonschema  # type: ignore[import-untyped]
import pytest

from teamlore.contracts import (
    AdjudicationResult,
    AdjudicationTask,
    AuthorizationManifest,
    CandidateDraftBatch,
    CommonDirectoryIdentity,
    ConsolidationPatch,
    ConsolidationTask,
    EvidenceAssessment,
    ExtractionTask,
    MemoryExtractionRequest,
    MemorySearchRequest,
    PrepareRequest,
    PromotionPlan,
    RepositoryBinding,
    RunnerExecutionPlan,
    SkillCandidate,
)
from teamlore.contracts._base import ContractModel
from teamlore.contracts.export import CONTRACTS, contract_schema
from teamlore.contracts.runner import RestrictedExtractionRunner, RunnerExecutionPlanV2
from teamlore.core.canonical import digest

EXAMPLES: list[tuple[type[ContractModel], Callable[[], dict[str, Any]]]] = [
    (RepositoryBinding, ex.repository_binding),
    (MemoryExtractionRequest, ex.extraction_request),
    (ExtractionTask, ex.extraction_task),
    (CandidateDraftBatch, ex.draft_batch),
    (EvidenceAssessment, ex.evidence_assessment),
    (AdjudicationTask, ex.adjudication_task),
    (AdjudicationResult, ex.adjudication_result),
    (MemorySearchRequest, ex.search_request),
    (PrepareRequest, ex.prepare_request),
    (PromotionPlan, ex.promotion_plan),
    (SkillCandidate, ex.skill_candidate),
    (ConsolidationTask, ex.consolidation_task),
    (ConsolidationPatch, ex.consolidation_patch),
    (ConsolidationPatch, ex.consolidation_patch_by_digest),
    (RunnerExecutionPlan, ex.runner_execution_plan),
    (AuthorizationManifest, ex.authorization_manifest),
    (RunnerExecutionPlanV2, ex.runner_execution_plan_v2),
    (RestrictedExtractionRunner, ex.restricted_extraction_runner),
]
IDS = [model.__name__ for model, _ in EXAMPLES]


def test_every_exported_contract_has_an_example() -> None:
    assert {model for model, _ in EXAMPLES} == set(CONTRACTS)


@pytest.mark.parametrize(("model", "build"), EXAMPLES, ids=IDS)
def test_example_round_trips_by_alias(
    model: type[ContractModel], build: Callable[[], dict[str, Any]]
) -> None:
    document = build()
    parsed = model.from_wire(document)
    wire = parsed.to_wire()
    again = model.model_validate_json(parsed.to_json())
    assert again == parsed
    assert wire == document
    assert again.canonical_digest() == parsed.canonical_digest() == digest(document)


@pytest.mark.parametrize(("model", "build"), EXAMPLES, ids=IDS)
def test_example_satisfies_exported_schema(
    model: type[ContractModel], build: Callable[[], dict[str, Any]]
) -> None:
    validator = jsonschema.Draft202012Validator(contract_schema(model))
    validator.validate(build())


@pytest.mark.parametrize(("model", "build"), EXAMPLES, ids=IDS)
def test_unknown_field_is_refused_by_model_and_schema(
    model: type[ContractModel], build: Callable[[], dict[str, Any]]
) -> None:
    document = {**build(), "surprise": 1}
    with pytest.raises(ValueError, match="surprise"):
        model.from_wire(document)
    assert not jsonschema.Draft202012Validator(contract_schema(model)).is_valid(document)


@pytest.mark.parametrize(("model", "build"), EXAMPLES, ids=IDS)
def test_models_are_frozen(model: type[ContractModel], build: Callable[[], dict[str, Any]]) -> None:
    parsed = model.from_wire(build())
    with pytest.raises(ValueError, match="frozen"):
        parsed.format = "other"  # type: ignore[misc,attr-defined,unused-ignore]


def test_snake_case_names_are_accepted_too() -> None:
    binding = RepositoryBinding(
        format="threadshare-memory-repository-binding@v1",
        repository_key="a" * 64,
        worktree_key="b" * 64,
        public_repository_identity=None,
        root_realpath_digest="c" * 64,
        common_directory_identity=CommonDirectoryIdentity(device="1", inode="2"),
        memory_root=".threadshare/memory",
    )
    assert binding.to_wire()["rootRealpathDigest"] == "c" * 64
    assert binding.to_wire()["commonDirectoryIdentity"] == {"device": "1", "inode": "2"}
