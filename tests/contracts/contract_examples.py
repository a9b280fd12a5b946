"""Valid example documents of every contract (wire form), built the way the host builds them.

Each builder returns a fresh dict, so a test may mutate it freely.
"""

from __future__ import annotations

from typing import Any

from teamlore.contracts import digests
from teamlore.core.canonical import digest

H = {name: digest(name) for name in ("repo", "worktree", "db", "rd", "rs", "sb", "t1", "t2", "p1")}
OWNER = {"repositoryKey": H["repo"], "worktreeKey": H["worktree"]}
DB_UUID = "6f1c2b9e-1d2a-4c3b-9a8e-0f1e2d3c4b5a"


def repository_binding() -> dict[str, Any]:
    return {
        "format": "threadshare-memory-repository-binding@v1",
        "repositoryKey": H["repo"],
        "worktreeKey": H["worktree"],
        "publicRepositoryIdentity": "github.com/acme/widgets",
        "rootRealpathDigest": H["rd"],
        "commonDirectoryIdentity": {"device": "2049", "inode": "1234567"},
        "memoryRoot": ".threadshare/memory",
    }


def extraction_request() -> dict[str, Any]:
    return {
        "format": "threadshare-memory-extraction-request@v1",
        "window": {"after": "2025-01-01T00:00:00.000Z", "before": "2025-02-01T00:00:00.000Z"},
        "query": "flaky migration",
        "filters": {"providers": ["codex", "claude"], "resultEvidence": ["unknown"]},
    }


def evidence_catalog() -> list[dict[str, Any]]:
    pointers: list[dict[str, Any]] = [
        {"kind": "commit", "commitHash": "a" * 40, "repository": "github.com/acme/widgets"},
        {"kind": "turn", "turnIndex": 0},
        {"kind": "path", "path": "src/app.py"},
    ]
    catalog = []
    for n, pointer in enumerate(pointers, start=1):
        pd = digests.pointer_digest(pointer)
        catalog.append(
            {
                "evidenceId": digests.evidence_id(n, pd),
                "kind": pointer["kind"],
                "pointerDigest": pd,
                "display": f"{pointer['kind']} {n}",
            }
        )
    return catalog


def extraction_binding(source_input_digest: str = "0" * 64) -> dict[str, Any]:
    return {
        "databaseUuid": DB_UUID,
        "owner": dict(OWNER),
        "sourceInputDigest": source_input_digest,
        "selection": {
            "requestDigest": H["rd"],
            "resultSetDigest": H["rs"],
            "sourceBindingDigest": H["sb"],
        },
        "turnRevisions": [H["t2"], H["t1"]],
        "payloadDigests": sorted([H["p1"], H["t1"]]),
        "deliveryEdgeRevisions": [],
        "promptVersion": "memory-prompts@2",
        "schemaVersion": "threadshare-memory-candidate-draft-batch@v1",
        "chunkerVersion": "memory-chunker@1",
        "provenance": {"snapshotSeq": "42", "evaluatedAt": "2025-02-01T10:00:00.000Z"},
    }


def extraction_task() -> dict[str, Any]:
    catalog = evidence_catalog()
    task: dict[str, Any] = {
        "format": "threadshare-memory-extraction-task@v1",
        "taskId": "",
        "lease": {"holder": "teamlore-cli", "expiresAt": 0},
        "binding": extraction_binding(),
        "session": {
            "project": "github.com/acme/widgets",
            "repositoryKey": H["repo"],
            "timeWindow": {"start": "2025-01-01T00:00:00.000Z", "end": "2025-02-01T00:00:00.000Z"},
        },
        "evidenceCatalog": catalog,
        "chunk": {
            "turnRange": {"start": 0, "end": 1},
            "coverage": [
                {"sourceKind": "turn", "ref": "turn:0", "completeness": "full", "bytes": 120},
                {"sourceKind": "turn", "ref": "turn:1", "completeness": "truncated", "bytes": 9000},
                {
                    "sourceKind": "tool-payload",
                    "ref": "payload:" + H["p1"],
                    "completeness": "truncated",
                    "bytes": 50000,
                },
            ],
            "turnEvidence": [{"turnIndex": 0, "evidenceId": catalog[1]["evidenceId"]}],
            "transcript": "Preamble\n\n<<past-user>>\nfix it\n\n<<end-of-transcript>>",
        },
        "context": {"sceneIndexSummary": None},
        "contract": {
            "draftSchema": "threadshare-memory-candidate-draft-batch@v1",
            "prompts": {"promptVersion": "memory-prompts@2", "extraction": "Extract ..."},
        },
    }
    # Compute the self-binding digest exactly as the host does.
    from teamlore.contracts.extraction import (
        EvidenceCatalogItem,
        ExtractionChunk,
        ExtractionContext,
        ExtractionSession,
        SelectionBinding,
    )

    b = task["binding"]
    sid = digests.source_input_digest(
        chunk=ExtractionChunk.model_validate(task["chunk"]),
        evidence_catalog=[EvidenceCatalogItem.model_validate(c) for c in catalog],
        session=ExtractionSession.model_validate(task["session"]),
        context=ExtractionContext.model_validate(task["context"]),
        selection=SelectionBinding.model_validate(b["selection"]),
        turn_revisions=b["turnRevisions"],
        payload_digests=b["payloadDigests"],
        delivery_edge_revisions=b["deliveryEdgeRevisions"],
        prompt_version=b["promptVersion"],
        schema_version=b["schemaVersion"],
        chunker_version=b["chunkerVersion"],
    )
    task["binding"] = extraction_binding(sid)
    task["taskId"] = digests.extraction_task_id(sid)
    return task


def draft(content: str = "Run migrations with --lock-timeout 5s.") -> dict[str, Any]:
    catalog = evidence_catalog()
    return {
        "content": content,
        "type": "work_method",
        "priority": 60,
        "confidence": "high",
        "scene": "数据库迁移",
        "statements": [
            {
                "statementId": "s1",
                "text": "Migrations failed without a lock timeout.",
                "evidenceIds": [catalog[0]["evidenceId"], catalog[1]["evidenceId"]],
            }
        ],
    }


def draft_batch() -> dict[str, Any]:
    task = extraction_task()
    return {
        "format": "threadshare-memory-candidate-draft-batch@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "candidates": [draft(), draft("Use the staging DB for load tests.")],
    }


def evidence_assessment() -> dict[str, Any]:
    catalog = evidence_catalog()
    citations = sorted(
        ({"evidenceId": c["evidenceId"], "pointerDigest": c["pointerDigest"]} for c in catalog[:2]),
        key=lambda c: c["evidenceId"],
    )
    return {
        "format": "threadshare-memory-evidence-assessment@v1",
        "candidateId": "extract-" + H["t1"] + "-c1",
        "statementId": "s1",
        "citations": citations,
        "provenanceStrength": "direct",
        "limitations": ["not-authorship", "source-local-only"],
        "claimSupport": "unverified",
        "assessedBy": "deterministic",
        "statementTextDigest": digests.statement_text_digest("Migrations failed."),
        "revision": 1,
    }


DRAFT_IDS = ("extract-x-c1", "extract-x-c2", "extract-x-c3")


def adjudication_task() -> dict[str, Any]:
    pool: list[dict[str, Any]] = [
        {
            "sourceKind": "approved",
            "id": "lock-timeout",
            "revision": 7,
            "contentDigest": H["t1"],
            "state": "approved",
            "summary": "Use a lock timeout",
        },
        {
            "sourceKind": "candidate",
            "id": "extract-old-c1",
            "revision": 2,
            "contentDigest": H["t2"],
            "state": "quarantined",
            "summary": "Lock timeouts",
        },
        {
            "sourceKind": "candidate",
            "id": DRAFT_IDS[1],
            "revision": 1,
            "contentDigest": H["p1"],
            "state": "draft",
            "summary": "Staging DB",
        },
    ]
    drafts = [{**draft(f"draft {i}"), "candidateId": cid} for i, cid in enumerate(DRAFT_IDS)]
    recall_sets: list[dict[str, Any]] = [
        {
            "draftRef": DRAFT_IDS[0],
            "ordered": [
                {"rank": 1, "sourceKind": "approved", "id": "lock-timeout"},
                {"rank": 2, "sourceKind": "candidate", "id": "extract-old-c1"},
                {"rank": 3, "sourceKind": "candidate", "id": DRAFT_IDS[1]},
            ],
        },
        {"draftRef": DRAFT_IDS[1], "ordered": []},
        {
            "draftRef": DRAFT_IDS[2],
            "ordered": [{"rank": 1, "sourceKind": "candidate", "id": DRAFT_IDS[1]}],
        },
    ]
    binding = {
        "databaseUuid": DB_UUID,
        "memoryStateUuid": DB_UUID,
        "owner": dict(OWNER),
        "draftBatchDigest": digests.draft_batch_digest(drafts),
        "approvedProjection": {"generation": 3, "analyzerVersion": "teamlore-analyzer@1"},
        "candidateProjection": {"generation": 9, "analyzerVersion": "teamlore-analyzer@1"},
        "recallAlgorithmVersion": "recall-rrf@1",
        "recallQueryDigest": H["rd"],
        "resultSetDigest": digests.recall_result_set_digest(recall_sets, pool),
        "poolItemRevisions": [
            {"sourceKind": p["sourceKind"], "id": p["id"], "revision": p["revision"]} for p in pool
        ],
        "promptVersion": "memory-adjudication@2",
        "schemaVersion": "threadshare-memory-adjudication-result@v1",
    }
    return {
        "format": "threadshare-memory-adjudication-task@v1",
        "taskId": "adjudicate-agent-" + H["sb"],
        "lease": {"holder": "teamlore-cli", "expiresAt": 0},
        "binding": binding,
        "drafts": drafts,
        "recallSets": recall_sets,
        "pool": pool,
        "contract": {
            "resultSchema": "threadshare-memory-adjudication-result@v1",
            "prompts": {"promptVersion": "memory-adjudication@2", "adjudication": "Decide ..."},
        },
    }


def adjudication_result() -> dict[str, Any]:
    task = adjudication_task()
    return {
        "format": "threadshare-memory-adjudication-result@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "adjudications": [
            {
                "draftRef": DRAFT_IDS[0],
                "action": "update",
                "targetIds": ["extract-old-c1"],
                "mergedFields": {"content": "Always set a lock timeout.", "scene": None},
            },
            {"draftRef": DRAFT_IDS[1], "action": "store", "targetIds": [], "mergedFields": None},
            {
                "draftRef": DRAFT_IDS[2],
                "action": "skip",
                "targetIds": [DRAFT_IDS[1], "lock-timeout"],
                "mergedFields": None,
            },
        ],
    }


def search_request() -> dict[str, Any]:
    return {"format": "threadshare-memory-search-request@v1", "query": "lock timeout", "limit": 10}


def prepare_request() -> dict[str, Any]:
    return {
        "format": "threadshare-memory-prepare-request@v1",
        "kind": "entry",
        "candidates": [
            {
                "candidateId": "extract-x-c1",
                "expectedRevision": 2,
                "statements": [
                    {
                        "statementId": "s1",
                        "statementTextDigest": H["t1"],
                        "citationsDigest": H["t2"],
                    }
                ],
            }
        ],
    }


def promotion_plan(with_digest: bool = True) -> dict[str, Any]:
    plan: dict[str, Any] = {
        "format": "threadshare-memory-promotion-plan@v1",
        "planId": "0b6a2f4e-8c1d-4e2f-9a3b-5c6d7e8f9a0b",
        "planDigest": None,
        "owner": repository_binding(),
        "candidateIds": ["extract-x-c1", "extract-x-c2"],
        "candidateRevisions": [
            {"candidateId": "extract-x-c1", "revision": 2},
            {"candidateId": "extract-x-c2", "revision": 1},
        ],
        "assessmentDigest": H["t1"],
        "perFile": [
            {
                "targetPath": ".threadshare/memory/entries/lock-timeout.md",
                "targetBlobHash": None,
                "sanitizedContentDigest": H["p1"],
                "operation": "write",
            },
            {
                "targetPath": ".threadshare/memory/scenes/old.md",
                "targetBlobHash": "b" * 40,
                "sanitizedContentDigest": None,
                "operation": "delete",
            },
        ],
        "policyVersion": "sanitize@1",
        "diff": "+++ .threadshare/memory/entries/lock-timeout.md\n+Use a lock timeout.\n",
    }
    if with_digest:
        plan["planDigest"] = digests.plan_digest(plan)
    return plan


def skill_candidate() -> dict[str, Any]:
    batch = draft_batch()
    return {
        "format": "threadshare-memory-skill-candidate@v1",
        "taskId": batch["taskId"],
        "binding": batch["binding"],
        "memoryContextDigest": H["sb"],
        "skill": {
            "name": "safe-migrations",
            "description": "Run schema migrations without locking production tables.",
            "body": "# Safe migrations\n\n1. Set a lock timeout.\n",
            "action": "update",
            "expectedContentDigest": H["t2"],
        },
        "statements": [
            {"statementId": "s1", "text": "Lock timeouts helped.", "evidenceIds": ["ev-1-abc"]}
        ],
    }


def consolidation_binding() -> dict[str, Any]:
    entry_revisions = [
        {"entryId": "db-lock-timeout", "revision": 3, "contentDigest": H["t1"]},
        {"entryId": "staging-db", "revision": 1, "contentDigest": H["t2"]},
    ]
    scene_revisions = [{"name": "databases", "contentDigest": H["p1"], "heat": 4}]
    return {
        "databaseUuid": DB_UUID,
        "memoryStateUuid": DB_UUID,
        "owner": dict(OWNER),
        "approvedProjection": {
            "generation": 5,
            "analyzerVersion": "memory-approved@1",
            "coverage": "complete",
            "sourceTreeDigest": H["rs"],
        },
        "entrySetDigest": digests.entry_set_digest(entry_revisions),
        "entryRevisions": entry_revisions,
        "sceneIndexDigest": digests.scene_index_digest(scene_revisions),
        "sceneRevisions": scene_revisions,
        "doctrineDigest": H["db"],
        "replay": {"mode": "incremental", "afterSuccessfulRunId": "run-consolidate-1"},
        "promptVersion": "memory-consolidation@3",
        "schemaVersion": "threadshare-memory-consolidation-task@v1",
        "policyVersion": "consolidation-policy@1",
    }


def consolidation_task() -> dict[str, Any]:
    binding = consolidation_binding()
    return {
        "format": "threadshare-memory-consolidation-task@v1",
        "taskId": "consolidate-" + H["sb"],
        "lease": {"holder": "teamlore-cli", "expiresAt": 0},
        "binding": binding,
        "bindingDigest": digest(binding),
        "entries": [
            {
                "entryId": "staging-db",
                "revision": 1,
                "contentDigest": H["t2"],
                "type": "work_fact",
                "scene": "databases",
                "priority": 40,
                "confidence": "medium",
                "body": "Load tests use the staging DB.",
            }
        ],
        # the entries the last consolidation rested on that are no longer approved
        "leftEntries": [
            {"entryId": "old-staging-db", "status": "deprecated", "supersededBy": "staging-db"}
        ],
        "scenes": [
            {"name": "databases", "contentDigest": H["p1"], "heat": 4, "content": "# Databases"}
        ],
        "doctrine": {"contentDigest": H["db"], "content": "Prefer small migrations."},
        "policy": {
            "maxScenes": 15,
            "mergePreferredAt": 12,
            "createForbiddenAt": 14,
            "dueEntryCount": 20,
            "heatAlgorithm": "scene-heat@1",
        },
        "contract": {
            "patchSchema": "threadshare-memory-consolidation-patch@v1",
            "prompts": {"promptVersion": "memory-consolidation@3", "consolidation": "Merge ..."},
        },
    }


def consolidation_patch() -> dict[str, Any]:
    return {
        "format": "threadshare-memory-consolidation-patch@v1",
        "taskId": "consolidate-" + H["sb"],
        "binding": consolidation_binding(),
        "operations": [
            {
                "operationId": "op-1",
                "op": "update",
                "target": "scene",
                "name": "databases",
                "newContent": "# Databases\n\nLoad tests use staging.",
                "basedOnEntryIds": ["staging-db"],
                "mergeSources": [],
                "rationale": "Adds the staging rule.",
            },
            {
                "operationId": "op-2",
                "op": "merge",
                "target": "scene",
                "name": "infra",
                "newContent": "# Infra",
                "basedOnEntryIds": ["db-lock-timeout"],
                "mergeSources": ["ci", "deploys"],
                "rationale": "Two small scenes.",
            },
        ],
    }


def consolidation_patch_by_digest() -> dict[str, Any]:
    """The same patch echoing the task's bindingDigest instead of its binding."""
    patch = consolidation_patch()
    patch["bindingDigest"] = digest(patch.pop("binding"))
    return patch


def runner_execution_plan(with_digest: bool = True) -> dict[str, Any]:
    plan: dict[str, Any] = {
        "format": "threadshare-memory-runner-execution-plan@v1",
        "planDigest": None,
        "taskKind": "extraction",
        "taskId": "extract-" + H["sb"],
        "runnerInputDigest": digests.runner_input_digest(b"{}"),
        "inputCoverageDigest": H["t1"],
        "inputCoverage": [
            {
                "sourceKind": "transcript",
                "opaqueSourceId": "chunk-1",
                "revision": None,
                "contentDigest": H["t2"],
                "bytes": 4096,
                "truncated": False,
            }
        ],
        "runnerProfile": "claude-restricted",
        "provider": "anthropic",
        "model": "claude-sonnet",
        "endpoint": "claude-cli",
        "bytesToSend": 4096,
        "localSessionPersistence": "none",
        "providerRetention": "unknown",
        "authorization": "pending",
    }
    if with_digest:
        plan["planDigest"] = digests.plan_digest(plan)
    return plan


def runner_execution_plan_v2(with_digest: bool = True) -> dict[str, Any]:
    """A consolidation plan: it discloses an approved entry, a scene and the doctrine."""
    plan = runner_execution_plan(with_digest=False)
    plan["format"] = "threadshare-memory-runner-execution-plan@v2"
    plan["taskKind"] = "consolidation"
    plan["inputCoverage"] = [
        {**plan["inputCoverage"][0], "sourceKind": kind, "opaqueSourceId": name}
        for kind, name in (("approved-entry", "lock-timeout"), ("scene", "release"),
                           ("doctrine", "doctrine"), ("prompt", "runner-input"))
    ]  # fmt: skip
    if with_digest:
        plan["planDigest"] = digests.plan_digest(plan)
    return plan


def restricted_extraction_runner() -> dict[str, Any]:
    return {
        "format": "threadshare-memory-restricted-extraction-runner@v1",
        "adapter": "claude-cli",
        "version": "2.1.222 (Claude Code)",
        "argvTemplate": ["claude", "-p", "--tools", "", "--no-session-persistence"],
        "toolPolicy": "none",
        "network": "model-only",
        "ephemeral": "required",
        "timeoutMs": 600_000,
        "maxOutputBytes": 4_194_304,
        "conformance": {
            "testVersion": "conformance-test@1",
            "passedAt": "2026-08-21T10:00:00.000Z",
            "cliVersionFingerprint": H["t1"],
        },
    }


def authorization_manifest(with_digest: bool = True) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "format": "threadshare-memory-authorization-manifest@v1",
        "manifestDigest": None,
        "plans": [
            {
                "planDigest": H["t1"],
                "taskKind": "extraction",
                "taskId": "extract-a",
                "bytesToSend": 10,
            },
            {
                "planDigest": H["t2"],
                "taskKind": "extraction",
                "taskId": "extract-b",
                "bytesToSend": 5,
            },
        ],
        "totalBytes": 15,
        "authorization": "pending",
    }
    if with_digest:
        manifest["manifestDigest"] = digests.manifest_digest(manifest)
    return manifest
