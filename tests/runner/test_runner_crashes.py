"""Approvals that race or die: two approvals of one plan at once run it once; teamlore killed
mid-send, after the answer or after staging never sends the same bytes twice nor stages twice
(docs/runner.md "Limits and failures"). Real processes, real SIGKILL, fake runner executables."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_world import WINDOW, World, make_world

from support import run_killed_at, teamlore_cli


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return make_world(tmp_path, home)


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
    stored = json.loads(world.plan_path(fresh["planDigest"]).read_text())
    assert stored["plan"]["supersedesPlanDigest"] == plan["planDigest"]
    # the approver is told, in the preview, that this plan sends those bytes again
    assert fresh["supersedesPlanDigest"] == plan["planDigest"]
    assert plan["supersedesPlanDigest"] is None
    proc = teamlore_cli(
        "memory", "extract", "--runner", "claude", "--since", WINDOW["since"],
        "--until", WINDOW["until"],
        cwd=world.repo, env={**world.fake.env(), **world.env, "COLUMNS": "80"},
    )  # fmt: skip
    said = " ".join(proc.stdout.split())
    assert proc.returncode == 0, proc.stderr
    assert f"Plan {fresh['planDigest'][:12]}… sends again" in said, proc.stdout
    assert f"the provider may already hold these bytes. It supersedes {plan['planDigest']}." in said
    resend = proc.stdout[proc.stdout.index("Plan ") : proc.stdout.index(plan["planDigest"])]
    assert max(len(line) for line in resend.splitlines()) <= 80
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


def test_killed_before_the_runner_started_the_plan_runs_at_its_next_approval(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL after the authorization was logged but before the runner started: nothing left,
    so the next approval runs the plan rather than calling it indeterminate."""
    world.reverify()
    plan = world.plan()["plans"][0]
    for name, value in {**world.fake.env(), **world.env}.items():
        monkeypatch.setenv(name, value)
    sent = len(world.fake.sent())
    run_killed_at("runner.authorized", CRASHING_APPROVAL, str(world.repo), plan["planDigest"])
    assert len(world.fake.sent()) == sent
    code, out = world.approve(plan["planDigest"])
    assert code == 0 and out["results"][0]["candidates"] == 1, out
    assert len(world.fake.sent()) == sent + 1 and len(world.candidates()) == 1


def test_an_adjudication_plan_killed_before_its_runner_started_is_still_offered(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memory status` (and the batch runner, which reads the same list) passes over a plan
    whose run record says it is out; one whose runner never started is not out."""
    world.reverify()
    code, ran = world.approve(world.plan()["plans"][0]["planDigest"])
    assert code == 0, ran
    adjudication = ran["results"][0]["adjudicationPlan"]["planDigest"]
    for name, value in {**world.fake.env(), **world.env}.items():
        monkeypatch.setenv(name, value)
    run_killed_at("runner.authorized", CRASHING_APPROVAL, str(world.repo), adjudication)

    code, status = world.op("memory.status", {})

    assert code == 0, status
    assert status["adjudication"]["plans"] == [adjudication]


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
