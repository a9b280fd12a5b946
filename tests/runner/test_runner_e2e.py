"""The batch runner over the real `claude` and `codex` CLIs (pinned, from npm) and over the
OpenAI-compatible client, each against a scripted model on 127.0.0.1.

The scripted model stands in for a paid model's judgement (which cannot exist here): it reads
the task the runner sent (the JSON after `TASK:`) and answers a CandidateDraftBatch@v1 citing
that task's own first turn evidence id, then an AdjudicationResult@v1 storing every draft. The
model server's request log proves that nothing reached it before the approval and that what
reached it is byte for byte the approved plan's input."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from runner_world import World, make_world

from agent_clis import AgentClis, Scenario, ScriptedModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from scripted_server import RecordedRequest, Scripted, ScriptedServer


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _task_in(body: Any) -> dict[str, Any]:
    for text in _strings(body):
        if "TASK:\n{" in text:
            return dict(json.loads(text.split("TASK:\n", 1)[1]))
    raise AssertionError("the request carries no task")


def answer(task: dict[str, Any]) -> str:
    """What a careful model would answer to the task it was sent."""
    if task["format"].endswith("consolidation-task@v1"):
        based_on = [e["entryId"] for e in task["entries"]][:2]
        doctrine = "## Core principles\n- A person reviews every generated claim first.\n"
        return json.dumps(
            {
                "format": "threadshare-memory-consolidation-patch@v1",
                "taskId": task["taskId"],
                "binding": task["binding"],
                "operations": [
                    {
                        "operationId": "op-doctrine",
                        "op": "create",
                        "target": "doctrine",
                        "name": "doctrine",
                        "newContent": doctrine,
                        "basedOnEntryIds": based_on,
                        "mergeSources": [],
                        "rationale": "Both entries rest on this principle.",
                    }
                ],
            }
        )
    if task["format"].endswith("adjudication-task@v1"):
        return json.dumps(
            {
                "format": "threadshare-memory-adjudication-result@v1",
                "taskId": task["taskId"],
                "binding": task["binding"],
                "adjudications": [
                    {
                        "draftRef": d["candidateId"],
                        "action": "store",
                        "targetIds": [],
                        "mergedFields": None,
                    }
                    for d in task["drafts"]
                ],
            }
        )
    transcript = task["chunk"]["transcript"]
    content = (
        "Run `make db-up` before `make test`; the tests need the local database."
        if "db-up" in transcript
        else "Release tag checks expect a v prefix; run the release tests before pushing tags."
    )
    evidence = task["chunk"]["turnEvidence"][0]["evidenceId"]
    return json.dumps(
        {
            "format": "threadshare-memory-candidate-draft-batch@v1",
            "taskId": task["taskId"],
            "binding": task["binding"],
            "candidates": [
                {
                    "content": content,
                    "type": "work_method",
                    "priority": 60,
                    "confidence": "medium",
                    "scene": None,
                    "statements": [
                        {"statementId": "s1", "text": content, "evidenceIds": [evidence]}
                    ],
                }
            ],
        }
    )


def _sent_inputs(bodies: list[Any]) -> set[str]:
    """sha256 of every string in the logged requests that carries a task."""
    return {
        hashlib.sha256(s.encode("utf-8")).hexdigest()
        for body in bodies
        for s in _strings(body)
        if "TASK:\n{" in s
    }


Ran = tuple[dict[str, Any], dict[str, Any] | str]


def _extract_and_adjudicate(
    world: World, runner: str, runner_args: list[str], bodies: Any, *, text: bool = False
) -> Ran:
    """Both approvals: the extraction's result, then the adjudication's (its text view when
    `text`)."""
    code, verdict = world.cli("memory", "reverify-runner", "--runner", runner, *runner_args)
    assert code == 0, verdict
    assert verdict["passed"] and verdict["candidates"] == 1
    # the probe reports what it spent, as an approval does
    assert verdict["usage"]["runs"] == 1 and verdict["usage"]["tokensNotReported"] == 0, verdict
    probe_requests = len(bodies())
    assert probe_requests >= 1
    preview = world.plan_by_cli(runner, *runner_args)
    plan = preview["plans"][0]
    assert len(bodies()) == probe_requests, "a plan must send nothing"
    code, run = world.cli("memory", "extract", "--approve-plan", plan["planDigest"])
    assert code == 0, run
    after_extraction = bodies()[probe_requests:]
    assert after_extraction, "the approval sent nothing"
    assert _sent_inputs(after_extraction) == {plan["runnerInputDigest"]}
    adjudication = run["results"][0]["adjudicationPlan"]
    assert len(bodies()) == probe_requests + len(after_extraction)
    second: dict[str, Any] | str
    if text:
        code, second, err = world.text(
            "memory", "extract", "--approve-plan", adjudication["planDigest"]
        )
        assert code == 0, err
        assert "1 candidate quarantined" in second
    else:
        code, second = world.cli("memory", "extract", "--approve-plan", adjudication["planDigest"])
        assert code == 0, second
        assert second["results"][0]["quarantined"] == 1
    after_adjudication = bodies()[probe_requests + len(after_extraction) :]
    assert _sent_inputs(after_adjudication) == {adjudication["runnerInputDigest"]}
    code, review = world.cli("memory", "review")
    assert code == 0 and review["count"] == 1
    assert "v prefix" in review["items"][0]["content"]
    assert review["items"][0]["statements"][0]["claimSupport"] == "unverified"
    return run, second


def _spent(world: World, result: dict[str, Any]) -> dict[str, Any]:
    """What an approval reports its runner spent — and that the plan's run record keeps the
    same figures."""
    (ran,) = result["results"]
    record = json.loads(world.plan_path(ran["planDigest"]).with_suffix(".run.json").read_text())
    assert record["usage"] == ran["usage"]
    assert result["usage"]["runs"] == 1
    return dict(result["usage"])


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return make_world(tmp_path, home)


@pytest.mark.e2e
def test_claude_runner_end_to_end(agent_clis: AgentClis, world: World) -> None:
    scenario = Scenario(
        final_text=lambda turn: answer(_task_in(turn.body)), answer_without_tools=True
    )
    with ScriptedModel(scenario) as model:
        world.env = {
            "TEAMLORE_CLAUDE_BIN": str(agent_clis.claude),
            "ANTHROPIC_API_KEY": "dummy",
            "COLUMNS": "80",
        }
        run, adjudicated = _extract_and_adjudicate(
            world,
            "claude",
            ["--runner-model", "claude-sonnet-4-5", "--runner-endpoint", model.base_url],
            lambda: [r.body for r in model.model_requests("anthropic")],
            text=True,
        )
        assert not model.errors
        # the scripted model reports 10 input and 5 output tokens a request; claude prices them
        spent = _spent(world, run)
        assert (spent["inputTokens"], spent["outputTokens"]) == (10, 5)
        assert spent["costUsd"] > 0 and spent["costNotReported"] == 0
        assert "Spent in 1 run: 10 input + 5 output tokens; cost $0.0001." in str(adjudicated)
        first = model.model_requests("anthropic")[0].body
        assert first["model"] == "claude-sonnet-4-5"
        assert not [t for t in first.get("tools", []) if t.get("name")], "the runner got tools"


@pytest.mark.e2e
def test_codex_runner_end_to_end(agent_clis: AgentClis, world: World) -> None:
    scenario = Scenario(
        final_text=lambda turn: answer(_task_in(turn.body)), answer_without_tools=True
    )
    with ScriptedModel(scenario) as model:
        world.env = {"TEAMLORE_CODEX_BIN": str(agent_clis.codex), "OPENAI_API_KEY": "dummy"}
        run, adjudicated = _extract_and_adjudicate(
            world,
            "codex",
            ["--runner-model", "fake-model", "--runner-endpoint", model.base_url + "/v1"],
            lambda: [r.body for r in model.model_requests("responses")],
        )
        assert not model.errors
        # codex reports the tokens of each turn, never a cost
        assert _spent(world, run) == {
            "runs": 1,
            "inputTokens": 10,
            "outputTokens": 5,
            "costUsd": None,
            "costSource": None,
            "tokensNotReported": 0,
            "costNotReported": 1,
        }
        assert isinstance(adjudicated, dict)
        assert adjudicated["results"][0]["usage"]["outputTokens"] == 5
        tools = {
            t.get("name") or t.get("type")
            for t in model.model_requests("responses")[0].body.get("tools", [])
        }
        assert not tools & {"exec_command", "shell", "apply_patch", "write_stdin"}, tools


def test_openai_runner_end_to_end(world: World) -> None:
    def reply(request: RecordedRequest) -> Scripted:
        return Scripted.chat(answer(_task_in(request.json())))

    with ScriptedServer() as server:
        server.respond_with(reply)
        world.env = {"OPENAI_API_KEY": "dummy"}
        run, _ = _extract_and_adjudicate(
            world,
            "openai",
            ["--runner-model", "scripted-model", "--runner-endpoint", server.base_url],
            lambda: [r.json() for r in server.requests],
        )
        assert server.requests[0].json()["response_format"] == {"type": "json_object"}
        # the scripted server's usage: 11 prompt and 7 completion tokens, no cost
        spent = _spent(world, run)
        assert (spent["inputTokens"], spent["outputTokens"], spent["costUsd"]) == (11, 7, None)


@pytest.mark.e2e
def test_codex_consolidation_end_to_end(agent_clis: AgentClis, tmp_path: Path, home: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "consolidation"))
    from consolidation_world import World as ConsolidationWorld

    tree = ConsolidationWorld(tmp_path, home)
    scenario = Scenario(
        final_text=lambda turn: answer(_task_in(turn.body)), answer_without_tools=True
    )
    with ScriptedModel(scenario) as model:
        options = [
            "--runner",
            "codex",
            "--runner-model",
            "fake-model",
            "--runner-endpoint",
            model.base_url + "/v1",
        ]
        env = {"TEAMLORE_CODEX_BIN": str(agent_clis.codex), "OPENAI_API_KEY": "dummy"}
        verdict = tree.cli("memory", "reverify-runner", *options, "--format", "json", env=env)
        assert verdict.returncode == 0, verdict.stdout
        probes = len(model.model_requests())
        planned = tree.cli("memory", "consolidate", *options, "--format", "json", env=env)
        assert planned.returncode == 0, planned.stdout
        (plan,) = json.loads(planned.stdout)["plans"]
        assert len(model.model_requests()) == probes, "a plan must send nothing"
        ran = tree.cli(
            "memory",
            "consolidate",
            "--approve-plan",
            plan["planDigest"],
            "--format",
            "json",
            env=env,
        )
        assert ran.returncode == 0, ran.stdout
        sent = [r.body for r in model.model_requests()[probes:]]
        assert _sent_inputs(sent) == {plan["runnerInputDigest"]}
        assert not model.errors
    review = tree.op("memory.review", {"kind": "consolidation"})
    assert review["count"] == 1
