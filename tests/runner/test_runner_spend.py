"""What runner runs spent (docs/runner.md "What a run spent"): the conformance probe reports it
like an approval, a provider's own cost figure (OpenRouter's `usage.cost`) is used and named as
the provider's, and one failed `--approve-plan` says it in its text view as well as in JSON.
The `openai` runner against the scripted model server on 127.0.0.1; real CLI, real SQLite."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from runner_world import WINDOW, World, make_world
from test_runner_e2e import _task_in, answer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from scripted_server import RecordedRequest, Scripted, ScriptedServer

_COST = 0.0042  # what the scripted provider says each request cost, in USD


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return make_world(tmp_path, home)


def _provider(off_contract: list[bool], off_text: str = '{"memories": "none"}') -> ScriptedServer:
    """A provider that reports its cost; while `off_contract[0]`, it answers a real task with
    `off_text`, JSON of no contract by default (refused after the run: it was billed)."""

    def reply(request: RecordedRequest) -> Scripted:
        task = _task_in(request.json())
        probe = task["taskId"].startswith("conformance-probe")
        text = off_text if off_contract[0] and not probe else answer(task)
        return Scripted.chat(text, cost=_COST)

    server = ScriptedServer()
    server.respond_with(reply)
    return server


def _options(server: ScriptedServer) -> list[str]:
    return ["--runner-model", "scripted-model", "--runner-endpoint", server.base_url]


def _verified_plan(world: World, server: ScriptedServer) -> str:
    """A passing probe, then the plan of the fixture's window, with the scripted model: steps
    on the way to the approval a test checks, run in this process (the probe's own output is
    the first test's); the plan's digest."""
    model = {"runner": "openai", "runnerModel": "scripted-model", "runnerEndpoint": server.base_url}
    code, verdict = world.op("memory.reverify_runner", model)
    assert code == 0, verdict
    code, preview = world.op("memory.extract_preview", {**model, "limit": 8, **WINDOW})
    assert code == 0, preview
    digest: str = preview["plans"][0]["planDigest"]
    return digest


def test_the_probe_reports_what_it_spent_in_json_and_text(world: World) -> None:
    with _provider([False]) as server:
        world.env = {"OPENAI_API_KEY": "dummy"}
        code, verdict = world.cli(
            "memory", "reverify-runner", "--runner", "openai", *_options(server)
        )
        assert code == 0, verdict
        assert verdict["usage"] == {
            "runs": 1,
            "inputTokens": 11,
            "outputTokens": 7,
            "costUsd": _COST,
            "costSource": "provider",
            "tokensNotReported": 0,
            "costNotReported": 0,
        }
        code, out, err = world.text(
            "memory", "reverify-runner", "--runner", "openai", *_options(server)
        )
    assert code == 0, err
    assert "Spent in 1 run: 11 input + 7 output tokens; cost $0.0042 (the provider's figure)." in (
        " ".join(out.split())
    ), out


def test_a_providers_cost_is_used_and_named_as_the_providers(world: World) -> None:
    with _provider([False]) as server:
        world.env = {"OPENAI_API_KEY": "dummy"}
        plan = _verified_plan(world, server)
        code, run = world.approve(plan)
    assert code == 0, run
    (ran,) = run["results"]
    assert ran["usage"] == {
        "inputTokens": 11,
        "outputTokens": 7,
        "costUsd": _COST,
        "costSource": "provider",
    }
    assert (run["usage"]["costUsd"], run["usage"]["costSource"]) == (_COST, "provider")


@pytest.mark.parametrize(
    ("off_text", "code_expected"),
    [
        ('{"memories": "none"}', "RUNNER_OUTPUT_INVALID"),  # JSON, not the contract's shape
        # not JSON at all: the runner's code too, as for a CLI runner (docs/runner.md)
        ("Here are the memories you asked for.", "RUNNER_OUTPUT_INVALID"),
    ],
)
def test_one_failed_approval_says_what_it_spent_in_its_text_view(
    world: World, off_text: str, code_expected: str
) -> None:
    off_contract = [False]
    with _provider(off_contract, off_text=off_text) as server:
        world.env = {"OPENAI_API_KEY": "dummy", "COLUMNS": "200"}
        plan = _verified_plan(world, server)
        off_contract[0] = True
        code, out, err = world.text("memory", "extract", "--approve-plan", plan)
        assert code == 1, out
        assert code_expected in err
        assert (
            "the run spent 11 input + 7 output tokens, cost $0.0042 (the provider's figure)"
            in " ".join(err.split())
        ), err
        code, failed = world.approve(plan)  # a failed plan may be approved again
    assert code == 1 and failed["error"]["details"]["usage"]["costUsd"] == _COST
    assert failed["error"]["details"]["usage"] == {
        "inputTokens": 11,
        "outputTokens": 7,
        "costUsd": _COST,
        "costSource": "provider",
    }
