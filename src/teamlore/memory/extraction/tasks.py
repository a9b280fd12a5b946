"""Extraction and adjudication tasks in the state DB: claim, lease, submission, audit.

Claim and submission (glossary: recall / task; docs/extraction.md "recall"):
- **claim** takes a `pending` task, or a `claimed` one whose lease has expired, in one
  `UPDATE … WHERE`: the database decides races between processes (CLI vs a running MCP server).
  Each claim bumps `lease_epoch` and mints a fresh random `claim_token`. `submitted` and `stale`
  tasks are never claimable again.
- **submit** (the shared gate of every submission, inside the submit transaction): a caller that
  holds a token must present the current one, on a `claimed`, unexpired lease (`LEASE_LOST`
  otherwise: a holder whose lease expired and was reclaimed is stopped by the token CAS). A task
  that already has an accepted submission answers an identical response (same digest) with the
  recorded outcome, and refuses a different one with `SUBMISSION_CONFLICT` after writing an audit
  row to `submission_conflicts` that is committed although the submission is refused.
- The agent-native path has no token: it claims and submits in the same transaction.

`write_tx_committing_refusal` is `core.db.write_tx` with one addition: raising `CommitThenRaise`
commits what the transaction wrote so far (an audit row, a task marked stale) and then raises
the refusal. Everything else rolls back.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

import orjson

from teamlore.core import errors
from teamlore.core.canonical import canonical_json, digest
from teamlore.core.timeutil import now_ms as now_ms

DEFAULT_LEASE_MS = 300_000  # 5 minutes, the agent path's lease
MAX_LEASE_MS = 86_400_000
AGENT_HOLDER = "teamlore-agent"
_P = ParamSpec("_P")
_R = TypeVar("_R")

TaskKind = Literal["extraction", "adjudication", "consolidation"]
TaskStatus = Literal["pending", "claimed", "submitted", "stale"]


@dataclass(frozen=True, slots=True)
class Owner:
    repository_key: str
    worktree_key: str


@dataclass(frozen=True, slots=True)
class Task:
    task_id: str
    kind: TaskKind
    owner: Owner
    chunk_ref: str | None
    draft_batch_ref: str | None
    binding: dict[str, Any]
    status: TaskStatus
    lease_holder: str | None
    lease_epoch: int
    claim_token: str | None
    lease_expires_at: int | None
    created_at: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Task:
        return cls(
            task_id=row["task_id"],
            kind=row["kind"],
            owner=Owner(row["repository_key"], row["worktree_key"]),
            chunk_ref=row["chunk_ref"],
            draft_batch_ref=row["draft_batch_ref"],
            binding=orjson.loads(row["binding_json"]),
            status=row["status"],
            lease_holder=row["lease_holder"],
            lease_epoch=int(row["lease_epoch"]),
            claim_token=row["claim_token"],
            lease_expires_at=row["lease_expires_at"],
            created_at=int(row["created_at"]),
        )

    def lease_live(self, now: int) -> bool:
        return (
            self.status == "claimed"
            and self.lease_expires_at is not None
            and self.lease_expires_at >= now
        )


@dataclass(frozen=True, slots=True)
class Claim:
    task_id: str
    holder: str
    claim_token: str
    lease_epoch: int
    lease_expires_at: int


class CommitThenRaise(Exception):
    """Commit the transaction's writes so far, then raise `error`."""

    def __init__(self, error: errors.TeamloreError) -> None:
        super().__init__(str(error))
        self.error = error


@contextmanager
def write_tx_committing_refusal(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except CommitThenRaise as signal:
        conn.execute("COMMIT")
        raise signal.error from None
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


# --------------------------------------------------------------------------------------------
# reading and creating


def find_task(conn: sqlite3.Connection, task_id: str) -> Task | None:
    row = conn.execute("SELECT * FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
    return None if row is None else Task.from_row(row)


def load_task(
    conn: sqlite3.Connection, task_id: str, *, owner: Owner, kind: TaskKind | None = None
) -> Task:
    """The task, if it belongs to `owner` (another owner's task is reported as not found)."""
    task = find_task(conn, task_id)
    if task is None or task.owner != owner or (kind is not None and task.kind != kind):
        raise errors.TeamloreError(
            errors.TASK_NOT_FOUND,
            f"no {kind or ''} task {task_id!r} exists for this repository".replace("  ", " "),
            taskId=task_id,
        )
    return task


def load_bound_task(
    conn: sqlite3.Connection,
    task_id: str,
    binding: dict[str, Any],
    *,
    owner: Owner,
    kind: TaskKind,
    mismatch: str,
) -> Task:
    """`load_task`, then refuse (`BINDING_MISMATCH`, message `mismatch`) a submission whose
    binding is not the one issued with the task."""
    return load_task_bound_by_digest(
        conn, task_id, digest(binding), owner=owner, kind=kind, mismatch=mismatch
    )


def load_task_bound_by_digest(
    conn: sqlite3.Connection,
    task_id: str,
    binding_digest: str,
    *,
    owner: Owner,
    kind: TaskKind,
    mismatch: str,
) -> Task:
    """`load_bound_task` for a submission that echoes digest(binding) instead of the binding."""
    task = load_task(conn, task_id, owner=owner, kind=kind)
    if binding_digest != digest(task.binding):
        raise errors.TeamloreError(errors.BINDING_MISMATCH, mismatch, taskId=task.task_id)
    return task


def create_task(
    conn: sqlite3.Connection,
    *,
    task_id: str,
    kind: TaskKind,
    owner: Owner,
    binding: dict[str, Any],
    chunk_ref: str | None = None,
    draft_batch_ref: str | None = None,
    now: int,
) -> bool:
    """Insert a pending task inside the caller's transaction; False if it already existed."""
    cursor = conn.execute(
        "INSERT INTO tasks (task_id, kind, repository_key, worktree_key, chunk_ref, "
        "draft_batch_ref, binding_json, status, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?) ON CONFLICT (task_id) DO NOTHING",
        (
            task_id,
            kind,
            owner.repository_key,
            owner.worktree_key,
            chunk_ref,
            draft_batch_ref,
            canonical_json(binding).decode("utf-8"),
            now,
        ),
    )
    return cursor.rowcount == 1


# --------------------------------------------------------------------------------------------
# claim / lease


def claim_in_tx(
    conn: sqlite3.Connection,
    task_id: str,
    *,
    holder: str,
    lease_ms: int = DEFAULT_LEASE_MS,
    now: int,
) -> Claim:
    """tx-claim inside the caller's write transaction."""
    if not holder:
        raise errors.TeamloreError(errors.INVALID_ARGUMENT, "a lease needs a holder name")
    if not 1 <= lease_ms <= MAX_LEASE_MS:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, f"lease_ms must be between 1 and {MAX_LEASE_MS}"
        )
    import secrets  # only a claim needs a token

    token = secrets.token_hex(16)
    expires = now + lease_ms
    cursor = conn.execute(
        "UPDATE tasks SET status = 'claimed', lease_holder = ?, lease_epoch = lease_epoch + 1, "
        "claim_token = ?, lease_expires_at = ? WHERE task_id = ? AND (status = 'pending' OR "
        "(status = 'claimed' AND lease_expires_at < ?))",
        (holder, token, expires, task_id, now),
    )
    if cursor.rowcount != 1:
        task = find_task(conn, task_id)
        if task is None:
            raise errors.TeamloreError(errors.TASK_NOT_FOUND, taskId=task_id)
        if task.status == "stale":
            raise errors.TeamloreError(
                errors.TASK_STALE, f"task {task_id} is stale; recall again", taskId=task_id
            )
        raise errors.TeamloreError(
            errors.TASK_NOT_CLAIMABLE,
            f"task {task_id} is {task.status}"
            + (" by another holder" if task.status == "claimed" else ""),
            taskId=task_id,
            status=task.status,
        )
    epoch = conn.execute("SELECT lease_epoch FROM tasks WHERE task_id = ?", (task_id,)).fetchone()[
        0
    ]
    return Claim(task_id, holder, token, int(epoch), expires)


def claim_task(
    conn: sqlite3.Connection,
    task_id: str,
    *,
    holder: str,
    lease_ms: int = DEFAULT_LEASE_MS,
    now: int | None = None,
) -> Claim:
    """Claim a task in its own transaction (the runner path; the agent path claims in stage)."""
    with write_tx_committing_refusal(conn):
        return claim_in_tx(
            conn, task_id, holder=holder, lease_ms=lease_ms, now=now_ms() if now is None else now
        )


def release_claim(
    conn: sqlite3.Connection,
    task_id: str,
    claim_token: str,
    *,
    disposition: Literal["pending", "stale"] = "pending",
) -> None:
    """The token holder gives the task back (`pending`, retryable) or ends it (`stale`)."""
    with write_tx_committing_refusal(conn):
        cursor = conn.execute(
            "UPDATE tasks SET status = ?, lease_holder = NULL, claim_token = NULL, "
            "lease_expires_at = NULL WHERE task_id = ? AND status = 'claimed' "
            "AND claim_token = ?",
            (disposition, task_id, claim_token),
        )
        if cursor.rowcount != 1:
            raise errors.TeamloreError(errors.LEASE_LOST, taskId=task_id)


INVALID_RESULT_CODES = frozenset(
    {
        errors.STAGE_REQUEST_INVALID.code,
        errors.BATCH_TOO_LARGE.code,
        errors.EVIDENCE_NOT_IN_TASK.code,
        errors.STATEMENT_UNCITED.code,
        errors.ADJUDICATION_INVALID.code,
    }
)


def releases_claim_after_invalid_result(
    submit: Callable[Concatenate[sqlite3.Connection, Any, _P], _R],
) -> Callable[Concatenate[sqlite3.Connection, Any, _P], _R]:
    """Wrap a submission `submit(conn, document, …, claim_token=…)`: an invalid result is never
    submitted, and the claim its holder presented goes back to `pending` at once (docs/extraction.md
    "stage"), so the same exact authorization can be retried without waiting for the lease to
    expire. A token that no longer holds the task changes nothing."""

    def wrapper(
        conn: sqlite3.Connection, document: Any, /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _R:
        try:
            return submit(conn, document, *args, **kwargs)
        except errors.TeamloreError as refusal:
            token = kwargs.get("claim_token")
            task_id = document.get("taskId") if isinstance(document, dict) else None
            invalid = refusal.code in INVALID_RESULT_CODES
            if invalid and isinstance(token, str) and isinstance(task_id, str):
                with contextlib.suppress(errors.TeamloreError):
                    release_claim(conn, task_id, token)
            raise

    wrapper.__doc__, wrapper.__name__ = submit.__doc__, submit.__name__
    return wrapper


def mark_stale(conn: sqlite3.Connection, task_id: str, *, lease_epoch: int) -> bool:
    """Mark the task stale unless someone re-claimed it since (the epoch moved) or it ended."""
    cursor = conn.execute(
        "UPDATE tasks SET status = 'stale', lease_holder = NULL, claim_token = NULL, "
        "lease_expires_at = NULL WHERE task_id = ? AND lease_epoch = ? "
        "AND status IN ('pending', 'claimed')",
        (task_id, lease_epoch),
    )
    return cursor.rowcount == 1


def mark_submitted(conn: sqlite3.Connection, claim: Claim) -> None:
    cursor = conn.execute(
        "UPDATE tasks SET status = 'submitted', lease_expires_at = NULL WHERE task_id = ? "
        "AND status = 'claimed' AND claim_token = ? AND lease_epoch = ?",
        (claim.task_id, claim.claim_token, claim.lease_epoch),
    )
    if cursor.rowcount != 1:
        raise errors.TeamloreError(errors.LEASE_LOST, taskId=claim.task_id)


# --------------------------------------------------------------------------------------------
# submission gate


@dataclass(frozen=True, slots=True)
class Replay:
    """An identical submission was already accepted: its recorded outcome."""

    outcome: dict[str, Any]


def recorded_submission(
    conn: sqlite3.Connection, task_id: str
) -> tuple[str, dict[str, Any]] | None:
    row = conn.execute(
        "SELECT response_digest, outcome_json FROM submissions WHERE task_id = ?", (task_id,)
    ).fetchone()
    return None if row is None else (row[0], orjson.loads(row[1]))


def audit_conflict(
    conn: sqlite3.Connection, task_id: str, response_digest: str, *, now: int
) -> None:
    conn.execute(
        "INSERT INTO submission_conflicts (task_id, response_digest, received_at) VALUES (?, ?, ?)",
        (task_id, response_digest, now),
    )


def conflict_count(conn: sqlite3.Connection, task_id: str) -> int:
    return int(
        conn.execute(
            "SELECT count(*) FROM submission_conflicts WHERE task_id = ?", (task_id,)
        ).fetchone()[0]
    )


def check_replay(
    conn: sqlite3.Connection,
    task_id: str,
    response_digest: str,
    *,
    now: int,
    remedy: str | None = None,
) -> Replay | None:
    """Inside the submit transaction: the recorded outcome of an identical submission, None
    if the task has none yet; a different submission is audited and refused (committed), with
    `remedy` as its `next` when the kind of task has its own (a consolidation's comes from
    synthesize, not recall)."""
    recorded = recorded_submission(conn, task_id)
    if recorded is None:
        return None
    accepted, outcome = recorded
    if accepted == response_digest:
        return Replay(outcome)
    audit_conflict(conn, task_id, response_digest, now=now)
    refusal = errors.TeamloreError(
        errors.SUBMISSION_CONFLICT,
        f"task {task_id} was already submitted with different content",
        taskId=task_id,
        acceptedDigest=accepted,
        refusedDigest=response_digest,
    )
    raise CommitThenRaise(refusal if remedy is None else refusal.advising(remedy))


def acquire(
    conn: sqlite3.Connection,
    task_id: str,
    *,
    claim_token: str | None,
    holder: str = AGENT_HOLDER,
    lease_ms: int = DEFAULT_LEASE_MS,
    now: int,
) -> Claim:
    """The lease under which a submission is written (inside the submit transaction).

    With a token: it must be the task's current token on a live lease (`LEASE_LOST`). Without
    (agent path): the task is claimed here, so the claim and the submission commit together.
    """
    if claim_token is None:
        return claim_in_tx(conn, task_id, holder=holder, lease_ms=lease_ms, now=now)
    fresh = find_task(conn, task_id)  # re-read under the write lock
    if fresh is None:
        raise errors.TeamloreError(errors.TASK_NOT_FOUND, taskId=task_id)
    if fresh.claim_token != claim_token or not fresh.lease_live(now):
        raise errors.TeamloreError(
            errors.LEASE_LOST,
            f"task {task_id} is not claimed with this token on a live lease",
            taskId=task_id,
            status=fresh.status,
        )
    assert fresh.lease_holder is not None and fresh.lease_expires_at is not None
    return Claim(
        fresh.task_id, fresh.lease_holder, claim_token, fresh.lease_epoch, fresh.lease_expires_at
    )


def check_token(conn: sqlite3.Connection, task_id: str, claim_token: str | None) -> None:
    """A token holder whose token was superseded is refused before anything else."""
    if claim_token is None:
        return
    fresh = find_task(conn, task_id)
    if fresh is None:
        raise errors.TeamloreError(errors.TASK_NOT_FOUND, taskId=task_id)
    if fresh.claim_token != claim_token:
        raise errors.TeamloreError(
            errors.LEASE_LOST,
            f"task {task_id} is no longer claimed with this token",
            taskId=task_id,
        )


def record_submission(
    conn: sqlite3.Connection,
    claim: Claim,
    response_digest: str,
    outcome: dict[str, Any],
    *,
    now: int,
) -> None:
    """Accept the submission: task → submitted, outcome recorded for identical replays."""
    mark_submitted(conn, claim)
    conn.execute(
        "INSERT INTO submissions (task_id, response_digest, outcome_json, received_at) "
        "VALUES (?, ?, ?, ?)",
        (claim.task_id, response_digest, canonical_json(outcome).decode("utf-8"), now),
    )
