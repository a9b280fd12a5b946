"""Stage, first call: an agent's CandidateDraftBatch@v1 → drafts in the state DB + AdjudicationTask.

One `BEGIN IMMEDIATE` transaction (tx 1; docs/extraction.md "stage"):
1. the submission gate: an identical batch for this task returns the recorded outcome; a
   different one is audited and refused (`SUBMISSION_CONFLICT`);
2. related-input CAS: the task is stale only if one of *its* bound inputs changed (turn
   revisions, payload digests, delivery-edge revisions — asked of `TaskSources`); an unrelated
   sync leaves it valid. A stale task is marked `stale` (committed) and refused (`TASK_STALE`);
3. every statement must cite evidence (`STATEMENT_UNCITED`) and every cited id must be one this
   task issued (`EVIDENCE_NOT_IN_TASK`): the whole batch is refused, nothing is silently dropped;
4. claim (agent path) or token check (runner path);
5. candidates (`draft`, revision 1), candidate FTS rows, evidence refs and the derived
   EvidenceAssessment@v1 per statement (provenance strength = strongest citation, limitations =
   union, claim support `unverified`), candidate projection generation + 1, chunk `drafted`;
6. dedup recall (`recall-rrf@1`) over the approved projection (synced by the caller before) and
   the candidate FTS, and a pending adjudication task binding the result-set digest;
7. the extraction task `submitted` with its outcome (the stage response) recorded.

An empty batch is an explicit no-op: the chunk becomes `extracted`, no adjudication.
Re-staging the same batch later returns the recorded outcome; if the adjudication task it named
went stale (team memory changed) or no longer holds the drafts that wait (a person discarded one
of them, another batch's update/merge consumed one), a fresh one is issued over the drafts that
still await adjudication and the current recall.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from teamlore.contracts import digests
from teamlore.contracts.extraction import CandidateDraftBatch
from teamlore.contracts.formats import STAGE_FORMAT
from teamlore.core.failpoints import failpoint
from teamlore.memory.extraction import dedup, tasks
from teamlore.memory.extraction.adjudication_tasks import (
    _latest_adjudication_task,
    adjudication_task_document,
    holds_the_drafts,
    issue_adjudication_task,
    issued_under_current_prompt,
    recall_comparison,
    recall_still_holds,
    run_recall,
)
from teamlore.memory.extraction.drafts import (
    EvidenceRecord,
    TaskSources,
    assess_statement,
    bump_candidate_generation,
    candidate_id,
    check_citations,
    insert_assessment,
    insert_candidate,
    load_drafts,
    parse_draft_batch,
    stale_task_error,
    weakest,
)
from teamlore.memory.extraction.tasks import Owner, Task
from teamlore.models.embeddings import Embedder

# --------------------------------------------------------------------------------------------
# the operation


@tasks.releases_claim_after_invalid_result
def stage_draft_batch(
    conn: sqlite3.Connection,
    document: Any,
    *,
    owner: Owner,
    sources: TaskSources,
    claim_token: str | None = None,
    now: int | None = None,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    """Stage, first call. Returns the stage response (see module doc). With `embedder` the
    drafts are embedded as they are written, so their dedup recall is `recall-hybrid-rrf@2`."""
    batch = parse_draft_batch(document)
    response_digest = digests.response_digest(document)
    moment = tasks.now_ms() if now is None else now
    task = tasks.load_bound_task(
        conn,
        batch.task_id,
        batch.binding.to_wire(),
        owner=owner,
        kind="extraction",
        mismatch="the batch's binding is not the binding recall issued with this task",
    )
    with tasks.write_tx_committing_refusal(conn):
        tasks.check_token(conn, task.task_id, claim_token)
        replay = tasks.check_replay(conn, task.task_id, response_digest, now=moment)
        if replay is not None:
            return _replayed(conn, owner, task, replay.outcome, response_digest, moment)
        drifted = sources.drifted_inputs(task)
        if drifted:
            tasks.mark_stale(conn, task.task_id, lease_epoch=task.lease_epoch)
            if task.chunk_ref is not None:
                conn.execute(
                    "UPDATE chunks SET status = 'stale' WHERE chunk_ref = ? AND status = 'pending'",
                    (task.chunk_ref,),
                )
            raise tasks.CommitThenRaise(
                stale_task_error(task.task_id, drifted, drifted=drifted[:20])
            )
        index = sources.evidence_index(task)
        check_citations(batch, index)
        claim = tasks.acquire(conn, task.task_id, claim_token=claim_token, now=moment)
        outcome = _write_drafts(conn, owner, task, batch, index, response_digest, moment, embedder)
        failpoint("memory.stage.before-commit")
        tasks.record_submission(conn, claim, response_digest, outcome, now=moment)
    return {**outcome, "idempotent": False}


def _write_drafts(
    conn: sqlite3.Connection,
    owner: Owner,
    task: Task,
    batch: CandidateDraftBatch,
    index: Mapping[str, EvidenceRecord],
    response_digest: str,
    now: int,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    assert task.chunk_ref is not None
    assessments: list[dict[str, Any]] = []
    summaries: list[dict[str, Any]] = []
    for number, draft in enumerate(batch.candidates, start=1):
        cand_id = candidate_id(task.task_id, number)
        payload = draft.to_wire()
        insert_candidate(
            conn, cand_id=cand_id, owner=owner, chunk_ref=task.chunk_ref, payload=payload, now=now
        )
        own = [assess_statement(cand_id, s, index) for s in payload["statements"]]
        for assessment in own:
            insert_assessment(conn, assessment, index, task_id=task.task_id)
        assessments.extend(own)
        summaries.append(
            {
                "candidateId": cand_id,
                "revision": 1,
                "contentDigest": digests.content_digest(payload),
                "status": "draft",
                "provenanceStrength": weakest([a["provenanceStrength"] for a in own]),
                "limitations": sorted({lim for a in own for lim in a["limitations"]}),
            }
        )
    failpoint("memory.stage.drafts-written")
    if not batch.candidates:
        conn.execute(
            "UPDATE chunks SET status = 'extracted' WHERE chunk_ref = ?", (task.chunk_ref,)
        )
        return _outcome(task.task_id, None, [], [], None, no_op=True)
    bump_candidate_generation(conn, owner)
    conn.execute("UPDATE chunks SET status = 'drafted' WHERE chunk_ref = ?", (task.chunk_ref,))
    drafts = load_drafts(conn, task.task_id)
    dedup.try_embed_candidates(conn, [d.candidate_id for d in drafts], embedder)
    adjudication_task, recall = issue_adjudication_task(
        conn,
        owner=owner,
        extraction_task_id=task.task_id,
        response_digest=response_digest,
        drafts=drafts,
        now=now,
    )
    return _outcome(task.task_id, adjudication_task, summaries, assessments, recall)


def _outcome(
    task_id: str,
    adjudication_task: dict[str, Any] | None,
    candidates: list[dict[str, Any]],
    assessments: list[dict[str, Any]],
    recall: dedup.RecallResult | None,
    *,
    no_op: bool = False,
) -> dict[str, Any]:
    return {
        "action": "stage",
        "format": STAGE_FORMAT,
        "taskId": task_id,
        "status": "staged" if no_op else "adjudication-required",
        "noOp": no_op,
        "adjudicationTaskId": None if adjudication_task is None else adjudication_task["taskId"],
        "candidates": candidates,
        "assessments": assessments,
        "adjudicationTask": adjudication_task,
        "recallComparison": None if recall is None else recall_comparison(recall),
        "next": None
        if no_op
        else "Compare each draft with its recall set, decide store/skip/update/merge with the "
        "user, then stage the AdjudicationResult@v1. A draft of this batch in a recall set can "
        "only be skipped to, not updated or merged.",
    }


def _replayed(
    conn: sqlite3.Connection,
    owner: Owner,
    task: Task,
    outcome: dict[str, Any],
    response_digest: str,
    now: int,
) -> dict[str, Any]:
    """The recorded outcome; with a fresh adjudication task over the drafts that still wait if
    the recorded one went stale, holds a draft that left the batch or carries an earlier
    prompt."""
    if outcome.get("noOp"):
        return {**outcome, "idempotent": True}
    current = _latest_adjudication_task(conn, task.task_id)
    drafts = load_drafts(conn, task.task_id)
    if current is None or current.status == "submitted" or not drafts:
        return {**outcome, "idempotent": True}
    if current.status != "stale":
        if holds_the_drafts(current, drafts) and issued_under_current_prompt(current):
            recall = run_recall(conn, owner, drafts)
            if recall_still_holds(current, recall):
                if current.task_id == outcome["adjudicationTaskId"]:
                    return {**outcome, "idempotent": True}
                document = adjudication_task_document(
                    current.task_id, current.binding, drafts, recall
                )
                return {**_with_task(outcome, document, recall), "idempotent": True}
        tasks.mark_stale(conn, current.task_id, lease_epoch=current.lease_epoch)
    document, recall = issue_adjudication_task(
        conn,
        owner=owner,
        extraction_task_id=task.task_id,
        response_digest=response_digest,
        drafts=drafts,
        now=now,
    )
    return {**_with_task(outcome, document, recall), "idempotent": True}


def _with_task(
    outcome: dict[str, Any], document: dict[str, Any], recall: dedup.RecallResult
) -> dict[str, Any]:
    return {
        **outcome,
        "adjudicationTaskId": document["taskId"],
        "adjudicationTask": document,
        "recallComparison": recall_comparison(recall),
    }


class RecallTaskSources:
    """`TaskSources` backed by `memory.recall.load_task_source` (re-derivation from the index)."""

    def __init__(
        self,
        index_conn: sqlite3.Connection,
        state_conn: sqlite3.Connection,
        identity: Any,  # teamlore.repo.binding.RepositoryIdentity
        *,
        home: Any = None,
    ) -> None:
        self._index = index_conn
        self._state = state_conn
        self._identity = identity
        self._home = home
        self._loaded: dict[str, Any] = {}

    def _source(self, task: Task) -> Any:
        from teamlore.memory.extraction.recall import load_task_source

        if task.task_id not in self._loaded:
            self._loaded[task.task_id] = load_task_source(
                self._index, self._state, self._identity, task.task_id, home=self._home
            )
        return self._loaded[task.task_id]

    def evidence_index(self, task: Task) -> Mapping[str, EvidenceRecord]:
        return {
            evidence_id: EvidenceRecord(
                evidence_id=record.evidence_id,
                kind=record.kind,
                pointer_digest=record.pointer_digest,
                strength=record.strength,
                limitations=tuple(sorted(record.limitations)),
                relation=record.relations[0] if record.relations else None,
                session_key=record.session_key,
                revision=record.turn_revision,
            )
            for evidence_id, record in self._source(task).evidence.items()
        }

    def drifted_inputs(self, task: Task) -> list[str]:
        return list(self._source(task).stale_reasons)
