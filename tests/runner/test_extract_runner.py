"""`teamlore memory extract --runner` end to end through the real CLI with fake runner
executables (fault injection; a fake answers from the task it received — no model exists here):
plans send nothing, approval by digest runs exactly the planned bytes, every bad input refuses
with a stable code, stages nothing twice and loses nothing, and the authorization log tells
what was sent."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from runner_world import WINDOW, World, make_world, rewrite_first_message

from support import in_process


def world_of(tmp_path: Path, home: Path, sessions: int = 1) -> World:
    """`make_world`, its commands run in process: these tests are of what `memory extract` and
    `sessions` do and print, not of their process (the fake runner is a real process)."""
    made = make_world(tmp_path, home, sessions=sessions)
    made.commands_in_process = True
    return made


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return world_of(tmp_path, home)


def test_a_plan_sends_nothing_is_private_and_shows_what_would_be_sent(world: World) -> None:
    preview = world.plan()
    assert world.fake.sent() == []
    assert preview["sent"] is False and len(preview["plans"]) == 1
    assert preview["deferredAdjudications"] == 0
    plan = preview["plans"][0]
    assert plan["taskKind"] == "extraction" and plan["bytesToSend"] > 0
    assert plan["disclosure"]["turns"] == 3 and plan["disclosure"]["sessions"] == 1
    assert preview["approve"] == f"teamlore memory extract --approve-plan {plan['planDigest']}"
    path = world.plan_path(plan["planDigest"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    stored = json.loads(path.read_text())
    assert stored["plan"]["authorization"] == "pending"
    # neither the plan file nor the output carries transcript text or local paths
    for text in (path.read_text(), json.dumps(preview)):
        assert "release script fails" not in text and str(world.repo) not in text
    # the same inputs give the same plan
    assert world.plan()["plans"][0]["planDigest"] == plan["planDigest"]
    code, out, _ = world.text(
        "memory", "extract", "--runner", "claude", "--since", "2026-03-01", "--until", "2026-03-08"
    )
    assert code == 0 and "Nothing was sent" in out and plan["planDigest"] in out
    assert world.fake.sent() == []


def test_approval_runs_the_exact_planned_bytes_then_adjudication_needs_its_own(
    world: World,
) -> None:
    world.reverify()
    probe_runs = len(world.fake.sent())
    plan = world.plan()["plans"][0]
    code, run = world.approve(plan["planDigest"])
    assert code == 0, run
    extraction = run["results"][0]
    assert extraction["status"] == "done" and extraction["candidates"] == 1
    sent = world.fake.sent()[probe_runs:]
    assert [s["sha256"] for s in sent] == [plan["runnerInputDigest"]]
    assert sent[0]["bytes"] == plan["bytesToSend"]
    # the runner saw no caller environment beyond the allow-list, and got no tools
    assert "TEAMLORE_HOME" not in sent[0]["env"] and "CLAUDECODE" not in sent[0]["env"]
    assert sent[0]["argv"][:6] == [
        "-p",
        "--output-format",
        "json",
        "--tools",
        "",
        "--strict-mcp-config",
    ]
    # drafts only: adjudication is a second delivery with its own plan and approval
    assert world.candidates() and all(s == "draft" for _, s in world.candidates())
    adjudication = extraction["adjudicationPlan"]
    assert run["next"] == f"teamlore memory extract --approve-plan {adjudication['planDigest']}"
    code, second = world.approve(adjudication["planDigest"])
    assert code == 0, second
    assert second["results"][0]["quarantined"] == 1
    assert [s for _, s in world.candidates()] == ["quarantined"]
    assert world.fake.sent()[-1]["sha256"] == adjudication["runnerInputDigest"]
    log = world.authorizations()
    assert [(r[0], r[1], r[3]) for r in log] == [
        (plan["planDigest"], plan["runnerInputDigest"], "digest"),
        (adjudication["planDigest"], adjudication["runnerInputDigest"], "digest"),
    ]
    code, review = world.op("memory.review", {})
    assert code == 0 and review["count"] == 1
    # a plan runs once
    code, again = world.approve(plan["planDigest"])
    assert code == 1 and again["error"]["code"] == "RUNNER_PLAN_ALREADY_RUN"
    assert len(world.authorizations()) == 2


def test_approval_needs_a_conformance_record(world: World) -> None:
    plan = world.plan()["plans"][0]
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_NOT_CONFORMANT"
    assert "reverify-runner" in out["error"]["message"]
    assert world.fake.sent() == [] and world.authorizations() == []


def test_a_runner_binary_replaced_after_the_probe_must_be_reverified(world: World) -> None:
    world.reverify()
    plan = world.plan()["plans"][0]
    world.fake.install("claude", version="10.0.0 (fake, upgraded)")
    sent_before = len(world.fake.sent())
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_NOT_CONFORMANT"
    assert len(world.fake.sent()) == sent_before and world.authorizations() == []
    # after a re-verification the old plan still names the old binary: a new plan is needed
    world.reverify()
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_MISMATCH"
    fresh = world.plan()["plans"][0]
    assert world.approve(fresh["planDigest"])[0] == 0


def test_digests_that_name_no_plan_of_this_worktree(world: World) -> None:
    world.reverify()
    world.plan()
    code, out = world.approve("ab" * 32)
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_NOT_FOUND"
    code, out = world.approve("ab" * 32, "--approve-manifest")
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_NOT_FOUND"
    world.commands_in_process = False  # usage errors' exits: the process's own
    code, out = world.approve("not-a-digest")
    assert code == 2 and out["error"]["code"] == "INVALID_ARGUMENT"
    code, out = world.cli("memory", "extract", "--approve-plan", "ab" * 32, "--since", "2026-03-01")
    assert code == 2 and out["error"]["code"] == "USAGE"
    code, out = world.cli("memory", "extract", "--since", "2026-03-01", "--until", "2026-03-08")
    assert code == 2 and out["error"]["code"] == "USAGE"
    assert world.authorizations() == []


def test_a_plan_file_edited_by_hand_is_refused(world: World) -> None:
    world.reverify()
    plan = world.plan()["plans"][0]
    path = world.plan_path(plan["planDigest"])
    original = path.read_text()
    edited = json.loads(original)
    edited["plan"]["bytesToSend"] = 1
    path.write_text(json.dumps(edited))
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_INVALID"
    edited = json.loads(original)
    edited["source"]["request"]["window"]["after"] = "2026-03-05T00:00:00.000Z"
    path.write_text(json.dumps(edited))
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_MISMATCH"
    edited = json.loads(original)
    edited["profile"]["argv"].append("--dangerously-skip-permissions")
    path.write_text(json.dumps(edited))
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_INVALID"
    assert world.fake.sent()[-1]["sha256"] != plan["runnerInputDigest"]
    assert world.authorizations() == [] and world.candidates() == []


def test_a_session_rewritten_after_the_plan_voids_it(world: World) -> None:
    world.reverify()
    plan = world.plan()["plans"][0]
    rewrite_first_message(world.sessions[0])
    world.resync()
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_MISMATCH", out
    assert world.authorizations() == [] and world.candidates() == []
    assert world.fake.sent()[-1]["sha256"] != plan["runnerInputDigest"]


def test_a_session_appended_after_the_plan_sends_only_the_approved_turns(world: World) -> None:
    """An approval binds bytes, not sessions: the planned turns did not change, so exactly the
    approved bytes go out; the appended turn waits for the next plan (docs/runner.md)."""
    world.reverify()
    plan = world.plan()["plans"][0]
    world.sessions[0].turn("one more thing: bump the changelog", "Bumped it.")
    world.resync()
    code, out = world.approve(plan["planDigest"])
    assert code == 0, out
    assert world.fake.sent()[-1]["sha256"] == plan["runnerInputDigest"]
    following = world.plan()["plans"]
    extraction = [p for p in following if p["taskKind"] == "extraction"]
    assert len(extraction) == 1 and extraction[0]["disclosure"]["turns"] == 1


def test_a_manifest_approves_each_plan_on_its_own(tmp_path: Path, home: Path) -> None:
    world = world_of(tmp_path, home, sessions=2)
    world.reverify()
    preview = world.plan()
    assert len(preview["plans"]) == 2 and preview["manifest"]["plans"] == 2
    manifest = preview["manifest"]["manifestDigest"]
    assert preview["approve"] == f"teamlore memory extract --approve-manifest {manifest}"
    # one session changes: only its plan fails, the other runs
    rewrite_first_message(world.sessions[1])
    world.resync()
    _, out = world.approve(manifest, "--approve-manifest")
    error = out["error"]
    assert (error["code"], error["message"]) == ("RUNNER_PLAN_MISMATCH", "1 of 2 plans failed")
    statuses = sorted(r["status"] for r in out["results"])
    assert statuses == ["done", "failed"] and out["failed"] == 1
    failed = next(r for r in out["results"] if r["status"] == "failed")
    assert failed["error"]["code"] == "RUNNER_PLAN_MISMATCH"
    assert [r[3] for r in world.authorizations()] == ["manifest"]
    assert len(world.candidates()) == 1


def test_the_text_view_gives_each_plans_whole_digest_to_approve_it_alone(
    tmp_path: Path, home: Path
) -> None:
    world = world_of(tmp_path, home, sessions=2)
    world.reverify()
    preview = world.plan()
    window = ["--since", WINDOW["since"], "--until", WINDOW["until"]]
    proc = in_process(
        "memory", "extract", "--runner", "claude", *window,
        cwd=world.repo, env={**world.fake.env(), **world.env, "COLUMNS": "80"},
    )  # fmt: skip

    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    lines = text.splitlines()
    table = [line for line in lines if line[:1] in "┏┃┡│└"]
    # two plans of two lines each (the session, then what of it is sent)
    assert len(table) == 8 and max(len(line) for line in table) <= 80
    manifest = preview["manifest"]["manifestDigest"]
    assert f"To approve: teamlore memory extract --approve-manifest {manifest}" in text
    digests = [plan["planDigest"] for plan in preview["plans"]]
    assert [line.strip() for line in lines[-2:]] == digests
    code, done = world.approve(lines[-1].strip())
    assert code == 0 and done["results"][0]["status"] == "done"


def test_a_manifests_extractions_share_one_adjudication(tmp_path: Path, home: Path) -> None:
    """One adjudication per runner run (at most 8 chunks x 8 drafts = 64), not one per chunk:
    deciding chunk by chunk would let each decision make its siblings' tasks stale."""
    world = world_of(tmp_path, home, sessions=2)
    world.reverify()
    preview = world.plan()
    code, out = world.approve(preview["manifest"]["manifestDigest"], "--approve-manifest")
    assert code == 0, out
    assert [r["candidates"] for r in out["results"]] == [1, 1]
    assert [r["adjudicationPlan"] for r in out["results"]] == [None, None]
    shared = out["adjudicationPlan"]
    assert shared["taskKind"] == "adjudication" and shared["disclosure"]["drafts"] == 2
    assert out["next"] == f"teamlore memory extract --approve-plan {shared['planDigest']}"
    code, done = world.approve(shared["planDigest"])
    assert code == 0, done
    assert done["results"][0]["quarantined"] == 2
    assert sorted(status for _, status in world.candidates()) == ["quarantined", "quarantined"]
    # nothing is left to adjudicate, so a new plan holds no adjudication
    assert all(p["taskKind"] != "adjudication" for p in world.plan()["plans"])


def test_drafts_waiting_from_several_runs_are_planned_as_one_adjudication(
    tmp_path: Path, home: Path
) -> None:
    world = world_of(tmp_path, home, sessions=2)
    world.reverify()
    for plan in world.plan()["plans"]:  # each extraction approved alone, adjudication left
        world.run_approved(plan["planDigest"])
    preview = world.plan()
    (adjudication,) = [p for p in preview["plans"] if p["taskKind"] == "adjudication"]
    assert adjudication["disclosure"]["drafts"] == 2 and preview["deferredAdjudications"] == 0
    code, done = world.approve(adjudication["planDigest"])
    assert code == 0 and done["results"][0]["quarantined"] == 2, done


def test_text_output_is_a_summary_table(world: World) -> None:
    world.reverify()
    plan = world.plan()["plans"][0]
    proc = in_process(
        "memory",
        "extract",
        "--approve-plan",
        plan["planDigest"],
        cwd=world.repo,
        env=world.fake.env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert "Runner results" in proc.stdout and "1 draft staged" in proc.stdout
    assert "approve it with" in proc.stdout


def test_a_claude_login_reaches_the_runner_and_nothing_else_of_home(world: World) -> None:
    """Without ANTHROPIC_API_KEY the runner gets a copy of the caller's `claude login`
    credentials file in its throw-away config dir — and nothing else of the caller's HOME."""
    caller_home = world.tmp / "caller-home"
    (caller_home / ".claude").mkdir(parents=True)
    (caller_home / ".claude" / ".credentials.json").write_text("{}")
    (caller_home / ".claude" / "settings.json").write_text('{"hooks": {}}')
    world.env = {"HOME": str(caller_home), "ANTHROPIC_API_KEY": "", "CLAUDE_CONFIG_DIR": ""}
    world.reverify()
    (record,) = world.fake.sent()
    assert record["claudeCredentials"] is True
    assert str(caller_home) not in record["cwd"]


def test_an_excluded_session_is_never_selected_and_show_says_so(tmp_path: Path, home: Path) -> None:
    """`sessions exclude KEY` keeps a session out of recall, the runner and its previews (a
    plan made before refuses at approval); `sessions show` says so; `include` takes it back."""
    world = world_of(tmp_path, home, sessions=2)
    world.reverify()
    before = world.plan()["plans"]
    assert len(before) == 2
    code, listed = world.cli("sessions", "list")
    assert code == 0, listed
    keys = sorted(s["sessionKey"] for s in listed["sessions"])
    code, out = world.cli("sessions", "exclude", keys[0][:12])
    assert code == 0 and out["sessionKey"] == keys[0] and out["changed"] is True, out
    assert world.cli("sessions", "exclude", keys[0])[1]["changed"] is False
    assert len(world.plan()["plans"]) == 1
    window = {"since": "2026-03-01T00:00:00.000Z", "until": "2026-03-08T00:00:00.000Z"}
    code, recalled = world.op("memory.recall", {**window, "limit": 8})
    assert code == 0 and len(recalled["sources"]) == 1, recalled
    # of the two plans made before, the excluded session's refuses and sends nothing
    outcomes = []
    for plan in before:
        sent = len(world.fake.sent())
        code, run = world.approve(plan["planDigest"])
        outcomes.append((code, run.get("error", {}).get("code"), len(world.fake.sent()) - sent))
    assert (1, "RUNNER_PLAN_MISMATCH", 0) in outcomes, outcomes
    code, shown = world.cli("sessions", "show", keys[0])
    assert code == 0 and shown["session"]["excludedFromExtraction"] is True
    code, text, _ = world.text("sessions", "show", keys[0][:12])
    assert code == 0 and "excluded from extraction" in text
    code, back = world.cli("sessions", "include", keys[0])
    assert code == 0 and back["changed"] is True
    assert world.cli("sessions", "show", keys[0])[1]["session"]["excludedFromExtraction"] is False


def test_nothing_to_plan_names_each_session_and_why(tmp_path: Path, home: Path) -> None:
    """With nothing left to extract, the text view names the sessions considered by key and
    says why each gave nothing (excluded, already extracted); never a path."""
    world = world_of(tmp_path, home, sessions=2)
    world.reverify()
    code, listed = world.cli("sessions", "list")
    keys = sorted(s["sessionKey"] for s in listed["sessions"])
    world.exclude(keys[0])
    (plan,) = world.plan()["plans"]
    world.run_approved(plan["planDigest"])
    (adjudication,) = world.plan()["plans"]  # the drafts' adjudication is planned next
    world.run_approved(adjudication["planDigest"])
    code, out, _ = world.text(
        "memory", "extract", "--runner", "claude", "--since", "2026-03-01", "--until", "2026-03-08"
    )
    said = " ".join(out.split())
    assert code == 0 and "Nothing to plan" in said, out
    assert f"{keys[0]} (excluded from extraction)" in said
    assert f"{keys[1]} (every matching turn already extracted)" in said
    assert str(world.repo) not in said and str(home) not in said
