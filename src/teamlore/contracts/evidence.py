"""EvidenceAssessment@v1: how one statement of a candidate is linked to evidence and supported."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from teamlore.contracts._base import (
    ContractModel,
    Hex64,
    Identifier,
    LimitationCode,
    PositiveInt,
    sorted_unique_items,
)
from teamlore.contracts.extraction import EvidenceId

EVIDENCE_ASSESSMENT_FORMAT = "threadshare-memory-evidence-assessment@v1"

ProvenanceStrength = Literal["direct", "observed", "candidate", "contextual", "unknown"]
ClaimSupport = Literal["unverified", "typed-fact", "human-confirmed"]
AssessedBy = Literal["deterministic", "human"]


class Citation(ContractModel):
    evidence_id: EvidenceId
    pointer_digest: Hex64


class EvidenceAssessment(ContractModel):
    """One statement's assessment. Citations are unique and sorted by evidenceId; limitations
    are a sorted set. `human-confirmed` support is given by a human and only by one;
    `typed-fact` comes from a deterministic renderer."""

    format: Literal["threadshare-memory-evidence-assessment@v1"]
    candidate_id: Identifier
    statement_id: Identifier
    citations: tuple[Citation, ...]
    provenance_strength: ProvenanceStrength
    limitations: tuple[LimitationCode, ...]
    claim_support: ClaimSupport
    assessed_by: AssessedBy
    statement_text_digest: Hex64
    revision: PositiveInt

    @model_validator(mode="after")
    def _consistent(self) -> EvidenceAssessment:
        sorted_unique_items(tuple(c.evidence_id for c in self.citations), "citations evidenceId")
        sorted_unique_items(self.limitations, "limitations item")
        if (self.claim_support == "human-confirmed") != (self.assessed_by == "human"):
            raise ValueError("claimSupport human-confirmed goes with assessedBy human, only")
        if not self.citations and self.provenance_strength != "unknown":
            raise ValueError("provenanceStrength must be unknown when nothing is cited")
        return self
