"""Stage, second call: validation, recall rerun + result-set CAS, apply, one retry then failed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_staging import OWNER, World, changed_tables, draft, dump, refused

from teamlore.contracts.adjudication import ADJUDICATION_RESULT_FORMAT
from teamlore.memory.extraction import tasks
from teamlore.memory.extraction.adjudication import submit_adjudication
from teamlore.memory.store.state_db import open_state_db


@pytest.fixture()
def world(home: Path) -> World:
    return World(open_state_db(home))


def result(staged: dict[str, Any], decisions: list[dict[str, Any]]) -> dict[str, Any]:
    task = staged["adjudicationTask"]
    return {
        "format": ADJUDICATION_RESULT_FORMAT,
        "taskId": task["taskId"],
        "binding": task["binding"],
        "adjudications": decisions,
    }


def decide(
    ref: str, action: str, targets: list[str] | None = None, **fields: Any
) -> dict[str, Any]:
    return {
        "draftRef": ref,
        "action": action,
        "targetIds": targets or [],
        "mergedFields": fields or None,
    }


def submit(world: World, document: dict[str, Any]) -> dict[str, Any]:
    return submit_adjudication(world.conn, document, owner=OWNER)


def status_of(world: World, candidate_id: str) -> tuple[str, str, int]:
    row = world.conn.execute(
        "SELECT status, adjudication, revision FROM candidates WHERE candidate_id = ?",
        (candidate_id,),
    ).fetchone()
    return row[0], row[1], row[2]


def two_drafts(world: World, name: str = "pair") -> tuple[dict[str, Any], str, str]:
    task_id, ev = world.task(name)
    staged = world.stage(
        task_id,
        [
            draft("Run the migrations before starting the API server.", [ev[0]]),
            draft("Start the API server only after migrations ran.", [ev[1]]),
        ],
    )
    return staged, f"{task_id}-c1", f"{task_id}-c2"


def test_store_quarantines_and_skip_discards_and_chunks_are_extracted(world: World) -> None:
    staged, a, b = two_drafts(world)
    response = submit(world, result(staged, [decide(a, "store"), decide(b, "skip", [a])]))
    assert [c["candidateStatus"] for c in response["candidates"]] == ["quarantined", "discarded"]
    assert status_of(world, a) == ("quarantined", "done", 2)
    assert status_of(world, b) == ("discarded", "done", 2)
    conn = world.conn
    assert conn.execute("SELECT status FROM chunks").fetchone()[0] == "extracted"
    assert conn.execute("SELECT count(*) FROM candidate_fts").fetchone()[0] == 1  # b left the pool
    replay = submit(world, result(staged, [decide(a, "store"), decide(b, "skip", [a])]))
    assert replay["idempotent"] is True and {**replay, "idempotent": False} == response


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("skip-cycle", "contract-invalid"),  # AdjudicationResult@v1 refuses skip → skipped
        ("update-same-batch", "mutation-targets-draft"),
        ("missing-draft", "missing-decision"),
        ("unknown-target", "unknown-target"),
    ],
)
def test_invalid_adjudications_are_refused_and_audited_only(
    world: World, case: str, reason: str
) -> None:
    world.approve("migrations-first", "Run migrations before the API server starts.")
    staged, a, b = two_drafts(world)
    decisions = {
        "skip-cycle": [decide(a, "skip", [b]), decide(b, "skip", [a])],
        "update-same-batch": [decide(a, "store"), decide(b, "update", [a], content="merged")],
        "missing-draft": [decide(a, "store")],
        "unknown-target": [decide(a, "store"), decide(b, "skip", ["no-such-entry"])],
    }[case]
    before = dump(world.conn)
    error = refused(submit, world, result(staged, decisions))
    assert error.code == "ADJUDICATION_INVALID"
    assert error.details["reason"] == reason
    assert changed_tables(before, dump(world.conn)) == {"submission_conflicts"}
    assert {status_of(world, a)[0], status_of(world, b)[0]} == {"draft"}


def world_ev(world: World, staged: dict[str, Any]) -> list[str]:
    return list(world.sources.evidence[staged["taskId"]])


def test_second_invalid_adjudication_marks_the_drafts_failed(world: World) -> None:
    staged, a, b = two_drafts(world)
    first = refused(submit, world, result(staged, [decide(a, "store")]))
    assert first.code == "ADJUDICATION_INVALID" and first.details["attemptsLeft"] == 1
    again = refused(submit, world, result(staged, [decide(a, "store")]))  # same bytes: no count
    assert again.code == "ADJUDICATION_INVALID"
    failed = refused(submit, world, result(staged, [decide(b, "store")]))
    assert failed.code == "ADJUDICATION_FAILED"
    assert status_of(world, a) == ("draft", "failed", 2)
    assert status_of(world, b) == ("draft", "failed", 2)
    task_status = world.conn.execute(
        "SELECT status FROM tasks WHERE kind = 'adjudication'"
    ).fetchone()[0]
    assert task_status == "submitted"
    # nothing was stored or dropped; a valid answer now is a conflict, not a silent store
    late = refused(submit, world, result(staged, [decide(a, "store"), decide(b, "store")]))
    assert late.code == "SUBMISSION_CONFLICT"


def test_unparseable_answer_to_a_known_task_counts_as_an_attempt(world: World) -> None:
    staged, a, b = two_drafts(world)
    broken = result(staged, [decide(a, "explode"), decide(b, "store")])
    error = refused(submit, world, broken)
    assert error.code == "ADJUDICATION_INVALID" and error.details["reason"] == "contract-invalid"
    assert world.conn.execute("SELECT count(*) FROM submission_conflicts").fetchone()[0] == 1


def test_a_new_approved_entry_entering_the_top_five_makes_the_task_stale(world: World) -> None:
    staged, a, b = two_drafts(world)
    world.approve("api-after-migrations", "Start the API server only after the migrations ran.")
    before = dump(world.conn)
    error = refused(submit, world, result(staged, [decide(a, "store"), decide(b, "store")]))
    assert error.code == "ADJUDICATION_STALE"
    assert error.details["reason"] == "result-set-digest-mismatch"
    assert changed_tables(before, dump(world.conn)) == {"tasks"}
    assert status_of(world, a)[0] == "draft"
    # staging the same drafts again gives a fresh task that now shows the approved entry
    fresh = world.stage(
        staged["taskId"],
        [
            draft(
                "Run the migrations before starting the API server.", world_ev(world, staged)[:1]
            ),
            draft("Start the API server only after migrations ran.", world_ev(world, staged)[1:2]),
        ],
    )
    assert fresh["adjudicationTaskId"] != staged["adjudicationTaskId"]
    ids = {h["id"] for s in fresh["adjudicationTask"]["recallSets"] for h in s["ordered"]}
    assert "api-after-migrations" in ids


def test_a_generation_change_with_the_same_result_set_is_accepted(world: World) -> None:
    staged, a, b = two_drafts(world)
    world.approve("unrelated-entry", "Fonts are vendored under assets/fonts.")
    response = submit(world, result(staged, [decide(a, "store"), decide(b, "store")]))
    assert response["status"] == "staged"


def test_duplicates_across_chunks_are_caught_and_merge_keeps_every_statement(world: World) -> None:
    first_task, ev1 = world.task("chunk-one")
    first = world.stage(
        first_task, [draft("Clear the build cache when the linker fails.", [ev1[0]])]
    )
    c1 = f"{first_task}-c1"
    submit(world, result(first, [decide(c1, "store")]))
    second_task, ev2 = world.task("chunk-two")
    second = world.stage(
        second_task, [draft("When the linker fails, clear the build cache first.", [ev2[1]])]
    )
    c2 = f"{second_task}-c1"
    hits = second["adjudicationTask"]["recallSets"][0]["ordered"]
    assert hits[0] == {"rank": 1, "sourceKind": "candidate", "id": c1}  # caught across chunks
    merged = submit(
        world,
        result(
            second, [decide(c2, "merge", [c1], content="Clear the build cache when linking fails.")]
        ),
    )
    assert merged["consumed"] == [
        {"sourceKind": "candidate", "id": c1, "status": "discarded", "revision": 3}
    ]
    payload = json.loads(
        world.conn.execute(
            "SELECT payload_json FROM candidates WHERE candidate_id = ?", (c2,)
        ).fetchone()[0]
    )
    assert [s["statementId"] for s in payload["statements"]] == ["s1", "m1.s1"]
    assert payload["mergedFrom"][0]["id"] == c1
    refs = world.conn.execute(
        "SELECT statement_id, task_id FROM evidence_refs WHERE candidate_id = ? ORDER BY 1", (c2,)
    ).fetchall()
    assert [tuple(r) for r in refs] == [("m1.s1", first_task), ("s1", second_task)]
    assessed = world.conn.execute(
        "SELECT statement_id FROM assessments WHERE candidate_id = ? ORDER BY 1", (c2,)
    ).fetchall()
    assert [r[0] for r in assessed] == ["m1.s1", "s1"]


def test_update_may_target_an_approved_entry(world: World) -> None:
    world.approve("cache-flag", "Pass --no-cache to the build when dependencies change.")
    task_id, ev = world.task("upd")
    staged = world.stage(
        task_id,
        [
            draft(
                "Pass --no-cache to the build when dependencies change or the lockfile moves.",
                [ev[0]],
            )
        ],
    )
    cand = f"{task_id}-c1"
    response = submit(
        world,
        result(
            staged,
            [
                decide(
                    cand,
                    "update",
                    ["cache-flag"],
                    content="Pass --no-cache when dependencies or the lockfile change.",
                )
            ],
        ),
    )
    assert response["candidates"][0]["candidateStatus"] == "quarantined"
    payload = json.loads(
        world.conn.execute(
            "SELECT payload_json FROM candidates WHERE candidate_id = ?", (cand,)
        ).fetchone()[0]
    )
    assert payload["supersedes"][0]["id"] == "cache-flag"
    assert payload["supersedes"][0]["path"] == "entries/cache-flag.md"
    assert payload["content"].startswith("Pass --no-cache when")


def payload_of(world: World, candidate_id: str) -> dict[str, Any]:
    row = world.conn.execute(
        "SELECT payload_json FROM candidates WHERE candidate_id = ?", (candidate_id,)
    ).fetchone()
    return dict(json.loads(row[0]))


KEPT = ("type", "priority", "scene", "occurred")


def test_an_update_keeps_its_approved_targets_fields_where_merged_fields_leave_them_out(
    world: World,
) -> None:
    world.approve(
        "cache-flag",
        "Pass --no-cache to the build when dependencies change.",
        frontmatter={
            "type": "work_fact",
            "priority": 90,
            "scene": "build",
            "occurred": ["2026-03"],
        },
    )
    task_id, ev = world.task("upd-kept")
    staged = world.stage(task_id, [draft("Pass --no-cache when the lockfile moves.", [ev[0]])])
    cand = f"{task_id}-c1"
    submit(world, result(staged, [decide(cand, "update", ["cache-flag"], content="Merged.")]))
    payload = payload_of(world, cand)
    # the draft said work_method / 70 / no scene: an update that does not say so changes none
    assert {k: payload[k] for k in KEPT} == {
        "type": "work_fact",
        "priority": 90,
        "scene": "build",
        "occurred": ["2026-03"],
    }
    assert payload["content"] == "Merged."


def test_an_update_of_a_candidate_keeps_its_fields_and_what_it_names_wins(world: World) -> None:
    first_task, ev1 = world.task("upd-first")
    first = world.stage(
        first_task,
        [
            {
                **draft("Restart the worker after a deploy.", [ev1[0]]),
                "type": "work_task",
                "priority": 40,
                "scene": "deploy",
            }
        ],
    )
    target = f"{first_task}-c1"
    submit(world, result(first, [decide(target, "store")]))
    second_task, ev2 = world.task("upd-second")
    second = world.stage(
        second_task, [draft("Restart the worker after every deploy, then check it.", [ev2[0]])]
    )
    cand = f"{second_task}-c1"
    submit(
        world,
        result(second, [decide(cand, "update", [target], content="Restart it.", scene=None)]),
    )
    payload = payload_of(world, cand)
    assert (payload["type"], payload["priority"], payload["scene"]) == ("work_task", 40, None)


def test_a_merge_keeps_the_drafts_fields_where_merged_fields_leave_them_out(
    world: World,
) -> None:
    world.approve(
        "linker",
        "Clear the build cache when the linker fails.",
        frontmatter={"type": "work_fact", "priority": 90, "scene": "build", "occurred": []},
    )
    task_id, ev = world.task("merge-kept")
    staged = world.stage(task_id, [draft("When linking fails, clear the cache.", [ev[0]])])
    cand = f"{task_id}-c1"
    submit(world, result(staged, [decide(cand, "merge", ["linker"], content="Merged.")]))
    payload = payload_of(world, cand)
    assert (payload["type"], payload["priority"], payload["scene"]) == ("work_method", 70, None)


def test_chinese_near_duplicates_are_recalled(world: World) -> None:
    world.approve("release-checklist", "发布前必须先运行完整的回归测试，再打标签。")
    task_id, ev = world.task("zh")
    staged = world.stage(task_id, [draft("发布之前要先跑完整回归测试然后打标签", [ev[0]])])
    assert staged["adjudicationTask"]["recallSets"][0]["ordered"][0]["id"] == "release-checklist"


def test_submit_after_the_lease_expired_and_someone_else_claimed(world: World) -> None:
    staged, a, b = two_drafts(world)
    adjudication_id = staged["adjudicationTaskId"]
    now = tasks.now_ms()
    old = tasks.claim_task(world.conn, adjudication_id, holder="r1", lease_ms=1, now=now - 10)
    tasks.claim_task(world.conn, adjudication_id, holder="r2", lease_ms=60_000, now=now)
    before = dump(world.conn)
    lost = refused(
        submit_adjudication,
        world.conn,
        result(staged, [decide(a, "store"), decide(b, "store")]),
        owner=OWNER,
        claim_token=old.claim_token,
    )
    assert lost.code == "LEASE_LOST"
    assert dump(world.conn) == before


CRASH_SCRIPT = """
import json, sys
from pathlib import Path
from teamlore.memory.extraction.adjudication import submit_adjudication
from teamlore.memory.store.state_db import open_state_db
from teamlore.memory.extraction.tasks import Owner
conn = open_state_db(Path(sys.argv[1]))
submit_adjudication(conn, json.loads(sys.argv[2]), owner=Owner(sys.argv[3], sys.argv[4]))
"""


def test_a_crash_inside_tx2_leaves_the_pre_transaction_state(world: World, home: Path) -> None:
    staged, a, b = two_drafts(world)
    document = result(staged, [decide(a, "store"), decide(b, "skip", [a])])
    before = dump(world.conn)
    env = {**os.environ, "TEAMLORE_FAILPOINT": "memory.adjudication.applied"}
    crashed = subprocess.run(
        [
            sys.executable,
            "-c",
            CRASH_SCRIPT,
            str(home),
            json.dumps(document),
            OWNER.repository_key,
            OWNER.worktree_key,
        ],
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert crashed.returncode == -9  # SIGKILL at the failpoint, after the decisions were applied
    reopened = open_state_db(home)
    assert dump(reopened) == before
    assert submit_adjudication(reopened, document, owner=OWNER)["status"] == "staged"


def test_no_adjudication_is_decided_against_a_partial_approved_projection(
    world: World, tmp_path: Path
) -> None:
    """docs/extraction.md "stage": a projection that could be read only in part is `partial`;
    deciding store/skip against it could miss the entry a draft repeats, so the submission is
    refused with its own code, leaves every table as it was, and goes through after a complete
    sync."""
    from teamlore.memory.store.projection import sync_approved_projection

    staged, a, b = two_drafts(world)
    entries = tmp_path / "wt" / ".threadshare" / "memory" / "entries"
    entries.mkdir(parents=True)
    (entries / "broken.md").write_text("no front matter at all\n")

    def sync() -> str:
        return sync_approved_projection(
            world.conn,
            repository_key=OWNER.repository_key,
            worktree_key=OWNER.worktree_key,
            worktree_root=tmp_path / "wt",
        ).coverage

    assert sync() == "partial"
    decisions = result(staged, [decide(a, "store"), decide(b, "store")])
    before = dump(world.conn)
    error = refused(submit, world, decisions)
    assert error.code == "APPROVED_PROJECTION_PARTIAL"
    assert "entries/broken.md (format.missing-frontmatter:" in error.message  # which, and why
    assert changed_tables(before, dump(world.conn)) == set()
    assert {status_of(world, a)[0], status_of(world, b)[0]} == {"draft"}
    (entries / "broken.md").unlink()
    assert sync() == "complete"
    assert submit(world, decisions)["status"] == "staged"


def test_an_invalid_adjudication_releases_the_claim_that_presented_it(world: World) -> None:
    staged, a, b = two_drafts(world)
    adjudication_id = staged["adjudicationTaskId"]
    claim = tasks.claim_task(world.conn, adjudication_id, holder="r1", lease_ms=3_600_000)
    invalid = refused(
        submit_adjudication,
        world.conn,
        result(staged, [decide(a, "store")]),
        owner=OWNER,
        claim_token=claim.claim_token,
    )
    assert invalid.code == "ADJUDICATION_INVALID" and invalid.details["attemptsLeft"] == 1
    task = tasks.find_task(world.conn, adjudication_id)
    assert task is not None and (task.status, task.claim_token) == ("pending", None)
    again = tasks.claim_task(world.conn, adjudication_id, holder="r2")
    done = submit_adjudication(
        world.conn,
        result(staged, [decide(a, "store"), decide(b, "store")]),
        owner=OWNER,
        claim_token=again.claim_token,
    )
    assert done["status"] == "staged"
