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
went stale (team memory changed), a fresh one is issued over the current recall.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
from pydantic import ValidationError

from teamlore.contracts import digests
from teamlore.contracts.adjudication import (
    ADJUDICATION_PROMPT_VERSION,
    ADJUDICATION_RESULT_FORMAT,
    ADJUDICATION_TASK_FORMAT,
    AdjudicationTask,
)
from teamlore.contracts.evidence import EVIDENCE_ASSESSMENT_FORMAT
from teamlore.contracts.extraction import MAX_CANDIDATES_PER_BATCH, CandidateDraftBatch
from teamlore.core import db, errors
from teamlore.core.analyzer import ANALYZER_VERSION, analyze
from teamlore.core.canonical import canonical_json, digest
from teamlore.core.failpoints import failpoint
from teamlore.memory.extraction import dedup, tasks
from teamlore.memory.extraction.prompts.adjudication import ADJUDICATION_PROMPT
from teamlore.memory.extraction.tasks import Owner, Task
from teamlore.memory.store.state_db import RECALL_ALGORITHM_VERSION, memory_state_uuid
from teamlore.models.embeddings import Embedder

STAGE_FORMAT = "threadshare-memory-agent-stage@v1"
STRENGTHS = ("direct", "observed", "candidate", "contextual", "unknown")  # strongest first


@dataclass(frozen=True, slots=True)
class EvidenceRecord:
    """What teamlore knows privately about one evidence id it issued with a task."""

    evidence_id: str
    kind: str  # commit | turn | path
    pointer_digest: str
    strength: str  # direct | observed | candidate | contextual | unknown
    limitations: tuple[str, ...] = ()
    relation: str | None = None
    session_key: str | None = None
    turn_key: str | None = None
    revision: str | None = None
    payload_sha256: str | None = None


class TaskSources(Protocol):
    """The recall side's knowledge of an extraction task's sources (memory/extraction/recall.py)."""

    def evidence_index(self, task: Task) -> Mapping[str, EvidenceRecord]:
        """Every evidence id issued with `task`, with its private pointer and strength."""
        ...

    def drifted_inputs(self, task: Task) -> list[str]:
        """The bound inputs of `task` that changed since it was issued (empty: not stale)."""
        ...


# --------------------------------------------------------------------------------------------
# parsing


def parse_draft_batch(document: Any) -> CandidateDraftBatch:
    if isinstance(document, dict):
        drafts = document.get("candidates")
        if isinstance(drafts, list) and len(drafts) > MAX_CANDIDATES_PER_BATCH:
            raise errors.TeamloreError(
                errors.BATCH_TOO_LARGE,
                f"{len(drafts)} candidates in one batch; at most {MAX_CANDIDATES_PER_BATCH}",
                candidates=len(drafts),
                limit=MAX_CANDIDATES_PER_BATCH,
            )
    try:
        return CandidateDraftBatch.from_wire(document)
    except ValidationError as exc:
        raise contract_error(exc, "CandidateDraftBatch@v1") from None


def contract_error(exc: ValidationError, contract: str) -> errors.TeamloreError:
    where, _ = errors.first_problem(exc, "document")
    return errors.from_validation_error(
        exc,
        errors.STAGE_REQUEST_INVALID,
        prefix=f"{contract}: ",
        default_location="document",
        contract=contract,
        location=where,
        problems=exc.error_count(),
    )


# --------------------------------------------------------------------------------------------
# drafts and assessments


@dataclass(frozen=True, slots=True)
class DraftRow:
    rowid: int
    candidate_id: str
    chunk_ref: str
    revision: int
    content_digest: str
    payload: dict[str, Any]
    status: str
    adjudication: str

    def query(self) -> dedup.DraftQuery:
        return dedup.DraftQuery(
            self.candidate_id, self.candidate_id, dedup.draft_text(self.payload)
        )

    def as_adjudication_draft(self) -> dict[str, Any]:
        keys = ("content", "type", "priority", "confidence", "scene", "statements")
        return {"candidateId": self.candidate_id, **{k: self.payload[k] for k in keys}}


def candidate_id(extraction_task_id: str, index: int) -> str:
    return f"{extraction_task_id}-c{index}"


def load_drafts(conn: sqlite3.Connection, draft_batch_ref: str) -> list[DraftRow]:
    """The candidates staged by the extraction task(s) of a batch, in batch order."""
    rows: list[DraftRow] = []
    for extraction_task_id in draft_batch_ref.split():
        for row in conn.execute(
            "SELECT rowid, candidate_id, chunk_ref, revision, content_digest, payload_json, "
            "status, adjudication FROM candidates WHERE candidate_id LIKE ? ESCAPE '\\' "
            "ORDER BY length(candidate_id), candidate_id",
            (_like_prefix(extraction_task_id) + "-c%",),
        ):
            rows.append(
                DraftRow(
                    int(row[0]),
                    row[1],
                    row[2],
                    int(row[3]),
                    row[4],
                    orjson.loads(row[5]),
                    row[6],
                    row[7],
                )
            )
    return rows


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def strongest(strengths: Sequence[str]) -> str:
    return min(strengths, key=STRENGTHS.index) if strengths else "unknown"


def weakest(strengths: Sequence[str]) -> str:
    return max(strengths, key=STRENGTHS.index) if strengths else "unknown"


def assess_statement(
    cand_id: str, statement: Mapping[str, Any], index: Mapping[str, EvidenceRecord]
) -> dict[str, Any]:
    """EvidenceAssessment@v1 of one statement (deterministic; claim support `unverified`)."""
    cited = sorted(set(statement["evidenceIds"]))
    records = [index[e] for e in cited]
    limitations = sorted({lim for r in records for lim in r.limitations})
    return {
        "format": EVIDENCE_ASSESSMENT_FORMAT,
        "candidateId": cand_id,
        "statementId": statement["statementId"],
        "citations": [
            {"evidenceId": r.evidence_id, "pointerDigest": r.pointer_digest} for r in records
        ],
        "provenanceStrength": strongest([r.strength for r in records]),
        "limitations": limitations,
        "claimSupport": "unverified",
        "assessedBy": "deterministic",
        "statementTextDigest": digests.statement_text_digest(statement["text"]),
        "revision": 1,
    }


def check_citations(batch: CandidateDraftBatch, index: Mapping[str, EvidenceRecord]) -> None:
    for number, draft in enumerate(batch.candidates, start=1):
        check_statement_citations(number, draft.statements, index)


def check_statement_citations(
    number: int, statements: Sequence[Any], index: Mapping[str, EvidenceRecord]
) -> None:
    """Candidate `number`'s statements each cite evidence, and only evidence this task issued."""
    if not statements:
        raise errors.TeamloreError(
            errors.STATEMENT_UNCITED,
            f"candidate {number} has no statements; every claim must cite evidence",
            candidate=number,
        )
    seen: set[str] = set()
    for statement in statements:
        if statement.statement_id in seen:
            raise errors.TeamloreError(
                errors.STAGE_REQUEST_INVALID,
                f"candidate {number}: statement id {statement.statement_id} is repeated",
                candidate=number,
                statementId=statement.statement_id,
                reason="duplicate-statement-id",
            )
        seen.add(statement.statement_id)
        if not statement.evidence_ids:
            raise errors.TeamloreError(
                errors.STATEMENT_UNCITED,
                f"candidate {number}: statement {statement.statement_id} cites no evidence",
                candidate=number,
                statementId=statement.statement_id,
            )
        for evidence_id in statement.evidence_ids:
            if evidence_id not in index:
                raise errors.TeamloreError(
                    errors.EVIDENCE_NOT_IN_TASK,
                    f"candidate {number}: statement {statement.statement_id} cites "
                    f"{evidence_id}, which this task did not issue",
                    candidate=number,
                    statementId=statement.statement_id,
                    evidenceId=evidence_id,
                )


def insert_candidate(
    conn: sqlite3.Connection,
    *,
    cand_id: str,
    owner: Owner,
    chunk_ref: str,
    payload: dict[str, Any],
    now: int,
    kind: str = "entry",
) -> None:
    """A new candidate at revision 1: an entry draft awaiting adjudication (and in the
    candidate FTS, for dedup), or a Skill quarantined directly (never deduplicated)."""
    status, adjudication = ("draft", "pending") if kind == "entry" else ("quarantined", "done")
    conn.execute(
        "INSERT INTO candidates (candidate_id, repository_key, worktree_key, chunk_ref, "
        "candidate_kind, revision, content_digest, payload_json, status, adjudication, "
        "updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)",
        (
            cand_id,
            owner.repository_key,
            owner.worktree_key,
            chunk_ref,
            kind,
            digests.content_digest(payload),
            canonical_json(payload).decode("utf-8"),
            status,
            adjudication,
            now,
        ),
    )
    if kind == "entry":
        index_candidate(conn, cand_id, payload)


def index_candidate(conn: sqlite3.Connection, cand_id: str, payload: dict[str, Any]) -> None:
    """(Re)write the candidate's FTS document (rowid = candidates.rowid)."""
    rowid = conn.execute(
        "SELECT rowid FROM candidates WHERE candidate_id = ?", (cand_id,)
    ).fetchone()[0]
    conn.execute("DELETE FROM candidate_fts WHERE rowid = ?", (rowid,))
    conn.execute(
        "INSERT INTO candidate_fts (rowid, searchable_text) VALUES (?, ?)",
        (rowid, analyze(dedup.candidate_searchable_text(payload))),
    )


def unindex_candidate(conn: sqlite3.Connection, cand_id: str) -> None:
    conn.execute(
        "DELETE FROM candidate_fts WHERE rowid = "
        "(SELECT rowid FROM candidates WHERE candidate_id = ?)",
        (cand_id,),
    )


def insert_assessment(
    conn: sqlite3.Connection,
    assessment: Mapping[str, Any],
    index: Mapping[str, EvidenceRecord],
    *,
    task_id: str,
) -> None:
    cand_id = assessment["candidateId"]
    statement_id = assessment["statementId"]
    for citation in assessment["citations"]:
        record = index[citation["evidenceId"]]
        conn.execute(
            "INSERT INTO evidence_refs (candidate_id, statement_id, evidence_id, pointer_digest, "
            "session_key, turn_key, revision, payload_sha256, relation, strength, "
            "limitations_json, task_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                cand_id,
                statement_id,
                record.evidence_id,
                record.pointer_digest,
                record.session_key,
                record.turn_key,
                record.revision,
                record.payload_sha256,
                record.relation,
                record.strength,
                canonical_json(sorted(record.limitations)).decode("utf-8"),
                task_id,
            ),
        )
    conn.execute(
        "INSERT INTO assessments (candidate_id, statement_id, citations_digest, "
        "provenance_strength, limitations_json, claim_support, assessed_by, "
        "statement_text_digest, revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            cand_id,
            statement_id,
            digests.citations_digest(assessment["citations"]),
            assessment["provenanceStrength"],
            canonical_json(assessment["limitations"]).decode("utf-8"),
            assessment["claimSupport"],
            assessment["assessedBy"],
            assessment["statementTextDigest"],
            assessment["revision"],
        ),
    )


def reanalyze_candidates(conn: sqlite3.Connection, owner: Owner) -> int:
    """Re-analyze the owner's candidate FTS documents when another analyzer version wrote them
    (`candidate_projection.analyzer_version`), as sync does for turns and the projection does
    for approved memory: dedup recall tokenizes its queries with the current analyzer, so
    old tokens would miss. Bumps the candidate generation (recall results may change).
    Returns how many documents were re-analyzed; 0 and no write when they are current."""
    if tasks.candidate_analyzer_version(conn, owner) in (None, ANALYZER_VERSION):
        return 0
    with db.write_tx(conn):
        if tasks.candidate_analyzer_version(conn, owner) in (None, ANALYZER_VERSION):
            return 0  # another process did it first
        indexed = conn.execute(
            "SELECT c.candidate_id, c.payload_json FROM candidates AS c"
            " JOIN candidate_fts AS f ON f.rowid = c.rowid"
            " WHERE c.repository_key = ? AND c.worktree_key = ? ORDER BY c.rowid",
            (owner.repository_key, owner.worktree_key),
        ).fetchall()
        for candidate_id, payload_json in indexed:
            index_candidate(conn, candidate_id, orjson.loads(payload_json))
        bump_candidate_generation(conn, owner)
    return len(indexed)


def bump_candidate_generation(conn: sqlite3.Connection, owner: Owner) -> int:
    conn.execute(
        "INSERT INTO candidate_projection (repository_key, worktree_key, generation, "
        "analyzer_version, recall_algorithm_version) VALUES (?, ?, 1, ?, ?) "
        "ON CONFLICT (repository_key, worktree_key) DO UPDATE SET "
        "generation = generation + 1, analyzer_version = excluded.analyzer_version, "
        "recall_algorithm_version = excluded.recall_algorithm_version",
        (owner.repository_key, owner.worktree_key, ANALYZER_VERSION, RECALL_ALGORITHM_VERSION),
    )
    return int(
        conn.execute(
            "SELECT generation FROM candidate_projection WHERE repository_key = ? "
            "AND worktree_key = ?",
            (owner.repository_key, owner.worktree_key),
        ).fetchone()[0]
    )


# --------------------------------------------------------------------------------------------
# the adjudication task


def run_recall(
    conn: sqlite3.Connection, owner: Owner, drafts: Sequence[DraftRow]
) -> dedup.RecallResult:
    return dedup.recall_rrf(
        conn,
        repository_key=owner.repository_key,
        worktree_key=owner.worktree_key,
        drafts=[d.query() for d in drafts],
    )


def adjudication_binding(
    conn: sqlite3.Connection, owner: Owner, drafts: Sequence[DraftRow], recall: dedup.RecallResult
) -> dict[str, Any]:
    uuid = memory_state_uuid(conn)
    return {
        "databaseUuid": uuid,
        "memoryStateUuid": uuid,
        "owner": {"repositoryKey": owner.repository_key, "worktreeKey": owner.worktree_key},
        "draftBatchDigest": digests.draft_batch_digest([d.as_adjudication_draft() for d in drafts]),
        "approvedProjection": recall.approved_projection.to_json(),
        "candidateProjection": recall.candidate_projection.to_json(),
        "recallAlgorithmVersion": recall.algorithm,
        "recallQueryDigest": recall.recall_query_digest,
        "resultSetDigest": recall.result_set_digest,
        "poolItemRevisions": recall.pool_item_revisions(),
        "promptVersion": ADJUDICATION_PROMPT_VERSION,
        "schemaVersion": ADJUDICATION_RESULT_FORMAT,
    }


def adjudication_task_document(
    task_id: str,
    binding: Mapping[str, Any],
    drafts: Sequence[DraftRow],
    recall: dedup.RecallResult,
) -> dict[str, Any]:
    """AdjudicationTask@v1 (validated against the contract before it leaves teamlore)."""
    document = {
        "format": ADJUDICATION_TASK_FORMAT,
        "taskId": task_id,
        "lease": {"holder": tasks.AGENT_HOLDER, "expiresAt": 0},
        "binding": dict(binding),
        "drafts": [d.as_adjudication_draft() for d in drafts],
        "recallSets": [s.to_json() for s in recall.recall_sets],
        "pool": [p.to_json() for p in recall.pool],
        "contract": {
            "resultSchema": ADJUDICATION_RESULT_FORMAT,
            "prompts": {
                "promptVersion": ADJUDICATION_PROMPT_VERSION,
                "adjudication": ADJUDICATION_PROMPT,
            },
        },
    }
    return AdjudicationTask.from_wire(document).to_wire()


def issue_adjudication_task(
    conn: sqlite3.Connection,
    *,
    owner: Owner,
    extraction_task_id: str,
    response_digest: str,
    drafts: Sequence[DraftRow],
    now: int,
) -> tuple[dict[str, Any], dedup.RecallResult]:
    """Recall over the drafts and record a pending adjudication task bound to the result set."""
    recall = run_recall(conn, owner, drafts)
    binding = adjudication_binding(conn, owner, drafts, recall)
    task_id = digests.agent_adjudication_task_id(
        extraction_task_id, response_digest, recall.result_set_digest
    )
    issue = 0
    while not tasks.create_task(
        conn,
        task_id=task_id,
        kind="adjudication",
        owner=owner,
        binding=binding,
        draft_batch_ref=extraction_task_id,
        now=now,
    ):
        # the pool came back to a result set whose task already ended: a new id, same binding
        issue += 1
        task_id = digests.agent_adjudication_task_id(
            extraction_task_id, response_digest, digest([recall.result_set_digest, issue])
        )
    return adjudication_task_document(task_id, binding, drafts, recall), recall


def recall_comparison(recall: dedup.RecallResult) -> dict[str, Any]:
    return {
        "recallAlgorithmVersion": recall.algorithm,
        "recallSets": [s.to_json() for s in recall.recall_sets],
        "pool": [p.to_json() for p in recall.pool],
        "resultSetDigest": recall.result_set_digest,
        "approvedCoverage": recall.approved_projection.coverage,
    }


# --------------------------------------------------------------------------------------------
# the operation


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
                errors.TeamloreError(
                    errors.TASK_STALE,
                    f"{len(drifted)} input(s) bound to task {task.task_id} changed; recall again",
                    taskId=task.task_id,
                    drifted=drifted[:20],
                )
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
        "user, then stage the AdjudicationResult@v1.",
    }


def _replayed(
    conn: sqlite3.Connection,
    owner: Owner,
    task: Task,
    outcome: dict[str, Any],
    response_digest: str,
    now: int,
) -> dict[str, Any]:
    """The recorded outcome; with a fresh adjudication task if the recorded one went stale."""
    if outcome.get("noOp"):
        return {**outcome, "idempotent": True}
    current = _latest_adjudication_task(conn, task.task_id)
    drafts = load_drafts(conn, task.task_id)
    live = all(d.status == "draft" and d.adjudication == "pending" for d in drafts)
    if current is None or current.status == "submitted" or not live:
        return {**outcome, "idempotent": True}
    if current.status != "stale":
        recall = run_recall(conn, owner, drafts)
        if recall.result_set_digest == current.binding["resultSetDigest"]:
            if current.task_id == outcome["adjudicationTaskId"]:
                return {**outcome, "idempotent": True}
            document = adjudication_task_document(current.task_id, current.binding, drafts, recall)
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


def _latest_adjudication_task(conn: sqlite3.Connection, extraction_task_id: str) -> Task | None:
    row = conn.execute(
        "SELECT * FROM tasks WHERE kind = 'adjudication' AND draft_batch_ref = ? "
        "ORDER BY created_at DESC, rowid DESC LIMIT 1",
        (extraction_task_id,),
    ).fetchone()
    return None if row is None else Task.from_row(row)


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


# --------------------------------------------------------------------------------------------
# the batch runner's view of adjudication (teamlore.runner, docs/runner.md)


def awaiting_adjudication(conn: sqlite3.Connection, owner: Owner) -> list[str]:
    """Extraction tasks of `owner` whose staged drafts still await their adjudication."""
    rows = conn.execute(
        "SELECT t.task_id FROM tasks t JOIN submissions s ON s.task_id = t.task_id "
        "WHERE t.kind = 'extraction' AND t.status = 'submitted' "
        "AND t.repository_key = ? AND t.worktree_key = ? ORDER BY s.received_at, t.task_id",
        (owner.repository_key, owner.worktree_key),
    ).fetchall()
    waiting: list[str] = []
    for (task_id,) in rows:
        drafts = load_drafts(conn, task_id)
        if drafts and all(d.status == "draft" and d.adjudication == "pending" for d in drafts):
            waiting.append(task_id)
    return waiting


def live_adjudication_task(
    conn: sqlite3.Connection, owner: Owner, extraction_task_id: str, *, reissue: bool = False
) -> dict[str, Any] | None:
    """The AdjudicationTask@v1 the drafts of `extraction_task_id` await right now.

    The recorded task when its recall result set still holds. Otherwise, with `reissue`, the
    old task is marked stale and a fresh one recorded (what a new runner plan needs); without
    it, None (read-only: an approval must not change state before it runs). None as well when
    the drafts no longer await adjudication."""
    drafts = load_drafts(conn, extraction_task_id)
    if not drafts or any(d.status != "draft" or d.adjudication != "pending" for d in drafts):
        return None
    current = _latest_adjudication_task(conn, extraction_task_id)
    recall = run_recall(conn, owner, drafts)
    live = current is not None and current.status in ("pending", "claimed")
    if (
        live
        and current is not None
        and (recall.result_set_digest == current.binding["resultSetDigest"])
    ):
        return adjudication_task_document(current.task_id, current.binding, drafts, recall)
    submission = conn.execute(
        "SELECT response_digest FROM submissions WHERE task_id = ?", (extraction_task_id,)
    ).fetchone()
    if not reissue or submission is None:
        return None
    with db.write_tx(conn):
        if live and current is not None:
            tasks.mark_stale(conn, current.task_id, lease_epoch=current.lease_epoch)
        document, _ = issue_adjudication_task(
            conn,
            owner=owner,
            extraction_task_id=extraction_task_id,
            response_digest=str(submission[0]),
            drafts=load_drafts(conn, extraction_task_id),
            now=tasks.now_ms(),
        )
    return document
