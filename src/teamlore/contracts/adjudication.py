"""Adjudication contracts: the dedup task an agent reads and the decisions it returns.

- AdjudicationTask@v1 — drafts (each with its candidateId), their recall sets over a pool of
  existing approved entries and candidates, and the binding that pins all of it.
- AdjudicationResult@v1 — one decision per draft: store, skip, update or merge.

A draft is referred to by its candidateId: in a task, `recallSets[].draftRef` and in a result
`adjudications[].draftRef` and draft targets of `skip` are candidateIds of the task's drafts.
A draft's recall set leaves out only the draft itself: the other drafts of the batch are
recalled as `candidate` items (so duplicates across a batch's chunks are found), and such an
item can be skipped to, never updated or merged (docs/extraction.md, "stage: drafts, dedup,
adjudication").

`check_adjudication_result(task, result)` applies the host rules that need the task and returns
every violation with a reason code; `validate_adjudication_result` raises the first one as a
TeamloreError (ADJUDICATION_INVALID, or BINDING_MISMATCH for a foreign taskId/binding).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from teamlore.contracts._base import (
    ContractModel,
    Hex64,
    Identifier,
    NonEmptyText,
    NonNegativeInt,
    Owner,
    PositiveInt,
    SceneName,
    VersionTag,
    unique_items,
)
from teamlore.contracts.extraction import CandidateDraft, CandidateType, Lease
from teamlore.contracts.formats import (
    ADJUDICATION_RESULT_FORMAT as ADJUDICATION_RESULT_FORMAT,  # its home: formats.py
)
from teamlore.core import errors

ADJUDICATION_TASK_FORMAT = "threadshare-memory-adjudication-task@v1"
ADJUDICATION_PROMPT_VERSION = "memory-adjudication@3"
# The prompt versions whose results this teamlore reads: the current one and earlier ones whose
# task and result have its shape (only the prompt's words changed since), so the judgement of a
# task issued before an upgrade still holds. A version whose shape changed leaves this set: a
# result to it is refused as stale (docs/extraction.md, "stage: drafts, dedup, adjudication").
# (@2 → @3 only says precisely what the pool's candidate items are)
ANSWERABLE_PROMPT_VERSIONS = frozenset({"memory-adjudication@2", ADJUDICATION_PROMPT_VERSION})
RECALL_ALGORITHM_VERSION = "recall-rrf@1"
MAX_DRAFTS_PER_ADJUDICATION = 64

SourceKind = Literal["approved", "candidate"]
Action = Literal["store", "skip", "update", "merge"]


class ProjectionState(ContractModel):
    generation: NonNegativeInt
    analyzer_version: NonEmptyText


class PoolItemRevision(ContractModel):
    source_kind: SourceKind
    id: Identifier
    revision: NonNegativeInt


class AdjudicationBinding(ContractModel):
    """Pins an adjudication to the drafts and the exact recall result it was computed from.

    `poolItemRevisions` is sorted by (sourceKind, id) and equals the pool's revisions.
    """

    database_uuid: Identifier
    memory_state_uuid: Identifier
    owner: Owner
    draft_batch_digest: Hex64
    approved_projection: ProjectionState
    candidate_projection: ProjectionState
    recall_algorithm_version: VersionTag
    recall_query_digest: Hex64
    result_set_digest: Hex64
    pool_item_revisions: tuple[PoolItemRevision, ...]
    prompt_version: VersionTag
    schema_version: Literal["threadshare-memory-adjudication-result@v1"]

    @model_validator(mode="after")
    def _sorted_pool(self) -> AdjudicationBinding:
        keys = [(p.source_kind, p.id) for p in self.pool_item_revisions]
        unique_items(keys, "binding.poolItemRevisions item")
        if keys != sorted(keys):
            raise ValueError("binding.poolItemRevisions must be sorted by (sourceKind, id)")
        return self


class AdjudicationDraft(CandidateDraft):
    """A draft of the batch with the candidateId it was staged under."""

    candidate_id: Identifier


class RecallHit(ContractModel):
    rank: PositiveInt
    source_kind: SourceKind
    id: Identifier


class RecallSet(ContractModel):
    draft_ref: Identifier
    ordered: tuple[RecallHit, ...]

    @model_validator(mode="after")
    def _ranked(self) -> RecallSet:
        if [hit.rank for hit in self.ordered] != list(range(1, len(self.ordered) + 1)):
            raise ValueError("recallSets[].ordered ranks must be 1..n in order")
        unique_items(((h.source_kind, h.id) for h in self.ordered), "recall hit")
        return self


class PoolItem(ContractModel):
    source_kind: SourceKind
    id: Identifier
    revision: NonNegativeInt
    content_digest: Hex64
    state: NonEmptyText
    summary: Annotated[str, Field(max_length=240)]


class AdjudicationPrompts(ContractModel):
    prompt_version: VersionTag
    adjudication: str


class AdjudicationContract(ContractModel):
    result_schema: Literal["threadshare-memory-adjudication-result@v1"]
    prompts: AdjudicationPrompts


class AdjudicationTask(ContractModel):
    """AdjudicationTask@v1 — ≤ 64 drafts, one recall set per draft, the pool of their hits.

    Consistency rules: draft candidateIds unique; exactly one recall set per draft (draftRef =
    candidateId); every hit is a pool item; pool sorted by (sourceKind, id), unique, and equal to
    `binding.poolItemRevisions`; `contract.prompts.promptVersion` equals the binding's.
    """

    format: Literal["threadshare-memory-adjudication-task@v1"]
    task_id: Identifier
    lease: Lease
    binding: AdjudicationBinding
    drafts: tuple[AdjudicationDraft, ...] = Field(max_length=MAX_DRAFTS_PER_ADJUDICATION)
    recall_sets: tuple[RecallSet, ...] = Field(max_length=MAX_DRAFTS_PER_ADJUDICATION)
    pool: tuple[PoolItem, ...]
    contract: AdjudicationContract

    @model_validator(mode="after")
    def _self_consistent(self) -> AdjudicationTask:
        draft_ids = [d.candidate_id for d in self.drafts]
        unique_items(draft_ids, "drafts candidateId")
        refs = [s.draft_ref for s in self.recall_sets]
        unique_items(refs, "recallSets draftRef")
        if sorted(refs) != sorted(draft_ids):
            raise ValueError("recallSets must hold exactly one set per draft (draftRef)")
        pool_keys = [(p.source_kind, p.id) for p in self.pool]
        unique_items(pool_keys, "pool item")
        if pool_keys != sorted(pool_keys):
            raise ValueError("pool must be sorted by (sourceKind, id)")
        revisions = [(p.source_kind, p.id, p.revision) for p in self.pool]
        bound = [(p.source_kind, p.id, p.revision) for p in self.binding.pool_item_revisions]
        if revisions != bound:
            raise ValueError("pool does not match binding.poolItemRevisions")
        known = set(pool_keys)
        for recall_set in self.recall_sets:
            for hit in recall_set.ordered:
                if (hit.source_kind, hit.id) not in known:
                    raise ValueError(f"recall hit {hit.source_kind}:{hit.id} is not in the pool")
        if self.contract.prompts.prompt_version != self.binding.prompt_version:
            raise ValueError("contract.prompts.promptVersion must equal binding.promptVersion")
        return self


# --- AdjudicationResult@v1 -----------------------------------------------------------------------


class MergedFields(ContractModel):
    """Fields an update/merge writes into its result. Where an `update` omits a field, the result
    keeps its one target's value; where a `merge` omits one, the draft's (it has several
    targets)."""

    _omit_when_none: ClassVar[frozenset[str]] = frozenset(
        {"content", "type", "priority", "occurred"}
    )
    _omit_when_unset: ClassVar[frozenset[str]] = frozenset({"scene"})

    content: Annotated[str, Field(min_length=1, max_length=65_536)] | SkipJsonSchema[None] = None
    type: CandidateType | SkipJsonSchema[None] = None
    priority: Annotated[int, Field(ge=0, le=100, strict=True)] | SkipJsonSchema[None] = None
    scene: SceneName | None = None
    """Absent: keep the target's scene; null: clear it (the two differ on the wire)."""
    occurred: tuple[NonEmptyText, ...] | SkipJsonSchema[None] = None


class Adjudication(ContractModel):
    """One decision. Rules that need no task: no repeated target; store has no targets and no
    mergedFields; skip has ≥ 1 target and no mergedFields; update has exactly 1 target; merge
    ≥ 1; update and merge carry mergedFields."""

    draft_ref: Identifier
    action: Action
    target_ids: tuple[Identifier, ...]
    merged_fields: MergedFields | None

    @model_validator(mode="after")
    def _shape(self) -> Adjudication:
        problem = _decision_shape_problem(self)
        if problem is not None:
            raise ValueError(f"{problem[0]}: {problem[1]}")
        return self


def _decision_shape_problem(decision: Adjudication) -> tuple[str, str] | None:
    targets = decision.target_ids
    action = decision.action
    if len(set(targets)) != len(targets):
        return "repeated-target", f"{decision.draft_ref}: a target is named twice"
    if action == "store" and targets:
        return "store-with-targets", f"{decision.draft_ref}: store takes no targetIds"
    if action in ("store", "skip") and decision.merged_fields is not None:
        return "unexpected-merged-fields", f"{decision.draft_ref}: {action} takes no mergedFields"
    if action in ("skip", "merge") and not targets:
        return "missing-target", f"{decision.draft_ref}: {action} needs at least one target"
    if action == "update" and len(targets) != 1:
        return "update-target-count", f"{decision.draft_ref}: update needs exactly one target"
    if action in ("update", "merge") and decision.merged_fields is None:
        return "missing-merged-fields", f"{decision.draft_ref}: {action} needs mergedFields"
    if decision.draft_ref in targets:
        return "self-target", f"{decision.draft_ref}: a draft cannot target itself"
    return None


class AdjudicationResult(ContractModel):
    """AdjudicationResult@v1 — the agent's decisions, binding echoed verbatim.

    Intrinsic rules: each decision well-shaped (see Adjudication), each draftRef decided at most
    once, no skip that points at another decision that is itself a skip. Rules that need the task
    (every draft decided, targets exist, …) are in `check_adjudication_result`.
    """

    format: Literal["threadshare-memory-adjudication-result@v1"]
    task_id: Identifier
    binding: AdjudicationBinding
    adjudications: tuple[Adjudication, ...] = Field(max_length=MAX_DRAFTS_PER_ADJUDICATION)

    @model_validator(mode="after")
    def _decided_once(self) -> AdjudicationResult:
        unique_items((a.draft_ref for a in self.adjudications), "duplicate-decision: draftRef")
        skipping = {a.draft_ref for a in self.adjudications if a.action == "skip"}
        for decision in self.adjudications:
            if decision.action == "skip":
                for target in decision.target_ids:
                    if target in skipping:
                        raise ValueError(
                            f"skip-chain: {decision.draft_ref}: skip targets {target}, "
                            "which is skipped too"
                        )
        return self


@dataclass(frozen=True, slots=True)
class AdjudicationIssue:
    """One broken rule: a stable reason code, the draft it concerns (if any), a message."""

    reason: str
    draft_ref: str | None
    message: str
    target: str | None = None  # the target the rule concerns, when it is one target

    def remedy(self) -> str | None:
        """What to do instead, when it depends on the case (else the code's own `next`)."""
        if self.reason == "mutation-targets-draft":
            return (
                f"If {self.draft_ref} repeats {self.target}, skip {self.draft_ref} to "
                f"{self.target}; update and merge change only memory outside this batch "
                "(approved entries, other batches' candidates)."
            )
        return None


def check_adjudication_result(
    task: AdjudicationTask, result: AdjudicationResult
) -> list[AdjudicationIssue]:
    """Every host rule the result breaks against its task (empty list: the result is valid).

    Reasons: `task-mismatch`, `binding-drift`, `unknown-draft`, `missing-decision`,
    `duplicate-decision`, `repeated-target`, `store-with-targets`, `unexpected-merged-fields`,
    `missing-target`, `update-target-count`, `missing-merged-fields`, `self-target`,
    `unknown-target`, `ambiguous-target`, `skip-chain` (skip → a draft that is skipped),
    `mutation-targets-draft` (update/merge of a draft of this batch), `target-mutated-twice`.

    Decision (beyond the reference): update/merge may target approved pool items as well as
    candidates — the replaced entry is deprecated with supersededBy; a pool item may be the
    target of at most one update/merge in a result.
    """
    issues: list[AdjudicationIssue] = []
    if result.task_id != task.task_id:
        issues.append(AdjudicationIssue("task-mismatch", None, "taskId is not this task's"))
    if result.binding != task.binding:
        issues.append(AdjudicationIssue("binding-drift", None, "binding is not echoed verbatim"))

    drafts = {d.candidate_id for d in task.drafts}
    counts = Counter(a.draft_ref for a in result.adjudications)
    action_of = {a.draft_ref: a.action for a in result.adjudications}
    for ref, count in sorted(counts.items()):
        if ref not in drafts:
            issues.append(AdjudicationIssue("unknown-draft", ref, f"{ref} is not a draft"))
        elif count > 1:
            issues.append(AdjudicationIssue("duplicate-decision", ref, f"{ref} decided twice"))
    for ref in sorted(drafts - counts.keys()):
        issues.append(AdjudicationIssue("missing-decision", ref, f"{ref} has no decision"))

    pool_kinds: dict[str, set[str]] = {}
    for item in task.pool:
        pool_kinds.setdefault(item.id, set()).add(item.source_kind)
    mutated: Counter[str] = Counter()
    for decision in result.adjudications:
        ref = decision.draft_ref
        shape = _decision_shape_problem(decision)
        if shape is not None:
            issues.append(AdjudicationIssue(shape[0], ref, shape[1]))
            continue
        for target in decision.target_ids:
            is_draft = target in drafts
            if decision.action == "skip":
                if is_draft:
                    if action_of.get(target) == "skip":
                        issues.append(
                            AdjudicationIssue(
                                "skip-chain", ref, f"{ref}: skip target {target} is skipped too"
                            )
                        )
                    continue
            elif is_draft:
                issues.append(
                    AdjudicationIssue(
                        "mutation-targets-draft",
                        ref,
                        f"{ref}: {decision.action} cannot target {target}, a draft of this batch",
                        target,
                    )
                )
                continue
            kinds = pool_kinds.get(target)
            if not kinds:
                issues.append(
                    AdjudicationIssue("unknown-target", ref, f"{ref}: {target} is not in the pool")
                )
            elif len(kinds) > 1:
                issues.append(
                    AdjudicationIssue(
                        "ambiguous-target", ref, f"{ref}: {target} names two pool items"
                    )
                )
            elif decision.action in ("update", "merge"):
                mutated[target] += 1
    for target, count in sorted(mutated.items()):
        if count > 1:
            issues.append(
                AdjudicationIssue(
                    "target-mutated-twice", None, f"{target} is updated/merged by {count} drafts"
                )
            )
    return issues


def validate_adjudication_result(task: AdjudicationTask, result: AdjudicationResult) -> None:
    """Raise the first broken rule as a TeamloreError with `reason` (and `draftRef`) details."""
    issues = check_adjudication_result(task, result)
    if not issues:
        return
    first = issues[0]
    code = (
        errors.BINDING_MISMATCH
        if first.reason in ("task-mismatch", "binding-drift")
        else errors.ADJUDICATION_INVALID
    )
    details: dict[str, object] = {"reason": first.reason, "issues": len(issues)}
    if first.draft_ref is not None:
        details["draftRef"] = first.draft_ref
    raise errors.TeamloreError(code, first.message, **details).advising(first.remedy())
