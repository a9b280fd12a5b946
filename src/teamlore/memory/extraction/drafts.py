"""Drafts and their assessments: parsing a CandidateDraftBatch@v1, evidence records and the task
sources a stage checks against, candidate rows and FTS, per-statement EvidenceAssessment@v1
(provenance strength, limitations, claim support)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import orjson
from pydantic import ValidationError

from teamlore.contracts import digests
from teamlore.contracts.evidence import EVIDENCE_ASSESSMENT_FORMAT
from teamlore.contracts.extraction import MAX_CANDIDATES_PER_BATCH, CandidateDraftBatch
from teamlore.core import db, errors
from teamlore.core.analyzer import ANALYZER_VERSION, analyze
from teamlore.core.canonical import canonical_json
from teamlore.memory.extraction.tasks import Owner, Task
from teamlore.memory.store.state_db import RECALL_ALGORITHM_VERSION, candidate_analyzer_version

if TYPE_CHECKING:  # dedup loads numpy: reading drafts (`memory status`) needs none of it
    from teamlore.memory.extraction import dedup

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


# why a task is stale, in words (recall.load_task_source's reasons; `<field>-changed` for each
# bound binding field): TASK_STALE's message says these, its `drifted` detail the codes
STALE_REASONS = {
    "session-excluded": "its session was excluded from extraction",
    "turns-already-extracted": "its turns were already extracted by another task",
    "turn-revision-changed": "a turn it holds was rewritten or is gone from the index",
    "chunk-changed": "its turns no longer make the same chunk",
    "databaseUuid-changed": "the memory state database was replaced",
    "owner-changed": "the repository or worktree it belongs to changed",
    "turnRevisions-changed": "a turn it holds was rewritten",
    "payloadDigests-changed": "a tool result it holds changed",
    "deliveryEdgeRevisions-changed": "the commits linked to its turns changed",
    "promptVersion-changed": "teamlore's extraction prompt changed since",
    "schemaVersion-changed": "the draft format changed since",
    "chunkerVersion-changed": "teamlore's chunker changed since",
}


def stale_task_error(task_id: str, reasons: Sequence[str], **details: Any) -> errors.TeamloreError:
    """TASK_STALE for `task_id`, its message naming why in words, each with its code."""
    why = [f"{STALE_REASONS.get(r, 'an input bound to it changed')} ({r})" for r in reasons]
    said = why[0] if len(why) == 1 else f"{'; '.join(why[:-1])}; and {why[-1]}"
    return errors.TeamloreError(
        errors.TASK_STALE,
        f"task {task_id} is stale: {said}; recall again",
        taskId=task_id,
        **details,
    )


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
    from teamlore.contracts.formats import PATTERN_NAMES

    return errors.from_validation_error(
        exc,
        errors.STAGE_REQUEST_INVALID,
        prefix=f"{contract}: ",
        patterns=PATTERN_NAMES,
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
        from teamlore.memory.extraction import dedup

        return dedup.DraftQuery(
            self.candidate_id, self.candidate_id, dedup.draft_text(self.payload)
        )

    def as_adjudication_draft(self) -> dict[str, Any]:
        keys = ("content", "type", "priority", "confidence", "scene", "statements")
        return {"candidateId": self.candidate_id, **{k: self.payload[k] for k in keys}}


def candidate_id(extraction_task_id: str, index: int) -> str:
    return f"{extraction_task_id}-c{index}"


def load_drafts(conn: sqlite3.Connection, draft_batch_ref: str) -> list[DraftRow]:
    """The drafts staged by the extraction task(s) of a batch that still await adjudication,
    in batch order. A draft that left the batch since — a person discarded it, another
    batch's `update`/`merge` consumed it — is not among them: the rest are adjudicated
    without it (docs/extraction.md "stage"), never held back by it."""
    rows: list[DraftRow] = []
    for extraction_task_id in draft_batch_ref.split():
        for row in conn.execute(
            "SELECT rowid, candidate_id, chunk_ref, revision, content_digest, payload_json, "
            "status, adjudication FROM candidates WHERE candidate_id LIKE ? ESCAPE '\\' "
            "AND status = 'draft' AND adjudication = 'pending' "
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
    from teamlore.memory.extraction import dedup

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
    keys, current = (owner.repository_key, owner.worktree_key), (None, ANALYZER_VERSION)
    if candidate_analyzer_version(conn, *keys) in current:
        return 0
    with db.write_tx(conn):
        if candidate_analyzer_version(conn, *keys) in current:
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


def awaiting_adjudication(conn: sqlite3.Connection, owner: Owner) -> list[str]:
    """Extraction tasks of `owner` with staged drafts that still await their adjudication (all
    of the batch, or those left when a person discarded one or another batch consumed one)."""
    rows = conn.execute(
        "SELECT t.task_id FROM tasks t JOIN submissions s ON s.task_id = t.task_id "
        "WHERE t.kind = 'extraction' AND t.status = 'submitted' "
        "AND t.repository_key = ? AND t.worktree_key = ? ORDER BY s.received_at, t.task_id",
        (owner.repository_key, owner.worktree_key),
    ).fetchall()
    waiting: list[str] = []
    for (task_id,) in rows:
        if load_drafts(conn, task_id):
            waiting.append(task_id)
    return waiting
