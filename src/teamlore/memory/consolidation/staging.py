"""Stage a ConsolidationPatch@v1: validated and materialized in one `BEGIN IMMEDIATE`
transaction (docs/memory.md, "Consolidation").

1. the contract, then the task: it must be a consolidation task of this worktree and the patch
   must echo its binding exactly, or the binding's digest as the task's `bindingDigest`
   (`BINDING_MISMATCH`);
2. the submission gate: an identical patch replays the recorded outcome (the same patch in the
   other binding form is identical), a different one for the same task is audited and refused
   (`SUBMISSION_CONFLICT`);
3. another consolidation awaiting review refuses this one (`CONSOLIDATION_PENDING`);
4. the task must be issued under a prompt whose patches this teamlore stages
   (`ANSWERABLE_PROMPT_VERSIONS`; `CONSOLIDATION_DRIFT`, `prompt-version-changed`, nothing
   changes), and the approved tree must still be what the task bound (`CONSOLIDATION_DRIFT`:
   the task is marked stale, committed);
5. every patch rule (`CONSOLIDATION_INVALID` with its reason; nothing is written, the task
   stays open for a corrected patch);
6. claim (agent path) or token check (runner path), then: an empty patch records a `no_op` run
   (the new baseline); otherwise one quarantined `consolidation-patch` candidate (not in the
   candidate FTS: never part of L1 dedup) with one deterministic assessment per operation, and
   a `pending_review` run; the run records the task's entries; the task becomes `submitted`.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

from teamlore.contracts import digests
from teamlore.contracts.consolidation import (
    ANSWERABLE_PROMPT_VERSIONS,
    CONSOLIDATION_PROMPT_VERSION,
    ConsolidationPatch,
)
from teamlore.contracts.formats import STAGE_FORMAT
from teamlore.core import errors
from teamlore.core.canonical import canonical_json, digest
from teamlore.core.failpoints import failpoint
from teamlore.memory.consolidation.drift import check_unchanged, sync_and_read
from teamlore.memory.consolidation.patch import Materialized, materialize, parse_patch
from teamlore.memory.consolidation.source import ApprovedEntry, load_baseline, read_source
from teamlore.memory.consolidation.task import candidate_id_of, run_id_of, task_entries
from teamlore.memory.extraction import tasks
from teamlore.memory.extraction.tasks import Owner, Task
from teamlore.repo.binding import RepositoryIdentity

CANDIDATE_KIND = "consolidation-patch"
LIMITATIONS = ("generated-consolidation-content", "source-approved-memory-only")
FAILPOINTS = (
    "consolidation.stage.after-claim",  # claimed inside the transaction, nothing else written
    "consolidation.stage.after-candidate",  # candidate + assessments written, no run yet
    "consolidation.stage.before-commit",  # run written, submission not recorded
)


def utc_date(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")


def stage_patch(
    conn: sqlite3.Connection,
    document: Any,
    *,
    identity: RepositoryIdentity,
    claim_token: str | None = None,
    now: int | None = None,
) -> dict[str, Any]:
    """Stage the patch (see the module doc); returns the stage response."""
    patch = parse_patch(document)
    owner = Owner(identity.repository_key, identity.worktree_key)
    moment = tasks.now_ms() if now is None else now
    echoed = "binding" if patch.binding_digest is None else "bindingDigest"
    task = tasks.load_task_bound_by_digest(
        conn,
        patch.task_id,
        echoed_binding_digest(patch),
        owner=owner,
        kind="consolidation",
        mismatch=f"the patch's {echoed} is not the {echoed} synthesize issued with this task",
    )
    response_digest = digests.response_digest(with_binding(document, task.binding))
    sync_and_read(conn, owner, identity.worktree_root)  # the projection is current below
    with tasks.write_tx_committing_refusal(conn):
        tasks.check_token(conn, task.task_id, claim_token)
        replay = tasks.check_replay(
            conn, task.task_id, response_digest, now=moment, remedy=RESTAGED
        )
        if replay is not None:
            return {**replay.outcome, "idempotent": True}
        _check_prompt_version(task)
        baseline = load_baseline(conn, owner, identity.worktree_root)
        if baseline.pending_run_id is not None:
            raise errors.TeamloreError(
                errors.CONSOLIDATION_PENDING,
                f"consolidation {baseline.pending_run_id} awaits review; promote or discard it "
                "first",
                pendingRunId=baseline.pending_run_id,
            )
        source = read_source(conn, owner, identity.worktree_root)
        try:
            check_unchanged(task.binding, source, baseline)
        except errors.TeamloreError as drift:
            tasks.mark_stale(conn, task.task_id, lease_epoch=task.lease_epoch)
            raise tasks.CommitThenRaise(drift) from None
        selection = task_entries(source, baseline, task.binding["replay"]["mode"])
        entries = selection.carried
        materialized = materialize(patch, source, entries, today=utc_date(moment))
        claim = tasks.acquire(conn, task.task_id, claim_token=claim_token, now=moment)
        failpoint("consolidation.stage.after-claim")
        covered = None
        if selection.deferred_new:  # the record must not say the rest is consolidated
            covered = baseline.covered_after(task.binding["entryRevisions"], entries)
        outcome = _record(conn, owner, task, entries, materialized, moment, covered)
        if covered is not None:
            _record_deferred(conn, run_id_of(task.task_id), task.binding, covered)
        failpoint("consolidation.stage.before-commit")
        tasks.record_submission(conn, claim, response_digest, outcome, now=moment)
    return {**outcome, "idempotent": False}


def _check_prompt_version(task: Task) -> None:
    """Refuse a patch to a task issued under a prompt whose patches this teamlore does not stage
    (an upgrade between synthesize and stage); nothing changes, a new synthesize issues today's."""
    issued = task.binding["promptVersion"]
    if issued in ANSWERABLE_PROMPT_VERSIONS:
        return
    raise errors.TeamloreError(
        errors.CONSOLIDATION_DRIFT,
        f"consolidation task {task.task_id} was issued under the prompt {issued}, whose patches "
        f"this teamlore ({CONSOLIDATION_PROMPT_VERSION}) does not stage; run `teamlore memory "
        "synthesize` again",
        reason="prompt-version-changed",
        changed="the consolidation prompt",
        issuedPromptVersion=issued,
        promptVersion=CONSOLIDATION_PROMPT_VERSION,
    )


def echoed_binding_digest(patch: ConsolidationPatch) -> str:
    """digest(binding) of what the patch echoes: its binding, or its bindingDigest."""
    if patch.binding_digest is not None:
        return patch.binding_digest
    assert patch.binding is not None  # the contract requires one of the two
    return digest(patch.binding.to_wire())


def with_binding(document: dict[str, Any], binding: dict[str, Any]) -> dict[str, Any]:
    """The patch as submitted with its `bindingDigest` (already checked) replaced by the
    task's `binding`: both forms of one patch are one submission (a retry in the other form
    replays), and a full-binding patch's submission digest is what it always was."""
    if "bindingDigest" not in document:
        return document
    return {k: v for k, v in document.items() if k != "bindingDigest"} | {"binding": binding}


def _record_deferred(
    conn: sqlite3.Connection,
    run_id: str,
    binding: dict[str, Any],
    covered: list[dict[str, Any]],
) -> None:
    """Keep with the run the entries its pass left uncovered for the next one: the scenes do
    not rest on them (`load_baseline`), whatever the tree's record reads by then."""
    covered_ids = {e["entryId"] for e in covered}
    deferred = sorted(
        e["entryId"] for e in binding["entryRevisions"] if e["entryId"] not in covered_ids
    )
    conn.execute(
        "UPDATE consolidation_runs SET deferred_entry_ids = ? WHERE run_id = ?",
        (canonical_json(deferred).decode("utf-8"), run_id),
    )


# SUBMISSION_CONFLICT's `next` for a consolidation: its task comes from synthesize
RESTAGED = (
    "The first patch stands: review it (`teamlore memory review --kind consolidation`), or"
    " discard it and synthesize again (`teamlore memory synthesize`) for a new task."
)


def assessment(
    candidate_id: str, operation: dict[str, Any], entries: dict[str, ApprovedEntry]
) -> dict[str, Any]:
    """The deterministic assessment of one operation (claim support `unverified`)."""
    based_on = [entries[e].revision_json() for e in operation["basedOnEntryIds"]]
    return {
        "candidateId": candidate_id,
        "statementId": operation["operationId"],
        "citationsDigest": digests.consolidation_citations_digest(based_on),
        "provenanceStrength": "contextual",
        "limitations": list(LIMITATIONS),
        "claimSupport": "unverified",
        "assessedBy": "deterministic",
        "statementTextDigest": digest(operation),
        "revision": 1,
    }


def _record(
    conn: sqlite3.Connection,
    owner: Owner,
    task: Task,
    entries: list[ApprovedEntry],
    materialized: Materialized,
    now: int,
    covered: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    run_id = run_id_of(task.task_id)
    entry_revisions = [e.revision_json() for e in entries]
    by_id = {e.entry_id: e for e in entries}
    cand_id: str | None = None
    assessments: list[dict[str, Any]] = []
    if materialized.operations:
        cand_id = candidate_id_of(task.task_id)
        payload = {
            "candidateKind": CANDIDATE_KIND,
            "runId": run_id,
            "taskId": task.task_id,
            "binding": task.binding,
            "operations": list(materialized.operations),
            "statements": [
                {"statementId": op["operationId"], "operation": op}
                for op in materialized.operations
            ],
        }
        if covered is not None:  # a partial pass: what its promotion records as consolidated
            payload["coveredEntries"] = covered
        conn.execute(
            "INSERT INTO candidates (candidate_id, repository_key, worktree_key, chunk_ref, "
            "candidate_kind, revision, content_digest, payload_json, status, adjudication, "
            "updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?, 'quarantined', 'done', ?)",
            (
                cand_id,
                owner.repository_key,
                owner.worktree_key,
                run_id,
                CANDIDATE_KIND,
                digests.content_digest(payload),
                canonical_json(payload).decode("utf-8"),
                now,
            ),
        )
        for op in materialized.operations:
            doc = assessment(cand_id, op, by_id)
            assessments.append(doc)
            conn.execute(
                "INSERT INTO assessments (candidate_id, statement_id, citations_digest, "
                "provenance_strength, limitations_json, claim_support, assessed_by, "
                "statement_text_digest, revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    cand_id,
                    doc["statementId"],
                    doc["citationsDigest"],
                    doc["provenanceStrength"],
                    canonical_json(doc["limitations"]).decode("utf-8"),
                    doc["claimSupport"],
                    doc["assessedBy"],
                    doc["statementTextDigest"],
                    doc["revision"],
                ),
            )
        failpoint("consolidation.stage.after-candidate")
    conn.execute(
        "INSERT INTO consolidation_runs (run_id, task_id, repository_key, worktree_key, "
        "binding_json, entry_set_digest, candidate_id, status, entry_count, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run_id,
            task.task_id,
            owner.repository_key,
            owner.worktree_key,
            canonical_json(task.binding).decode("utf-8"),
            digests.entry_set_digest(entry_revisions),
            cand_id,
            "pending_review" if cand_id else "no_op",
            len(entries),
            now,
            now,
        ),
    )
    conn.executemany(
        "INSERT INTO consolidation_run_entries (run_id, entry_id, revision, content_digest) "
        "VALUES (?, ?, ?, ?)",
        [(run_id, e.entry_id, e.revision, e.content_digest) for e in entries],
    )
    no_op = cand_id is None
    return {
        "action": "stage",
        "format": STAGE_FORMAT,
        "kind": "consolidation",
        "taskId": task.task_id,
        "status": "no-op" if no_op else "staged",
        "noOp": no_op,
        "runId": run_id,
        "runStatus": "no_op" if no_op else "pending_review",
        "candidateId": cand_id,
        "entryCount": len(entries),
        "operations": [
            {k: op[k] for k in ("operationId", "op", "target", "name", "targetPath", "heat")}
            | {"deletes": op["deletes"]}
            for op in materialized.operations
        ],
        "files": {
            "writes": [p for p, _ in materialized.writes],
            "deletes": list(materialized.deletes),
        },
        "assessments": assessments,
        "note": f"{len(entries)} approved entries marked consolidated with no changes"
        if no_op
        else f"{len(materialized.operations)} operation(s) quarantined for review",
        "next": None
        if no_op
        else "Show the user each operation (memory review --kind consolidation); prepare only "
        "what they confirm.",
    }
