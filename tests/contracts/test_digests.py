"""Digest helpers: what each covers, what each leaves out, and agreement with real tools."""

from __future__ import annotations

import hashlib
import subprocess
import unicodedata
from pathlib import Path

import contract_examples as ex

from teamlore.contracts import (
    EvidenceAssessment,
    MemoryExtractionRequest,
    PromotionPlan,
    RunnerExecutionPlan,
    digests,
)
from teamlore.contracts._base import Owner
from teamlore.core.canonical import canonical_json, digest

OWNER = Owner.from_wire(ex.OWNER)
OTHER_OWNER = Owner.from_wire({**ex.OWNER, "worktreeKey": "c" * 64})


def test_request_digest_hashes_the_normalized_request_and_the_owner_scope() -> None:
    plain = MemoryExtractionRequest.from_wire(
        {
            "format": "threadshare-memory-extraction-request@v1",
            "window": ex.extraction_request()["window"],
        }
    )
    spelled_out = MemoryExtractionRequest.from_wire(
        {**plain.to_wire(), "query": "", "filters": {"providers": [], "sessionKeys": []}}
    )
    assert digests.request_digest(plain, OWNER) == digests.request_digest(spelled_out, OWNER)
    assert digests.request_digest(plain, OWNER) == digest(
        {
            "request": plain.normalize().to_wire(),
            "scope": {"repositoryKey": OWNER.repository_key, "worktreeKey": OWNER.worktree_key},
        }
    )
    assert digests.request_digest(plain, OWNER) != digests.request_digest(plain, OTHER_OWNER)


def test_statement_text_digest_is_over_exact_bytes_not_normalized_text() -> None:
    decomposed = "Cafe\u0301 migrations"
    composed = unicodedata.normalize("NFC", decomposed)
    assert (
        digests.statement_text_digest(decomposed)
        == hashlib.sha256(decomposed.encode("utf-8")).hexdigest()
    )
    assert digests.statement_text_digest(decomposed) != digests.statement_text_digest(composed)


def test_citations_digest_sorts_and_deduplicates() -> None:
    a = {"evidenceId": "ev-1-aaaaaaaaaaaa", "pointerDigest": "a" * 64}
    b = {"evidenceId": "ev-2-bbbbbbbbbbbb", "pointerDigest": "b" * 64}
    assert digests.citations_digest([b, a, b]) == digest([a, b])
    assessment = EvidenceAssessment.from_wire(ex.evidence_assessment())
    assert digests.citations_digest(assessment.citations) == digest(
        ex.evidence_assessment()["citations"]
    )


def test_evidence_ids_name_their_pointer() -> None:
    pointer = {"kind": "turn", "turnIndex": 3}
    pd = digests.pointer_digest(pointer)
    assert pd == digest(pointer)
    assert digests.evidence_id(2, pd) == f"ev-2-{pd[:12]}"


def test_draft_batch_digest_covers_only_the_drafts() -> None:
    batch = ex.draft_batch()
    assert digests.draft_batch_digest(batch["candidates"]) == digest(
        {"candidates": batch["candidates"]}
    )


def test_source_input_digest_excludes_lease_provenance_owner_and_database() -> None:
    from teamlore.contracts import ExtractionTask
    from teamlore.contracts.extraction import source_input_digest_of_task

    task = ExtractionTask.from_wire(ex.extraction_task())
    moved = ex.extraction_task()
    moved["lease"] = {"holder": "someone-else", "expiresAt": 99}
    moved["binding"]["provenance"] = {
        "snapshotSeq": "43",
        "evaluatedAt": "2025-03-01T00:00:00.000Z",
    }
    moved["binding"]["owner"] = dict(OTHER_OWNER.to_wire())
    moved["binding"]["databaseUuid"] = "another-db"
    assert source_input_digest_of_task(ExtractionTask.from_wire(moved)) == (
        task.binding.source_input_digest
    )
    assert task.task_id == digests.extraction_task_id(task.binding.source_input_digest)


def test_recall_result_set_digest_is_one_flat_list_in_draft_order() -> None:
    document = ex.adjudication_task()
    pool = {(p["sourceKind"], p["id"]): p for p in document["pool"]}
    flat = [
        {
            "draftRef": s["draftRef"],
            "rank": hit["rank"],
            "sourceKind": hit["sourceKind"],
            "id": hit["id"],
            "revision": pool[(hit["sourceKind"], hit["id"])]["revision"],
            "contentDigest": pool[(hit["sourceKind"], hit["id"])]["contentDigest"],
            "state": pool[(hit["sourceKind"], hit["id"])]["state"],
        }
        for s in document["recallSets"]
        for hit in s["ordered"]
    ]
    assert digests.recall_result_set_digest(document["recallSets"], document["pool"]) == digest(
        flat
    )
    renamed = [{**p, "summary": "other summary"} for p in document["pool"]]
    assert digests.recall_result_set_digest(document["recallSets"], renamed) == digest(flat)


def test_plan_digest_excludes_itself_and_authorization() -> None:
    plan = PromotionPlan.from_wire(ex.promotion_plan())
    wire = plan.to_wire()
    assert plan.plan_digest == digest({k: v for k, v in wire.items() if k != "planDigest"})
    runner = ex.runner_execution_plan()
    approved = {**runner, "authorization": "approved"}
    assert RunnerExecutionPlan.from_wire(approved).plan_digest == runner["planDigest"]


def test_manifest_digest_survives_approval() -> None:
    from teamlore.contracts import AuthorizationManifest

    manifest = ex.authorization_manifest()
    approved = AuthorizationManifest.from_wire({**manifest, "authorization": "approved"})
    assert approved.manifest_digest == digests.manifest_digest(manifest)


def test_assessment_digest_sorts_by_candidate_and_statement() -> None:
    first = ex.evidence_assessment()
    second = {**ex.evidence_assessment(), "statementId": "s0"}
    models = [EvidenceAssessment.from_wire(d) for d in (first, second)]
    forward = digests.assessment_digest(models)
    assert forward == digests.assessment_digest(list(reversed(models)))
    keys = ["candidateId", "statementId", "provenanceStrength", "limitations"]
    keys += ["claimSupport", "assessedBy", "statementTextDigest", "revision"]
    doc = {k: second[k] for k in keys}
    doc["citationsDigest"] = digests.citations_digest(second["citations"])
    assert digests.assessment_digest([doc]) == digests.assessment_digest([models[1]])


def test_git_blob_oid_matches_git_hash_object(tmp_path: Path) -> None:
    content = "---\nid: lock-timeout\n---\nUse a lock timeout. 迁移\n".encode()
    path = tmp_path / "entry.md"
    path.write_bytes(content)
    expected = subprocess.run(
        ["git", "hash-object", "--no-filters", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert digests.git_blob_oid(content) == expected
    assert digests.git_blob_oid(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_runner_input_digest_is_over_the_exact_stdin_bytes() -> None:
    stdin = canonical_json(ex.extraction_task())
    assert digests.runner_input_digest(stdin) == hashlib.sha256(stdin).hexdigest()


def test_agent_adjudication_task_id_binds_source_response_and_result_set() -> None:
    task_id = digests.agent_adjudication_task_id("extract-a", "b" * 64, "c" * 64)
    assert task_id == "adjudicate-agent-" + digest(
        {"sourceTaskId": "extract-a", "responseDigest": "b" * 64, "resultSetDigest": "c" * 64}
    )
    assert len(task_id) <= 128


def test_consolidation_digests_ignore_extra_keys_and_order() -> None:
    entries = [
        {"entryId": "b", "revision": 1, "contentDigest": "b" * 64, "body": "ignored"},
        {"entryId": "a", "revision": 2, "contentDigest": "a" * 64},
    ]
    assert digests.entry_set_digest(entries) == digest(
        [
            {"entryId": "a", "revision": 2, "contentDigest": "a" * 64},
            {"entryId": "b", "revision": 1, "contentDigest": "b" * 64},
        ]
    )
    scenes = [{"name": "z", "contentDigest": "z" * 64, "heat": 1, "content": "x"}]
    assert digests.scene_index_digest(scenes) == digest(
        [{"name": "z", "contentDigest": "z" * 64, "heat": 1}]
    )
