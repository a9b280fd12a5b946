"""Consolidation contracts (L2 scenes, L3 doctrine): the task and the agent's patch."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from teamlore.contracts import digests
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
from teamlore.contracts.extraction import CandidateType, Confidence, Lease
from teamlore.contracts.formats import (
    CONSOLIDATION_PATCH_FORMAT as CONSOLIDATION_PATCH_FORMAT,  # its home: formats.py
)
from teamlore.core.canonical import digest

CONSOLIDATION_TASK_FORMAT = "threadshare-memory-consolidation-task@v1"
CONSOLIDATION_PROMPT_VERSION = "memory-consolidation@6"
# The prompt versions whose patches this teamlore stages: the current one and earlier ones whose
# task selects the entries as today's does. @5 handed over every approved entry (no task budget),
# so a patch to it rests on entries today's task may not carry: refused as stale
# (`prompt-version-changed`), as adjudication does (contracts/adjudication.py).
ANSWERABLE_PROMPT_VERSIONS = frozenset({CONSOLIDATION_PROMPT_VERSION})
CONSOLIDATION_POLICY_VERSION = "consolidation-policy@1"
MAX_HEAT = 2_147_483_647
MAX_ENTRIES = 4096
BINDING_FORMS = ("binding", "bindingDigest")  # what a patch echoes of its task: one of the two

Heat = Annotated[int, Field(ge=1, le=MAX_HEAT, strict=True)]


class ApprovedProjectionBinding(ContractModel):
    generation: NonNegativeInt
    analyzer_version: NonEmptyText
    coverage: Literal["complete"]
    source_tree_digest: Hex64


class EntryRevision(ContractModel):
    entry_id: Identifier
    revision: PositiveInt
    content_digest: Hex64


class SceneRevision(ContractModel):
    name: SceneName
    content_digest: Hex64
    heat: Heat


class Replay(ContractModel):
    mode: Literal["incremental", "full"]
    after_successful_run_id: Identifier | None


class ConsolidationBinding(ContractModel):
    """Pins a consolidation to the approved tree it read.

    `entrySetDigest` = `digests.entry_set_digest(entryRevisions)`, `sceneIndexDigest` =
    `digests.scene_index_digest(sceneRevisions)`; both lists sorted and unique.
    """

    database_uuid: Identifier
    memory_state_uuid: Identifier
    owner: Owner
    approved_projection: ApprovedProjectionBinding
    entry_set_digest: Hex64
    entry_revisions: tuple[EntryRevision, ...] = Field(max_length=MAX_ENTRIES)
    scene_index_digest: Hex64
    scene_revisions: tuple[SceneRevision, ...]
    doctrine_digest: Hex64 | None
    # sha256 of the tree's `consolidated.json` (which entries the baseline covers); omitted
    # when the tree has no record that reads
    consolidated_digest: Hex64 | SkipJsonSchema[None] = None
    replay: Replay
    prompt_version: VersionTag
    schema_version: Literal["threadshare-memory-consolidation-task@v1"]
    policy_version: VersionTag

    _omit_when_none: ClassVar[frozenset[str]] = frozenset({"consolidated_digest"})

    @model_validator(mode="after")
    def _digests_match(self) -> ConsolidationBinding:
        ids = [e.entry_id for e in self.entry_revisions]
        unique_items(ids, "entryRevisions entryId")
        names = [s.name for s in self.scene_revisions]
        unique_items(names, "sceneRevisions name")
        if ids != sorted(ids) or names != sorted(names):
            raise ValueError("entryRevisions and sceneRevisions must be sorted")
        if self.entry_set_digest != digests.entry_set_digest(self.entry_revisions):
            raise ValueError("entrySetDigest does not match entryRevisions")
        if self.scene_index_digest != digests.scene_index_digest(self.scene_revisions):
            raise ValueError("sceneIndexDigest does not match sceneRevisions")
        return self


class ConsolidationEntry(ContractModel):
    entry_id: Identifier
    revision: PositiveInt
    content_digest: Hex64
    type: CandidateType
    scene: str | None
    priority: Annotated[int, Field(ge=0, le=100, strict=True)]
    confidence: Confidence
    body: str


class ConsolidationLeftEntry(ContractModel):
    """An entry the last consolidation rested on that is no longer approved: the scenes and
    doctrine may still say what it said."""

    entry_id: Identifier
    status: Literal["deprecated", "removed"]
    superseded_by: Identifier | None


class ConsolidationScene(ContractModel):
    name: SceneName
    content_digest: Hex64
    heat: Heat
    content: str


class ConsolidationDoctrine(ContractModel):
    content_digest: Hex64
    content: str


class ConsolidationPolicy(ContractModel):
    max_scenes: Literal[15]
    merge_preferred_at: Literal[12]
    create_forbidden_at: Literal[14]
    due_entry_count: Literal[20]
    heat_algorithm: Literal["scene-heat@1"]


class ConsolidationPrompts(ContractModel):
    prompt_version: VersionTag
    consolidation: str


class ConsolidationContract(ContractModel):
    patch_schema: Literal["threadshare-memory-consolidation-patch@v1"]
    prompts: ConsolidationPrompts


class ConsolidationDeferred(ContractModel):
    """The entries a task over its budget leaves for a next pass (omitted when it holds all)."""

    new_or_changed: NonNegativeInt  # not yet consolidated: the next synthesize hands them over
    already_consolidated: NonNegativeInt  # a `full` task's rest: the scenes already rest on them
    budget_bytes: PositiveInt
    next: NonEmptyText


class ConsolidationTask(ContractModel):
    """ConsolidationTask@v1 — changed entries (sorted by entryId, each one of
    `binding.entryRevisions`), the entries that left the approved set since the last
    consolidation (`leftEntries`, sorted, none of them approved), all scenes (sorted, equal to
    `binding.sceneRevisions`) and the doctrine (its digest equals `binding.doctrineDigest`);
    `deferred` when the entries did not all fit the task's budget."""

    format: Literal["threadshare-memory-consolidation-task@v1"]
    task_id: Identifier
    lease: Lease
    binding: ConsolidationBinding
    # digest(binding): what a patch may echo instead of the whole binding
    binding_digest: Hex64
    entries: tuple[ConsolidationEntry, ...] = Field(max_length=MAX_ENTRIES)
    left_entries: tuple[ConsolidationLeftEntry, ...] = Field((), max_length=MAX_ENTRIES)
    scenes: tuple[ConsolidationScene, ...]
    doctrine: ConsolidationDoctrine | None
    policy: ConsolidationPolicy
    contract: ConsolidationContract
    deferred: ConsolidationDeferred | SkipJsonSchema[None] = None

    _omit_when_none: ClassVar[frozenset[str]] = frozenset({"deferred"})

    @model_validator(mode="after")
    def _matches_binding(self) -> ConsolidationTask:
        ids = [e.entry_id for e in self.entries]
        unique_items(ids, "entries entryId")
        if ids != sorted(ids):
            raise ValueError("entries must be sorted by entryId")
        bound = {(e.entry_id, e.revision, e.content_digest) for e in self.binding.entry_revisions}
        for entry in self.entries:
            if (entry.entry_id, entry.revision, entry.content_digest) not in bound:
                raise ValueError(f"entry {entry.entry_id} is not in binding.entryRevisions")
        left = [e.entry_id for e in self.left_entries]
        unique_items(left, "leftEntries entryId")
        if left != sorted(left) or set(left) & {e.entry_id for e in self.binding.entry_revisions}:
            raise ValueError("leftEntries must be sorted and none of them approved")
        scenes = [(s.name, s.content_digest, s.heat) for s in self.scenes]
        if scenes != [(s.name, s.content_digest, s.heat) for s in self.binding.scene_revisions]:
            raise ValueError("scenes do not match binding.sceneRevisions")
        doctrine = None if self.doctrine is None else self.doctrine.content_digest
        if doctrine != self.binding.doctrine_digest:
            raise ValueError("doctrine does not match binding.doctrineDigest")
        if self.contract.prompts.prompt_version != self.binding.prompt_version:
            raise ValueError("contract.prompts.promptVersion must equal binding.promptVersion")
        if self.binding_digest != digest(self.binding.to_wire()):
            raise ValueError("bindingDigest must be the digest of binding")
        return self


class ConsolidationOperation(ContractModel):
    """One scene/doctrine change. Intrinsic rules: create/update/merge carry newContent and
    ≥ 1 basedOnEntryId, delete has newContent null; basedOnEntryIds unique; doctrine is named
    `doctrine` and never merges; mergeSources only on a scene merge (≥ 2, unique).
    Rules that need the task (existing scenes, capacity, heat) are checked by the host.

    `operationId` and `rationale` are ours, beyond the seed's operation shape
    (`{op, target, name, newContent, basedOnEntryIds, mergeSources}`, docs/seed-conformance.md):
    a patch without them is read with `operationId` = `op-<position>` (1-based) and an empty
    rationale."""

    model_config = ConfigDict(
        **ContractModel.model_config, json_schema_extra=lambda s: _not_required(s, "operationId")
    )

    operation_id: Identifier  # always there once read: the patch numbers the unnamed ones
    op: Literal["create", "update", "merge", "delete"]
    target: Literal["scene", "doctrine"]
    # a scene is named as its file and as an entry names it (`SceneName`: any script, lowercase)
    name: SceneName
    new_content: str | None
    based_on_entry_ids: tuple[Identifier, ...]
    merge_sources: tuple[SceneName, ...]
    rationale: Annotated[str, Field(max_length=4096)] = ""

    @model_validator(mode="after")
    def _shape(self) -> ConsolidationOperation:
        unique_items(self.based_on_entry_ids, "basedOnEntryIds item")
        if self.op == "delete":
            if self.new_content is not None:
                raise ValueError("invalid-operation-content: delete takes newContent null")
        elif self.new_content is None or not self.based_on_entry_ids:
            raise ValueError(
                f"invalid-operation-content: {self.op} needs newContent and basedOnEntryIds"
            )
        if self.target == "doctrine":
            if self.name != "doctrine":
                raise ValueError("invalid-doctrine-name: the doctrine target is named doctrine")
            if self.op == "merge" or self.merge_sources:
                raise ValueError("invalid-doctrine-operation: doctrine never merges")
        if self.op == "merge":
            unique_items(self.merge_sources, "mergeSources item")
            if len(self.merge_sources) < 2:
                raise ValueError("unknown-merge-source: a merge needs at least two sources")
        elif self.merge_sources:
            raise ValueError("invalid-merge-sources: mergeSources only on merge")
        return self


class ConsolidationPatch(ContractModel):
    """ConsolidationPatch@v1 — the task's binding echoed verbatim, or (exactly one of the two)
    its `bindingDigest`; `operations: []` is an explicit no-op. operationIds unique; at most one
    operation per target file; at most one doctrine operation.

    `bindingDigest` is ours, beyond the seed (docs/seed-conformance.md): a big team's binding
    lists every approved entry's revision (~240 KB at 1,500 entries), more than a model copies
    reliably."""

    model_config = ConfigDict(
        **ContractModel.model_config, json_schema_extra=lambda s: _one_of_required(s, BINDING_FORMS)
    )

    format: Literal["threadshare-memory-consolidation-patch@v1"]
    task_id: Identifier
    binding: ConsolidationBinding | SkipJsonSchema[None] = None
    binding_digest: Hex64 | SkipJsonSchema[None] = None
    operations: tuple[ConsolidationOperation, ...] = Field(max_length=64)

    _omit_when_none: ClassVar[frozenset[str]] = frozenset({"binding", "binding_digest"})

    @model_validator(mode="before")
    @classmethod
    def _number_unnamed_operations(cls, data: Any) -> Any:
        """A seed-shaped operation has no operationId: it is `op-<position>` (1-based)."""
        return with_positional_operation_ids(data)

    @model_validator(mode="after")
    def _batch_rules(self) -> ConsolidationPatch:
        if (self.binding is None) == (self.binding_digest is None):
            raise ValueError(
                "give the task's binding (verbatim) or its bindingDigest: exactly one of the two"
            )
        unique_items((o.operation_id for o in self.operations), "operations operationId")
        unique_items(
            ((o.target, o.name) for o in self.operations),
            "conflicting-file-operation: target",
        )
        return self


def _one_of_required(schema: dict[str, Any], names: tuple[str, ...]) -> None:
    """The published schema requires exactly one of `names`."""
    for name in names:
        _not_required(schema, name)
    schema["oneOf"] = [{"required": [name]} for name in names]


def _not_required(schema: dict[str, Any], name: str) -> None:
    """The published schema lets a client leave `name` out (the host derives it)."""
    required = schema.get("required")
    if isinstance(required, list) and name in required:
        required.remove(name)


def with_positional_operation_ids(document: Any) -> Any:
    """`document` with `operationId` = `op-<position>` (1-based) on each operation that has
    none (under either wire or Python name); anything else is returned as it is."""
    operations = document.get("operations") if isinstance(document, dict) else None
    if not isinstance(operations, list):
        return document
    numbered = [
        {**op, "operationId": f"op-{position}"}
        if isinstance(op, dict) and "operationId" not in op and "operation_id" not in op
        else op
        for position, op in enumerate(operations, start=1)
    ]
    return {**document, "operations": numbered}
