"""Prepare a consolidation: a PrepareRequest@v1 (`kind: consolidation`) → one PromotionPlan@v1
holding every file of the patch (never part of a consolidation).

In one `BEGIN IMMEDIATE` transaction: exactly one candidate, a quarantined `consolidation-patch`
of this worktree (`CANDIDATE_NOT_FOUND` / `CANDIDATE_STALE`) at the expected revision; the
request lists every operation with the digests review showed (`CONFIRMATION_DRIFT` on a
difference, `UNVERIFIED_CLAIM` for an operation left out); the approved tree still holds what
synthesize bound (`CONSOLIDATION_DRIFT`); every file to write passes the lint gate
(`LINT_BLOCKED`). Then each operation's assessment becomes `human-confirmed`, earlier generated
plans of the candidate are voided and the plan is journaled: the patch's writes (sorted by
path), then its deletes, each bound to the file's current git blob id.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

from teamlore.contracts import digests
from teamlore.contracts.promotion import PrepareRequest
from teamlore.core import db, errors
from teamlore.core.canonical import digest
from teamlore.core.failpoints import failpoint
from teamlore.memory.consolidation.drift import check_unchanged, sync_and_read
from teamlore.memory.consolidation.review import file_diff, lint_findings, patch_files
from teamlore.memory.consolidation.source import load_baseline, read_source
from teamlore.memory.consolidation.staging import CANDIDATE_KIND
from teamlore.memory.extraction.tasks import Owner
from teamlore.memory.promotion.prepare import PlannedBytes
from teamlore.repo.binding import RepositoryIdentity


def _candidate(
    state: sqlite3.Connection, identity: RepositoryIdentity, request: PrepareRequest
) -> tuple[sqlite3.Row, dict[str, Any]]:
    from teamlore.memory.promotion.review import of_another_kind, require_candidate

    if len(request.candidates) != 1:
        raise errors.TeamloreError(
            errors.PREPARE_REQUEST_INVALID,
            "a consolidation plan holds exactly one consolidation candidate",
        )
    wanted = request.candidates[0]
    row = require_candidate(state, identity, wanted.candidate_id)
    if row[1] != CANDIDATE_KIND:
        raise of_another_kind(wanted.candidate_id, row[1], "consolidation", row[2])
    if row[2] != "quarantined":
        raise errors.TeamloreError(
            errors.CANDIDATE_STALE,
            f"{wanted.candidate_id} is {row[2]}, not awaiting review",
            candidateId=wanted.candidate_id,
            status=row[2],
        )
    if int(row[4]) != wanted.expected_revision:
        raise errors.TeamloreError(
            errors.CANDIDATE_STALE,
            f"{wanted.candidate_id} is at revision {row[4]}, the request expects "
            f"{wanted.expected_revision}; review again",
            candidateId=wanted.candidate_id,
            revision=int(row[4]),
        )
    payload: dict[str, Any] = orjson.loads(row[6])
    return row, payload


def _confirm(
    state: sqlite3.Connection, candidate_id: str, request: PrepareRequest, payload: dict[str, Any]
) -> list[dict[str, Any]]:
    from teamlore.memory.promotion.review import assessment_docs

    listed = {s.statement_id: s for s in request.candidates[0].statements}
    stored = assessment_docs(state, candidate_id)
    operations = {op["operationId"]: op for op in payload["operations"]}
    unknown = sorted(set(listed) - set(operations))
    missing = sorted(set(operations) - set(listed))
    drifted = [
        op_id
        for op_id, confirmed in listed.items()
        if op_id in operations
        and (
            confirmed.statement_text_digest != digest(operations[op_id])
            or op_id not in stored
            or confirmed.statement_text_digest != stored[op_id]["statementTextDigest"]
            or confirmed.citations_digest != stored[op_id]["citationsDigest"]
        )
    ]
    if unknown or drifted:
        raise errors.TeamloreError(
            errors.CONFIRMATION_DRIFT,
            f"{candidate_id}: operation(s) {', '.join(unknown + drifted)} do not match what "
            "review showed; review again",
            candidateId=candidate_id,
            statementIds=unknown + drifted,
        )
    if missing:
        raise errors.TeamloreError(
            errors.UNVERIFIED_CLAIM,
            f"{candidate_id}: operation(s) {', '.join(missing)} are not confirmed; a "
            "consolidation is promoted whole, so every operation needs a confirmation",
            candidateId=candidate_id,
            statementIds=missing,
        )
    confirmed: list[dict[str, Any]] = []
    for op_id in operations:
        doc = stored[op_id]
        changed = state.execute(
            "UPDATE assessments SET claim_support = 'human-confirmed', assessed_by = 'human', "
            "revision = revision + 1 WHERE candidate_id = ? AND statement_id = ? "
            "AND revision = ?",
            (candidate_id, op_id, doc["revision"]),
        ).rowcount
        if changed != 1:  # pragma: no cover - guarded by the transaction
            raise errors.TeamloreError(errors.CONFIRMATION_DRIFT, candidateId=candidate_id)
        confirmed.append(
            {
                "candidateId": candidate_id,
                "statementId": op_id,
                "claimSupport": "human-confirmed",
                "typedFact": None,
                "assessmentRevision": doc["revision"] + 1,
            }
        )
    return confirmed


def prepare_consolidation(
    state: sqlite3.Connection,
    identity: RepositoryIdentity,
    request: PrepareRequest,
    *,
    now: int,
) -> dict[str, Any]:
    from teamlore.memory.promotion import journal, targets
    from teamlore.memory.promotion import prepare as entry_prepare

    owner = Owner(identity.repository_key, identity.worktree_key)
    binding_owner = targets.repository_binding(identity, targets.public_identity_of(identity))
    sync_and_read(state, owner, identity.worktree_root)
    with db.write_tx(state):
        row, payload = _candidate(state, identity, request)
        candidate_id = str(row[0])
        journal.refuse_if_locked(state, identity, [candidate_id])
        source = read_source(state, owner, identity.worktree_root)
        check_unchanged(
            payload["binding"], source, load_baseline(state, owner, identity.worktree_root)
        )
        writes, deletes = patch_files(payload)
        blocked = lint_findings(writes)
        if blocked:
            raise errors.TeamloreError(
                errors.LINT_BLOCKED,
                f"{candidate_id}: {len(blocked)} blocking lint finding(s) "
                f"({', '.join(sorted({f['rule'] for f in blocked}))}); discard it",
                candidateId=candidate_id,
                findings=blocked,
            )
        files: list[PlannedBytes] = []
        for path, data in writes:
            current = targets.read_memory_file(identity.worktree_root, path)
            files.append(_planned(path, "write", current, data))
        for path in deletes:
            current = targets.read_memory_file(identity.worktree_root, path)
            files.append(_planned(path, "delete", current, None))
        confirmed = _confirm(state, candidate_id, request, payload)
        voided = journal.void_generated_plans(state, identity, [candidate_id], now)
        plan = entry_prepare.build_plan(state, binding_owner, [(candidate_id, int(row[4]))], files)
        failpoint("consolidation.prepare.before-journal")
        entry_prepare.journal_plan(state, identity, plan, files, now)
    return {
        "action": "prepare",
        "format": entry_prepare.PREPARE_RESULT_FORMAT,
        "kind": "consolidation",
        "status": "generated",
        "planId": plan["planId"],
        "planDigest": plan["planDigest"],
        "plan": plan,
        "files": [
            {
                "targetPath": f.target_path,
                "operation": f.operation,
                "role": "delete"
                if f.operation == "delete"
                else ("new" if f.target_blob_hash is None else "update"),
                "targetBlobHash": f.target_blob_hash,
                "bytes": 0 if f.content is None else len(f.content),
                "diff": f.diff,
            }
            for f in files
        ],
        "confirmed": confirmed,
        "voidedPlanIds": voided,
        "next": f"teamlore memory promote --plan {plan['planId']}",
    }


def _planned(path: str, operation: str, current: bytes | None, data: bytes | None) -> PlannedBytes:
    if operation == "delete" and current is None:
        raise errors.TeamloreError(
            errors.CONSOLIDATION_DRIFT, f"{path} is already gone; synthesize again", path=path
        )
    return PlannedBytes(
        path,
        "delete" if operation == "delete" else "write",
        None if current is None else digests.git_blob_oid(current),
        data,
        file_diff(path, current, data),
    )
