"""A backlog bigger than one plan, as the weekly cron recipe meets it (docs/runner.md): the next
manifest holds the remaining extractions and the adjudication of the drafts still waiting, and
approving it runs all of them; what each plan sends is named in words a person can act on (the
session by the key `sessions show` takes), in the text view at 80 columns as in JSON. Real CLI,
real SQLite, fake runner executables."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from runner_world import WINDOW, World, make_world

from support import teamlore_cli
from teamlore.runner import plans as plan_store


def _text(world: World, *args: str) -> tuple[int, str, str]:
    proc = teamlore_cli(
        *args, cwd=world.repo, env={**world.fake.env(), **world.env, "COLUMNS": "80"}
    )
    return proc.returncode, proc.stdout, proc.stderr


def _window() -> list[str]:
    return ["--since", WINDOW["since"], "--until", WINDOW["until"]]


def _backlog(tmp_path: Path, home: Path) -> tuple[World, dict[str, Any]]:
    """Two sessions, planned one chunk at a time: the first extraction ran (its drafts wait
    for adjudication), and the next plan holds the second extraction and that adjudication."""
    world = make_world(tmp_path, home, sessions=2)
    world.reverify()
    first = world.plan("claude", limit=1)
    assert len(first["plans"]) == 1 and "1 more come back" in first["note"]
    world.run_approved(first["plans"][0]["planDigest"])
    second = world.plan("claude", limit=1)
    assert sorted(p["taskKind"] for p in second["plans"]) == ["adjudication", "extraction"]
    return world, second


def _waiting_drafts(world: World) -> int:
    with world.state() as conn:
        return int(
            conn.execute(
                "SELECT count(*) FROM candidates WHERE status = 'draft' "
                "AND adjudication = 'pending'"
            ).fetchone()[0]
        )


def test_a_manifest_with_extractions_and_the_waiting_adjudication_runs_whole(
    tmp_path: Path, home: Path
) -> None:
    """The adjudication binds the pool as it was planned; the drafts the manifest's extractions
    stage would change it, so it runs first and none of the plans is voided. The next step is
    one adjudication over every draft still waiting, and it says what it sends."""
    world, preview = _backlog(tmp_path, home)
    manifest = preview["manifest"]["manifestDigest"]
    code, out, err = _text(world, "memory", "extract", "--approve-manifest", manifest)
    assert code == 0, out + err
    assert "RUNNER_PLAN_MISMATCH" not in out + err
    lines = out.splitlines()
    assert max(len(line) for line in lines if line[:1] in "┏┃┡│└") <= 80
    said = " ".join(out.split())
    assert "1 candidate quarantined for review" in said and "1 draft staged" in said
    # the shared adjudication: what it sends, and the command that approves it
    assert _waiting_drafts(world) == 1
    assert "The adjudication sends" in said and "(1 draft, " in said
    (digest,) = [word for word in said.split() if re.fullmatch("[0-9a-f]{64}", word)]
    assert f"teamlore memory extract --approve-plan {digest}" in said
    assert "next:" not in said  # the adjudication line already says it
    code, done = world.approve(digest)
    assert code == 0, done
    assert done["results"][0]["quarantined"] == 1
    assert [s for _, s in world.candidates()] == ["quarantined", "quarantined"]
    assert _waiting_drafts(world) == 0
    # the preview lists the plans in the order the manifest runs them
    assert [p["taskKind"] for p in preview["plans"]] == ["adjudication", "extraction"]


def test_a_manifest_listing_extractions_first_still_runs_its_adjudication_first(
    tmp_path: Path, home: Path
) -> None:
    """A manifest written with its adjudication after the extractions (as teamlore wrote them
    before) runs the same way: the order a manifest runs in never voids one of its plans."""
    world, preview = _backlog(tmp_path, home)
    listed = sorted(preview["plans"], key=lambda plan: plan["taskKind"] != "extraction")
    reordered = plan_store.build_manifest(listed)
    stored = json.loads(
        (
            world.home / "runner-plans" / f"manifest-{preview['manifest']['manifestDigest']}.json"
        ).read_text()
    )
    owner = plan_store.Owner(stored["owner"]["repositoryKey"], stored["owner"]["worktreeKey"])
    plan_store.write_manifest(world.home, reordered, owner)
    assert [p.task_kind for p in reordered.plans] == ["extraction", "adjudication"]
    code, out = world.approve(str(reordered.manifest_digest), "--approve-manifest")
    assert code == 0, out
    assert [(r["taskKind"], r["status"]) for r in out["results"]] == [
        ("adjudication", "done"),
        ("extraction", "done"),
    ]
    assert out["adjudicationPlan"]["disclosure"]["drafts"] == 1
    assert (
        out["next"]
        == f"teamlore memory extract --approve-plan {out['adjudicationPlan']['planDigest']}"
    )


def test_the_text_preview_says_which_chunks_wait_for_the_next_plan(
    tmp_path: Path, home: Path
) -> None:
    world = make_world(tmp_path, home, sessions=2)
    world.reverify()
    preview = world.plan("claude", limit=1)
    code, out, _ = _text(world, "memory", "extract", "--runner", "claude", *_window(), "-n", "1")
    assert code == 0
    said = " ".join(out.split())
    assert preview["note"] == "1 of 2 chunks returned; 1 more come back after these are staged."
    assert preview["note"] in said


def test_the_preview_names_the_session_each_plan_sends_by_its_key(
    tmp_path: Path, home: Path
) -> None:
    """The approver sees which session a plan sends, by the key `sessions list` shows and
    `sessions show` / `sessions exclude` take; never a provider session id or a path."""
    world = make_world(tmp_path, home, sessions=2)
    world.reverify()
    preview = world.plan()
    code, listed = world.cli("sessions", "list")
    assert code == 0, listed
    keys = {s["sessionKey"] for s in listed["sessions"]}
    named = [p["disclosure"]["sessionKey"] for p in preview["plans"]]
    assert set(named) == keys
    for key in named:
        code, shown = world.cli("sessions", "show", key[:12])
        assert code == 0 and shown["session"]["sessionKey"] == key, shown
    code, out, _ = _text(world, "memory", "extract", "--runner", "claude", *_window())
    assert code == 0
    said = " ".join(out.split())
    for key in named:
        assert f"session {key[:12]} " in said
    for session in world.sessions:
        assert session.session_id not in out + json.dumps(preview)
    assert str(world.repo) not in out + json.dumps(preview)


def test_a_secret_in_the_answer_names_the_session_to_exclude(tmp_path: Path, home: Path) -> None:
    world = make_world(tmp_path, home)
    world.reverify()
    (plan,) = world.plan()["plans"]
    key = plan["disclosure"]["sessionKey"]
    world.fake.mode("secret")
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_OUTPUT_SECRET", out
    assert out["error"]["details"]["sessionKeys"] == [key]
    assert f"`teamlore sessions exclude {key[:12]}`" in out["error"]["message"]
    assert world.candidates() == []
    code, _, err = _text(world, "memory", "extract", "--approve-plan", plan["planDigest"])
    said = " ".join(err.split())
    assert code == 1 and f"teamlore sessions exclude {key[:12]}" in said, said
    # the command it names works as written, and the session is then never planned again
    code, excluded = world.cli("sessions", "exclude", key[:12])
    assert code == 0 and excluded["sessionKey"] == key
    world.fake.mode("good")
    assert world.plan()["plans"] == []


def test_when_the_manifests_adjudication_fails_the_next_one_covers_every_waiting_draft(
    tmp_path: Path, home: Path
) -> None:
    """The pool changed after the plan (another extraction was approved alone), so the
    manifest's adjudication is refused and sends nothing; the others still run, and the
    adjudication it plans covers every draft still waiting, not only its own."""
    world = make_world(tmp_path, home, sessions=3)
    world.reverify()
    first = world.plan("claude", limit=1)
    world.run_approved(first["plans"][0]["planDigest"])
    manifest = world.plan("claude", limit=1)
    extraction = next(p for p in manifest["plans"] if p["taskKind"] == "extraction")
    later = world.plan("claude", limit=2)
    (alone,) = [
        p
        for p in later["plans"]
        if p["taskKind"] == "extraction" and p["planDigest"] != extraction["planDigest"]
    ]
    world.run_approved(alone["planDigest"])
    sent = len(world.fake.sent())
    code, out = world.approve(manifest["manifest"]["manifestDigest"], "--approve-manifest")
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_MISMATCH", out
    assert [r["status"] for r in out["results"]] == ["failed", "done"]
    assert len(world.fake.sent()) == sent + 1  # the refused adjudication sent nothing
    assert _waiting_drafts(world) == 3
    shared = out["adjudicationPlan"]
    assert shared["disclosure"]["drafts"] == 3
    assert out["next"] == f"teamlore memory extract --approve-plan {shared['planDigest']}"
    code, done = world.approve(shared["planDigest"])
    assert code == 0 and done["results"][0]["quarantined"] == 3, done
    assert _waiting_drafts(world) == 0
