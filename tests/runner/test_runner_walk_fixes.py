"""What a person meets running the batch runner again after something went wrong part-way
(docs/runner.md): a manifest approved again after an interruption runs the plans that did not
run and does not call the ones that did failures; every row names its kind; a plan whose
session was excluded says so; a plan names the turns it sends, not the span they come from.
Real CLI, real SQLite, fake runner executables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from runner_world import WINDOW, World, make_world
from test_runner_e2e import _task_in, answer

from agent_clis import AgentClis, Scenario, ScriptedModel
from support import in_process

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import CodexSession, sync


def world_of(tmp_path: Path, home: Path, sessions: int = 1) -> World:
    """`make_world`, its commands (`cli`, `approve`) run in process: these tests are of what
    they do and print; the runners are real processes (the concurrent approvals below too)."""
    made = make_world(tmp_path, home, sessions=sessions)
    made.commands_in_process = True
    return made


def _text(world: World, *args: str) -> tuple[int, str, str]:
    proc = in_process(*args, cwd=world.repo, env={**world.fake.env(), **world.env, "COLUMNS": "80"})
    return proc.returncode, proc.stdout, proc.stderr


def test_a_manifest_approved_again_runs_what_did_not_run_and_exits_0(
    tmp_path: Path, home: Path
) -> None:
    """The first approval stopped after one plan (Ctrl-C, a reboot): approving the manifest
    again runs the others; the one that ran is shown as having run, not as a failure."""
    world = world_of(tmp_path, home, sessions=3)
    world.reverify()
    preview = world.plan()
    manifest = preview["manifest"]["manifestDigest"]
    ran_first = preview["plans"][0]["planDigest"]
    world.run_approved(ran_first)

    code, out = world.approve(manifest, "--approve-manifest")

    assert code == 0, out
    assert out["failed"] == 0 and "error" not in out
    rows = {r["planDigest"]: r for r in out["results"]}
    assert rows[ran_first]["status"] == "already-run"
    assert rows[ran_first]["taskKind"] == "extraction" and rows[ran_first]["finishedAt"]
    assert sorted(r["status"] for r in out["results"]) == ["already-run", "done", "done"]
    assert out["adjudicationPlan"]["disclosure"]["drafts"] == 3  # the earlier drafts too
    code, _, err = _text(world, "memory", "extract", "--approve-manifest", manifest)
    assert code == 1 and "RUNNER_PLAN_ALREADY_RUN" in err
    assert "every plan of manifest" in " ".join(err.split())


def test_the_text_view_of_an_approved_again_manifest_says_what_ran_before(
    tmp_path: Path, home: Path
) -> None:
    world = world_of(tmp_path, home, sessions=2)
    world.reverify()
    preview = world.plan()
    world.run_approved(preview["plans"][0]["planDigest"])
    code, out, err = _text(
        world, "memory", "extract", "--approve-manifest", preview["manifest"]["manifestDigest"]
    )
    said = " ".join(out.split())
    assert code == 0, out + err
    assert "already-run" in said and "not sent again" in said
    assert "RUNNER_PLAN_ALREADY_RUN" not in out + err and "error" not in err


def test_a_failed_plan_of_a_manifest_names_its_kind(tmp_path: Path, home: Path) -> None:
    world = world_of(tmp_path, home, sessions=2)
    world.reverify()
    preview = world.plan()
    excluded = preview["plans"][0]["disclosure"]["sessionKey"]
    world.exclude(excluded[:12])
    manifest = preview["manifest"]["manifestDigest"]
    code, text, _ = _text(world, "memory", "extract", "--approve-manifest", manifest)
    assert code == 1
    rows = [line for line in text.splitlines() if "RUNNER_PLAN_MISMATCH" in line]
    assert rows and all("│ extraction │" in row for row in rows), text
    assert "│ ?" not in text
    code, out = world.approve(manifest, "--approve-manifest")
    assert [(r["taskKind"], r["status"]) for r in out["results"]] == [
        ("extraction", "failed"),
        ("extraction", "already-run"),
    ]


def test_a_plan_whose_session_was_excluded_since_says_so(tmp_path: Path, home: Path) -> None:
    world = world_of(tmp_path, home)
    world.reverify()
    plan = world.plan()["plans"][0]
    key = plan["disclosure"]["sessionKey"]
    world.exclude(key[:12])
    sent = len(world.fake.sent())
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_MISMATCH"
    assert "its session was excluded from extraction" in out["error"]["message"]
    assert len(world.fake.sent()) == sent


def test_a_plan_counts_the_turns_it_sends_not_the_span_they_come_from(
    tmp_path: Path, home: Path
) -> None:
    """A query picks turns 1, 3 and 5 of a session: the chunk spans turns 1 to 5 and sends
    three of them, and the plan says three."""
    world = world_of(tmp_path, home, sessions=0)
    session = CodexSession("q1", world.repo)
    for number in range(5):
        topic = "invoice export" if number % 2 == 0 else "the cart page"
        session.turn(f"question {number} about {topic}", f"answer {number} about {topic}")
    session.write(tmp_path / "codex")
    sync(home, tmp_path / "codex", world.repo)
    world.reverify()
    preview = world.plan_by_cli("claude", "--query", "invoice")
    (plan,) = preview["plans"]
    assert plan["disclosure"]["turnRange"] == {"start": 1, "end": 5}
    assert plan["disclosure"]["turns"] == 3
    code, out, _ = _text(
        world, "memory", "extract", "--runner", "claude", "--since", WINDOW["since"],
        "--until", WINDOW["until"], "--query", "invoice",
    )  # fmt: skip
    assert code == 0 and "3 turns" in out


@pytest.mark.e2e
def test_a_provider_error_is_named_as_claude_reported_it(
    agent_clis: AgentClis, tmp_path: Path, home: Path
) -> None:
    """The real claude CLI against a model that answers HTTP 500: claude exits 1 and says why
    in its JSON result on stdout (its stderr holds unrelated noise); the refusal quotes it."""
    world = world_of(tmp_path, home)
    scenario = Scenario(
        final_text=lambda turn: answer(_task_in(turn.body)), answer_without_tools=True
    )
    with ScriptedModel(scenario) as model:
        world.env = {"TEAMLORE_CLAUDE_BIN": str(agent_clis.claude), "ANTHROPIC_API_KEY": "dummy"}
        options = ["--runner-model", "claude-scripted", "--runner-endpoint", model.base_url]
        code, verdict = world.cli("memory", "reverify-runner", "--runner", "claude", *options)
        assert code == 0, verdict
        plan = world.plan_by_cli("claude", *options)["plans"][0]
        model.scenario.fail_status = 500
        code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_EXIT_NONZERO", out
    assert 'it reported "API Error: 500' in out["error"]["message"], out["error"]["message"]


def test_a_probe_that_failed_says_to_run_the_probe_again_not_to_approve_a_plan(
    tmp_path: Path, home: Path
) -> None:
    world = world_of(tmp_path, home)
    world.fake.mode("broken-envelope")
    code, out = world.op("memory.reverify_runner", {"runner": "claude"})
    assert code == 1 and out["error"]["code"] == "RUNNER_OUTPUT_INVALID", out
    assert out["error"]["next"].startswith("Run `teamlore memory reverify-runner` again")


def test_a_run_that_failed_is_approved_again_as_its_next_step_says(
    tmp_path: Path, home: Path
) -> None:
    """A failed run stages nothing and keeps its plan: the refusal says to approve that plan
    again, not to make a new one, and doing so runs it."""
    world = world_of(tmp_path, home)
    world.reverify()
    plan = world.plan()["plans"][0]["planDigest"]
    world.fake.mode("prose")
    code, out = world.approve(plan)
    assert code == 1 and out["error"]["code"] == "RUNNER_OUTPUT_INVALID"
    assert out["error"]["next"].startswith("Approve the same plan again")
    world.fake.mode("exit3")
    code, out = world.approve(plan)
    assert code == 1 and out["error"]["code"] == "RUNNER_EXIT_NONZERO"
    assert "approve the plan again" in out["error"]["next"]
    world.fake.mode("good")
    code, out = world.approve(plan)
    assert code == 0 and out["results"][0]["candidates"] == 1, out


def test_a_plan_another_approval_is_running_is_left_to_it_not_failed(
    tmp_path: Path, home: Path
) -> None:
    """Two approvals at once (an overlapping cron job): the manifest runs what nobody runs and
    leaves the plan the other process holds to it, exiting 0."""
    world = world_of(tmp_path, home, sessions=2)
    world.reverify()
    preview = world.plan()
    held = preview["plans"][0]["planDigest"]
    world.fake.mode("slow")
    before = len(world.fake.sent())  # the probe's
    env = {**os.environ, **world.fake.env(), **world.env}
    command = [sys.executable, "-m", "teamlore.cli.main", "memory", "extract"]
    other = subprocess.Popen(
        [*command, "--approve-plan", held, "--format", "json"],
        cwd=world.repo, env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    _wait_for_runs(world, before + 1)
    manifest = subprocess.Popen(
        [*command, "--approve-manifest", preview["manifest"]["manifestDigest"], "--format", "json"],
        cwd=world.repo, env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    _wait_for_runs(world, before + 2)
    world.fake.release()
    out, _ = manifest.communicate(timeout=120)
    other.communicate(timeout=120)
    result = json.loads(out)
    assert manifest.returncode == 0 and result["failed"] == 0, out
    assert {r["planDigest"]: r["status"] for r in result["results"]} == {
        held: "running-elsewhere",
        preview["plans"][1]["planDigest"]: "done",
    }
    assert other.returncode == 0 and len(world.candidates()) == 2


def _wait_for_runs(world: World, count: int) -> None:
    deadline = time.monotonic() + 60
    while len(world.fake.sent()) < count:
        assert time.monotonic() < deadline, "the runner never received its task"
        time.sleep(0.05)


class _FailingMidRun(ScriptedModel):
    """Once `fail_mid_run` is set: answers the next request with a call of a tool the runner
    lacks, then fails every request (an outage in the middle of a run, after a billed answer)."""

    fail_mid_run = False

    def decide(self, api: str, body: dict[str, Any]) -> dict[str, Any]:
        if not self.fail_mid_run:
            return super().decide(api, body)
        self.scenario.fail_status = 500
        return {"kind": "tool", "name": "Bash", "namespace": "", "input": {"command": "ls"}}


@pytest.mark.e2e
def test_a_run_claude_failed_reports_what_it_spent(
    agent_clis: AgentClis, tmp_path: Path, home: Path
) -> None:
    """The real claude CLI whose model fails after one billed answer: claude exits 1 with an
    `is_error` result that still says what the run used; the refusal carries it (as it does
    for an answer that does not parse) and so does the plan's run record."""
    world = world_of(tmp_path, home)
    scenario = Scenario(
        final_text=lambda turn: answer(_task_in(turn.body)), answer_without_tools=True
    )
    with _FailingMidRun(scenario) as model:
        world.env = {"TEAMLORE_CLAUDE_BIN": str(agent_clis.claude), "ANTHROPIC_API_KEY": "dummy"}
        options = ["--runner-model", "claude-scripted", "--runner-endpoint", model.base_url]
        code, verdict = world.cli("memory", "reverify-runner", "--runner", "claude", *options)
        assert code == 0, verdict
        plan = world.plan_by_cli("claude", *options)["plans"][0]["planDigest"]
        model.fail_mid_run = True
        code, out = world.approve(plan)
    assert code == 1 and out["error"]["code"] == "RUNNER_EXIT_NONZERO", out
    assert 'it reported "API Error: 500' in out["error"]["message"]
    spent = out["error"]["details"]["usage"]
    assert (spent["inputTokens"], spent["outputTokens"]) == (10, 5)  # the answer before the 500
    assert spent["costUsd"] > 0
    record = json.loads(world.plan_path(plan).with_suffix(".run.json").read_text())
    assert (record["state"], record["usage"]) == ("failed", spent)
