"""The shared real-CLI harness (tests/agent_clis.py) works: the real `claude -p` and `codex exec`
call teamlore's `team-read` MCP server on a `teamlore demo` state, driven by the scripted model,
and the harness's loop guards and timeouts hold."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agent_clis import (
    AgentClis,
    CliTimeout,
    Scenario,
    ScriptedModel,
    ToolStep,
    Turn,
    isolated_env,
    run_claude,
    run_codex,
    run_with_hard_timeout,
)
from support import teamlore_cli

ENTRY_ID = "invoice-export-must-sort-rows-by-id-unordered-exports-made"
PROMPT = "Search the team memory for 'invoice export' and tell me the entry id."


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    target = tmp_path_factory.mktemp("harness") / "demo"
    done = teamlore_cli("demo", "--dir", str(target), "--format", "json")
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _team_read_launch(demo: dict[str, Any]) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": ["-m", "teamlore.cli.main", "mcp", "--capability", "team-read"],
        "env": {"TEAMLORE_HOME": demo["stateDir"]},
    }


def _first_hit(turn: Turn) -> str:
    return f"entry: {turn.json()['results'][0]['id']}"


def _search_scenario() -> Scenario:
    return Scenario(
        steps=[ToolStep("threadshare_memory_search", {"query": "invoice export", "limit": 5})],
        final_text=_first_hit,
    )


@pytest.mark.e2e
@pytest.mark.parametrize("tool_search", [False, True], ids=["inline-tools", "tool-search"])
def test_claude_calls_team_search_through_the_scripted_model(
    agent_clis: AgentClis, demo: dict[str, Any], tmp_path: Path, tool_search: bool
) -> None:
    launch = _team_read_launch(demo)
    mcp_json = {"mcpServers": {"teamlore": {"type": "stdio", **launch}}}
    with ScriptedModel(_search_scenario(), log_path=tmp_path / "requests.jsonl") as model:
        run = run_claude(
            agent_clis,
            PROMPT,
            cwd=Path(demo["repository"]),
            home=tmp_path / "home",
            model=model,
            mcp_config=mcp_json,
            tool_search=tool_search,
        )
    assert not run.is_error, run.describe()
    assert run.result == f"entry: {ENTRY_ID}"
    assert model.errors == []
    assert [name for name, _ in model.tool_calls()] == ["mcp__teamlore__threadshare_memory_search"]
    assert len(model.model_requests("anthropic")) == (3 if tool_search else 2)
    assert (tmp_path / "requests.jsonl").read_text().count("\n") == len(model.requests)


def _chained_scenario() -> Scenario:
    """Two calls; the second's input is computed from the first result (as a batch runner's)."""
    return Scenario(
        steps=[
            ToolStep("threadshare_memory_search", {"query": "invoice export", "limit": 5}),
            ToolStep(
                "threadshare_memory_search",
                lambda turn: {"query": turn.json()["results"][0]["id"], "limit": 1},
            ),
        ],
        final_text=_first_hit,
    )


@pytest.mark.e2e
@pytest.mark.parametrize("model_slug", ["fake-model", "gpt-5.5"], ids=["inline", "tool-search"])
def test_codex_calls_team_search_through_the_scripted_model(
    agent_clis: AgentClis, demo: dict[str, Any], tmp_path: Path, model_slug: str
) -> None:
    launch = _team_read_launch(demo)
    config = "\n".join(
        [
            "[mcp_servers.teamlore]",
            f"command = {json.dumps(launch['command'])}",
            f"args = {json.dumps(launch['args'])}",
            f"env = {{ TEAMLORE_HOME = {json.dumps(demo['stateDir'])} }}",
            "required = true",
            "startup_timeout_sec = 30",
            "",
        ]
    )
    with ScriptedModel(_chained_scenario()) as model:
        run = run_codex(
            agent_clis,
            PROMPT,
            cwd=Path(demo["repository"]),
            home=tmp_path / "home",
            model=model,
            config_toml=config,
            model_slug=model_slug,
        )
    assert run.returncode == 0, run.describe()
    assert run.last_message.strip() == f"entry: {ENTRY_ID}"
    assert model.errors == []
    first, second = run.tool_calls
    assert (first["server"], first["tool"], first["status"]) == (
        "teamlore",
        "threadshare_memory_search",
        "completed",
    )
    assert second["arguments"] == {"query": ENTRY_ID, "limit": 1}
    assert ENTRY_ID in model.request_text()  # the tool result went back to the model


def test_scripted_model_loop_guard_stops_a_runaway_client() -> None:
    scenario = Scenario(steps=[ToolStep("lookup", {"q": 1})], max_requests=3)
    request = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "mcp__x__lookup"}],
        "stream": True,
    }
    statuses = []
    with ScriptedModel(scenario) as model:
        for _ in range(5):
            post = urllib.request.Request(
                f"{model.base_url}/v1/messages",
                data=json.dumps(request).encode(),
                headers={"Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(post, timeout=10) as answer:
                    statuses.append(answer.status)
                    assert b"mcp__x__lookup" in answer.read()
            except urllib.error.HTTPError as exc:
                statuses.append(exc.code)
    assert statuses == [200, 200, 200, 500, 500]
    assert model.errors and "loop guard" in model.errors[0]


def test_scripted_model_reports_a_tool_that_is_not_offered() -> None:
    scenario = Scenario(steps=[ToolStep("missing_tool")])
    body = {"model": "m", "input": [], "tools": [{"type": "function", "name": "exec_command"}]}
    with ScriptedModel(scenario) as model:
        decision = model.decide("responses", body)
    assert decision == {"kind": "text", "text": "SCRIPT ERROR: tool missing_tool not offered"}
    assert model.errors == ["step 0: tool 'missing_tool' not offered"]


def test_a_hung_cli_is_killed_at_the_hard_timeout(tmp_path: Path) -> None:
    argv = ["bash", "-c", "sleep 60 & wait"]  # a child that would outlive a plain kill
    with pytest.raises(CliTimeout, match="did not finish in 1s"):
        run_with_hard_timeout(argv, tmp_path, isolated_env(tmp_path / "home"), timeout=1)
