"""Stage, first call: drafts → candidates + evidence refs + assessments + FTS + AdjudicationTask.

Tasks are created here the way recall records them (tasks/chunks rows per the state DB DDL); the
evidence index and the related-input check come from a `TaskSources` the test controls. The
end-to-end path through the real recall is in tests/ops/test_stage_ops.py.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from teamlore.contracts.adjudication import AdjudicationTask
from teamlore.contracts.extraction import DRAFT_BATCH_FORMAT
from teamlore.core import errors
from teamlore.core.analyzer import ANALYZER_VERSION, analyze
from teamlore.memory.extraction import staging, tasks
from teamlore.memory.extraction.drafts import STALE_REASONS, EvidenceRecord, stale_task_error
from teamlore.memory.extraction.recall import BOUND_BINDING_FIELDS
from teamlore.memory.extraction.tasks import Owner, Task
from teamlore.memory.store.state_db import (
    RECALL_ALGORITHM_VERSION,
    memory_state_uuid,
    open_state_db,
)

OWNER = Owner("a" * 64, "b" * 64)
T0 = 1_800_000_000_000


def hexd(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


# --------------------------------------------------------------------------------------------
# a synthetic world (shared with test_adjudication.py)


@dataclass
class Sources:
    """A TaskSources the test controls: evidence per task, drifted inputs per task."""

    evidence: dict[str, dict[str, EvidenceRecord]] = field(default_factory=dict)
    drifted: dict[str, list[str]] = field(default_factory=dict)

    def evidence_index(self, task: Task) -> Mapping[str, EvidenceRecord]:
        return self.evidence.get(task.task_id, {})

    def drifted_inputs(self, task: Task) -> list[str]:
        return list(self.drifted.get(task.task_id, []))


@dataclass
class World:
    conn: sqlite3.Connection
    sources: Sources = field(default_factory=Sources)
    bindings: dict[str, dict[str, Any]] = field(default_factory=dict)

    def task(
        self, name: str, strengths: tuple[str, ...] = ("direct", "observed")
    ) -> tuple[str, list[str]]:
        """Record an extraction task (chunk + task rows) and its evidence ids."""
        source_input = hexd("source", name)
        task_id = "extract-" + source_input
        session_key = hexd("session", name)
        chunk_ref = f"{session_key}:0:2:{source_input}"
        binding = {
            "databaseUuid": memory_state_uuid(self.conn),
            "owner": {"repositoryKey": OWNER.repository_key, "worktreeKey": OWNER.worktree_key},
            "sourceInputDigest": source_input,
            "selection": {
                "requestDigest": hexd("req"),
                "resultSetDigest": hexd("rs"),
                "sourceBindingDigest": hexd("sb", name),
            },
            "turnRevisions": [hexd("turn", name, i) for i in range(3)],
            "payloadDigests": [],
            "deliveryEdgeRevisions": [],
            "promptVersion": "memory-prompts@2",
            "schemaVersion": DRAFT_BATCH_FORMAT,
            "chunkerVersion": "memory-chunker@1",
            "provenance": {"snapshotSeq": "7", "evaluatedAt": "2026-03-02T00:00:00.000Z"},
        }
        with tasks.write_tx_committing_refusal(self.conn):
            self.conn.execute(
                "INSERT INTO chunks (chunk_ref, repository_key, worktree_key, session_key, "
                "turn_range, chunk_digest, status, provenance_snapshot_seq) "
                "VALUES (?, ?, ?, ?, '0-2', ?, 'pending', '7')",
                (chunk_ref, OWNER.repository_key, OWNER.worktree_key, session_key, hexd("c", name)),
            )
            tasks.create_task(
                self.conn,
                task_id=task_id,
                kind="extraction",
                owner=OWNER,
                binding=binding,
                chunk_ref=chunk_ref,
                now=T0,
            )
        records = {}
        for number, strength in enumerate(strengths, start=1):
            pointer = hexd("pointer", name, number)
            evidence_id = f"ev-{number}-{pointer[:12]}"
            records[evidence_id] = EvidenceRecord(
                evidence_id=evidence_id,
                kind="turn" if number == 1 else "commit",
                pointer_digest=pointer,
                strength=strength,
                limitations=("source-local-only",) if number == 1 else ("not-authorship",),
                relation="session-contains-turn",
                session_key=session_key,
            )
        self.sources.evidence[task_id] = records
        self.bindings[task_id] = binding
        return task_id, list(records)

    def batch(self, task_id: str, drafts: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "format": DRAFT_BATCH_FORMAT,
            "taskId": task_id,
            "binding": self.bindings[task_id],
            "candidates": drafts,
        }

    def stage(self, task_id: str, drafts: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
        return staging.stage_draft_batch(
            self.conn, self.batch(task_id, drafts), owner=OWNER, sources=self.sources, **kw
        )

    def approve(
        self,
        entry_id: str,
        body: str,
        title: str | None = None,
        frontmatter: dict[str, Any] | None = None,
    ) -> None:
        """Add an approved entry the way the projection stores it, and bump the generation."""
        digest = hexd("file", entry_id, body)
        with tasks.write_tx_committing_refusal(self.conn):
            rowid = self.conn.execute(
                "SELECT coalesce(max(id), 0) + 1 FROM approved_entries"
            ).fetchone()[0]
            self.conn.execute(
                "INSERT INTO approved_entries (id, repository_key, worktree_key, kind, entry_id, "
                "path, revision, content_digest, entry_type, status, title, frontmatter_json, "
                "body_text) VALUES (?, ?, ?, 'entry', ?, ?, ?, ?, 'work_fact', 'approved', ?, "
                "?, ?)",
                (
                    rowid,
                    OWNER.repository_key,
                    OWNER.worktree_key,
                    entry_id,
                    f"entries/{entry_id}.md",
                    int(digest[:13], 16) + 1,
                    digest,
                    title or entry_id,
                    json.dumps(frontmatter or {}),
                    body,
                ),
            )
            self.conn.execute(
                "INSERT INTO approved_fts (rowid, searchable_text) VALUES (?, ?)",
                (rowid, analyze(f"{entry_id.replace('-', ' ')}\n{title or ''}\n{body}")),
            )
            self.bump_approved_generation()

    def bump_approved_generation(self) -> None:
        self.conn.execute(
            "INSERT INTO approved_projection (repository_key, worktree_key, generation, "
            "source_tree_digest, coverage, build_coverage, analyzer_version, "
            "recall_algorithm_version, projector_version, synced_at) "
            "VALUES (?, ?, 1, ?, 'complete', 'complete', ?, ?, 'test@1', 0) "
            "ON CONFLICT (repository_key, worktree_key) DO UPDATE SET generation = generation + 1",
            (
                OWNER.repository_key,
                OWNER.worktree_key,
                hexd("tree"),
                ANALYZER_VERSION,
                RECALL_ALGORITHM_VERSION,
            ),
        )


def draft(
    content: str, evidence: list[str], *, statements: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "content": content,
        "type": "work_method",
        "priority": 70,
        "confidence": "high",
        "scene": None,
        "statements": statements
        if statements is not None
        else [{"statementId": "s1", "text": content, "evidenceIds": evidence}],
    }


def dump(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (FTS shadow tables included), in a stable order."""
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        ).fetchall()
    ]
    out: dict[str, list[tuple[Any, ...]]] = {}
    for name in names:
        rows = conn.execute(f'SELECT * FROM "{name}"').fetchall()
        out[name] = sorted((tuple(r) for r in rows), key=repr)
    return out


def changed_tables(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {name for name in after if before.get(name) != after[name]}


@pytest.fixture()
def world(home: Path) -> World:
    return World(open_state_db(home))


def refused(call: Any, *args: Any, **kw: Any) -> errors.TeamloreError:
    with pytest.raises(errors.TeamloreError) as caught:
        call(*args, **kw)
    return caught.value


# --------------------------------------------------------------------------------------------
# tests


def test_stage_writes_drafts_assessments_fts_and_returns_an_adjudication_task(world: World) -> None:
    task_id, ev = world.task("one")
    world.approve("release-tags", "Release builds need a signed tag before publishing.")
    response = world.stage(
        task_id,
        [draft("Sign the release tag before publishing the build.", [ev[0], ev[1]])],
    )
    assert response["status"] == "adjudication-required" and response["idempotent"] is False
    cand = response["candidates"][0]
    assert cand["candidateId"] == f"{task_id}-c1" and cand["status"] == "draft"
    assessment = response["assessments"][0]
    assert assessment["provenanceStrength"] == "direct"  # strongest citation
    assert assessment["limitations"] == ["not-authorship", "source-local-only"]  # union
    assert (assessment["claimSupport"], assessment["assessedBy"]) == ("unverified", "deterministic")
    task = AdjudicationTask.from_wire(response["adjudicationTask"])  # valid contract
    assert [h.id for h in task.recall_sets[0].ordered] == ["release-tags"]
    conn = world.conn
    assert conn.execute("SELECT count(*) FROM evidence_refs").fetchone()[0] == 2
    assert conn.execute("SELECT status FROM chunks").fetchone()[0] == "drafted"
    assert conn.execute("SELECT generation FROM candidate_projection").fetchone()[0] == 1
    assert (
        conn.execute(
            "SELECT count(*) FROM candidate_fts WHERE candidate_fts MATCH 'sign'"
        ).fetchone()[0]
        == 1
    )
    statuses = dict(conn.execute("SELECT kind, status FROM tasks").fetchall())
    assert statuses == {"extraction": "submitted", "adjudication": "pending"}


def test_entry_provenance_is_the_weakest_statement(world: World) -> None:
    task_id, ev = world.task("weak", strengths=("direct", "contextual"))
    statements = [
        {"statementId": "s1", "text": "first claim", "evidenceIds": [ev[0]]},
        {"statementId": "s2", "text": "second claim", "evidenceIds": [ev[1]]},
    ]
    response = world.stage(task_id, [draft("two claims", ev, statements=statements)])
    assert [a["provenanceStrength"] for a in response["assessments"]] == ["direct", "contextual"]
    assert response["candidates"][0]["provenanceStrength"] == "contextual"


def test_empty_batch_is_an_explicit_no_op(world: World) -> None:
    task_id, _ = world.task("empty")
    response = world.stage(task_id, [])
    assert (response["status"], response["noOp"], response["adjudicationTask"]) == (
        "staged",
        True,
        None,
    )
    assert world.conn.execute("SELECT status FROM chunks").fetchone()[0] == "extracted"


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("foreign-evidence", "EVIDENCE_NOT_IN_TASK"),
        ("invented-evidence", "EVIDENCE_NOT_IN_TASK"),
        ("uncited-statement", "STATEMENT_UNCITED"),
        ("no-statements", "STATEMENT_UNCITED"),
        ("nine-candidates", "BATCH_TOO_LARGE"),
        ("duplicate-statement", "STAGE_REQUEST_INVALID"),
        ("schema", "STAGE_REQUEST_INVALID"),
        ("binding-tampered", "BINDING_MISMATCH"),
        ("unknown-task", "TASK_NOT_FOUND"),
    ],
)
def test_bad_batches_are_refused_and_state_is_unchanged(world: World, case: str, code: str) -> None:
    task_id, ev = world.task("main")
    _, other_ev = world.task("other")
    good = draft("Use make release to publish.", [ev[0]])
    document = world.batch(task_id, [good])
    if case == "foreign-evidence":
        document["candidates"] = [draft("Use make release.", [other_ev[0]])]
    elif case == "invented-evidence":
        document["candidates"] = [draft("Use make release.", ["ev-9-0123456789ab"])]
    elif case == "uncited-statement":
        document["candidates"] = [draft("Use make release.", [])]
    elif case == "no-statements":
        document["candidates"] = [draft("Use make release.", [], statements=[])]
    elif case == "nine-candidates":
        document["candidates"] = [good] * 9
    elif case == "duplicate-statement":
        s = {"statementId": "s1", "text": "x", "evidenceIds": [ev[0]]}
        document["candidates"] = [draft("x", [], statements=[s, s])]
    elif case == "schema":
        document["candidates"] = [{**good, "priority": 101}]
    elif case == "binding-tampered":
        document["binding"] = {**document["binding"], "turnRevisions": [hexd("forged")]}
    elif case == "unknown-task":
        document["taskId"] = "extract-" + "0" * 64
    before = dump(world.conn)
    error = refused(
        staging.stage_draft_batch, world.conn, document, owner=OWNER, sources=world.sources
    )
    assert error.code == code
    assert dump(world.conn) == before


def test_related_input_changed_makes_the_task_stale(world: World) -> None:
    task_id, ev = world.task("drift")
    world.sources.drifted[task_id] = ["turn-revision-changed"]
    before = dump(world.conn)
    error = refused(world.stage, task_id, [draft("x y z", [ev[0]])])
    assert error.code == "TASK_STALE"
    assert changed_tables(before, dump(world.conn)) == {"tasks", "chunks"}  # marked stale only
    assert world.conn.execute("SELECT status FROM tasks").fetchone()[0] == "stale"
    assert world.conn.execute("SELECT count(*) FROM candidates").fetchone()[0] == 0


def test_a_stale_task_says_why_in_words(world: World) -> None:
    """TASK_STALE's message says why (docs/extraction.md: a task holding turns another task
    already staged), not "N input(s) changed"; the codes stay in `drifted`."""
    task_id, ev = world.task("twice")
    world.sources.drifted[task_id] = ["turns-already-extracted"]
    error = refused(world.stage, task_id, [draft("x y z", [ev[0]])])
    assert error.message == (
        f"task {task_id} is stale: its turns were already extracted by another task"
        " (turns-already-extracted); recall again"
    )
    assert error.details["drifted"] == ["turns-already-extracted"]
    many = stale_task_error("extract-1", ["payloadDigests-changed", "promptVersion-changed"])
    assert "a tool result it holds changed (payloadDigests-changed); and " in many.message
    reasons = ["session-excluded", "turns-already-extracted", "turn-revision-changed"]
    reasons += ["chunk-changed", *(f"{name}-changed" for name in BOUND_BINDING_FIELDS)]
    assert sorted(STALE_REASONS) == sorted(reasons)  # every reason recall gives has its words


def test_same_batch_replays_and_a_different_batch_conflicts(world: World) -> None:
    task_id, ev = world.task("again")
    first = world.stage(task_id, [draft("Run the linter before pushing.", [ev[0]])])
    replay = world.stage(task_id, [draft("Run the linter before pushing.", [ev[0]])])
    assert replay["idempotent"] is True
    assert {**replay, "idempotent": False} == first
    before = dump(world.conn)
    error = refused(world.stage, task_id, [draft("Something else entirely.", [ev[0]])])
    assert error.code == "SUBMISSION_CONFLICT"
    assert changed_tables(before, dump(world.conn)) == {"submission_conflicts"}  # audit only


def test_a_runner_holding_the_lease_blocks_the_agent_and_an_expired_holder_loses(
    world: World,
) -> None:
    task_id, ev = world.task("lease")
    now = tasks.now_ms()
    old = tasks.claim_task(world.conn, task_id, holder="runner-a", lease_ms=1, now=now - 10)
    tasks.claim_task(world.conn, task_id, holder="runner-b", lease_ms=60_000, now=now)
    before = dump(world.conn)
    assert refused(world.stage, task_id, [draft("a b", [ev[0]])]).code == "TASK_NOT_CLAIMABLE"
    lost = refused(world.stage, task_id, [draft("a b", [ev[0]])], claim_token=old.claim_token)
    assert lost.code == "LEASE_LOST"
    assert dump(world.conn) == before


def test_restaging_after_the_pool_changed_issues_a_fresh_adjudication_task(world: World) -> None:
    task_id, ev = world.task("reissue")
    first = world.stage(task_id, [draft("Rotate the deploy key every quarter.", [ev[0]])])
    world.approve("deploy-key-rotation", "Rotate the deploy key every quarter.")
    again = world.stage(task_id, [draft("Rotate the deploy key every quarter.", [ev[0]])])
    assert again["adjudicationTaskId"] != first["adjudicationTaskId"]
    statuses = dict(world.conn.execute("SELECT task_id, status FROM tasks").fetchall())
    assert statuses[first["adjudicationTaskId"]] == "stale"
    assert statuses[again["adjudicationTaskId"]] == "pending"
    hits = again["adjudicationTask"]["recallSets"][0]["ordered"]
    assert hits[0]["id"] == "deploy-key-rotation"


def test_an_invalid_batch_releases_the_claim_that_presented_it(world: World) -> None:
    """An invalid result is never submitted and the holder's claim goes back to `pending` at
    once, so the same task is retried (by anyone) without waiting for the lease to expire."""
    task_id, ev = world.task("released")
    claim = tasks.claim_task(world.conn, task_id, holder="runner-a", lease_ms=3_600_000)
    foreign = refused(
        world.stage, task_id, [draft("a b", ["ev-foreign"])], claim_token=claim.claim_token
    )
    assert foreign.code == "EVIDENCE_NOT_IN_TASK"
    task = tasks.find_task(world.conn, task_id)
    assert task is not None and (task.status, task.claim_token) == ("pending", None)
    assert world.conn.execute("SELECT count(*) FROM candidates").fetchone()[0] == 0
    again = tasks.claim_task(world.conn, task_id, holder="runner-b")
    assert world.stage(task_id, [draft("a b", [ev[0]])], claim_token=again.claim_token)["taskId"]
