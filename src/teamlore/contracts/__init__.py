"""Versioned team-memory contracts (pydantic v2) and their JSON Schemas.

Every top-level contract has a `format` field with its exact format string; models are frozen,
refuse unknown fields, and speak camelCase on the wire (`to_wire()`, `from_wire()`). Digest
helpers live in `teamlore.contracts.digests`; `python -m teamlore.contracts.export` writes
`schema/<format>.json`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from teamlore.contracts.adjudication import (
        Adjudication,
        AdjudicationBinding,
        AdjudicationDraft,
        AdjudicationIssue,
        AdjudicationResult,
        AdjudicationTask,
        MergedFields,
        PoolItem,
        RecallSet,
        check_adjudication_result,
        validate_adjudication_result,
    )
    from teamlore.contracts.consolidation import (
        ConsolidationOperation,
        ConsolidationPatch,
        ConsolidationTask,
    )
    from teamlore.contracts.evidence import Citation, EvidenceAssessment
    from teamlore.contracts.extraction import (
        CandidateDraft,
        CandidateDraftBatch,
        DraftStatement,
        EvidenceCatalogItem,
        ExtractionBinding,
        ExtractionChunk,
        ExtractionFilters,
        ExtractionTask,
        MemoryExtractionRequest,
        TimeWindow,
    )
    from teamlore.contracts.promotion import PlannedFile, PrepareRequest, PromotionPlan
    from teamlore.contracts.repository import CommonDirectoryIdentity, RepositoryBinding
    from teamlore.contracts.runner import AuthorizationManifest, RunnerExecutionPlan
    from teamlore.contracts.search import MemorySearchRequest
    from teamlore.contracts.skill import SkillCandidate, SkillDraft

# each name's module, imported when the name is first asked for: an operations module that
# needs one contract (or only a format string: `formats`) does not load them all
_MODULES = {
    "Adjudication": "teamlore.contracts.adjudication",
    "AdjudicationBinding": "teamlore.contracts.adjudication",
    "AdjudicationDraft": "teamlore.contracts.adjudication",
    "AdjudicationIssue": "teamlore.contracts.adjudication",
    "AdjudicationResult": "teamlore.contracts.adjudication",
    "AdjudicationTask": "teamlore.contracts.adjudication",
    "AuthorizationManifest": "teamlore.contracts.runner",
    "CandidateDraft": "teamlore.contracts.extraction",
    "CandidateDraftBatch": "teamlore.contracts.extraction",
    "Citation": "teamlore.contracts.evidence",
    "CommonDirectoryIdentity": "teamlore.contracts.repository",
    "ConsolidationOperation": "teamlore.contracts.consolidation",
    "ConsolidationPatch": "teamlore.contracts.consolidation",
    "ConsolidationTask": "teamlore.contracts.consolidation",
    "DraftStatement": "teamlore.contracts.extraction",
    "EvidenceAssessment": "teamlore.contracts.evidence",
    "EvidenceCatalogItem": "teamlore.contracts.extraction",
    "ExtractionBinding": "teamlore.contracts.extraction",
    "ExtractionChunk": "teamlore.contracts.extraction",
    "ExtractionFilters": "teamlore.contracts.extraction",
    "ExtractionTask": "teamlore.contracts.extraction",
    "MemoryExtractionRequest": "teamlore.contracts.extraction",
    "MemorySearchRequest": "teamlore.contracts.search",
    "MergedFields": "teamlore.contracts.adjudication",
    "PlannedFile": "teamlore.contracts.promotion",
    "PoolItem": "teamlore.contracts.adjudication",
    "PrepareRequest": "teamlore.contracts.promotion",
    "PromotionPlan": "teamlore.contracts.promotion",
    "RecallSet": "teamlore.contracts.adjudication",
    "RepositoryBinding": "teamlore.contracts.repository",
    "RunnerExecutionPlan": "teamlore.contracts.runner",
    "SkillCandidate": "teamlore.contracts.skill",
    "SkillDraft": "teamlore.contracts.skill",
    "TimeWindow": "teamlore.contracts.extraction",
    "check_adjudication_result": "teamlore.contracts.adjudication",
    "validate_adjudication_result": "teamlore.contracts.adjudication",
}


def __getattr__(name: str) -> Any:
    import importlib

    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "Adjudication",
    "AdjudicationBinding",
    "AdjudicationDraft",
    "AdjudicationIssue",
    "AdjudicationResult",
    "AdjudicationTask",
    "AuthorizationManifest",
    "CandidateDraft",
    "CandidateDraftBatch",
    "Citation",
    "CommonDirectoryIdentity",
    "ConsolidationOperation",
    "ConsolidationPatch",
    "ConsolidationTask",
    "DraftStatement",
    "EvidenceAssessment",
    "EvidenceCatalogItem",
    "ExtractionBinding",
    "ExtractionChunk",
    "ExtractionFilters",
    "ExtractionTask",
    "MemoryExtractionRequest",
    "MemorySearchRequest",
    "MergedFields",
    "PlannedFile",
    "PoolItem",
    "PrepareRequest",
    "PromotionPlan",
    "RecallSet",
    "RepositoryBinding",
    "RunnerExecutionPlan",
    "SkillCandidate",
    "SkillDraft",
    "TimeWindow",
    "check_adjudication_result",
    "validate_adjudication_result",
]
