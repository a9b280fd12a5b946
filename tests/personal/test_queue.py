"""The observation queue: idempotency, quarantine, batching, triggers, backoff, retry."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from personal_world import PROJECT, settings

from teamlore.core import errors
from teamlore.personal import queue
from teamlore.personal.runtime_db import open_runtime_db

T0 = 1_000_000.0


@pytest.fixture()
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = open_runtime_db(tmp_path / "personal")
    yield connection
    connection.close()


def _item(
    key: str, text: str = "x", scope: str = "global", source: str = "rpc"
) -> queue.EnqueueItem:
    return queue.EnqueueItem("ns", key, text, scope, source)


def test_same_key_same_payload_is_a_duplicate_another_payload_a_conflict(
    conn: sqlite3.Connection,
) -> None:
    first = queue.enqueue(conn, _item("k", "hello"), now=T0)
    again = queue.enqueue(conn, _item("k", "hello"), now=T0 + 1)
    assert (first.duplicate, again.duplicate, again.observation_id) == (
        False,
        True,
        first.observation_id,
    )
    with pytest.raises(errors.TeamloreError) as conflict:
        queue.enqueue(conn, _item("k", "changed"), now=T0)
    assert conflict.value.code == "SUBMISSION_CONFLICT"
    with pytest.raises(errors.TeamloreError):
        queue.enqueue(conn, _item("k", "hello", scope=PROJECT), now=T0)
    assert conn.execute("SELECT count(*) FROM observations").fetchone()[0] == 1


def test_a_source_without_provenance_is_quarantined_with_a_reason(
    conn: sqlite3.Connection,
) -> None:
    result = queue.enqueue(conn, _item("k", source="extension"), now=T0)
    assert (result.state, result.issue) == ("quarantined", "UNAUTHORIZED_SOURCE")
    assert queue.claim(conn, settings(), now=T0, force=True) is None
    assert [queue.provenance_of(s) for s in ("interactive", "agent_import", "document_import")] == [
        "user_explicit",
        "agent_observation",
        "document_import",
    ]
    assert queue.provenance_of("user_turn") is None


def test_batches_hold_one_scope_and_one_provenance_class(conn: sqlite3.Connection) -> None:
    queue.enqueue_all(
        conn,
        [
            _item("1", source="document_import"),
            _item("2", source="document_import"),
            _item("3", source="agent_import"),
            _item("4", source="rpc"),
            _item("5", source="agent_import", scope=PROJECT),
        ],
        now=T0,
    )
    sizes = []
    while (job := queue.claim(conn, settings(), now=T0, force=True)) is not None:
        rows = conn.execute(
            "SELECT DISTINCT scope, provenance FROM observations WHERE job_id = ?", (job.id,)
        ).fetchall()
        assert len(rows) == 1
        sizes.append(len(job.observation_ids))
        conn.execute("UPDATE jobs SET state = 'done' WHERE id = ?", (job.id,))
    assert sizes == [2, 1, 1, 1]


def test_imports_are_claimable_at_once_user_turns_wait_for_the_triggers(
    conn: sqlite3.Connection,
) -> None:
    s = settings()
    queue.enqueue(conn, _item("u1", source="rpc"), now=T0)
    assert queue.claim(conn, s, now=T0 + 1) is None  # one short turn: wait
    queue.enqueue(conn, _item("i1", source="agent_import"), now=T0 + 1)
    job = queue.claim(conn, s, now=T0 + 1)
    assert job is not None and job.provenance == "agent_observation"
    assert queue.claim(conn, s, now=T0 + 1) is None
    conn.execute("UPDATE jobs SET state = 'done' WHERE id = ?", (job.id,))
    idle = queue.claim(conn, s, now=T0 + 1 + s.batch.idle_seconds)  # idle trigger
    assert idle is not None and idle.provenance == "user_explicit"


def test_the_count_trigger_claims_a_full_batch(conn: sqlite3.Connection) -> None:
    s = settings()
    for index in range(s.batch.turn_threshold):
        queue.enqueue(conn, _item(str(index)), now=T0)
    job = queue.claim(conn, s, now=T0)
    assert job is not None and len(job.observation_ids) == s.batch.turn_threshold


def test_a_failing_job_blocks_only_its_own_scope_then_dies_and_retry_resets_attempts(
    conn: sqlite3.Connection,
) -> None:
    s = settings(queue={"max_attempts": 2})
    queue.enqueue(conn, _item("g", source="agent_import"), now=T0)
    queue.enqueue(conn, _item("g2", source="agent_import"), now=T0)
    queue.enqueue(conn, _item("p", source="agent_import", scope=PROJECT), now=T0)
    first = queue.claim(conn, s, now=T0)
    assert first is not None and first.scope == "global"
    assert queue.fail(conn, first, "INVALID_DECISION", s, now=T0) == "retry"
    # the project keeps flowing while global backs off
    other = queue.claim(conn, s, now=T0)
    assert other is not None and other.scope == PROJECT
    assert queue.claim(conn, s, now=T0 + 0.5) is None
    again = queue.claim(conn, s, now=T0 + 1)
    assert again is not None and (again.id, again.attempts, again.generation) == (first.id, 2, 2)
    assert again.observation_ids == first.observation_ids  # the frozen batch
    assert queue.fail(conn, again, "INVALID_DECISION", s, now=T0 + 1) == "dead"
    states = dict(conn.execute("SELECT key, state FROM observations").fetchall())
    assert states == {"g": "dead", "g2": "dead", "p": "claimed"}
    assert queue.retry_job(conn, first.id, now=T0 + 2) == 2
    fresh = queue.claim(conn, s, now=T0 + 2)
    assert fresh is not None and fresh.id != first.id and fresh.attempts == 1
    with pytest.raises(errors.TeamloreError) as missing:
        queue.retry_job(conn, "nope", now=T0)
    assert missing.value.code == "JOB_NOT_FOUND"


def test_an_expired_lease_is_re_leased_and_the_old_holder_is_fenced(
    conn: sqlite3.Connection,
) -> None:
    s = settings()
    queue.enqueue(conn, _item("1", source="agent_import"), now=T0)
    held = queue.claim(conn, s, now=T0)
    assert held is not None
    assert queue.claim(conn, s, now=T0 + 1) is None  # running, lease valid: scope busy
    stolen = queue.claim(conn, s, now=T0 + s.queue.lease_seconds + 1)
    assert stolen is not None and stolen.generation == 2
    with pytest.raises(errors.TeamloreError) as stale:
        queue.assert_lease(conn, held, now=T0 + s.queue.lease_seconds + 1)
    assert stale.value.code == "STALE_LEASE"
    assert queue.fail(conn, held, "X", s, now=T0 + s.queue.lease_seconds + 1) == "stale"
