"""Tasks: claim/lease with claim_token and lease_epoch, the submission gate, conflict audit."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from teamlore.core import errors
from teamlore.memory.extraction import tasks
from teamlore.memory.extraction.tasks import Owner
from teamlore.memory.store.state_db import open_state_db

OWNER = Owner("a" * 64, "b" * 64)
T0 = 1_800_000_000_000


def _task(conn: sqlite3.Connection, task_id: str = "t-1") -> str:
    with tasks.write_tx_committing_refusal(conn):
        conn.execute(
            "INSERT INTO chunks (chunk_ref, repository_key, worktree_key, session_key, turn_range, "
            "chunk_digest) VALUES (?, ?, ?, ?, '0-1', ?)",
            (f"chunk-{task_id}", OWNER.repository_key, OWNER.worktree_key, "c" * 64, "d" * 64),
        )
        assert tasks.create_task(
            conn,
            task_id=task_id,
            kind="extraction",
            owner=OWNER,
            binding={"x": 1},
            chunk_ref=f"chunk-{task_id}",
            now=T0,
        )
    return task_id


@pytest.fixture()
def conn(home: Path) -> sqlite3.Connection:
    return open_state_db(home)


def test_claim_sets_holder_token_epoch_and_expiry(conn: sqlite3.Connection) -> None:
    task_id = _task(conn)
    claim = tasks.claim_task(conn, task_id, holder="runner-a", lease_ms=1000, now=T0)
    assert claim.lease_epoch == 1 and claim.lease_expires_at == T0 + 1000
    assert len(claim.claim_token) == 32
    task = tasks.load_task(conn, task_id, owner=OWNER)
    assert (task.status, task.lease_holder, task.claim_token) == (
        "claimed",
        "runner-a",
        claim.claim_token,
    )


def test_a_live_lease_cannot_be_claimed_twice(conn: sqlite3.Connection) -> None:
    task_id = _task(conn)
    tasks.claim_task(conn, task_id, holder="a", lease_ms=1000, now=T0)
    with pytest.raises(errors.TeamloreError) as refused:
        tasks.claim_task(conn, task_id, holder="b", lease_ms=1000, now=T0 + 1000)
    assert refused.value.code == "TASK_NOT_CLAIMABLE"


def test_an_expired_lease_is_reclaimed_with_a_new_token_and_epoch(conn: sqlite3.Connection) -> None:
    task_id = _task(conn)
    first = tasks.claim_task(conn, task_id, holder="a", lease_ms=1000, now=T0)
    second = tasks.claim_task(conn, task_id, holder="b", lease_ms=1000, now=T0 + 1001)
    assert second.lease_epoch == first.lease_epoch + 1
    assert second.claim_token != first.claim_token


def test_the_old_holder_is_stopped_by_the_token_cas(conn: sqlite3.Connection) -> None:
    task_id = _task(conn)
    old = tasks.claim_task(conn, task_id, holder="a", lease_ms=1000, now=T0)
    tasks.claim_task(conn, task_id, holder="b", lease_ms=1000, now=T0 + 5000)
    with pytest.raises(errors.TeamloreError) as refused, tasks.write_tx_committing_refusal(conn):
        tasks.check_token(conn, task_id, old.claim_token)
    assert refused.value.code == "LEASE_LOST"
    with pytest.raises(errors.TeamloreError) as expired, tasks.write_tx_committing_refusal(conn):
        tasks.acquire(conn, task_id, claim_token=old.claim_token, now=T0 + 5001)
    assert expired.value.code == "LEASE_LOST"


def test_submitted_and_stale_tasks_are_never_claimable(conn: sqlite3.Connection) -> None:
    submitted, stale = _task(conn, "t-s"), _task(conn, "t-x")
    claim = tasks.claim_task(conn, submitted, holder="a", lease_ms=1000, now=T0)
    with tasks.write_tx_committing_refusal(conn):
        tasks.record_submission(conn, claim, "e" * 64, {"ok": True}, now=T0)
        assert tasks.mark_stale(conn, stale, lease_epoch=0)
    with pytest.raises(errors.TeamloreError) as again:
        tasks.claim_task(conn, submitted, holder="b", now=T0 + 10**9)
    assert again.value.code == "TASK_NOT_CLAIMABLE"
    with pytest.raises(errors.TeamloreError) as gone:
        tasks.claim_task(conn, stale, holder="b", now=T0 + 10**9)
    assert gone.value.code == "TASK_STALE"


def test_stale_marking_never_touches_a_reclaimed_lease(conn: sqlite3.Connection) -> None:
    task_id = _task(conn)
    first = tasks.claim_task(conn, task_id, holder="a", lease_ms=10, now=T0)
    tasks.claim_task(conn, task_id, holder="b", lease_ms=1000, now=T0 + 11)
    with tasks.write_tx_committing_refusal(conn):
        assert not tasks.mark_stale(conn, task_id, lease_epoch=first.lease_epoch)
    assert tasks.load_task(conn, task_id, owner=OWNER).status == "claimed"


def test_identical_replay_returns_the_outcome_and_a_different_one_is_audited(
    conn: sqlite3.Connection,
) -> None:
    task_id = _task(conn)
    claim = tasks.claim_task(conn, task_id, holder="a", now=T0)
    with tasks.write_tx_committing_refusal(conn):
        tasks.record_submission(conn, claim, "1" * 64, {"answer": 42}, now=T0)
    with tasks.write_tx_committing_refusal(conn):
        replay = tasks.check_replay(conn, task_id, "1" * 64, now=T0)
    assert replay is not None and replay.outcome == {"answer": 42}
    with pytest.raises(errors.TeamloreError) as conflict, tasks.write_tx_committing_refusal(conn):
        tasks.check_replay(conn, task_id, "2" * 64, now=T0 + 1)
    assert conflict.value.code == "SUBMISSION_CONFLICT"
    rows = conn.execute("SELECT task_id, response_digest FROM submission_conflicts").fetchall()
    assert [tuple(r) for r in rows] == [(task_id, "2" * 64)]  # committed despite the refusal


def test_another_owners_task_is_not_found(conn: sqlite3.Connection) -> None:
    task_id = _task(conn)
    with pytest.raises(errors.TeamloreError) as missing:
        tasks.load_task(conn, task_id, owner=Owner("f" * 64, "b" * 64))
    assert missing.value.code == "TASK_NOT_FOUND"


def _race(home: str, task_id: str, holder: str, start: Any, results: Any) -> None:
    conn = open_state_db(Path(home))
    start.wait()
    try:
        tasks.claim_task(conn, task_id, holder=holder, lease_ms=60_000)
        results.put("won")
    except errors.TeamloreError as exc:
        results.put(exc.code)
    finally:
        conn.close()


def test_concurrent_claims_from_processes_award_exactly_one_lease(home: Path) -> None:
    conn = open_state_db(home)
    task_id = _task(conn)
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(4), context.Queue()
    workers = [
        context.Process(target=_race, args=(str(home), task_id, f"h{i}", barrier, results))
        for i in range(4)
    ]
    for worker in workers:
        worker.start()
    outcomes = sorted(results.get(timeout=60) for _ in workers)
    for worker in workers:
        worker.join(timeout=60)
    assert outcomes == ["TASK_NOT_CLAIMABLE"] * 3 + ["won"]
    assert tasks.load_task(conn, task_id, owner=OWNER).lease_epoch == 1
