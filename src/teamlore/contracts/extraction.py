"""Extraction contracts: the request, the task an agent reads and the draft batch it answers.

- MemoryExtractionRequest@v1 — what a caller may ask for (window, query, filters). The owner scope
  is never part of it; `normalize()` gives the normalized form that `request_digest` hashes.
- ExtractionTask@v1 — one chunk of one session, bound to its sources (`ExtractionBinding`).
- CandidateDraftBatch@v1 — the agent's answer: at most 8 drafts, the binding echoed verbatim.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, StringConstraints, model_validator
from pydantic.json_schema import SkipJsonSchema

from teamlore.contracts import digests
from teamlore.contracts._base import (
    CanonicalTimestamp,
    ContractModel,
    DecimalString,
    Hex64,
    Identifier,
    NonEmptyText,
    NonNegativeInt,
    Owner,
    PositiveInt,
    SceneName,
    VersionTag,
    sorted_unique_items,
    unique_items,
    utf8_at_most,
)
from teamlore.contracts.formats import (
    DRAFT_BATCH_FORMAT as DRAFT_BATCH_FORMAT,  # its home: formats.py
)
from teamlore.contracts.formats import (
    CandidateType as CandidateType,  # its home: formats.py (the stage tool lists its values)
)
from teamlore.contracts.repository import PublicIdentity

EXTRACTION_REQUEST_FORMAT = "threadshare-memory-extraction-request@v1"
EXTRACTION_TASK_FORMAT = "threadshare-memory-extraction-task@v1"
EXTRACTION_PROMPT_VERSION = "memory-prompts@2"
CHUNKER_VERSION = "memory-chunker@1"

MAX_WINDOW_MS = 366 * 86_400_000
MAX_QUERY_BYTES = 8192
MAX_FILTER_KEYS = 64
MAX_CANDIDATES_PER_BATCH = 8
MAX_TEXT_CHARS = 65_536

Provider = Literal["claude", "codex", "pi"]
ResultEvidence = Literal["provider-completed", "abandoned", "unknown"]
CapabilityTerminalState = Literal["pending", "completed", "failed", "cancelled", "unknown"]
Confidence = Literal["high", "medium", "low"]
EvidenceKind = Literal["commit", "turn", "path"]

EVIDENCE_ID_PATTERN = r"^ev-[1-9][0-9]{0,8}-[0-9a-f]{12}$"
EvidenceId = Annotated[str, StringConstraints(pattern=EVIDENCE_ID_PATTERN)]
EXTRACTION_TASK_ID_PATTERN = r"^extract-[0-9a-f]{64}$"


def _epoch_ms(timestamp: str) -> int:
    moment = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%S.%fZ")
    return (moment - datetime(1970, 1, 1)) // _ONE_MS


_ONE_MS = datetime(1970, 1, 1, 0, 0, 0, 1000) - datetime(1970, 1, 1)


# --- MemoryExtractionRequest@v1 ------------------------------------------------------------------


class TimeWindow(ContractModel):
    """Half-open UTC window [after, before): canonical timestamps, after < before, ≤ 366 days."""

    after: CanonicalTimestamp
    before: CanonicalTimestamp

    @model_validator(mode="after")
    def _ordered_and_bounded(self) -> TimeWindow:
        span = _epoch_ms(self.before) - _epoch_ms(self.after)
        if span <= 0:
            raise ValueError("window.after must be earlier than window.before")
        if span > MAX_WINDOW_MS:
            raise ValueError("window spans more than 366 days")
        return self


class ExtractionFilters(ContractModel):
    """Optional narrowing filters; the normalized form has every array present, sorted, unique."""

    _omit_when_none: ClassVar[frozenset[str]] = frozenset(
        {
            "providers",
            "session_keys",
            "tool_capability_keys",
            "skill_capability_keys",
            "result_evidence",
            "capability_terminal_states",
        }
    )

    providers: tuple[Provider, ...] | SkipJsonSchema[None] = Field(
        default=None, max_length=3, json_schema_extra={"uniqueItems": True}
    )
    session_keys: tuple[Hex64, ...] | SkipJsonSchema[None] = Field(
        default=None, max_length=MAX_FILTER_KEYS, json_schema_extra={"uniqueItems": True}
    )
    tool_capability_keys: tuple[Hex64, ...] | SkipJsonSchema[None] = Field(
        default=None, max_length=MAX_FILTER_KEYS, json_schema_extra={"uniqueItems": True}
    )
    skill_capability_keys: tuple[Hex64, ...] | SkipJsonSchema[None] = Field(
        default=None, max_length=MAX_FILTER_KEYS, json_schema_extra={"uniqueItems": True}
    )
    result_evidence: tuple[ResultEvidence, ...] | SkipJsonSchema[None] = Field(
        default=None, max_length=3
    )
    capability_terminal_states: tuple[CapabilityTerminalState, ...] | SkipJsonSchema[None] = Field(
        default=None, max_length=5
    )

    @model_validator(mode="after")
    def _consistent(self) -> ExtractionFilters:
        for name in ("providers", "session_keys", "tool_capability_keys", "skill_capability_keys"):
            values = getattr(self, name)
            if values is not None:
                unique_items(values, f"filters.{type(self).model_fields[name].alias} item")
        if self.capability_terminal_states and not (
            self.tool_capability_keys or self.skill_capability_keys
        ):
            raise ValueError(
                "filters.capabilityTerminalStates needs toolCapabilityKeys or skillCapabilityKeys"
            )
        return self

    def normalize(self) -> ExtractionFilters:
        def norm(values: tuple[Any, ...] | None) -> tuple[Any, ...]:
            return tuple(sorted(set(values or ())))

        return ExtractionFilters(
            providers=norm(self.providers),
            session_keys=norm(self.session_keys),
            tool_capability_keys=norm(self.tool_capability_keys),
            skill_capability_keys=norm(self.skill_capability_keys),
            result_evidence=norm(self.result_evidence),
            capability_terminal_states=norm(self.capability_terminal_states),
        )


class MemoryExtractionRequest(ContractModel):
    """MemoryExtractionRequest@v1 — window (required), query, filters.

    No owner, project keys or closure fields exist here: the owner scope is injected by the host
    from the caller's working directory. `normalize()` gives the form `request_digest` hashes.
    """

    _omit_when_none: ClassVar[frozenset[str]] = frozenset({"query", "filters"})

    format: Literal["threadshare-memory-extraction-request@v1"]
    window: TimeWindow
    query: (
        Annotated[str, Field(max_length=MAX_QUERY_BYTES), utf8_at_most(MAX_QUERY_BYTES)]
        | SkipJsonSchema[None]
    ) = None
    filters: ExtractionFilters | SkipJsonSchema[None] = None

    def normalize(self) -> MemoryExtractionRequest:
        """Every filter array present, sorted and unique; `query` always present ("" if absent)."""
        return MemoryExtractionRequest(
            format=self.format,
            window=self.window,
            query=self.query or "",
            filters=(self.filters or ExtractionFilters()).normalize(),
        )

    def is_normalized(self) -> bool:
        return self == self.normalize()


# --- ExtractionTask@v1 ---------------------------------------------------------------------------


class Lease(ContractModel):
    holder: NonEmptyText
    expires_at: NonNegativeInt


class SelectionBinding(ContractModel):
    request_digest: Hex64
    result_set_digest: Hex64
    source_binding_digest: Hex64


class ExtractionProvenance(ContractModel):
    """Provenance only: never part of any digest (snapshotSeq, evaluatedAt)."""

    snapshot_seq: DecimalString
    evaluated_at: CanonicalTimestamp


class ExtractionBinding(ContractModel):
    """Binds an extraction task to its exact sources; echoed verbatim by every answer to it."""

    database_uuid: Identifier
    owner: Owner
    source_input_digest: Hex64
    selection: SelectionBinding
    turn_revisions: tuple[Hex64, ...]
    payload_digests: tuple[Hex64, ...]
    delivery_edge_revisions: tuple[Hex64, ...]
    prompt_version: VersionTag
    schema_version: Literal["threadshare-memory-candidate-draft-batch@v1"]
    chunker_version: VersionTag
    provenance: ExtractionProvenance

    @model_validator(mode="after")
    def _sorted_sets(self) -> ExtractionBinding:
        sorted_unique_items(self.payload_digests, "binding.payloadDigests item")
        sorted_unique_items(self.delivery_edge_revisions, "binding.deliveryEdgeRevisions item")
        return self


class SessionTimeWindow(ContractModel):
    start: CanonicalTimestamp
    end: CanonicalTimestamp


class ExtractionSession(ContractModel):
    """`project` is the public repository identity (or null); `timeWindow` the request window."""

    project: PublicIdentity | None
    repository_key: Hex64
    time_window: SessionTimeWindow | None


class EvidenceCatalogItem(ContractModel):
    """An opaque citable evidence id; relation/strength/limitations stay host-side."""

    evidence_id: EvidenceId
    kind: EvidenceKind
    pointer_digest: Hex64
    display: str

    @model_validator(mode="after")
    def _id_names_pointer(self) -> EvidenceCatalogItem:
        if not self.evidence_id.endswith("-" + self.pointer_digest[:12]):
            raise ValueError("evidenceId must end with the first 12 hex digits of pointerDigest")
        return self


class TurnRange(ContractModel):
    start: NonNegativeInt
    end: NonNegativeInt

    @model_validator(mode="after")
    def _ordered(self) -> TurnRange:
        if self.start > self.end:
            raise ValueError("turnRange.start must not exceed turnRange.end")
        return self


class CoverageItem(ContractModel):
    source_kind: Literal["turn", "tool-payload"]
    ref: NonEmptyText
    completeness: Literal["full", "truncated"]
    bytes: NonNegativeInt


class TurnEvidence(ContractModel):
    turn_index: NonNegativeInt
    evidence_id: EvidenceId


class ExtractionChunk(ContractModel):
    _omit_when_none: ClassVar[frozenset[str]] = frozenset({"turn_evidence"})

    turn_range: TurnRange
    coverage: tuple[CoverageItem, ...]
    turn_evidence: tuple[TurnEvidence, ...] | SkipJsonSchema[None] = None
    transcript: str


class ExtractionContext(ContractModel):
    scene_index_summary: str | None


class ExtractionPrompts(ContractModel):
    prompt_version: VersionTag
    extraction: str


class ExtractionContract(ContractModel):
    draft_schema: Literal["threadshare-memory-candidate-draft-batch@v1"]
    prompts: ExtractionPrompts


class ExtractionTask(ContractModel):
    """ExtractionTask@v1 — one chunk for an agent to turn into candidate drafts.

    Consistency rules: `taskId = "extract-" + binding.sourceInputDigest`, and that digest must be
    `digests.source_input_digest` of the task's own content (see there for what it excludes);
    evidence ids are unique; `chunk.turnEvidence` cites catalog ids only; the prompt version in
    `contract` equals the binding's.
    """

    format: Literal["threadshare-memory-extraction-task@v1"]
    task_id: Annotated[str, StringConstraints(pattern=EXTRACTION_TASK_ID_PATTERN)]
    lease: Lease
    binding: ExtractionBinding
    session: ExtractionSession
    evidence_catalog: tuple[EvidenceCatalogItem, ...]
    chunk: ExtractionChunk
    context: ExtractionContext
    contract: ExtractionContract

    @model_validator(mode="after")
    def _self_consistent(self) -> ExtractionTask:
        ids = [item.evidence_id for item in self.evidence_catalog]
        unique_items(ids, "evidenceCatalog evidenceId")
        unique_items(
            (item.pointer_digest for item in self.evidence_catalog),
            "evidenceCatalog pointerDigest",
        )
        known = set(ids)
        for item in self.chunk.turn_evidence or ():
            if item.evidence_id not in known:
                raise ValueError(f"chunk.turnEvidence cites unknown evidenceId {item.evidence_id}")
        if self.contract.prompts.prompt_version != self.binding.prompt_version:
            raise ValueError("contract.prompts.promptVersion must equal binding.promptVersion")
        if self.task_id != "extract-" + self.binding.source_input_digest:
            raise ValueError("taskId must be 'extract-' + binding.sourceInputDigest")
        expected = source_input_digest_of_task(self)
        if self.binding.source_input_digest != expected:
            raise ValueError("binding.sourceInputDigest does not match the task content")
        return self


# --- CandidateDraftBatch@v1 ----------------------------------------------------------------------


class DraftStatement(ContractModel):
    """`tool`: a command typed fact's call of its turn, copied from recall's offer with its text
    (review shows that run; without it, a run of the turn with the command and exit code the
    statement's words name)."""

    _omit_when_none: ClassVar[frozenset[str]] = frozenset({"tool"})

    statement_id: Identifier
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]
    evidence_ids: tuple[Identifier, ...]
    tool: PositiveInt | SkipJsonSchema[None] = None


class CandidateDraft(ContractModel):
    """One draft memory entry. Statements cite evidence ids of the task's catalog only.

    Duplicate statement ids or unknown evidence ids are not schema errors: the host drops that
    one candidate (reason `duplicate-statement-id` / `unknown-evidence-id`), not the batch.
    """

    content: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]
    type: CandidateType
    priority: Annotated[int, Field(ge=0, le=100, strict=True)]
    confidence: Confidence
    scene: SceneName | None
    statements: tuple[DraftStatement, ...]


class CandidateDraftBatch(ContractModel):
    """CandidateDraftBatch@v1 — ≤ 8 drafts for one extraction task; `[]` is an explicit no-op."""

    format: Literal["threadshare-memory-candidate-draft-batch@v1"]
    task_id: Identifier
    binding: ExtractionBinding
    candidates: tuple[CandidateDraft, ...] = Field(max_length=MAX_CANDIDATES_PER_BATCH)


def source_input_digest_of_task(task: ExtractionTask) -> str:
    """`source_input_digest` recomputed from a task's own content (same exclusions)."""
    binding = task.binding
    return digests.source_input_digest(
        chunk=task.chunk,
        evidence_catalog=task.evidence_catalog,
        session=task.session,
        context=task.context,
        selection=binding.selection,
        turn_revisions=binding.turn_revisions,
        payload_digests=binding.payload_digests,
        delivery_edge_revisions=binding.delivery_edge_revisions,
        prompt_version=binding.prompt_version,
        schema_version=binding.schema_version,
        chunker_version=binding.chunker_version,
    )
