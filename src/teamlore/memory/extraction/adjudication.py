"""Stage, second call: an AdjudicationResult@v1 → kept drafts quarantined (tx 2).

Everything happens in one `BEGIN IMMEDIATE` transaction (glossary: adjudication;
docs/extraction.md "stage"):
1. the submission gate (identical replay → recorded outcome; different → audited
   `SUBMISSION_CONFLICT`);
2. the task must hold exactly the batch's drafts that still await adjudication — not when a
   person discarded one since, or another batch's update/merge consumed one (`drafts-changed`:
   staging the same draft batch again issues a fresh task over the drafts left) — and the same
   `recall-rrf@1` is run again over the current projections: a different result-set digest
   means team memory changed under the task. Either way it is marked `stale` (committed) and
   refused with `ADJUDICATION_STALE` (so is a rerun ranked otherwise than the task, reason
   `recall-algorithm-changed` when the set is the same: the caller syncs the vectors first
   with the embedder configured now, and a hybrid recall falls back to words alone
   when an approved entry has no vector yet, dedup.py); a generation change with the same
   result set is accepted. A task issued under an earlier adjudication prompt is answered
   as any other when its result has today's shape (`ANSWERABLE_PROMPT_VERSIONS`); under any
   other version it is refused as stale (`prompt-version-changed`) and nothing changes;
3. the host rules (`contracts.adjudication.check_adjudication_result`): every draft decided
   exactly once, targets in the pool, no skip chains or cycles, never a draft of this batch as
   an update/merge target. An invalid result is refused (`ADJUDICATION_INVALID`) and audited;
   the second distinct invalid result for the task marks the drafts `adjudication: failed` for
   human handling (`ADJUDICATION_FAILED`) — never a silent store or drop; an update/merge that
   would consume a candidate held by an `approved`/`applying` plan is refused
   (`CANDIDATE_LOCKED`) and leaves the task open;
4. apply, with a revision CAS on every target: `store` → quarantined; `skip` → discarded;
   `update`/`merge` → the draft takes the merged fields, records what it supersedes and is
   quarantined; candidate targets are consumed (discarded), approved targets stay in the tree
   until promotion replaces them (their revision is bound in `supersedes`). A merge keeps every
   statement: the targets' statements are copied with their evidence refs and assessments, and an
   approved target's body is kept in `mergedFrom`;
5. the drafts' chunks → `extracted` (a chunk whose turns a person put back since the drafts
   were staged stays put back), candidate projection generation + 1, task `submitted`,
   outcome recorded.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, get_args

import orjson
from pydantic import ValidationError

from teamlore.contracts import digests
from teamlore.contracts._base import is_scene_name
from teamlore.contracts.adjudication import (
    ADJUDICATION_PROMPT_VERSION,
    MAX_DRAFTS_PER_ADJUDICATION,
    Adjudication,
    AdjudicationResult,
    AdjudicationTask,
    check_adjudication_result,
)
from teamlore.contracts.extraction import CandidateType
from teamlore.contracts.formats import STAGE_FORMAT
from teamlore.core import errors
from teamlore.core.canonical import canonical_json
from teamlore.core.failpoints import failpoint
from teamlore.memory.extraction import dedup, tasks
from teamlore.memory.extraction.adjudication_tasks import (
    adjudication_task_document,
    answer_is_read,
    holds_the_drafts,
    recall_still_holds,
    run_recall,
)
from teamlore.memory.extraction.drafts import (
    DraftRow,
    bump_candidate_generation,
    contract_error,
    index_candidate,
    load_drafts,
    unindex_candidate,
)
from teamlore.memory.extraction.tasks import Claim, Owner, Task

MAX_INVALID_ATTEMPTS = 2  # one retry, then `adjudication: failed`
_SAVEPOINT = "adjudication_apply"


class _CasFailed(Exception):
    def __init__(self, target: str) -> None:
        super().__init__(target)
        self.target = target


@tasks.releases_claim_after_invalid_result
def submit_adjudication(
    conn: sqlite3.Connection,
    document: Any,
    *,
    owner: Owner,
    claim_token: str | None = None,
    now: int | None = None,
) -> dict[str, Any]:
    """Stage, second call. Returns the stage response with the outcome of every draft."""
    moment = tasks.now_ms() if now is None else now
    response_digest = digests.response_digest(document)
    result = _parse_or_count(
        conn, document, owner=owner, response_digest=response_digest, now=moment
    )
    task = tasks.load_bound_task(
        conn,
        result.task_id,
        result.binding.to_wire(),
        owner=owner,
        kind="adjudication",
        mismatch="the result's binding is not the binding issued with this adjudication task",
    )
    assert task.draft_batch_ref is not None
    with tasks.write_tx_committing_refusal(conn):
        tasks.check_token(conn, task.task_id, claim_token)
        replay = tasks.check_replay(conn, task.task_id, response_digest, now=moment)
        if replay is not None:
            return _replayed(replay.outcome)
        fresh = tasks.find_task(conn, task.task_id)
        assert fresh is not None
        drafts = load_drafts(conn, task.draft_batch_ref)
        if fresh.status == "stale":
            raise _stale(fresh, "task-stale", drafts)
        if not answer_is_read(fresh):
            raise _stale(  # nothing changes: staging the drafts again issues a fresh task
                fresh,
                "prompt-version-changed",
                drafts,
                issuedPromptVersion=fresh.binding["promptVersion"],
                promptVersion=ADJUDICATION_PROMPT_VERSION,
            )
        require_complete_approved_projection(conn, owner)
        if not holds_the_drafts(fresh, drafts):
            tasks.mark_stale(conn, fresh.task_id, lease_epoch=fresh.lease_epoch)
            raise tasks.CommitThenRaise(_stale(fresh, "drafts-changed", drafts))
        recall = run_recall(conn, owner, drafts)
        if not recall_still_holds(task, recall):
            tasks.mark_stale(conn, fresh.task_id, lease_epoch=fresh.lease_epoch)
            same_set = recall.result_set_digest == task.binding["resultSetDigest"]
            raise tasks.CommitThenRaise(
                _stale(
                    fresh,
                    "recall-algorithm-changed" if same_set else "result-set-digest-mismatch",
                    drafts,
                    expectedResultSetDigest=task.binding["resultSetDigest"],
                    actualResultSetDigest=recall.result_set_digest,
                    expectedRecallAlgorithm=task.binding["recallAlgorithmVersion"],
                    actualRecallAlgorithm=recall.algorithm,
                )
            )
        task_document = AdjudicationTask.from_wire(
            adjudication_task_document(task.task_id, task.binding, drafts, recall)
        )
        issues = check_adjudication_result(task_document, result)
        if issues:
            first = issues[0]
            _refuse_invalid(
                conn,
                fresh,
                drafts,
                response_digest,
                claim_token=claim_token,
                reason=first.reason,
                message=first.message,
                remedy=first.remedy(),
                now=moment,
            )
        refuse_consuming_planned_candidates(conn, owner, result, recall)
        claim = tasks.acquire(conn, task.task_id, claim_token=claim_token, now=moment)
        conn.execute(f"SAVEPOINT {_SAVEPOINT}")
        try:
            outcome = _apply(conn, owner, task, result, drafts, recall, moment)
        except _CasFailed as cas:
            conn.execute(f"ROLLBACK TO {_SAVEPOINT}")
            conn.execute(f"RELEASE {_SAVEPOINT}")
            tasks.mark_stale(conn, claim.task_id, lease_epoch=claim.lease_epoch)
            raise tasks.CommitThenRaise(
                _stale(fresh, "revision-cas-failed", drafts, target=cas.target)
            ) from None
        conn.execute(f"RELEASE {_SAVEPOINT}")
        failpoint("memory.adjudication.applied")
        tasks.record_submission(conn, claim, response_digest, outcome, now=moment)
    return {**outcome, "idempotent": False}


# --------------------------------------------------------------------------------------------
# refusals


def require_complete_approved_projection(conn: sqlite3.Connection, owner: Owner) -> None:
    """APPROVED_PROJECTION_PARTIAL when the owner's approved projection is marked partial
    (glossary: approved projection; a file that could not be projected, or a tree that drifted
    while it was read): deciding store/skip/update/merge against it could miss the very entry
    a draft repeats, so nothing is decided until a complete sync (docs/extraction.md)."""
    row = conn.execute(
        "SELECT coverage, diagnostics_json FROM approved_projection "
        "WHERE repository_key = ? AND worktree_key = ?",
        (owner.repository_key, owner.worktree_key),
    ).fetchone()
    if row is not None and row[0] == "partial":
        left_out = orjson.loads(row[1])
        files = sorted({str(d["file"]) for d in left_out})
        # staging (and a runner plan's approval) reads the memory again: no sync to run first
        if not left_out:  # marked partial by a tree that changed while it was read
            what = "the memory files changed while they were read; try again"
            remedy = "Try again once nothing edits the memory files."
        else:
            what = f"{_named(left_out)}; fix it as `teamlore memory lint` says, then try again"
            remedy = f"Fix {files[0]} as `teamlore memory lint` says, then try again."
            if len(files) > 1:
                remedy = "Fix each file it names as `teamlore memory lint` says, then try again."
        raise errors.TeamloreError(
            errors.APPROVED_PROJECTION_PARTIAL,
            f"the approved memory of this worktree was read only in part: {what}",
            coverage="partial",
            files=files,
        ).advising(remedy)


def _named(left_out: list[dict[str, Any]]) -> str:
    """The files the projection left out, each with why (`….md (slug.scene-name: …)`), at
    most 3 (`memory status` names every one)."""
    named = [f"{d['file']} ({d['code']}: {d['why']})" for d in left_out[:3]]
    more = f" and {len(left_out) - 3} more (`teamlore memory status` names them)"
    return "; ".join(named) + (more if len(left_out) > 3 else "")


def refuse_consuming_planned_candidates(
    conn: sqlite3.Connection,
    owner: Owner,
    result: AdjudicationResult,
    recall: dedup.RecallResult,
) -> None:
    """CANDIDATE_LOCKED when an `update`/`merge` would consume a candidate that an `approved`
    or `applying` promotion plan holds: a person approved that candidate as it is, and
    discarding it under the plan would void the plan at promote. Nothing changes; the task stays
    open for a decision that leaves the candidate alone (`store`, or `skip` against it)."""
    candidates = {item.id for item in recall.pool if item.source_kind == "candidate"}
    consuming = [
        (decision, target)
        for decision in result.adjudications
        if decision.action in ("update", "merge")
        for target in decision.target_ids
        if target in candidates
    ]
    if not consuming:
        return
    marks = ", ".join("?" * len(consuming))
    plans: dict[str, str] = {}
    for candidate_id, plan_id in conn.execute(
        "SELECT held.value, plan.plan_id FROM promotion_journal AS plan, "
        "json_each(plan.candidate_ids_json) AS held WHERE plan.repository_key = ? "
        "AND plan.worktree_key = ? AND plan.status IN ('approved', 'applying') "
        f"AND held.value IN ({marks}) ORDER BY plan.plan_id",
        (owner.repository_key, owner.worktree_key, *(target for _, target in consuming)),
    ):
        plans.setdefault(str(candidate_id), str(plan_id))
    locked = [(decision, target) for decision, target in consuming if target in plans]
    if not locked:
        return
    decision, target = locked[0]
    draft = decision.draft_ref
    raise errors.TeamloreError(
        errors.CANDIDATE_LOCKED,
        f"{draft}: {decision.action} would consume {target}, in plan {plans[target]} a person "
        "approved for promotion; decide this draft with store or skip, or wait until that plan "
        "is promoted and stage it again",
        candidateIds=sorted({t for _, t in locked}),
        planIds=sorted({plans[t] for _, t in locked}),
        draftRefs=sorted({d.draft_ref for d, _ in locked}),
    )


_STALE_IN_WORDS = {
    "drafts-changed": "a draft it holds was discarded or merged into another candidate since it "
    "was issued",
    "prompt-version-changed": "it was issued under the adjudication prompt "
    "{issuedPromptVersion}, whose answers this teamlore ({promptVersion}) does not read",
}


def _stale(
    task: Task, reason: str, waiting: Sequence[DraftRow], **details: Any
) -> errors.TeamloreError:
    """ADJUDICATION_STALE; `waiting`: the batch's drafts that still await adjudication, which
    staging the same draft batch again puts in a fresh task (staging.py)."""
    if not waiting:
        return errors.TeamloreError(
            errors.ADJUDICATION_STALE,
            f"adjudication task {task.task_id} is stale ({reason}): none of its drafts awaits "
            "adjudication any more (each was discarded, merged into another candidate or "
            "adjudicated), nothing is left to decide",
            taskId=task.task_id,
            reason=reason,
            waitingCandidateIds=[],
            **details,
        ).advising("Nothing to do: `teamlore memory status` counts the candidates that wait.")
    changed = _STALE_IN_WORDS.get(reason, reason).format(**details)
    return errors.TeamloreError(
        errors.ADJUDICATION_STALE,
        f"adjudication task {task.task_id} is stale ({changed}); stage the same draft batch "
        f"again for a fresh adjudication task over its {len(waiting)} draft(s) still waiting",
        taskId=task.task_id,
        reason=reason,
        waitingCandidateIds=[d.candidate_id for d in waiting],
        **details,
    )


def _replayed(outcome: dict[str, Any]) -> dict[str, Any]:
    if outcome.get("status") == "adjudication-failed":
        raise errors.TeamloreError(
            errors.ADJUDICATION_FAILED,
            f"adjudication task {outcome['taskId']} already failed; its drafts await a person",
            taskId=outcome["taskId"],
            candidateIds=[c["candidateId"] for c in outcome.get("candidates", [])],
        )
    return {**outcome, "idempotent": True}


def _parse_or_count(
    conn: sqlite3.Connection, document: Any, *, owner: Owner, response_digest: str, now: int
) -> AdjudicationResult:
    """Parse the result; an unparseable answer to a known open task counts as an attempt."""
    if isinstance(document, dict):
        decisions = document.get("adjudications")
        if isinstance(decisions, list) and len(decisions) > MAX_DRAFTS_PER_ADJUDICATION:
            raise errors.TeamloreError(
                errors.BATCH_TOO_LARGE,
                f"{len(decisions)} decisions; at most {MAX_DRAFTS_PER_ADJUDICATION}",
            )
    try:
        return AdjudicationResult.from_wire(document)
    except ValidationError as exc:
        error = contract_error(exc, "AdjudicationResult@v1")
        task_id = document.get("taskId") if isinstance(document, dict) else None
        task = tasks.find_task(conn, task_id) if isinstance(task_id, str) else None
        if (
            task is None
            or task.owner != owner
            or task.kind != "adjudication"
            or task.status not in ("pending", "claimed")
            or task.draft_batch_ref is None
        ):
            raise error from None
        with tasks.write_tx_committing_refusal(conn):
            if tasks.recorded_submission(conn, task.task_id) is not None:
                raise error from None
            drafts = load_drafts(conn, task.draft_batch_ref)
            _refuse_invalid(
                conn,
                task,
                drafts,
                response_digest,
                claim_token=None,
                reason="contract-invalid",
                message=error.message,
                now=now,
            )
        raise AssertionError("unreachable") from None  # pragma: no cover


def _refuse_invalid(
    conn: sqlite3.Connection,
    task: Task,
    drafts: Sequence[DraftRow],
    response_digest: str,
    *,
    claim_token: str | None,
    reason: str,
    message: str,
    remedy: str | None = None,
    now: int,
) -> None:
    """Audit an invalid answer; at the second distinct one, fail the drafts for a person.
    `remedy`: the refusal's `next` when what to do depends on the rule it broke."""
    seen = {
        row[0]
        for row in conn.execute(
            "SELECT response_digest FROM submission_conflicts WHERE task_id = ?", (task.task_id,)
        )
    }
    if response_digest not in seen:
        tasks.audit_conflict(conn, task.task_id, response_digest, now=now)
        seen.add(response_digest)
    if len(seen) < MAX_INVALID_ATTEMPTS:
        raise tasks.CommitThenRaise(
            errors.TeamloreError(
                errors.ADJUDICATION_INVALID,
                message,
                taskId=task.task_id,
                reason=reason,
                attempt=len(seen),
                attemptsLeft=MAX_INVALID_ATTEMPTS - len(seen),
            ).advising(remedy)
        )
    claim = tasks.acquire(conn, task.task_id, claim_token=claim_token, now=now)
    failed = []
    for draft in drafts:
        if draft.status == "draft" and draft.adjudication == "pending":
            conn.execute(
                "UPDATE candidates SET adjudication = 'failed', revision = revision + 1, "
                "updated_at = ? WHERE candidate_id = ? AND revision = ?",
                (now, draft.candidate_id, draft.revision),
            )
            failed.append({"candidateId": draft.candidate_id, "revision": draft.revision + 1})
    bump_candidate_generation(conn, task.owner)
    outcome = {
        "action": "stage",
        "format": STAGE_FORMAT,
        "taskId": task.task_id,
        "status": "adjudication-failed",
        "noOp": False,
        "reason": reason,
        "candidates": failed,
    }
    tasks.record_submission(conn, claim, response_digest, outcome, now=now)
    raise tasks.CommitThenRaise(
        errors.TeamloreError(
            errors.ADJUDICATION_FAILED,
            f"{message} (second invalid adjudication: {len(failed)} draft(s) marked failed "
            "for human handling)",
            taskId=task.task_id,
            reason=reason,
            candidateIds=[c["candidateId"] for c in failed],
        )
    )


# --------------------------------------------------------------------------------------------
# applying the decisions


def _apply(
    conn: sqlite3.Connection,
    owner: Owner,
    task: Task,
    result: AdjudicationResult,
    drafts: Sequence[DraftRow],
    recall: dedup.RecallResult,
    now: int,
) -> dict[str, Any]:
    by_id = {d.candidate_id: d for d in drafts}
    pool = {item.id: item for item in recall.pool}
    outcomes: list[dict[str, Any]] = []
    consumed: list[dict[str, Any]] = []
    for decision in result.adjudications:
        draft = by_id[decision.draft_ref]
        if decision.action == "store":
            revision = _move(conn, draft, status="quarantined", now=now)
        elif decision.action == "skip":
            revision = _move(conn, draft, status="discarded", now=now)
            unindex_candidate(conn, draft.candidate_id)
        else:
            targets = [pool[t] for t in decision.target_ids]
            payload, taken = _merged_payload(conn, owner, draft, decision, targets, now)
            consumed.extend(taken)
            revision = _move(conn, draft, status="quarantined", payload=payload, now=now)
            index_candidate(conn, draft.candidate_id, payload)
        status = "discarded" if decision.action == "skip" else "quarantined"
        outcomes.append(
            {
                "draftRef": decision.draft_ref,
                "action": decision.action,
                "candidateId": draft.candidate_id,
                "candidateStatus": status,
                "revision": revision,
                "targetIds": list(decision.target_ids),
            }
        )
    # only a chunk still `drafted`: one a person put back meanwhile (`memory discard
    # --extract-again` on another candidate of its turns) stays `pending` at its new round, so
    # the next recall offers its turns again (extracted_turns.py)
    chunk_refs = sorted({d.chunk_ref for d in drafts})
    conn.executemany(
        "UPDATE chunks SET status = 'extracted' WHERE chunk_ref = ? AND status = 'drafted'",
        [(c,) for c in chunk_refs],
    )
    generation = bump_candidate_generation(conn, owner)
    kept = [o for o in outcomes if o["candidateStatus"] == "quarantined"]
    return {
        "action": "stage",
        "format": STAGE_FORMAT,
        "taskId": task.task_id,
        "sourceTaskIds": (task.draft_batch_ref or "").split(),
        "status": "staged",
        "noOp": False,
        "candidates": outcomes,
        "consumed": consumed,
        "candidateGeneration": generation,
        "recallComparison": {
            "recallAlgorithmVersion": recall.algorithm,
            "resultSetDigest": recall.result_set_digest,
        },
        "next": "Review the quarantined candidates with the user (memory review)."
        if kept
        else None,
    }


def _move(
    conn: sqlite3.Connection,
    draft: DraftRow,
    *,
    status: str,
    now: int,
    payload: dict[str, Any] | None = None,
) -> int:
    """Revision-CAS the draft into its new state (revision + 1)."""
    if payload is None:
        cursor = conn.execute(
            "UPDATE candidates SET status = ?, adjudication = 'done', revision = revision + 1, "
            "updated_at = ? WHERE candidate_id = ? AND revision = ? AND status = 'draft'",
            (status, now, draft.candidate_id, draft.revision),
        )
    else:
        cursor = conn.execute(
            "UPDATE candidates SET status = ?, adjudication = 'done', revision = revision + 1, "
            "payload_json = ?, content_digest = ?, updated_at = ? WHERE candidate_id = ? "
            "AND revision = ? AND status = 'draft'",
            (
                status,
                canonical_json(payload).decode("utf-8"),
                digests.content_digest(payload),
                now,
                draft.candidate_id,
                draft.revision,
            ),
        )
    if cursor.rowcount != 1:
        raise _CasFailed(draft.candidate_id)
    return draft.revision + 1


def _merged_payload(
    conn: sqlite3.Connection,
    owner: Owner,
    draft: DraftRow,
    decision: Adjudication,
    targets: Sequence[dedup.PoolItem],
    now: int,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    payload = dict(draft.payload)
    fields = decision.merged_fields
    assert fields is not None
    statements = list(payload["statements"])
    supersedes: list[dict[str, Any]] = []
    merged_from: list[dict[str, Any]] = []
    consumed: list[dict[str, Any]] = []
    for number, target in enumerate(targets, start=1):
        reference: dict[str, Any] = {
            "sourceKind": target.source_kind,
            "id": target.id,
            "revision": target.revision,
            "contentDigest": target.content_digest,
        }
        if target.source_kind == "approved":
            approved = _approved_target(conn, owner, target)
            reference["path"] = approved["path"]
            if decision.action == "update":
                payload.update(_kept_fields(approved["frontmatter"]))
            if decision.action == "merge":
                merged_from.append(
                    {**reference, "title": approved["title"], "body": approved["body"]}
                )
        else:
            source = _consume_candidate(conn, owner, target, now)
            if decision.action == "update":
                payload.update(_kept_fields(source))
            consumed.append(
                {
                    "sourceKind": "candidate",
                    "id": target.id,
                    "status": "discarded",
                    "revision": target.revision + 1,
                }
            )
            if decision.action == "merge":
                copied = _copy_statements(conn, draft.candidate_id, target.id, source, number)
                statements.extend(copied)
                merged_from.append(
                    {
                        **reference,
                        "content": source.get("content", ""),
                        "statementIds": [s["statementId"] for s in copied],
                    }
                )
        supersedes.append(reference)
    for name in ("content", "type", "priority", "occurred"):
        value = getattr(fields, name)
        if value is not None:
            payload[name] = list(value) if isinstance(value, tuple) else value
    if "scene" in fields.model_fields_set:
        payload["scene"] = fields.scene
    payload["statements"] = statements
    payload["supersedes"] = supersedes
    if decision.action == "merge":
        payload["mergedFrom"] = merged_from
    return payload, consumed


def _approved_target(
    conn: sqlite3.Connection, owner: Owner, target: dedup.PoolItem
) -> Mapping[str, Any]:
    row = conn.execute(
        "SELECT revision, path, title, body_text, frontmatter_json FROM approved_entries "
        "WHERE repository_key = ? "
        "AND worktree_key = ? AND kind = 'entry' AND entry_id = ? AND status = 'approved'",
        (owner.repository_key, owner.worktree_key, target.id),
    ).fetchone()
    if row is None or int(row[0]) != target.revision:
        raise _CasFailed(target.id)
    return {
        "path": row[1],
        "title": row[2],
        "body": row[3],
        "frontmatter": orjson.loads(row[4]),
    }


def _kept_fields(target: Mapping[str, Any]) -> dict[str, Any]:
    """What an `update` keeps of its one target where `mergedFields` omits it (`MergedFields`):
    the target's type, priority, scene and occurred dates, each one only when it is a value a
    candidate may hold (a hand-edited entry may carry anything; then the draft's stays)."""
    kept: dict[str, Any] = {}
    if target.get("type") in get_args(CandidateType):
        kept["type"] = target["type"]
    priority = target.get("priority")
    if type(priority) is int and 0 <= priority <= 100:
        kept["priority"] = priority
    scene = target.get("scene", "")
    if scene is None or (isinstance(scene, str) and is_scene_name(scene)):
        kept["scene"] = scene
    occurred = target.get("occurred")
    if isinstance(occurred, list) and all(isinstance(o, str) and o.strip() for o in occurred):
        kept["occurred"] = occurred
    return kept


def _consume_candidate(
    conn: sqlite3.Connection, owner: Owner, target: dedup.PoolItem, now: int
) -> dict[str, Any]:
    row = conn.execute(
        "SELECT payload_json FROM candidates WHERE candidate_id = ? AND repository_key = ? "
        "AND worktree_key = ?",
        (target.id, owner.repository_key, owner.worktree_key),
    ).fetchone()
    cursor = conn.execute(
        "UPDATE candidates SET status = 'discarded', adjudication = 'done', "
        "revision = revision + 1, updated_at = ? WHERE candidate_id = ? AND revision = ? "
        "AND status IN ('draft', 'quarantined') AND repository_key = ? AND worktree_key = ?",
        (now, target.id, target.revision, owner.repository_key, owner.worktree_key),
    )
    if row is None or cursor.rowcount != 1:
        raise _CasFailed(target.id)
    unindex_candidate(conn, target.id)
    payload: dict[str, Any] = orjson.loads(row[0])
    return payload


def _copy_statements(
    conn: sqlite3.Connection,
    into: str,
    source_id: str,
    source_payload: Mapping[str, Any],
    number: int,
) -> list[dict[str, Any]]:
    """The target's statements under the merged candidate, with their evidence and assessment.

    Statement ids become `m<number>.<original>`; a typed fact stays typed, anything else starts
    over as `unverified` (a person confirmed it for another candidate, not for this one).
    """
    copied: list[dict[str, Any]] = []
    for statement in source_payload.get("statements", []):
        new_id = f"m{number}.{statement['statementId']}"[:128]
        copied.append({**statement, "statementId": new_id})
        conn.execute(
            "INSERT INTO evidence_refs (candidate_id, statement_id, evidence_id, pointer_digest, "
            "session_key, turn_key, revision, payload_sha256, relation, strength, "
            "limitations_json, task_id) SELECT ?, ?, evidence_id, pointer_digest, session_key, "
            "turn_key, revision, payload_sha256, relation, strength, limitations_json, task_id "
            "FROM evidence_refs WHERE candidate_id = ? AND statement_id = ?",
            (into, new_id, source_id, statement["statementId"]),
        )
        conn.execute(
            "INSERT INTO assessments (candidate_id, statement_id, citations_digest, "
            "provenance_strength, limitations_json, claim_support, assessed_by, "
            "statement_text_digest, revision) SELECT ?, ?, citations_digest, "
            "provenance_strength, limitations_json, "
            "CASE claim_support WHEN 'typed-fact' THEN 'typed-fact' ELSE 'unverified' END, "
            "'deterministic', statement_text_digest, 1 FROM assessments "
            "WHERE candidate_id = ? AND statement_id = ?",
            (into, new_id, source_id, statement["statementId"]),
        )
    return copied


def claim_adjudication(
    conn: sqlite3.Connection, task_id: str, *, holder: str, lease_ms: int = tasks.DEFAULT_LEASE_MS
) -> Claim:
    """Runner path: lease the adjudication task before submitting with the token."""
    return tasks.claim_task(conn, task_id, holder=holder, lease_ms=lease_ms)
