"""Batch-runner audit contracts: what a runner would send, and the person's authorization.

RunnerExecutionPlan@v1 is the seed's: `inputCoverage.sourceKind` is one of transcript, draft,
candidate-pool, scene-index, prompt. A plan that also discloses approved entries, scenes or the
doctrine as such (a consolidation; an adjudication whose pool holds approved entries) is a
RunnerExecutionPlan@v2: the same document with those three kinds added. teamlore writes v1
whenever the kinds allow it and reads both (docs/seed-conformance.md).

`planDigest` = `digests.plan_digest(plan)` (excludes planDigest and authorization);
`manifestDigest` = `digests.manifest_digest(manifest)` (excludes manifestDigest and
authorization). A non-null digest must match the content, so an approval (which flips only
`authorization`) approves exactly the bytes that were shown.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, get_args

from pydantic import Field, model_validator

from teamlore.contracts import digests
from teamlore.contracts._base import (
    ContractModel,
    Hex64,
    Identifier,
    NonEmptyText,
    NonNegativeInt,
    PositiveInt,
    unique_items,
)

RESTRICTED_RUNNER_FORMAT = "threadshare-memory-restricted-extraction-runner@v1"
RUNNER_EXECUTION_PLAN_FORMAT = "threadshare-memory-runner-execution-plan@v1"
RUNNER_EXECUTION_PLAN_V2_FORMAT = "threadshare-memory-runner-execution-plan@v2"
AUTHORIZATION_MANIFEST_FORMAT = "threadshare-memory-authorization-manifest@v1"

TaskKind = Literal["extraction", "adjudication", "consolidation"]
Authorization = Literal["pending", "approved"]
SeedSourceKind = Literal["transcript", "draft", "candidate-pool", "scene-index", "prompt"]
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
SEED_SOURCE_KINDS: frozenset[str] = frozenset(get_args(SeedSourceKind))


class SeedInputCoverageItem(ContractModel):
    source_kind: SeedSourceKind
    opaque_source_id: NonEmptyText
    revision: NonNegativeInt | None
    content_digest: Hex64
    bytes: NonNegativeInt
    truncated: bool


class InputCoverageItem(ContractModel):
    source_kind: InputSourceKind
    opaque_source_id: NonEmptyText
    revision: NonNegativeInt | None
    content_digest: Hex64
    bytes: NonNegativeInt
    truncated: bool


class _ExecutionPlan(ContractModel):
    """The fields both versions share; a non-null planDigest must match the content."""

    plan_digest: Hex64 | None
    task_kind: TaskKind
    task_id: Identifier
    runner_input_digest: Hex64
    input_coverage_digest: Hex64
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
    def _digest_matches(self) -> _ExecutionPlan:
        if self.plan_digest is not None and self.plan_digest != digests.plan_digest(self):
            raise ValueError("planDigest does not match the plan content")
        return self


class RunnerExecutionPlan(_ExecutionPlan):
    """RunnerExecutionPlan@v1 — one task, the exact bytes it would disclose and to whom."""

    format: Literal["threadshare-memory-runner-execution-plan@v1"]
    input_coverage: tuple[SeedInputCoverageItem, ...]


class RunnerExecutionPlanV2(_ExecutionPlan):
    """RunnerExecutionPlan@v2 — v1 whose inputs may also be approved entries, scenes and the
    doctrine (sourceKind approved-entry, scene, doctrine)."""

    format: Literal["threadshare-memory-runner-execution-plan@v2"]
    input_coverage: tuple[InputCoverageItem, ...]


ExecutionPlan = RunnerExecutionPlan | RunnerExecutionPlanV2


def plan_format(coverage: list[dict[str, Any]]) -> str:
    """v1 when every input is of a kind the seed names, else v2."""
    kinds = {item.get("sourceKind") for item in coverage}
    seed = kinds <= SEED_SOURCE_KINDS
    return RUNNER_EXECUTION_PLAN_FORMAT if seed else RUNNER_EXECUTION_PLAN_V2_FORMAT


def parse_execution_plan(data: Any) -> ExecutionPlan:
    """A stored or received plan of either version (dispatch on `format`)."""
    if isinstance(data, dict) and data.get("format") == RUNNER_EXECUTION_PLAN_V2_FORMAT:
        return RunnerExecutionPlanV2.from_wire(data)
    return RunnerExecutionPlan.from_wire(data)


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


class RunnerConformance(ContractModel):
    """The conformance record a profile passed: probe version, when, and the CLI fingerprint."""

    test_version: NonEmptyText
    passed_at: NonEmptyText
    cli_version_fingerprint: NonEmptyText


class RestrictedExtractionRunner(ContractModel):
    """RestrictedExtractionRunner@v1 — a local agent CLI profile fit to read one task: no tools,
    the model endpoint as its only network, no session kept; `argvTemplate` is the exact argument
    list (the binary by name, never a path). `conformance` null: no passing probe recorded for
    this binary and profile, so the profile may not run (docs/runner.md)."""

    format: Literal["threadshare-memory-restricted-extraction-runner@v1"]
    adapter: Literal["claude-cli", "codex-cli"]
    version: NonEmptyText
    argv_template: tuple[str, ...] = Field(min_length=1)
    tool_policy: Literal["none"]
    network: Literal["model-only"]
    ephemeral: Literal["required"]
    timeout_ms: PositiveInt
    max_output_bytes: PositiveInt
    conformance: RunnerConformance | None
