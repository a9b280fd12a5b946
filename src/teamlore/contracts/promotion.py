"""Promotion contracts: what a person confirms (PrepareRequest) and what gets written (plan).

PromotionPlan@v1 binds everything a promotion depends on; `planDigest` is
`digests.plan_digest(plan)` — the digest of the plan's wire form without `planDigest` itself and
without any authorization field — so recording an approval never changes the digest it approves.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from teamlore.contracts import digests
from teamlore.contracts._base import (
    ContractModel,
    Hex40,
    Hex64,
    Identifier,
    PositiveInt,
    VersionTag,
    unique_items,
)
from teamlore.contracts.formats import (
    PREPARE_REQUEST_FORMAT as PREPARE_REQUEST_FORMAT,  # its home: formats.py
)
from teamlore.contracts.formats import UUID4_PATTERN as UUID4_PATTERN  # its home: formats.py
from teamlore.contracts.repository import MEMORY_ROOT, RepositoryBinding

PROMOTION_PLAN_FORMAT = "threadshare-memory-promotion-plan@v1"
POLICY_VERSION = "sanitize@1"
MAX_PREPARE_CANDIDATES = 50
MAX_PLAN_CANDIDATES = 512
MAX_PLAN_FILES = 128
MAX_TARGET_PATH_BYTES = 1024

_PATH_FORBIDDEN = re.compile(r"[\\:\x00-\x1f\x7f]")


def _check_target_path(path: str) -> str:
    """Normalized, relative, strictly below the memory root; no `\\`, `:` or control chars."""
    if len(path.encode("utf-8")) > MAX_TARGET_PATH_BYTES:
        raise ValueError(f"targetPath exceeds {MAX_TARGET_PATH_BYTES} UTF-8 bytes")
    if _PATH_FORBIDDEN.search(path):
        raise ValueError("targetPath contains a backslash, colon or control character")
    if path.startswith("/"):
        raise ValueError("targetPath must be relative")
    if any(segment in ("", ".", "..") for segment in path.split("/")):
        raise ValueError("targetPath has an empty, '.' or '..' segment")
    if not path.startswith(MEMORY_ROOT + "/"):
        raise ValueError(f"targetPath must lie strictly below {MEMORY_ROOT}")
    return path


TargetPath = Annotated[str, Field(min_length=1), AfterValidator(_check_target_path)]


# --- PrepareRequest@v1 ---------------------------------------------------------------------------


class ConfirmedStatement(ContractModel):
    statement_id: Identifier
    statement_text_digest: Hex64
    citations_digest: Hex64


class PrepareCandidate(ContractModel):
    """The complete current statement set of one candidate, as the person saw it."""

    candidate_id: Identifier
    expected_revision: PositiveInt
    statements: tuple[ConfirmedStatement, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_statements(self) -> PrepareCandidate:
        unique_items((s.statement_id for s in self.statements), "statements statementId")
        return self


class PrepareRequest(ContractModel):
    """PrepareRequest@v1 — confirm the listed candidates (1..50, unique) and plan a promotion."""

    format: Literal["threadshare-memory-prepare-request@v1"]
    kind: Literal["entry", "skill", "consolidation"] = "entry"
    candidates: tuple[PrepareCandidate, ...] = Field(
        min_length=1, max_length=MAX_PREPARE_CANDIDATES
    )

    @model_validator(mode="after")
    def _unique_candidates(self) -> PrepareRequest:
        unique_items((c.candidate_id for c in self.candidates), "candidates candidateId")
        return self


# --- PromotionPlan@v1 ----------------------------------------------------------------------------


class PlannedFile(ContractModel):
    """One file of a plan. `targetBlobHash` is the git blob id of the file now (null: absent).

    write ⇒ sanitizedContentDigest is the sha256 of the exact bytes to write;
    delete ⇒ the file exists (targetBlobHash non-null) and sanitizedContentDigest is null.
    """

    target_path: TargetPath
    target_blob_hash: Hex40 | None
    sanitized_content_digest: Hex64 | None
    operation: Literal["write", "delete"] = "write"

    @model_validator(mode="after")
    def _operation_rules(self) -> PlannedFile:
        if self.operation == "write" and self.sanitized_content_digest is None:
            raise ValueError("write needs sanitizedContentDigest")
        if self.operation == "delete":
            if self.target_blob_hash is None:
                raise ValueError("delete needs targetBlobHash of the existing file")
            if self.sanitized_content_digest is not None:
                raise ValueError("delete takes sanitizedContentDigest null")
        return self


class CandidateRevision(ContractModel):
    candidate_id: Identifier
    revision: PositiveInt


class PromotionPlan(ContractModel):
    """PromotionPlan@v1 — owner, candidates (ids and revisions), assessment digest, per-file
    CAS bindings, policy version and the human-readable diff.

    `planDigest` = `digests.plan_digest(plan)`: covers every other field (diff included) and
    excludes `planDigest` itself and authorization fields (a plan has none today; approval is
    journal state). When non-null it must match the content. `candidateRevisions` (beyond the
    spec's field list: DESIGN binds candidate revisions) lists the same ids as `candidateIds`,
    in the same order.
    """

    format: Literal["threadshare-memory-promotion-plan@v1"]
    plan_id: Annotated[str, StringConstraints(pattern=UUID4_PATTERN)]
    plan_digest: Hex64 | None
    owner: RepositoryBinding
    candidate_ids: tuple[Identifier, ...] = Field(min_length=1, max_length=MAX_PLAN_CANDIDATES)
    candidate_revisions: tuple[CandidateRevision, ...] = Field(max_length=MAX_PLAN_CANDIDATES)
    assessment_digest: Hex64
    per_file: tuple[PlannedFile, ...] = Field(min_length=1, max_length=MAX_PLAN_FILES)
    policy_version: VersionTag
    diff: str

    @model_validator(mode="after")
    def _consistent(self) -> PromotionPlan:
        unique_items(self.candidate_ids, "candidateIds item")
        if tuple(c.candidate_id for c in self.candidate_revisions) != self.candidate_ids:
            raise ValueError("candidateRevisions must list candidateIds in the same order")
        unique_items((f.target_path for f in self.per_file), "perFile targetPath")
        if self.plan_digest is not None and self.plan_digest != digests.plan_digest(self):
            raise ValueError("planDigest does not match the plan content")
        return self
