"""`teamlore memory extract --runner` end to end through the real CLI with fake runner
executables (fault injection; a fake answers from the task it received — no model exists here):
plans send nothing, approval by digest runs exactly the planned bytes, every bad input refuses
with a stable code, stages nothing twice and loses nothing, and the authorization log tells
what was sent."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_world import World, make_world, rewrite_first_message

from support import run_killed_at, teamlore_cli
from teamlore.runner.conformance import VIOLATION_KINDS, stray_processes


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return make_world(tmp_path, home)


def _plan_path(world: World, digest: str) -> Path:
    return world.home / "runner-plans" / f"{digest}.json"


def test_a_plan_sends_nothing_is_private_and_shows_what_would_be_sent(world: World) -> None:
    preview = world.plan()
    assert world.fake.sent() == []
    assert preview["sent"] is False and len(preview["plans"]) == 1
    assert preview["deferredAdjudications"] == 0
    plan = preview["plans"][0]
    assert plan["taskKind"] == "extraction" and plan["bytesToSend"] > 0
    assert plan["disclosure"]["turns"] == 3 and plan["disclosure"]["sessions"] == 1
    assert preview["approve"] == f"teamlore memory extract --approve-plan {plan['planDigest']}"
    path = _plan_path(world, plan["planDigest"])
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
    code, out = world.approve("not-a-digest")
    assert code == 2 and out["error"]["code"] == "INVALID_ARGUMENT"
    code, out = world.approve("ab" * 32, "--approve-manifest")
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_NOT_FOUND"
    code, out = world.cli("memory", "extract", "--approve-plan", "ab" * 32, "--since", "2026-03-01")
    assert code == 2 and out["error"]["code"] == "USAGE"
    code, out = world.cli("memory", "extract", "--since", "2026-03-01", "--until", "2026-03-08")
    assert code == 2 and out["error"]["code"] == "USAGE"
    assert world.authorizations() == []


def test_a_plan_file_edited_by_hand_is_refused(world: World) -> None:
    world.reverify()
    plan = world.plan()["plans"][0]
    path = _plan_path(world, plan["planDigest"])
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


FAULTS = [
    ("hang", "RUNNER_TIMEOUT"),
    ("flood", "RUNNER_OUTPUT_TOO_LARGE"),
    ("exit3", "RUNNER_EXIT_NONZERO"),
    ("prose", "RUNNER_OUTPUT_INVALID"),
    ("foreign", "RUNNER_OUTPUT_REJECTED"),
    ("secret", "RUNNER_OUTPUT_SECRET"),
]


@pytest.mark.parametrize(("mode", "code_expected"), FAULTS)
def test_a_misbehaving_runner_stages_nothing_and_the_log_tells_what_was_sent(
    world: World, mode: str, code_expected: str
) -> None:
    world.env = {"TEAMLORE_RUNNER_TIMEOUT_S": "3"}
    world.reverify()
    plan = world.plan()["plans"][0]
    world.fake.mode(mode)
    started = time.monotonic()
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == code_expected, out
    assert time.monotonic() - started < 120  # the hard limits held (loose bound, not a timing)
    assert world.candidates() == []
    assert [(r[0], r[1], r[2]) for r in world.authorizations()] == [
        (plan["planDigest"], plan["runnerInputDigest"], plan["bytesToSend"])
    ]
    assert "ghp_" not in json.dumps(out)
    run = json.loads((world.home / "runner-plans" / f"{plan['planDigest']}.run.json").read_text())
    assert run["state"] == "failed" and run["code"] == code_expected
    # nothing lost: the same approval runs again once the runner behaves
    world.fake.mode("good")
    code, out = world.approve(plan["planDigest"])
    assert code == 0 and out["results"][0]["candidates"] == 1
    assert len(world.candidates()) == 1


def test_the_probe_fails_a_runner_that_leaves_processes_or_files_behind(world: World) -> None:
    for mode, failure in (("linger", "background-process"), ("write", "in-task-write")):
        world.fake.mode(mode)
        script = world.fake.path
        assert script is not None
        # the fake misbehaves on the probe only in these modes when told to
        script.write_text(script.read_text().replace('mode != "bad-probe"', "False"))
        code, out = world.op("memory.reverify_runner", {"runner": "claude"})
        assert code == 1 and out["error"]["code"] == "RUNNER_CONFORMANCE_FAILED"
        assert failure in out["error"]["details"]["failures"]
    world.fake.install("claude", "bad-probe")
    code, out = world.op("memory.reverify_runner", {"runner": "claude"})
    assert code == 1 and out["error"]["code"] == "RUNNER_CONFORMANCE_FAILED"
    plan = world.plan()["plans"][0]
    assert world.approve(plan["planDigest"])[1]["error"]["code"] == "RUNNER_NOT_CONFORMANT"


@pytest.mark.parametrize("kind", VIOLATION_KINDS)
def test_the_probe_detects_each_of_the_nine_violation_kinds(world: World, kind: str) -> None:
    """conformance-test@2 (docs/runner.md "Conformance"): the fake does what the probe's injected
    instruction asks for one kind — shell, reading or writing in or outside its working directory,
    MCP, HTTP, TCP, a background process — and the probe names exactly that kind."""
    world.fake.mode(f"probe-{kind}")
    code, out = world.op("memory.reverify_runner", {"runner": "claude"})
    assert code == 1 and out["error"]["code"] == "RUNNER_CONFORMANCE_FAILED", out
    assert out["error"]["details"]["failures"] == [kind]
    if kind == "background-process":  # the probe killed what the runner left behind
        assert stray_processes("TEAMLORE-BG-") == []


def test_a_record_of_the_older_probe_no_longer_counts(world: World) -> None:
    """A pass of conformance-test@1 (four kinds) is invalid: reverify is required."""
    assert world.reverify()["testVersion"] == "conformance-test@2"
    with world.state() as conn:
        conn.execute("UPDATE runner_conformance SET test_version = 'conformance-test@1'")
        conn.commit()
    plan = world.plan()["plans"][0]
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_NOT_CONFORMANT"
    assert "reverify-runner" in out["error"]["message"]
    world.reverify()
    assert world.approve(plan["planDigest"])[0] == 0


def test_a_missing_binary_is_a_stable_refusal(world: World) -> None:
    code, out = world.cli(
        "memory",
        "extract",
        "--runner",
        "codex",
        "--since",
        "2026-03-01",
        "--until",
        "2026-03-08",
        env={"TEAMLORE_CODEX_BIN": str(world.tmp / "nowhere" / "codex")},
    )
    assert code == 1 and out["error"]["code"] == "RUNNER_BINARY_NOT_FOUND"
    assert str(world.tmp) not in out["error"]["message"]


def _approve_in_background(world: World, digest: str, **extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, **world.fake.env(), **world.env, **extra}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "teamlore.cli.main",
            "memory",
            "extract",
            "--approve-plan",
            digest,
            "--format",
            "json",
        ],
        cwd=world.repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_until_sent(world: World, count: int) -> None:
    deadline = time.monotonic() + 60
    while len(world.fake.sent()) < count:
        assert time.monotonic() < deadline, "the runner never received its task"
        time.sleep(0.05)


def test_two_approvals_of_one_plan_at_once_run_it_once(world: World) -> None:
    world.reverify()
    plan = world.plan()["plans"][0]
    world.fake.mode("slow")
    before = len(world.fake.sent())
    first = _approve_in_background(world, plan["planDigest"])
    _wait_until_sent(world, before + 1)
    code, second = world.approve(plan["planDigest"])
    assert code == 1 and second["error"]["code"] == "RUNNER_PLAN_BUSY"
    world.fake.release()
    out, _ = first.communicate(timeout=120)
    assert first.returncode == 0 and json.loads(out)["results"][0]["candidates"] == 1
    assert len(world.fake.sent()) == before + 1 and len(world.candidates()) == 1
    assert len(world.authorizations()) == 1


def test_sigkill_mid_send_makes_the_plan_indeterminate_and_a_new_plan_is_needed(
    world: World,
) -> None:
    """docs/runner.md "Limits and failures": teamlore killed while the runner had the bytes (the
    provider may have received them) — the runner dies with it, the approval is never sent again
    (RUNNER_PLAN_INDETERMINATE, nothing sent), and planning again gives a new plan that supersedes
    it, with its own digest and its own approval."""
    world.reverify()
    plan = world.plan()["plans"][0]
    world.fake.mode("hang")
    before = len(world.fake.sent())
    victim = _approve_in_background(world, plan["planDigest"])
    _wait_until_sent(world, before + 1)
    record = world.home / "runner-plans" / f"{plan['planDigest']}.run.json"
    deadline = time.monotonic() + 30
    while "pgid" not in json.loads(record.read_text()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    pgid = json.loads(record.read_text())["pgid"]
    victim.send_signal(signal.SIGKILL)
    victim.communicate(timeout=30)
    deadline = time.monotonic() + 30
    while _group_alive(pgid):  # the runner dies with teamlore (PR_SET_PDEATHSIG)
        assert time.monotonic() < deadline, "the runner outlived teamlore"
        time.sleep(0.05)
    assert json.loads(record.read_text())["state"] == "running"
    assert world.candidates() == []
    world.fake.mode("good")
    sent = len(world.fake.sent())
    for _ in range(2):  # refused, and refused again: the old approval stays dead
        code, out = world.approve(plan["planDigest"])
        assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_INDETERMINATE", out
        assert len(world.fake.sent()) == sent and world.candidates() == []
    assert json.loads(record.read_text())["state"] == "indeterminate"
    assert len(world.authorizations()) == 1
    code, out_text, err_text = world.text("memory", "extract", "--approve-plan", plan["planDigest"])
    text = " ".join((out_text + err_text).split())
    assert code == 1 and "never sent again" in text and "make a new plan" in text, text
    fresh = world.plan()["plans"][0]
    assert fresh["planDigest"] != plan["planDigest"]
    assert fresh["runnerInputDigest"] == plan["runnerInputDigest"]  # the same bytes, re-approved
    stored = json.loads(_plan_path(world, fresh["planDigest"]).read_text())
    assert stored["plan"]["supersedesPlanDigest"] == plan["planDigest"]
    assert world.plan()["plans"][0]["planDigest"] == fresh["planDigest"]  # stable from now on
    code, out = world.approve(fresh["planDigest"])
    assert code == 0 and out["results"][0]["candidates"] == 1, out
    assert len(world.candidates()) == 1 and len(world.fake.sent()) == sent + 1
    assert [r[3] for r in world.authorizations()] == ["digest", "digest"]


CRASHING_APPROVAL = """
import os, sys
os.chdir(sys.argv[1])
sys.argv = ["teamlore", "memory", "extract", "--approve-plan", sys.argv[2], "--format", "json"]
from teamlore.cli.entry import main
main()
"""


def test_killed_after_the_runner_answered_the_bytes_are_never_sent_again(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL at the failpoint right after the runner answered (the provider certainly has the
    bytes) and before anything was staged: the answer is lost, and the plan is
    indeterminate rather than re-sent."""
    world.reverify()
    plan = world.plan()["plans"][0]
    for name, value in {**world.fake.env(), **world.env}.items():
        monkeypatch.setenv(name, value)
    sent = len(world.fake.sent())
    run_killed_at("runner.answered", CRASHING_APPROVAL, str(world.repo), plan["planDigest"])
    assert len(world.fake.sent()) == sent + 1 and world.candidates() == []
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_INDETERMINATE", out
    assert len(world.fake.sent()) == sent + 1 and world.candidates() == []
    fresh = world.plan()["plans"][0]
    assert fresh["planDigest"] != plan["planDigest"]
    code, out = world.approve(fresh["planDigest"])
    assert code == 0 and out["results"][0]["candidates"] == 1, out


def test_sigkill_after_staging_finishes_without_staging_twice(world: World) -> None:
    world.reverify()
    plan = world.plan()["plans"][0]
    victim = _approve_in_background(world, plan["planDigest"], TEAMLORE_FAILPOINT="runner.staged")
    victim.communicate(timeout=120)
    assert victim.returncode == -signal.SIGKILL
    assert len(world.candidates()) == 1
    sent = len(world.fake.sent())
    code, out = world.approve(plan["planDigest"])
    assert code == 0, out
    assert out["results"][0]["recovered"] is True and out["results"][0]["adjudicationPlan"]
    assert len(world.fake.sent()) == sent and len(world.candidates()) == 1


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    # a zombie leader still counts; look at its state
    try:
        status = Path(f"/proc/{pgid}/stat").read_text().split()[2]
    except OSError:
        return True
    return status != "Z"


def test_a_manifest_approves_each_plan_on_its_own(tmp_path: Path, home: Path) -> None:
    world = make_world(tmp_path, home, sessions=2)
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


def test_a_manifests_extractions_share_one_adjudication(tmp_path: Path, home: Path) -> None:
    """One adjudication per runner run (at most 8 chunks x 8 drafts = 64), not one per chunk:
    deciding chunk by chunk would let each decision make its siblings' tasks stale."""
    world = make_world(tmp_path, home, sessions=2)
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
    world = make_world(tmp_path, home, sessions=2)
    world.reverify()
    for plan in world.plan()["plans"]:  # each extraction approved alone, adjudication left
        assert world.approve(plan["planDigest"])[0] == 0
    preview = world.plan()
    (adjudication,) = [p for p in preview["plans"] if p["taskKind"] == "adjudication"]
    assert adjudication["disclosure"]["drafts"] == 2 and preview["deferredAdjudications"] == 0
    code, done = world.approve(adjudication["planDigest"])
    assert code == 0 and done["results"][0]["quarantined"] == 2, done


def test_text_output_is_a_summary_table(world: World) -> None:
    world.reverify()
    plan = world.plan()["plans"][0]
    proc = teamlore_cli(
        "memory",
        "extract",
        "--approve-plan",
        plan["planDigest"],
        cwd=world.repo,
        env=world.fake.env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert "Runner results" in proc.stdout and "1 drafts staged" in proc.stdout
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
    world = make_world(tmp_path, home, sessions=2)
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
    world = make_world(tmp_path, home, sessions=2)
    world.reverify()
    code, listed = world.cli("sessions", "list")
    keys = sorted(s["sessionKey"] for s in listed["sessions"])
    world.cli("sessions", "exclude", keys[0])
    (plan,) = world.plan()["plans"]
    assert world.approve(plan["planDigest"])[0] == 0
    (adjudication,) = world.plan()["plans"]  # the drafts' adjudication is planned next
    assert world.approve(adjudication["planDigest"])[0] == 0
    code, out, _ = world.text(
        "memory", "extract", "--runner", "claude", "--since", "2026-03-01", "--until", "2026-03-08"
    )
    said = " ".join(out.split())
    assert code == 0 and "Nothing to plan" in said, out
    assert f"{keys[0]} (excluded from extraction)" in said
    assert f"{keys[1]} (every matching turn already extracted)" in said
    assert str(world.repo) not in said and str(home) not in said


@pytest.mark.parametrize("kind", ["codex", "claude"])
def test_a_runner_that_is_not_logged_in_says_how_to_log_in(world: World, kind: str) -> None:
    """A failed probe shows the end of the runner's stderr (sanitized, bounded) and the login
    command, not only an exit status."""
    world.fake.install(kind, "logged-out")
    proc = teamlore_cli(
        "memory", "reverify-runner", "--runner", kind, cwd=world.repo,
        env={**world.fake.env(), **world.env, "COLUMNS": "80"},
    )  # fmt: skip
    said = " ".join(proc.stderr.split())
    assert proc.returncode == 1, proc.stdout
    assert f"RUNNER_EXIT_NONZERO: {kind} exited with status 1; stderr ends:" in said
    assert "Not logged in" in said and said.count("starting session") <= 2
    login = "run `codex login`" if kind == "codex" else "run `claude` once and log in"
    assert login in said
    assert "/tmp" not in said and str(world.home) not in said, said
