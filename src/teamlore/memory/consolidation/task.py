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
from collections.abc import Sequence
from typing import Any, Literal

from teamlore.contracts import digests
from teamlore.contracts.consolidation import (
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


def task_entries(source: ApprovedSource, baseline: Baseline, mode: Mode) -> list[ApprovedEntry]:
    """The entries a task carries: all approved ones (`full`, or when an entry left the
    approved set: the scenes and doctrine that used it are rewritten from what still holds),
    or those new or changed since the baseline (`incremental`)."""
    if mode == "full" or baseline.left(source):
        return source.approved_entries
    return baseline.changed(source)


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
    entries: Sequence[ApprovedEntry],
    left: Sequence[LeftEntry] = (),
) -> dict[str, Any]:
    """ConsolidationTask@v1 (validated against the contract before it leaves teamlore)."""
    document = {
        "format": CONSOLIDATION_TASK_FORMAT,
        "taskId": task_id,
        "lease": {"holder": tasks.AGENT_HOLDER, "expiresAt": 0},
        "binding": binding,
        "bindingDigest": digest(binding),
        "entries": [e.task_json() for e in sorted(entries, key=lambda e: e.entry_id)],
        "leftEntries": [e.task_json() for e in left],
        "scenes": [
            {**source.scenes[name].revision_json(), "content": source.scenes[name].content}
            for name in sorted(source.scenes)
        ],
        "doctrine": None
        if source.doctrine is None
        else {
            "contentDigest": source.doctrine.content_digest,
            "content": source.doctrine.content,
        },
        "policy": POLICY,
        "contract": {
            "patchSchema": CONSOLIDATION_PATCH_FORMAT,
            "prompts": {
                "promptVersion": CONSOLIDATION_PROMPT_VERSION,
                "consolidation": CONSOLIDATION_PROMPT,
            },
        },
    }
    wire = ConsolidationTask.from_wire(document).to_wire()
    if not left:  # then the v1 document as first published, for consumers of that schema
        del wire["leftEntries"]
    return wire
