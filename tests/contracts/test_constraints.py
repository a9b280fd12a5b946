"""Each contract constraint, one failing example: the error names the field at fault.

A case is (contract, example builder, edit, text the error must contain). Edits address the wire
document with dotted paths (`chunk.coverage.0.bytes`); the example is valid before the edit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import contract_examples as ex
import pytest
from pydantic import ValidationError

from teamlore.contracts import (
    AuthorizationManifest,
    CandidateDraftBatch,
    ConsolidationPatch,
    ConsolidationTask,
    EvidenceAssessment,
    ExtractionTask,
    MemoryExtractionRequest,
    MemorySearchRequest,
    PrepareRequest,
    PromotionPlan,
    RepositoryBinding,
    RunnerExecutionPlan,
    SkillCandidate,
)
from teamlore.contracts._base import ContractModel
from teamlore.contracts.adjudication import AdjudicationTask

DELETE = object()
Edit = Callable[[dict[str, Any]], None]


def at(path: str, value: Any) -> Edit:
    """Set (or delete, with DELETE) the value at a dotted path of the document."""

    def edit(document: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = document
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        key: Any = int(last) if isinstance(node, list) else last
        if value is DELETE:
            del node[key]
        else:
            node[key] = value

    return edit


def both(*edits: Edit) -> Edit:
    def edit(document: dict[str, Any]) -> None:
        for one in edits:
            one(document)

    return edit


H64 = "a" * 64
Case = tuple[type[ContractModel], Callable[[], dict[str, Any]], Edit, str]

REPOSITORY: list[Case] = [
    (RepositoryBinding, ex.repository_binding, at("format", "repository-binding@v1"), "format"),
    (RepositoryBinding, ex.repository_binding, at("repositoryKey", "A" * 64), "repositoryKey"),
    (RepositoryBinding, ex.repository_binding, at("worktreeKey", "a" * 63), "worktreeKey"),
    (
        RepositoryBinding,
        ex.repository_binding,
        at("publicRepositoryIdentity", "git@github.com:acme/widgets"),
        "publicRepositoryIdentity",
    ),
    (
        RepositoryBinding,
        ex.repository_binding,
        at("publicRepositoryIdentity", "/home/me/widgets"),
        "publicRepositoryIdentity",
    ),
    (
        RepositoryBinding,
        ex.repository_binding,
        at("commonDirectoryIdentity.device", 2049),
        "device",
    ),
    (RepositoryBinding, ex.repository_binding, at("commonDirectoryIdentity.inode", "007"), "inode"),
    (
        RepositoryBinding,
        ex.repository_binding,
        at("memoryRoot", "/srv/x/.threadshare"),
        "memoryRoot",
    ),
    (RepositoryBinding, ex.repository_binding, at("rootRealpath", "/srv/x"), "rootRealpath"),
]

REQUEST: list[Case] = [
    (MemoryExtractionRequest, ex.extraction_request, at("window", DELETE), "window"),
    (
        MemoryExtractionRequest,
        ex.extraction_request,
        at("window.after", "2025-01-01T00:00:00Z"),
        "after",
    ),
    (
        MemoryExtractionRequest,
        ex.extraction_request,
        at("window.after", "2025-02-30T00:00:00.000Z"),
        "after",
    ),
    (
        MemoryExtractionRequest,
        ex.extraction_request,
        at("window.before", "2025-01-01T00:00:00.000Z"),
        "window.after must be earlier",
    ),
    (
        MemoryExtractionRequest,
        ex.extraction_request,
        at("window.before", "2026-01-03T00:00:00.000Z"),
        "366 days",
    ),
    (MemoryExtractionRequest, ex.extraction_request, at("query", "q" * 8193), "query"),
    (MemoryExtractionRequest, ex.extraction_request, at("query", "迁" * 3000), "UTF-8 bytes"),
    (MemoryExtractionRequest, ex.extraction_request, at("query", None), "query"),
    (MemoryExtractionRequest, ex.extraction_request, at("filters", None), "filters"),
    (
        MemoryExtractionRequest,
        ex.extraction_request,
        at("filters.providers", ["codex", "codex"]),
        "providers",
    ),
    (MemoryExtractionRequest, ex.extraction_request, at("filters.providers", ["x"]), "providers"),
    (
        MemoryExtractionRequest,
        ex.extraction_request,
        at("filters.sessionKeys", [f"{i:064x}" for i in range(65)]),
        "sessionKeys",
    ),
    (
        MemoryExtractionRequest,
        ex.extraction_request,
        at("filters.toolCapabilityKeys", ["nothex"]),
        "toolCapabilityKeys",
    ),
    (
        MemoryExtractionRequest,
        ex.extraction_request,
        at("filters.resultEvidence", ["unknown"] * 4),
        "resultEvidence",
    ),
    (
        MemoryExtractionRequest,
        ex.extraction_request,
        at("filters.capabilityTerminalStates", ["failed"]),
        "capabilityTerminalStates",
    ),
    (MemoryExtractionRequest, ex.extraction_request, at("projectKeys", [H64]), "projectKeys"),
    (MemoryExtractionRequest, ex.extraction_request, at("owner", {}), "owner"),
]

TASK: list[Case] = [
    (ExtractionTask, ex.extraction_task, at("taskId", "extract-" + "0" * 64), "taskId"),
    (ExtractionTask, ex.extraction_task, at("lease.holder", ""), "holder"),
    (ExtractionTask, ex.extraction_task, at("lease.expiresAt", -1), "expiresAt"),
    (ExtractionTask, ex.extraction_task, at("lease.expiresAt", 1.5), "expiresAt"),
    (
        ExtractionTask,
        ex.extraction_task,
        lambda d: d["binding"]["payloadDigests"].reverse(),
        "payloadDigests",
    ),
    (
        ExtractionTask,
        ex.extraction_task,
        at("binding.deliveryEdgeRevisions", [H64, H64]),
        "deliveryEdgeRevisions",
    ),
    (ExtractionTask, ex.extraction_task, at("binding.turnRevisions", [1]), "turnRevisions"),
    (ExtractionTask, ex.extraction_task, at("binding.provenance.snapshotSeq", "01"), "snapshotSeq"),
    (ExtractionTask, ex.extraction_task, at("binding.provenance.snapshotSeq", 7), "snapshotSeq"),
    (ExtractionTask, ex.extraction_task, at("binding.schemaVersion", "x@v2"), "schemaVersion"),
    (ExtractionTask, ex.extraction_task, at("binding.owner.worktreeKey", "x"), "worktreeKey"),
    (ExtractionTask, ex.extraction_task, at("evidenceCatalog.0.kind", "file"), "kind"),
    (
        ExtractionTask,
        ex.extraction_task,
        at("evidenceCatalog.0.pointerDigest", H64),
        "evidenceId",
    ),
    (ExtractionTask, ex.extraction_task, at("evidenceCatalog.0.evidenceId", "e1"), "evidenceId"),
    (ExtractionTask, ex.extraction_task, at("chunk.turnRange.start", 5), "turnRange"),
    (
        ExtractionTask,
        ex.extraction_task,
        at("chunk.coverage.0.completeness", "partial"),
        "completeness",
    ),
    (
        ExtractionTask,
        ex.extraction_task,
        at("chunk.coverage.0.sourceKind", "payload"),
        "sourceKind",
    ),
    (ExtractionTask, ex.extraction_task, at("chunk.turnEvidence", None), "turnEvidence"),
    (
        ExtractionTask,
        ex.extraction_task,
        at("chunk.turnEvidence.0.evidenceId", "ev-9-" + "0" * 12),
        "turnEvidence",
    ),
    (ExtractionTask, ex.extraction_task, at("chunk.transcript", "tampered"), "sourceInputDigest"),
    (ExtractionTask, ex.extraction_task, at("session.repositoryKey", "k"), "repositoryKey"),
    (ExtractionTask, ex.extraction_task, at("contract.draftSchema", "x@v1"), "draftSchema"),
    (
        ExtractionTask,
        ex.extraction_task,
        at("contract.prompts.promptVersion", "memory-prompts@3"),
        "promptVersion",
    ),
]

BATCH: list[Case] = [
    (
        CandidateDraftBatch,
        ex.draft_batch,
        lambda d: d.update(candidates=[ex.draft()] * 9),
        "candidates",
    ),
    (CandidateDraftBatch, ex.draft_batch, at("candidates.0.priority", 101), "priority"),
    (CandidateDraftBatch, ex.draft_batch, at("candidates.0.priority", True), "priority"),
    (CandidateDraftBatch, ex.draft_batch, at("candidates.0.type", "fact"), "type"),
    (CandidateDraftBatch, ex.draft_batch, at("candidates.0.confidence", "sure"), "confidence"),
    (CandidateDraftBatch, ex.draft_batch, at("candidates.0.scene", ""), "scene"),
    (CandidateDraftBatch, ex.draft_batch, at("candidates.0.scene", "s" * 201), "scene"),
    (CandidateDraftBatch, ex.draft_batch, at("candidates.0.content", ""), "content"),
    (
        CandidateDraftBatch,
        ex.draft_batch,
        at("candidates.0.statements.0.statementId", "-s1"),
        "statementId",
    ),
    (CandidateDraftBatch, ex.draft_batch, at("candidates.0.statements.0.text", ""), "text"),
    (
        CandidateDraftBatch,
        ex.draft_batch,
        at("candidates.0.statements.0.evidenceIds", ["bad id"]),
        "evidenceIds",
    ),
    (CandidateDraftBatch, ex.draft_batch, at("binding", DELETE), "binding"),
    (
        CandidateDraftBatch,
        ex.draft_batch,
        at("binding.sourceInputDigest", "x"),
        "sourceInputDigest",
    ),
]

ASSESSMENT: list[Case] = [
    (
        EvidenceAssessment,
        ex.evidence_assessment,
        lambda d: d["citations"].reverse(),
        "citations evidenceId must be sorted",
    ),
    (
        EvidenceAssessment,
        ex.evidence_assessment,
        lambda d: d["citations"].append(dict(d["citations"][-1])),
        "citations evidenceId",
    ),
    (
        EvidenceAssessment,
        ex.evidence_assessment,
        lambda d: d["limitations"].reverse(),
        "limitations",
    ),
    (EvidenceAssessment, ex.evidence_assessment, at("limitations", ["Not Ok"]), "limitations"),
    (
        EvidenceAssessment,
        ex.evidence_assessment,
        at("claimSupport", "human-confirmed"),
        "claimSupport",
    ),
    (EvidenceAssessment, ex.evidence_assessment, at("assessedBy", "human"), "claimSupport"),
    (EvidenceAssessment, ex.evidence_assessment, at("revision", 0), "revision"),
    (
        EvidenceAssessment,
        ex.evidence_assessment,
        at("provenanceStrength", "strong"),
        "provenanceStrength",
    ),
    (EvidenceAssessment, ex.evidence_assessment, at("citations", []), "provenanceStrength"),
    (
        EvidenceAssessment,
        ex.evidence_assessment,
        at("statementTextDigest", "x"),
        "statementTextDigest",
    ),
]

ADJUDICATION_TASK: list[Case] = [
    (
        AdjudicationTask,
        ex.adjudication_task,
        lambda d: d.update(drafts=d["drafts"] * 22),
        "drafts",
    ),
    (
        AdjudicationTask,
        ex.adjudication_task,
        at("drafts.1.candidateId", ex.DRAFT_IDS[0]),
        "candidateId",
    ),
    (AdjudicationTask, ex.adjudication_task, lambda d: d["recallSets"].pop(), "recallSets"),
    (AdjudicationTask, ex.adjudication_task, at("recallSets.0.ordered.0.id", "nope"), "pool"),
    (AdjudicationTask, ex.adjudication_task, at("recallSets.0.ordered.0.rank", 2), "ranks"),
    (AdjudicationTask, ex.adjudication_task, lambda d: d["pool"].reverse(), "pool"),
    (AdjudicationTask, ex.adjudication_task, at("pool.0.revision", 99), "poolItemRevisions"),
    (AdjudicationTask, ex.adjudication_task, at("pool.0.summary", "s" * 241), "summary"),
    (AdjudicationTask, ex.adjudication_task, at("pool.0.sourceKind", "entry"), "sourceKind"),
    (
        AdjudicationTask,
        ex.adjudication_task,
        at("binding.schemaVersion", "threadshare-memory-adjudication-task@v1"),
        "schemaVersion",
    ),
    (
        AdjudicationTask,
        ex.adjudication_task,
        # not the binding's (@2), nor any version there is
        at("contract.prompts.promptVersion", "memory-adjudication@9"),
        "promptVersion",
    ),
]

SEARCH: list[Case] = [
    (MemorySearchRequest, ex.search_request, at("query", ""), "query"),
    (MemorySearchRequest, ex.search_request, at("query", "q" * 1025), "query"),
    (MemorySearchRequest, ex.search_request, at("limit", 0), "limit"),
    (MemorySearchRequest, ex.search_request, at("limit", 101), "limit"),
    (MemorySearchRequest, ex.search_request, at("limit", None), "limit"),
    (MemorySearchRequest, ex.search_request, at("format", "x@v1"), "format"),
]

PREPARE: list[Case] = [
    (PrepareRequest, ex.prepare_request, at("candidates", []), "candidates"),
    (
        PrepareRequest,
        ex.prepare_request,
        lambda d: d.update(candidates=d["candidates"] * 2),
        "candidateId",
    ),
    (
        PrepareRequest,
        ex.prepare_request,
        lambda d: d.update(
            candidates=[{**d["candidates"][0], "candidateId": f"c{i}"} for i in range(51)]
        ),
        "candidates",
    ),
    (PrepareRequest, ex.prepare_request, at("candidates.0.statements", []), "statements"),
    (
        PrepareRequest,
        ex.prepare_request,
        lambda d: d["candidates"][0]["statements"].append(d["candidates"][0]["statements"][0]),
        "statementId",
    ),
    (
        PrepareRequest,
        ex.prepare_request,
        at("candidates.0.expectedRevision", 0),
        "expectedRevision",
    ),
    (PrepareRequest, ex.prepare_request, at("kind", "patch"), "kind"),
    (
        PrepareRequest,
        ex.prepare_request,
        at("candidates.0.statements.0.citationsDigest", "x"),
        "citationsDigest",
    ),
]

PLAN: list[Case] = [
    (
        PromotionPlan,
        ex.promotion_plan,
        at("planId", "0b6a2f4e-8c1d-1e2f-9a3b-5c6d7e8f9a0b"),
        "planId",
    ),
    (PromotionPlan, ex.promotion_plan, at("diff", "tampered"), "planDigest"),
    (PromotionPlan, ex.promotion_plan, at("owner.memoryRoot", "x"), "memoryRoot"),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile.0.sanitizedContentDigest", None),
        "sanitizedContentDigest",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile.1.targetBlobHash", None),
        "targetBlobHash",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile.1.sanitizedContentDigest", H64),
        "sanitizedContentDigest",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile.1.targetBlobHash", H64),
        "targetBlobHash",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile.0.operation", "rename"),
        "operation",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile.0.targetPath", ".threadshare/memory/../secrets.md"),
        "targetPath",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile.0.targetPath", "/.threadshare/memory/x.md"),
        "targetPath",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile.0.targetPath", ".threadshare/memory"),
        "targetPath",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile.0.targetPath", "src/app.py"),
        "targetPath",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile.0.targetPath", ".threadshare/memory/a\\b.md"),
        "targetPath",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile.0.targetPath", ".threadshare/memory/" + "a" * 1100),
        "targetPath",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile.1.targetPath", ".threadshare/memory/entries/lock-timeout.md"),
        "targetPath",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("perFile", []),
        "perFile",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("candidateIds", ["extract-x-c1", "extract-x-c1"]),
        "candidateIds",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("candidateRevisions.1.candidateId", "extract-x-c9"),
        "candidateRevisions",
    ),
    (
        PromotionPlan,
        lambda: ex.promotion_plan(with_digest=False),
        at("assessmentDigest", None),
        "assessmentDigest",
    ),
]

SKILL: list[Case] = [
    (SkillCandidate, ex.skill_candidate, at("skill.name", "Safe_Migrations"), "name"),
    (SkillCandidate, ex.skill_candidate, at("skill.name", "s" * 65), "name"),
    (SkillCandidate, ex.skill_candidate, at("skill.description", "a <b> c"), "description"),
    (SkillCandidate, ex.skill_candidate, at("skill.description", "a\nb"), "description"),
    (SkillCandidate, ex.skill_candidate, at("skill.description", "d" * 1025), "description"),
    (SkillCandidate, ex.skill_candidate, at("skill.body", ""), "body"),
    (SkillCandidate, ex.skill_candidate, at("skill.body", "技" * 22000), "UTF-8 bytes"),
    (SkillCandidate, ex.skill_candidate, at("skill.action", "create"), "expectedContentDigest"),
    (
        SkillCandidate,
        ex.skill_candidate,
        at("skill.expectedContentDigest", None),
        "expectedContentDigest",
    ),
    (SkillCandidate, ex.skill_candidate, at("statements", []), "statements"),
    (SkillCandidate, ex.skill_candidate, at("statements.0.evidenceIds", []), "evidenceIds"),
    (
        SkillCandidate,
        ex.skill_candidate,
        at("statements.0.evidenceIds", ["ev-1", "ev-1"]),
        "evidenceIds",
    ),
    (
        SkillCandidate,
        ex.skill_candidate,
        lambda d: d["statements"].append(d["statements"][0]),
        "statementId",
    ),
    (SkillCandidate, ex.skill_candidate, at("memoryContextDigest", None), "memoryContextDigest"),
]

CONSOLIDATION: list[Case] = [
    (ConsolidationTask, ex.consolidation_task, at("binding.entrySetDigest", H64), "entrySetDigest"),
    (
        ConsolidationTask,
        ex.consolidation_task,
        at("binding.sceneIndexDigest", H64),
        "sceneIndexDigest",
    ),
    (
        ConsolidationTask,
        ex.consolidation_task,
        lambda d: d["binding"]["entryRevisions"].reverse(),
        "sorted",
    ),
    (ConsolidationTask, ex.consolidation_task, at("scenes.0.heat", 5), "sceneRevisions"),
    (ConsolidationTask, ex.consolidation_task, at("scenes.0.heat", 0), "heat"),
    (ConsolidationTask, ex.consolidation_task, at("doctrine", None), "doctrineDigest"),
    (ConsolidationTask, ex.consolidation_task, at("entries.0.revision", 2), "entryRevisions"),
    (ConsolidationTask, ex.consolidation_task, at("policy.maxScenes", 16), "maxScenes"),
    (
        ConsolidationTask,
        ex.consolidation_task,
        at("binding.approvedProjection.coverage", "partial"),
        "coverage",
    ),
    (ConsolidationTask, ex.consolidation_task, at("binding.replay.mode", "some"), "mode"),
    (ConsolidationTask, ex.consolidation_task, at("scenes.0.name", "Databases"), "name"),
    (ConsolidationPatch, ex.consolidation_patch, at("operations.0.op", "delete"), "newContent"),
    (
        ConsolidationPatch,
        ex.consolidation_patch,
        at("operations.0.basedOnEntryIds", []),
        "basedOnEntryIds",
    ),
    (
        ConsolidationPatch,
        ex.consolidation_patch,
        at("operations.0.basedOnEntryIds", ["a", "a"]),
        "basedOnEntryIds",
    ),
    (ConsolidationPatch, ex.consolidation_patch, at("operations.0.target", "doctrine"), "doctrine"),
    (
        ConsolidationPatch,
        ex.consolidation_patch,
        at("operations.1.mergeSources", ["ci"]),
        "merge",
    ),
    (
        ConsolidationPatch,
        ex.consolidation_patch,
        at("operations.0.mergeSources", ["ci", "x"]),
        "mergeSources",
    ),
    (
        ConsolidationPatch,
        ex.consolidation_patch,
        at("operations.1.operationId", "op-1"),
        "operationId",
    ),
    (
        ConsolidationPatch,
        ex.consolidation_patch,
        at("operations.1.name", "databases"),
        "conflicting",
    ),
    (ConsolidationPatch, ex.consolidation_patch, at("operations.0.rationale", None), "rationale"),
    (ConsolidationPatch, ex.consolidation_patch, at("operations.0.name", "-x-"), "name"),
    (ConsolidationTask, ex.consolidation_task, at("bindingDigest", H64), "bindingDigest"),
    # exactly one of binding and bindingDigest
    (ConsolidationPatch, ex.consolidation_patch, at("bindingDigest", H64), "bindingDigest"),
    (ConsolidationPatch, ex.consolidation_patch, at("binding", DELETE), "bindingDigest"),
    (ConsolidationPatch, ex.consolidation_patch, at("binding", None), "binding"),
]

RUNNER: list[Case] = [
    (RunnerExecutionPlan, ex.runner_execution_plan, at("model", "other"), "planDigest"),
    (
        RunnerExecutionPlan,
        ex.runner_execution_plan,
        at("localSessionPersistence", "disk"),
        "localSessionPersistence",
    ),
    (
        RunnerExecutionPlan,
        ex.runner_execution_plan,
        at("inputCoverage.0.sourceKind", "file"),
        "sourceKind",
    ),
    (RunnerExecutionPlan, ex.runner_execution_plan, at("bytesToSend", -1), "bytesToSend"),
    (RunnerExecutionPlan, ex.runner_execution_plan, at("taskKind", "review"), "taskKind"),
    (RunnerExecutionPlan, ex.runner_execution_plan, at("authorization", "yes"), "authorization"),
    (AuthorizationManifest, ex.authorization_manifest, at("totalBytes", 16), "totalBytes"),
    (
        AuthorizationManifest,
        lambda: ex.authorization_manifest(with_digest=False),
        at("plans.1.planDigest", ex.H["t1"]),
        "planDigest",
    ),
    (AuthorizationManifest, ex.authorization_manifest, at("plans", []), "plans"),
    (
        AuthorizationManifest,
        ex.authorization_manifest,
        at("plans.0.taskId", "e-z"),
        "manifestDigest",
    ),
]

CASES = (
    REPOSITORY
    + REQUEST
    + TASK
    + BATCH
    + ASSESSMENT
    + ADJUDICATION_TASK
    + SEARCH
    + PREPARE
    + PLAN
    + SKILL
    + CONSOLIDATION
    + RUNNER
)


@pytest.mark.parametrize(
    ("model", "build", "edit", "named"),
    CASES,
    ids=[f"{case[0].__name__}-{i}-{case[3]}" for i, case in enumerate(CASES)],
)
def test_constraint_violation_names_the_field(
    model: type[ContractModel], build: Callable[[], dict[str, Any]], edit: Edit, named: str
) -> None:
    document = build()
    model.from_wire(document)  # valid before the edit
    edit(document)
    with pytest.raises(ValidationError) as failure:
        model.from_wire(document)
    assert named in str(failure.value)
