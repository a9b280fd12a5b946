"""The adjudication task a stage issues: the dedup recall over approved and candidate memory, the
binding of its result set, the AdjudicationTask@v1 document, and the batch runner's view of which
extraction tasks still await adjudication."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from teamlore.contracts import digests
from teamlore.contracts.adjudication import (
    ADJUDICATION_PROMPT_VERSION,
    ADJUDICATION_RESULT_FORMAT,
    ADJUDICATION_TASK_FORMAT,
    ANSWERABLE_PROMPT_VERSIONS,
    AdjudicationTask,
)
from teamlore.core import db
from teamlore.core.canonical import digest
from teamlore.memory.extraction import dedup, tasks
from teamlore.memory.extraction.drafts import DraftRow, load_drafts
from teamlore.memory.extraction.prompts.adjudication import ADJUDICATION_PROMPT
from teamlore.memory.extraction.tasks import Owner, Task
from teamlore.memory.store.state_db import memory_state_uuid

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


def draft_batch_digest(drafts: Sequence[DraftRow]) -> str:
    return digests.draft_batch_digest([d.as_adjudication_draft() for d in drafts])


def holds_the_drafts(task: Task, drafts: Sequence[DraftRow]) -> bool:
    """Whether the adjudication task was issued over exactly these drafts: not when one of its
    drafts left the batch since (discarded by a person, consumed by another batch)."""
    return bool(drafts) and task.binding["draftBatchDigest"] == draft_batch_digest(drafts)


def recall_still_holds(task: Task, recall: dedup.RecallResult) -> bool:
    """Whether the recall run now is the one the adjudication task was issued with: the same
    result set, ranked by the same algorithm (a hybrid task's rerun falls back to words alone
    when an approved entry has no vector yet, dedup.py; the two may agree on the set)."""
    return bool(
        recall.result_set_digest == task.binding["resultSetDigest"]
        and recall.algorithm == task.binding["recallAlgorithmVersion"]
    )


def issued_under_current_prompt(task: Task) -> bool:
    """Whether the task carries the adjudication prompt this teamlore sends: only such a task is
    shown again (a live task under an earlier prompt is issued again instead)."""
    return bool(task.binding["promptVersion"] == ADJUDICATION_PROMPT_VERSION)


def answer_is_read(task: Task) -> bool:
    """Whether a result to the task is read: it was issued under the current prompt or under an
    earlier one whose result has the same shape (ANSWERABLE_PROMPT_VERSIONS)."""
    return task.binding["promptVersion"] in ANSWERABLE_PROMPT_VERSIONS


def adjudication_binding(
    conn: sqlite3.Connection, owner: Owner, drafts: Sequence[DraftRow], recall: dedup.RecallResult
) -> dict[str, Any]:
    uuid = memory_state_uuid(conn)
    return {
        "databaseUuid": uuid,
        "memoryStateUuid": uuid,
        "owner": {"repositoryKey": owner.repository_key, "worktreeKey": owner.worktree_key},
        "draftBatchDigest": draft_batch_digest(drafts),
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
    """AdjudicationTask@v1 (validated against the contract before it leaves teamlore), under the
    binding's prompt version: the current one whenever the task is shown (issued or shown again);
    an earlier one only to check a result against the task it answers, which reads no prompt
    text (`submit_adjudication`)."""
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
                "promptVersion": binding["promptVersion"],
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


def _latest_adjudication_task(conn: sqlite3.Connection, extraction_task_id: str) -> Task | None:
    row = conn.execute(
        "SELECT * FROM tasks WHERE kind = 'adjudication' AND draft_batch_ref = ? "
        "ORDER BY created_at DESC, rowid DESC LIMIT 1",
        (extraction_task_id,),
    ).fetchone()
    return None if row is None else Task.from_row(row)


# --------------------------------------------------------------------------------------------
# the batch runner's view of adjudication (teamlore.runner, docs/runner.md)


def live_adjudication_task(
    conn: sqlite3.Connection,
    owner: Owner,
    extraction_task_ids: str | Sequence[str],
    *,
    reissue: bool = False,
) -> dict[str, Any] | None:
    """The AdjudicationTask@v1 the drafts of the extraction task(s) await right now: one task
    over every draft of a runner run (at most 64; docs/runner.md "Two approvals").

    The recorded task when it holds the drafts that still wait, carries the current prompt and
    its recall result set still holds. Otherwise, with `reissue`, the old task is marked stale
    and a fresh one recorded over the drafts that wait (what a new runner plan needs); without
    it, None (read-only: an approval must not change state before it runs). None as well when
    no draft awaits adjudication."""
    ids = (
        [extraction_task_ids] if isinstance(extraction_task_ids, str) else list(extraction_task_ids)
    )
    ref = " ".join(ids)
    drafts = load_drafts(conn, ref)
    if not drafts:
        return None
    current = _latest_adjudication_task(conn, ref)
    recall = run_recall(conn, owner, drafts)
    live = current is not None and current.status in ("pending", "claimed")
    if (
        live
        and current is not None
        and holds_the_drafts(current, drafts)
        and issued_under_current_prompt(current)
        and recall_still_holds(current, recall)
    ):
        return adjudication_task_document(current.task_id, current.binding, drafts, recall)
    submitted = [
        conn.execute("SELECT response_digest FROM submissions WHERE task_id = ?", (i,)).fetchone()
        for i in ids
    ]
    if not reissue or any(row is None for row in submitted):
        return None
    responses = [str(row[0]) for row in submitted]
    with db.write_tx(conn):
        if live and current is not None:
            tasks.mark_stale(conn, current.task_id, lease_epoch=current.lease_epoch)
        document, _ = issue_adjudication_task(
            conn,
            owner=owner,
            extraction_task_id=ref,
            response_digest=responses[0] if len(ids) == 1 else digest(responses),
            drafts=load_drafts(conn, ref),
            now=tasks.now_ms(),
        )
    return document
