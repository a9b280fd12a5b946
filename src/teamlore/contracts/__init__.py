"""Versioned team-memory contracts (pydantic v2) and their JSON Schemas.

Every top-level contract has a `format` field with its exact format string; models are frozen,
refuse unknown fields, and speak camelCase on the wire (`to_wire()`, `from_wire()`). Digest
helpers live in `teamlore.contracts.digests`; `python -m teamlore.contracts.export` writes
`schema/<format>.json`.
"""

from __future__ import annotations

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
