"""ConsolidationTask@v1: the binding and the task document of one synthesis.

The binding pins everything the agent read: the approved projection (coverage complete, the
entry files' `sourceTreeDigest`), every approved entry's revision, every scene's digest and
heat, the doctrine's digest, the tree's `consolidated.json` (its digest, when it has one that
reads) and the replay epoch (the last successful run). Task id =
`consolidate-` + digest(binding) (+ an issue suffix when an identical binding's task already
ended), run id `run-<taskId>`, candidate id `patch-<taskId>`. The task carries
`bindingDigest` = digest(binding), which a patch may echo instead of the binding.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from teamlore.contracts import digests
from teamlore.contracts.consolidation import (
    BINDING_FORMS,
    CONSOLIDATION_PATCH_FORMAT,
    CONSOLIDATION_POLICY_VERSION,
    CONSOLIDATION_TASK_FORMAT,
    ConsolidationTask,
)
from teamlore.core.canonical import digest
from teamlore.memory.consolidation.prompt import CONSOLIDATION_PROMPT, CONSOLIDATION_PROMPT_VERSION
from teamlore.memory.consolidation.source import (
    DUE_ENTRY_COUNT,
    ApprovedEntry,
    ApprovedSource,
    Baseline,
    LeftEntry,
)
from teamlore.memory.extraction import tasks
from teamlore.memory.extraction.tasks import Owner
from teamlore.memory.store.state_db import memory_state_uuid

Mode = Literal["incremental", "full"]

MAX_SCENES = 15
MERGE_PREFERRED_AT = 12
CREATE_FORBIDDEN_AT = 14
HEAT_ALGORITHM = "scene-heat@1"
POLICY = {
    "maxScenes": MAX_SCENES,
    "mergePreferredAt": MERGE_PREFERRED_AT,
    "createForbiddenAt": CREATE_FORBIDDEN_AT,
    "dueEntryCount": DUE_ENTRY_COUNT,
    "heatAlgorithm": HEAT_ALGORITHM,
}
CONTRACT = {
    "patchSchema": CONSOLIDATION_PATCH_FORMAT,
    "prompts": {
        "promptVersion": CONSOLIDATION_PROMPT_VERSION,
        "consolidation": CONSOLIDATION_PROMPT,
    },
}

# The most a task hands the agent to read, in bytes of JSON: its entries, left entries, scenes,
# doctrine and instructions. 128 KiB is the bound the design puts on memory injected whole into
# an agent's context (a recall's Skill context: 20 Skills / 128 KiB; docs/seed-conformance.md);
# past it a task carries what changed first and says what it left for a next pass. The binding
# is not counted: the patch echoes its digest, the agent never needs to read it.
TASK_CONTENT_BUDGET = 128 * 1024
# the envelope around the counted parts: format, taskId, lease, deferred
ENVELOPE_BYTES = 1024
NEXT_PASS = (
    "Consolidate these first; once this consolidation is promoted (or staged as a no-op), run "
    "`teamlore memory synthesize` again for the entries left."
)


@dataclass(frozen=True, slots=True)
class EntrySelection:
    """The entries a task carries (sorted by entryId) and those its budget left out."""

    carried: list[ApprovedEntry]
    deferred_new: int  # new or changed: the next synthesize hands them over
    deferred_consolidated: int  # a full task's already consolidated rest

    def deferred_json(self) -> dict[str, Any] | None:
        if not self.deferred_new and not self.deferred_consolidated:
            return None
        return {
            "newOrChanged": self.deferred_new,
            "alreadyConsolidated": self.deferred_consolidated,
            "budgetBytes": TASK_CONTENT_BUDGET,
            "next": NEXT_PASS,
        }


def task_entries(source: ApprovedSource, baseline: Baseline, mode: Mode) -> EntrySelection:
    """The entries a task carries: all approved ones (`full`, or when an entry left the
    approved set: the scenes and doctrine that used it are rewritten from what still holds),
    or those new or changed since the baseline (`incremental`) — as many as fit the budget:
    the new or changed first, scene by scene (a scene's new entries travel together), then
    the already consolidated ones."""
    left = baseline.left(source)
    changed = baseline.changed(source)
    wanted = source.approved_entries if mode == "full" or left else changed
    new_ids = {e.entry_id for e in changed}
    order = sorted(wanted, key=lambda e: (e.entry_id not in new_ids, e.scene or "", e.entry_id))
    room = TASK_CONTENT_BUDGET - ENVELOPE_BYTES - _fixed_bytes(source, left)
    carried: list[ApprovedEntry] = []
    for entry in order:
        size = len(orjson.dumps(entry.task_json())) + 1
        if carried and size > room:  # the first always goes: every pass makes progress
            break
        room -= size
        carried.append(entry)
    rest = order[len(carried) :]
    deferred_new = sum(1 for e in rest if e.entry_id in new_ids)
    return EntrySelection(
        sorted(carried, key=lambda e: e.entry_id), deferred_new, len(rest) - deferred_new
    )


def _fixed_bytes(source: ApprovedSource, left: Sequence[LeftEntry]) -> int:
    """The counted parts of a task besides its entries."""
    return len(
        orjson.dumps(
            {
                "leftEntries": [e.task_json() for e in left],
                "scenes": scenes_json(source),
                "doctrine": doctrine_json(source),
                "policy": POLICY,
                "contract": CONTRACT,
            }
        )
    )


def budgeted_bytes(task: Mapping[str, Any]) -> int:
    """What a task's budget counts: its JSON without the binding and bindingDigest."""
    return len(orjson.dumps({k: v for k, v in task.items() if k not in BINDING_FORMS}))


def scenes_json(source: ApprovedSource) -> list[dict[str, Any]]:
    return [
        {**source.scenes[name].revision_json(), "content": source.scenes[name].content}
        for name in sorted(source.scenes)
    ]


def doctrine_json(source: ApprovedSource) -> dict[str, Any] | None:
    if source.doctrine is None:
        return None
    return {"contentDigest": source.doctrine.content_digest, "content": source.doctrine.content}


def binding_of(
    conn: sqlite3.Connection,
    owner: Owner,
    source: ApprovedSource,
    baseline: Baseline,
    mode: Mode,
) -> dict[str, Any]:
    uuid = memory_state_uuid(conn)
    entry_revisions = source.entry_revisions()
    scene_revisions = source.scene_revisions()
    # the record decides which entries an incremental task hands over: pinned like the doctrine
    record = (
        {}
        if baseline.committed_digest is None
        else {"consolidatedDigest": baseline.committed_digest}
    )
    return {
        "databaseUuid": uuid,
        "memoryStateUuid": uuid,
        "owner": {"repositoryKey": owner.repository_key, "worktreeKey": owner.worktree_key},
        "approvedProjection": {
            "generation": source.generation,
            "analyzerVersion": source.analyzer_version,
            "coverage": "complete",
            "sourceTreeDigest": source.source_tree_digest,
        },
        "entrySetDigest": digests.entry_set_digest(entry_revisions),
        "entryRevisions": entry_revisions,
        "sceneIndexDigest": digests.scene_index_digest(scene_revisions),
        "sceneRevisions": scene_revisions,
        "doctrineDigest": None if source.doctrine is None else source.doctrine.content_digest,
        **record,
        "replay": {"mode": mode, "afterSuccessfulRunId": baseline.successful_run_id},
        "promptVersion": CONSOLIDATION_PROMPT_VERSION,
        "schemaVersion": CONSOLIDATION_TASK_FORMAT,
        "policyVersion": CONSOLIDATION_POLICY_VERSION,
    }


def task_id_of(binding: dict[str, Any], issue: int = 0) -> str:
    return "consolidate-" + digest(binding if issue == 0 else [binding, issue])


def run_id_of(task_id: str) -> str:
    return f"run-{task_id}"


def candidate_id_of(task_id: str) -> str:
    return f"patch-{task_id}"


def task_document(
    task_id: str,
    binding: dict[str, Any],
    source: ApprovedSource,
    selection: EntrySelection,
    left: Sequence[LeftEntry] = (),
) -> dict[str, Any]:
    """ConsolidationTask@v1 (validated against the contract before it leaves teamlore)."""
    document: dict[str, Any] = {
        "format": CONSOLIDATION_TASK_FORMAT,
        "taskId": task_id,
        "lease": {"holder": tasks.AGENT_HOLDER, "expiresAt": 0},
        "binding": binding,
        "bindingDigest": digest(binding),
        "entries": [e.task_json() for e in selection.carried],
        "leftEntries": [e.task_json() for e in left],
        "scenes": scenes_json(source),
        "doctrine": doctrine_json(source),
        "policy": POLICY,
        "contract": CONTRACT,
    }
    deferred = selection.deferred_json()
    if deferred is not None:
        document["deferred"] = deferred
    wire = ConsolidationTask.from_wire(document).to_wire()
    if not left:  # then the v1 document as first published, for consumers of that schema
        del wire["leftEntries"]
    return wire
