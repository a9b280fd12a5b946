"""Batch-runner audit contracts: what a runner would send, and the person's authorization.

`planDigest` = `digests.plan_digest(plan)` (excludes planDigest and authorization);
`manifestDigest` = `digests.manifest_digest(manifest)` (excludes manifestDigest and
authorization). A non-null digest must match the content, so an approval (which flips only
`authorization`) approves exactly the bytes that were shown.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from teamlore.contracts import digests
from teamlore.contracts._base import (
    ContractModel,
    Hex64,
    Identifier,
    NonEmptyText,
    NonNegativeInt,
    unique_items,
)

RUNNER_EXECUTION_PLAN_FORMAT = "threadshare-memory-runner-execution-plan@v1"
AUTHORIZATION_MANIFEST_FORMAT = "threadshare-memory-authorization-manifest@v1"

TaskKind = Literal["extraction", "adjudication", "consolidation"]
Authorization = Literal["pending", "approved"]
InputSourceKind = Literal[
    "transcript",
    "draft",
    "candidate-pool",
    "approved-entry",
    "scene",
    "doctrine",
    "scene-index",
    "prompt",
]


class InputCoverageItem(ContractModel):
    source_kind: InputSourceKind
    opaque_source_id: NonEmptyText
    revision: NonNegativeInt | None
    content_digest: Hex64
    bytes: NonNegativeInt
    truncated: bool


class RunnerExecutionPlan(ContractModel):
    """RunnerExecutionPlan@v1 — one task, the exact bytes it would disclose and to whom."""

    format: Literal["threadshare-memory-runner-execution-plan@v1"]
    plan_digest: Hex64 | None
    task_kind: TaskKind
    task_id: Identifier
    runner_input_digest: Hex64
    input_coverage_digest: Hex64
    input_coverage: tuple[InputCoverageItem, ...]
    runner_profile: NonEmptyText
    provider: NonEmptyText
    model: NonEmptyText
    endpoint: NonEmptyText
    bytes_to_send: NonNegativeInt
    local_session_persistence: Literal["none"]
    provider_retention: Literal["unknown", "no-retention", "provider-policy"]
    authorization: Authorization
    # teamlore's optional addition (omitted when null, so other plans' digests are unchanged):
    # the plan whose delivery became indeterminate and that this one replaces (docs/runner.md
    # "Limits and failures")
    supersedes_plan_digest: Hex64 | None = None

    _omit_when_none: ClassVar[frozenset[str]] = frozenset({"supersedes_plan_digest"})

    @model_validator(mode="after")
    def _digest_matches(self) -> RunnerExecutionPlan:
        if self.plan_digest is not None and self.plan_digest != digests.plan_digest(self):
            raise ValueError("planDigest does not match the plan content")
        return self


class ManifestPlan(ContractModel):
    plan_digest: Hex64
    task_kind: TaskKind
    task_id: Identifier
    bytes_to_send: NonNegativeInt


class AuthorizationManifest(ContractModel):
    """AuthorizationManifest@v1 — approves each listed plan individually; totalBytes is the sum
    of the plans' bytesToSend; plan digests are unique."""

    format: Literal["threadshare-memory-authorization-manifest@v1"]
    manifest_digest: Hex64 | None
    plans: tuple[ManifestPlan, ...] = Field(min_length=1)
    total_bytes: NonNegativeInt
    authorization: Authorization

    @model_validator(mode="after")
    def _consistent(self) -> AuthorizationManifest:
        unique_items((p.plan_digest for p in self.plans), "plans planDigest")
        if self.total_bytes != sum(p.bytes_to_send for p in self.plans):
            raise ValueError("totalBytes must equal the sum of the plans' bytesToSend")
        if self.manifest_digest is not None and self.manifest_digest != digests.manifest_digest(
            self
        ):
            raise ValueError("manifestDigest does not match the manifest content")
        return self
