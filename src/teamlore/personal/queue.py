"""The durable observation queue: enqueue, claim with a lease, backoff, dead letter, retry.

Rules (docs/personal.md; glossary: provenance class, Writer):
- Idempotency: `(namespace, key)` is unique. The same key with the same digest, scope and source
  is a duplicate (`duplicate: true`, nothing queued); anything else is `SUBMISSION_CONFLICT`.
- Provenance is assigned by the host from `source`, never from the text. A source with no
  provenance class is stored `quarantined` with `UNAUTHORIZED_SOURCE` and never reaches a model.
- A batch has one scope and one provenance class, so user turns, agent imports and document
  imports never share a batch.
- Imports (`agent_observation`, `document_import`) are claimable at once; relayed user turns wait
  for the batch triggers (count, bytes, idle, max wait) unless the claim is forced (`flush`).
- A job that fails goes to `retry` with exponential backoff and, at `max_attempts`, to `dead`
  with its observations. Only its own scope waits behind it: other scopes keep flowing.
- `retry_job` releases a dead (or backing-off) job's observations to a fresh job: the attempt
  counter starts again.

Times are epoch seconds passed in by the caller (`now`), so tests drive the clock.
"""

from __future__ import annotations

import hashlib
import sqlite3
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from teamlore.core import errors
from teamlore.core.db import write_tx
from teamlore.core.shapes.records import Record
from teamlore.core.timeutil import format_instant

if TYPE_CHECKING:  # the schema loads with the Writer, not with a hook that queues a turn
    from teamlore.personal.config import PersonalSettings

SOURCE_PROVENANCE: dict[str, str] = {
    "interactive": "user_explicit",
    "rpc": "user_explicit",
    "mcp_user_submission": "user_explicit",
    "agent_import": "agent_observation",
    "document_import": "document_import",
}
IMPORT_PROVENANCE = frozenset({"agent_observation", "document_import"})

ObservationState = Literal["pending", "claimed", "processed", "quarantined", "dead"]


def provenance_of(source: str) -> str | None:
    return SOURCE_PROVENANCE.get(source)


def is_import_source(source: str) -> bool:
    return provenance_of(source) in IMPORT_PROVENANCE


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def instant(now: float) -> str:
    return format_instant(datetime.fromtimestamp(now, UTC))


class EnqueueItem(Record, frozen=True):
    """One observation to queue."""

    namespace: str
    key: str
    text: str
    scope: str
    source: str


class EnqueueResult(Record, frozen=True):
    """What queueing one observation did (a duplicate is queued once)."""

    observation_id: int
    duplicate: bool
    state: str
    issue: str | None


# the code's own `next` is team memory's (recall again); a personal id is the caller's to choose
PERSONAL_CONFLICT_NEXT = "Keep the first submission; send the new content under a new id."


def enqueue_in_tx(conn: sqlite3.Connection, item: EnqueueItem, *, now: float) -> EnqueueResult:
    """Enqueue inside the caller's write transaction."""
    digest = text_digest(item.text)
    row = conn.execute(
        "SELECT id, digest, scope, source, state, issue FROM observations"
        " WHERE namespace = ? AND key = ?",
        (item.namespace, item.key),
    ).fetchone()
    if row is not None:
        if (row["digest"], row["scope"], row["source"]) != (digest, item.scope, item.source):
            raise errors.TeamloreError(
                errors.SUBMISSION_CONFLICT,
                "this id was already submitted with a different payload; use a new id",
            ).advising(PERSONAL_CONFLICT_NEXT)
        return EnqueueResult(row["id"], True, row["state"], row["issue"])
    provenance = provenance_of(item.source)
    state, issue = ("pending", None) if provenance else ("quarantined", "UNAUTHORIZED_SOURCE")
    cursor = conn.execute(
        "INSERT INTO observations (namespace, key, text, digest, scope, source, provenance,"
        " state, observed_at, enqueued_at, issue) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            item.namespace,
            item.key,
            item.text,
            digest,
            item.scope,
            item.source,
            provenance,
            state,
            instant(now),
            now,
            issue,
        ),
    )
    assert cursor.lastrowid is not None
    return EnqueueResult(cursor.lastrowid, False, state, issue)


def enqueue(conn: sqlite3.Connection, item: EnqueueItem, *, now: float) -> EnqueueResult:
    with write_tx(conn):
        return enqueue_in_tx(conn, item, now=now)


def enqueue_all(
    conn: sqlite3.Connection, items: list[EnqueueItem], *, now: float
) -> list[EnqueueResult]:
    """Enqueue several items in one transaction: all or nothing."""
    with write_tx(conn):
        return [enqueue_in_tx(conn, item, now=now) for item in items]


class Job(Record, frozen=True):
    """A batch of observations the Writer claimed."""

    id: str
    scope: str
    provenance: str
    token: str
    generation: int
    attempts: int
    observation_ids: tuple[int, ...]


def _job_members(conn: sqlite3.Connection, job_id: str) -> tuple[int, ...]:
    rows = conn.execute(
        "SELECT id FROM observations WHERE job_id = ? AND state = 'claimed' ORDER BY id",
        (job_id,),
    ).fetchall()
    return tuple(r["id"] for r in rows)


def _mark_dead(conn: sqlite3.Connection, job_id: str, issue: str | None, now: float) -> None:
    conn.execute(
        "UPDATE jobs SET state = 'dead', issue = COALESCE(?, issue), updated_at = ? WHERE id = ?",
        (issue, instant(now), job_id),
    )
    conn.execute(
        "UPDATE observations SET state = 'dead', issue = COALESCE(?, issue)"
        " WHERE job_id = ? AND state = 'claimed'",
        (issue, job_id),
    )


def _reclaim(conn: sqlite3.Connection, settings: PersonalSettings, now: float) -> Job | None:
    """Re-lease the oldest job whose lease expired or whose backoff ended (its frozen batch)."""
    rows = conn.execute(
        "SELECT * FROM jobs WHERE state IN ('running', 'retry') ORDER BY created_at, rowid"
    ).fetchall()
    for row in rows:
        if row["state"] == "running" and row["lease_expires"] > now:
            continue
        if row["state"] == "retry" and row["available_at"] > now:
            continue
        members = _job_members(conn, row["id"])
        if not members:
            conn.execute("UPDATE jobs SET state = 'done' WHERE id = ?", (row["id"],))
            continue
        if row["attempts"] >= settings.queue.max_attempts:
            _mark_dead(conn, row["id"], row["issue"] or "STALE_LEASE", now)
            continue
        token = uuid.uuid4().hex
        conn.execute(
            "UPDATE jobs SET state = 'running', token = ?, generation = generation + 1,"
            " attempts = attempts + 1, lease_expires = ?, updated_at = ? WHERE id = ?",
            (token, now + settings.queue.lease_seconds, instant(now), row["id"]),
        )
        return Job(
            row["id"],
            row["scope"],
            row["provenance"],
            token,
            row["generation"] + 1,
            row["attempts"] + 1,
            members,
        )
    return None


def _user_turns_ready(pending: list[sqlite3.Row], settings: PersonalSettings, now: float) -> bool:
    turns = [r for r in pending if r["provenance"] == "user_explicit"]
    if not turns:
        return False
    triggers = settings.batch
    total_bytes = sum(len((r["text"] or "").encode("utf-8")) for r in turns)
    oldest, newest = turns[0]["enqueued_at"], turns[-1]["enqueued_at"]
    return (
        len(turns) >= triggers.turn_threshold
        or total_bytes >= triggers.byte_threshold
        or now - oldest >= triggers.max_wait_seconds
        or now - newest >= triggers.idle_seconds
    )


def claim(
    conn: sqlite3.Connection, settings: PersonalSettings, *, now: float, force: bool = False
) -> Job | None:
    """Claim the next batch (or re-lease an expired/backed-off job); None when nothing is due."""
    with write_tx(conn):
        job = _reclaim(conn, settings, now)
        if job is not None:
            return job
        blocked = {
            r["scope"]
            for r in conn.execute("SELECT scope FROM jobs WHERE state IN ('running', 'retry')")
        }
        pending = [
            r
            for r in conn.execute(
                "SELECT id, scope, provenance, text, enqueued_at FROM observations"
                " WHERE state = 'pending' ORDER BY id"
            )
            if r["scope"] not in blocked
        ]
        turns_ready = force or _user_turns_ready(pending, settings, now)
        head = next((r for r in pending if r["provenance"] != "user_explicit" or turns_ready), None)
        if head is None:
            return None
        members: list[int] = []
        for row in pending:
            if row["id"] < head["id"] or row["scope"] != head["scope"]:
                continue
            if row["provenance"] != head["provenance"]:
                break
            members.append(row["id"])
            if len(members) >= settings.queue.max_batch_observations:
                break
        job_id = uuid.uuid4().hex
        token = uuid.uuid4().hex
        stamp = instant(now)
        conn.execute(
            "INSERT INTO jobs (id, scope, provenance, token, generation, state, lease_expires,"
            " attempts, available_at, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, 1, 'running', ?, 1, ?, ?, ?)",
            (
                job_id,
                head["scope"],
                head["provenance"],
                token,
                now + settings.queue.lease_seconds,
                now,
                stamp,
                stamp,
            ),
        )
        conn.executemany(
            "UPDATE observations SET state = 'claimed', job_id = ? WHERE id = ?",
            [(job_id, member) for member in members],
        )
        return Job(job_id, head["scope"], head["provenance"], token, 1, 1, tuple(members))


def renew_lease(conn: sqlite3.Connection, job: Job, *, now: float, lease_seconds: float) -> bool:
    """Push the lease of a job we still hold to `now + lease_seconds` (the Writer's heartbeat
    while its model call is in flight); False when it is no longer ours or already ended."""
    with write_tx(conn):
        cursor = conn.execute(
            "UPDATE jobs SET lease_expires = ? WHERE id = ? AND token = ? AND generation = ?"
            " AND state = 'running' AND lease_expires > ?",
            (now + lease_seconds, job.id, job.token, job.generation, now),
        )
        return cursor.rowcount == 1


_RAISE_THE_LEASE = (
    "the model call took longer than the lease and it was not renewed in time (the Writer"
    " renews it while the call runs, unless the process was paused or starved); if it happens"
    " again, raise `lease_seconds` in `[personal.queue]` of config.toml above the model's"
    " slowest answer"
)


def assert_lease(conn: sqlite3.Connection, job: Job, *, now: float) -> None:
    """Inside a write transaction: the job is still ours (same token and generation, unexpired)."""
    row = conn.execute(
        "SELECT token, generation, state, lease_expires FROM jobs WHERE id = ?", (job.id,)
    ).fetchone()
    if row is None or row["state"] != "running":
        raise errors.TeamloreError(errors.STALE_LEASE, f"job {job.id} is no longer held")
    if row["token"] != job.token or row["generation"] != job.generation:
        raise errors.TeamloreError(
            errors.STALE_LEASE,
            f"job {job.id} is no longer held: its lease ended and another Writer took it over;"
            f" {_RAISE_THE_LEASE}",
        )
    if row["lease_expires"] <= now:
        raise errors.TeamloreError(
            errors.STALE_LEASE,
            f"job {job.id} is no longer held: its lease ended at {instant(row['lease_expires'])};"
            f" {_RAISE_THE_LEASE}",
        )


def fail(
    conn: sqlite3.Connection,
    job: Job,
    code: str,
    settings: PersonalSettings,
    *,
    now: float,
    permanent: bool = False,
) -> str:
    """Record a failure: `retry` with backoff, or `dead` at max attempts / permanent errors.

    Returns the job's new state. A job we no longer hold is left alone ("stale").
    """
    with write_tx(conn):
        try:
            assert_lease(conn, job, now=now)
        except errors.TeamloreError:
            return "stale"
        if permanent or job.attempts >= settings.queue.max_attempts:
            _mark_dead(conn, job.id, code, now)
            return "dead"
        delay = min(
            settings.queue.backoff_cap_seconds,
            settings.queue.backoff_base_seconds * 2 ** (job.attempts - 1),
        )
        conn.execute(
            "UPDATE jobs SET state = 'retry', issue = ?, available_at = ?, updated_at = ?"
            " WHERE id = ?",
            (code, now + delay, instant(now), job.id),
        )
        return "retry"


def quarantine(
    conn: sqlite3.Connection, job: Job, observation_ids: list[int], code: str, *, now: float
) -> None:
    """Quarantine members of a job (final for that content); an emptied job is done."""
    with write_tx(conn):
        conn.executemany(
            "UPDATE observations SET state = 'quarantined', issue = ?, job_id = NULL"
            " WHERE id = ? AND job_id = ?",
            [(code, oid, job.id) for oid in observation_ids],
        )
        if not _job_members(conn, job.id):
            conn.execute(
                "UPDATE jobs SET state = 'done', issue = ?, updated_at = ? WHERE id = ?",
                (code, instant(now), job.id),
            )


def release(conn: sqlite3.Connection, job: Job, observation_ids: list[int]) -> None:
    """Return trailing members to `pending` (the request cap trimmed them); FIFO is kept."""
    with write_tx(conn):
        conn.executemany(
            "UPDATE observations SET state = 'pending', job_id = NULL WHERE id = ? AND job_id = ?",
            [(oid, job.id) for oid in observation_ids],
        )


def retry_job(conn: sqlite3.Connection, job_id: str, *, now: float) -> int:
    """Explicit retry: a dead or backing-off job's observations go back to `pending` for a new
    job (attempts start again). Returns how many observations were requeued."""
    with write_tx(conn):
        row = conn.execute(
            "SELECT state, lease_expires FROM jobs WHERE id = ?", (job_id,)
        ).fetchone()
        if row is None:
            raise errors.TeamloreError(errors.JOB_NOT_FOUND, f"no job {job_id}")
        if row["state"] == "running" and row["lease_expires"] <= now:  # its Writer is gone
            raise errors.TeamloreError(
                errors.NOTHING_TO_RETRY,
                f"job {job_id}'s lease ended at {instant(row['lease_expires'])}: the Writer that"
                " held it is gone or late",
            ).advising("`teamlore personal flush` takes it over and runs it.")
        if row["state"] == "running":  # a Writer holds it (or held it, until its lease ends)
            raise errors.TeamloreError(
                errors.NOTHING_TO_RETRY,
                f"job {job_id} is running until {instant(row['lease_expires'])}",
            ).advising(
                "Wait until then; `teamlore personal flush` then runs it if it is unfinished."
            )
        if row["state"] not in ("dead", "retry"):
            raise errors.TeamloreError(errors.NOTHING_TO_RETRY, f"job {job_id} is {row['state']}")
        member_state = "dead" if row["state"] == "dead" else "claimed"
        cursor = conn.execute(
            "UPDATE observations SET state = 'pending', job_id = NULL, issue = NULL"
            " WHERE job_id = ? AND state = ?",
            (job_id, member_state),
        )
        conn.execute(
            "UPDATE jobs SET state = 'retired', updated_at = ? WHERE id = ?",
            (instant(now), job_id),
        )
        return cursor.rowcount


class ObservationStatus(Record, frozen=True):
    """Where one observation is: its state, and what retained it."""

    observation_id: int
    state: str
    issue: str | None
    retained_in: list[str]
    job_id: str | None
    job_state: str | None
    attempts: int | None
    retry_at: str | None
    # when the lease of its running job ends: a Writer holds it until then (or held it and
    # was killed: the next run after that takes the job again; `retry_job` refuses it before)
    lease_ends: str | None = None


def observation_status(conn: sqlite3.Connection, observation_id: int) -> ObservationStatus:
    row = conn.execute(
        "SELECT o.id, o.state, o.issue, o.job_id, j.state AS job_state, j.attempts,"
        " j.available_at, j.lease_expires, j.issue AS job_issue FROM observations o"
        " LEFT JOIN jobs j ON j.id = o.job_id WHERE o.id = ?",
        (observation_id,),
    ).fetchone()
    retained = sorted(
        {
            r["target"]
            for r in conn.execute(
                "SELECT target FROM associations WHERE observation_id = ?", (observation_id,)
            )
        }
    )
    processed = row["state"] == "processed"
    retry_at = (
        instant(row["available_at"]) if row["job_state"] == "retry" and not processed else None
    )
    lease_ends = (
        instant(row["lease_expires"]) if row["job_state"] == "running" and not processed else None
    )
    issue = None if processed else (row["issue"] or row["job_issue"])
    return ObservationStatus(
        row["id"],
        row["state"],
        issue,
        retained,
        row["job_id"],
        row["job_state"],
        row["attempts"],
        retry_at,
        lease_ends,
    )


class Blocker(Record, frozen=True):
    """The job a pending observation waits behind: one job per scope runs at a time, so a job
    of its scope that is running (leased) or backing off holds it back."""

    job_id: str
    job_state: str  # running | retry
    until: str  # when its lease ends or its backoff is over
    issue: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "jobId": self.job_id,
            "jobState": self.job_state,
            "until": self.until,
            "issue": self.issue,
        }


def blocker(conn: sqlite3.Connection, observation_id: int) -> Blocker | None:
    """The job `observation_id` waits behind, when it is pending and one holds its scope."""
    row = conn.execute(
        "SELECT j.id, j.state, j.lease_expires, j.available_at, j.issue FROM observations o"
        " JOIN jobs j ON j.scope = o.scope AND j.state IN ('running', 'retry')"
        " WHERE o.id = ? AND o.state = 'pending' ORDER BY j.created_at LIMIT 1",
        (observation_id,),
    ).fetchone()
    if row is None:
        return None
    until = row["lease_expires"] if row["state"] == "running" else row["available_at"]
    return Blocker(row["id"], row["state"], instant(until), row["issue"])


def find_observation(conn: sqlite3.Connection, namespace: str, key: str) -> int | None:
    row = conn.execute(
        "SELECT id FROM observations WHERE namespace = ? AND key = ?", (namespace, key)
    ).fetchone()
    return None if row is None else int(row["id"])
