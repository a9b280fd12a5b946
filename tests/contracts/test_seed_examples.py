"""The seeds' own examples, written from their text, against our published JSON Schemas
(docs/seed-conformance.md).

- Documents a client sends (MemoryExtractionRequest, CandidateDraftBatch, AdjudicationResult,
  ConsolidationPatch, SkillCandidate, the personal tools' arguments) must validate exactly as the
  seed writes them: a seed-conformant client's input is accepted.
- Documents teamlore writes (tasks, assessments, runner plans and profiles, the manifest,
  PromotionPlan) must validate too, or, where ours carries more, hold every field the seed names
  (a documented superset: PromotionPlan's planDigest and candidateRevisions).

Sources: seed 000 §9 (contract fields), seed 003 §5.5–§6.7 (the same contracts, Skill capture),
seed 004 §4.1–§4.6 (memory_init, memory_status, memory_read) and §9.2–§9.3 (imports).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from support import REPO_ROOT

SCHEMAS = REPO_ROOT / "schema"
TOOLS = json.loads((REPO_ROOT / "tests" / "mcp" / "tool_contracts.json").read_text())["tools"]

H = {name: (name * 64)[:64] for name in "abcdef"}  # hex64 placeholders
OWNER = {"repositoryKey": H["a"], "worktreeKey": H["b"]}
EXTRACTION_BINDING = {
    "databaseUuid": "db-7f3a",
    "owner": OWNER,
    "sourceInputDigest": H["c"],
    "selection": {
        "requestDigest": H["d"],
        "resultSetDigest": H["e"],
        "sourceBindingDigest": H["f"],
    },
    "turnRevisions": [H["a"], H["b"]],
    "payloadDigests": [H["c"]],
    "deliveryEdgeRevisions": [H["d"]],
    "promptVersion": "memory-prompts@2",
    "schemaVersion": "threadshare-memory-candidate-draft-batch@v1",
    "chunkerVersion": "memory-chunker@1",
    "provenance": {
        "snapshotSeq": "18446744073709551615",
        "evaluatedAt": "2026-08-21T10:00:00.000Z",
    },
}
ADJUDICATION_BINDING = {
    "databaseUuid": "db-7f3a",
    "memoryStateUuid": "ms-91c2",
    "owner": OWNER,
    "draftBatchDigest": H["a"],
    "approvedProjection": {"generation": 4, "analyzerVersion": "teamlore-analyzer@1"},
    "candidateProjection": {"generation": 9, "analyzerVersion": "teamlore-analyzer@1"},
    "recallAlgorithmVersion": "recall-rrf@1",
    "recallQueryDigest": H["b"],
    "resultSetDigest": H["c"],
    "poolItemRevisions": [
        {"sourceKind": "approved", "id": "auth-module-do-not-refactor", "revision": 3}
    ],
    "promptVersion": "memory-adjudication@2",
    "schemaVersion": "threadshare-memory-adjudication-result@v1",
}
CONSOLIDATION_BINDING: dict[str, Any] = {}  # filled from our schema's example below (host-issued)

# --- what a seed-conformant client sends -----------------------------------------------------

SENT: dict[str, dict[str, Any]] = {
    # 000 §9 / 003 §5.6 MemoryExtractionRequest@v1, every filter the seed names
    "extraction-request": {
        "format": "threadshare-memory-extraction-request@v1",
        "window": {"after": "2026-08-01T00:00:00.000Z", "before": "2026-08-21T00:00:00.000Z"},
        "query": "session middleware",
        "filters": {
            "providers": ["claude", "codex"],
            "sessionKeys": [H["a"]],
            "toolCapabilityKeys": [H["b"]],
            "skillCapabilityKeys": [H["c"]],
            "resultEvidence": ["provider-completed"],
            "capabilityTerminalStates": ["completed", "failed"],
        },
    },
    # 000 §9 CandidateDraftBatch@v1 (≤ 8 candidates, statements cite evidence ids only)
    "candidate-draft-batch": {
        "format": "threadshare-memory-candidate-draft-batch@v1",
        "taskId": "extract-" + H["c"],
        "binding": EXTRACTION_BINDING,
        "candidates": [
            {
                "content": "别重构旧鉴权模块的 session 中间件，"
                "移动端 v2.3 之前的客户端仍依赖其非标准 cookie 行为。",
                "type": "work_method",
                "priority": 85,
                "confidence": "high",
                "scene": "鉴权模块维护",
                "statements": [
                    {
                        "statementId": "s1",
                        "text": "移动端 v2.3 之前依赖非标准 cookie。",
                        "evidenceIds": ["ev-1-aaaaaaaaaaaa"],
                    }
                ],
            }
        ],
    },
    # 000 §9 AdjudicationResult@v1
    "adjudication-result": {
        "format": "threadshare-memory-adjudication-result@v1",
        "taskId": "adjudicate-agent-" + H["d"],
        "binding": ADJUDICATION_BINDING,
        "adjudications": [
            {"draftRef": "d1", "action": "store", "targetIds": [], "mergedFields": None},
            {
                "draftRef": "d2",
                "action": "merge",
                "targetIds": ["cand-1"],
                "mergedFields": {"content": "merged", "occurred": ["2026-08-12", "2026-08-18"]},
            },
        ],
    },
    # 003 §6.7 SkillCandidate@v1 as the seed describes it: a Skill (name, description, body)
    # with evidence-bound statements; create/update is decided against the current target
    "skill-candidate": {
        "format": "threadshare-memory-skill-candidate@v1",
        "taskId": "extract-" + H["c"],
        "binding": EXTRACTION_BINDING,
        "skill": {
            "name": "release-check",
            "description": "Check a release before tagging it.",
            "body": "1. Run the release tests.\n2. Tag with the v prefix.\n",
        },
        "statements": [
            {
                "statementId": "s1",
                "text": "Tags carry the v prefix.",
                "evidenceIds": ["ev-2-bbbbbbbbbbbb"],
            }
        ],
    },
}

# 000 §9 ConsolidationPatch@v1 operations: {op, target, name, newContent, basedOnEntryIds,
# mergeSources} (no operationId, no rationale)
SEED_OPERATIONS = [
    {
        "op": "update",
        "target": "scene",
        "name": "auth-maintenance",
        "newContent": "-----META-START-----\nsummary: 鉴权维护\n-----META-END-----\n正文\n",
        "basedOnEntryIds": ["auth-module-do-not-refactor"],
        "mergeSources": [],
    },
    {
        "op": "merge",
        "target": "scene",
        "name": "release",
        "newContent": "-----META-START-----\nsummary: release\n-----META-END-----\nbody\n",
        "basedOnEntryIds": ["tag-prefix"],
        "mergeSources": ["release", "tagging"],
    },
    {
        "op": "delete",
        "target": "scene",
        "name": "old-notes",
        "newContent": None,
        "basedOnEntryIds": [],
        "mergeSources": [],
    },
]

# 004 §4.1 / §4.3 / §4.4: the personal tools' arguments as the seed writes them
PERSONAL_CALLS = [
    (
        "memory_init",
        {
            "importId": "chatgpt-2026-09-07",
            "contextId": "global",
            "sourceLabel": "chatgpt-desktop",
            "basis": "saved_memories",
            "understanding": "The user is an ecology student who keeps a rescued tortoise.",
            "gaps": "No access to chat history before 2026.",
        },
    ),
    (
        "memory_init",
        {
            "importId": "x1",
            "contextId": "project:abc_123",
            "sourceLabel": "pi",
            "basis": "mixed",
            "understanding": "prefers fish",
        },
    ),
    ("memory_status", {"importId": "chatgpt-2026-09-07"}),
    ("memory_status", {}),
    ("memory_read", {"contextId": "global"}),
    ("memory_read", {}),
]


def schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        (SCHEMAS / f"threadshare-memory-{name}@v1.json").read_text()
    )
    return loaded


@pytest.mark.parametrize("name", sorted(SENT))
def test_what_a_seed_client_sends_validates_against_our_schema(name: str) -> None:
    jsonschema.validate(SENT[name], schema(name))


def test_a_seed_shaped_consolidation_patch_validates(tmp_path: Path) -> None:
    patch_schema = schema("consolidation-patch")
    operation = patch_schema["$defs"]["ConsolidationOperation"]
    for op in SEED_OPERATIONS:
        jsonschema.validate(op, {**operation, "$defs": patch_schema["$defs"]})
    assert set(operation["required"]) <= {
        "op",
        "target",
        "name",
        "newContent",
        "basedOnEntryIds",
        "mergeSources",
    }


@pytest.mark.parametrize(("tool", "arguments"), PERSONAL_CALLS)
def test_the_personal_tools_take_the_seeds_arguments(tool: str, arguments: dict[str, Any]) -> None:
    jsonschema.validate(arguments, TOOLS[tool]["inputSchema"])


# --- what teamlore writes: valid, or a documented superset of the seed's fields ----------------

WRITTEN: dict[str, dict[str, Any]] = {
    # 000 §9 RestrictedExtractionRunner@v1 (003 §5.6)
    "restricted-extraction-runner": {
        "format": "threadshare-memory-restricted-extraction-runner@v1",
        "adapter": "codex-cli",
        "version": "codex-cli 0.149.0",
        "argvTemplate": ["codex", "exec", "--ephemeral", "-"],
        "toolPolicy": "none",
        "network": "model-only",
        "ephemeral": "required",
        "timeoutMs": 600000,
        "maxOutputBytes": 4194304,
        "conformance": {
            "testVersion": "conformance-test@1",
            "passedAt": "2026-08-21T10:00:00.000Z",
            "cliVersionFingerprint": H["e"],
        },
    },
    # 000 §9 RunnerExecutionPlan@v1, every sourceKind of the seed's enum
    "runner-execution-plan": {
        "format": "threadshare-memory-runner-execution-plan@v1",
        "planDigest": None,
        "taskKind": "extraction",
        "taskId": "extract-" + H["c"],
        "runnerInputDigest": H["a"],
        "inputCoverageDigest": H["b"],
        "inputCoverage": [
            {
                "sourceKind": kind,
                "opaqueSourceId": f"src-{i}",
                "revision": None,
                "contentDigest": H["c"],
                "bytes": 100,
                "truncated": False,
            }
            for i, kind in enumerate(
                ["transcript", "draft", "candidate-pool", "scene-index", "prompt"]
            )
        ],
        "runnerProfile": "codex",
        "provider": "openai",
        "model": "gpt-5",
        "endpoint": "https://api.openai.com/v1",
        "bytesToSend": 500,
        "localSessionPersistence": "none",
        "providerRetention": "unknown",
        "authorization": "pending",
    },
    # 000 §9 AuthorizationManifest@v1
    "authorization-manifest": {
        "format": "threadshare-memory-authorization-manifest@v1",
        "manifestDigest": None,
        "plans": [
            {
                "planDigest": H["a"],
                "taskKind": "extraction",
                "taskId": "extract-" + H["c"],
                "bytesToSend": 500,
            }
        ],
        "totalBytes": 500,
        "authorization": "pending",
    },
    # 000 §9 EvidenceAssessment@v1
    "evidence-assessment": {
        "format": "threadshare-memory-evidence-assessment@v1",
        "candidateId": "extract-" + H["c"] + "-c1",
        "statementId": "s1",
        "citations": [{"evidenceId": "ev-1-aaaaaaaaaaaa", "pointerDigest": H["a"]}],
        "provenanceStrength": "observed",
        "limitations": ["not-authorship", "not-causality"],
        "claimSupport": "unverified",
        "assessedBy": "deterministic",
        "statementTextDigest": H["b"],
        "revision": 1,
    },
    # 000 §9 ExtractionTask@v1
    "extraction-task": {
        "format": "threadshare-memory-extraction-task@v1",
        "taskId": "extract-" + H["c"],
        "lease": {"holder": "threadshare-memory-cli", "expiresAt": 0},
        "binding": EXTRACTION_BINDING,
        "session": {
            "project": "github.com/team-harness/threadshare",
            "repositoryKey": H["a"],
            "timeWindow": {"start": "2026-08-01T00:00:00.000Z", "end": "2026-08-21T00:00:00.000Z"},
        },
        "evidenceCatalog": [
            {
                "evidenceId": "ev-1-aaaaaaaaaaaa",
                "kind": "commit",
                "pointerDigest": H["a"],
                "display": "7fd2f23a1b04c9e8d2f6a35b7c01d94e8f123456",
            }
        ],
        "chunk": {
            "turnRange": {"start": 0, "end": 2},
            "coverage": [
                {"sourceKind": "turn", "ref": "turn:0", "completeness": "full", "bytes": 10}
            ],
            "transcript": "<<past-user>>\nhi\n\n<<end-of-transcript>>",
        },
        "context": {"sceneIndexSummary": None},
        "contract": {
            "draftSchema": "threadshare-memory-candidate-draft-batch@v1",
            "prompts": {"promptVersion": "memory-prompts@2", "extraction": "Extract."},
        },
    },
    # 000 §9 AdjudicationTask@v1
    "adjudication-task": {
        "format": "threadshare-memory-adjudication-task@v1",
        "taskId": "adjudicate-agent-" + H["d"],
        "lease": {"holder": "threadshare-memory-cli", "expiresAt": 0},
        "binding": ADJUDICATION_BINDING,
        "drafts": [
            {
                "candidateId": "extract-" + H["c"] + "-c1",
                "content": "c",
                "type": "work_fact",
                "priority": 50,
                "confidence": "medium",
                "scene": None,
                "statements": [
                    {"statementId": "s1", "text": "t", "evidenceIds": ["ev-1-aaaaaaaaaaaa"]}
                ],
            }
        ],
        "recallSets": [
            {
                "draftRef": "extract-" + H["c"] + "-c1",
                "ordered": [
                    {"rank": 1, "sourceKind": "approved", "id": "auth-module-do-not-refactor"}
                ],
            }
        ],
        "pool": [
            {
                "sourceKind": "approved",
                "id": "auth-module-do-not-refactor",
                "revision": 3,
                "contentDigest": H["e"],
                "state": "approved",
                "summary": "别重构旧鉴权模块",
            }
        ],
        "contract": {
            "resultSchema": "threadshare-memory-adjudication-result@v1",
            "prompts": {"promptVersion": "memory-adjudication@2", "adjudication": "Decide."},
        },
    },
    # 000 §9 PromotionPlan@v1 (owner: RepositoryBinding@v1)
    "promotion-plan": {
        "format": "threadshare-memory-promotion-plan@v1",
        "planId": "0b5e0e1c-6d0a-4b8e-9f7a-2c1d3e4f5a6b",
        "owner": {
            "format": "threadshare-memory-repository-binding@v1",
            "repositoryKey": H["a"],
            "worktreeKey": H["b"],
            "publicRepositoryIdentity": "github.com/team-harness/threadshare",
            "rootRealpathDigest": H["c"],
            "commonDirectoryIdentity": {"device": "2049", "inode": "1311"},
            "memoryRoot": ".threadshare/memory",
        },
        "candidateIds": ["extract-" + H["c"] + "-c1"],
        "assessmentDigest": H["d"],
        "perFile": [
            {
                "targetPath": ".threadshare/memory/entries/auth-module-do-not-refactor.md",
                "targetBlobHash": None,
                "sanitizedContentDigest": H["e"],
            }
        ],
        "policyVersion": "memory-lint@1",
        "diff": "+别重构旧鉴权模块\n",
    },
}
# where ours carries more than the seed (docs/seed-conformance.md): the fields ours adds
SUPERSET = {"promotion-plan": {"planDigest", "candidateRevisions"}}


@pytest.mark.parametrize("name", sorted(WRITTEN))
def test_what_teamlore_writes_holds_every_field_the_seed_names(name: str) -> None:
    document, published = WRITTEN[name], schema(name)
    assert set(document) <= set(published["properties"]), name
    added = set(published["required"]) - set(document)
    assert added == SUPERSET.get(name, set()), name
    if not added:
        jsonschema.validate(document, published)


def test_our_extra_source_kinds_are_runner_execution_plan_v2_only() -> None:
    """The seed's v1 enum stays exact; approved-entry, scene and doctrine need @v2."""
    plan = json.loads(json.dumps(WRITTEN["runner-execution-plan"]))
    plan["inputCoverage"][0]["sourceKind"] = "scene"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(plan, schema("runner-execution-plan"))
    plan["format"] = "threadshare-memory-runner-execution-plan@v2"
    v2 = json.loads((SCHEMAS / "threadshare-memory-runner-execution-plan@v2.json").read_text())
    jsonschema.validate(plan, v2)
