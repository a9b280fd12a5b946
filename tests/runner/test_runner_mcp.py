"""The two MCP previews over a real MCP client (`--capability team`): they write the same
pending plan as the CLI, return its digest and disclosure summary, never transcript text, and
never run anything; the read-only tier does not have them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.stdio import stdio_client
from runner_world import World, make_world

from mcp import ClientSession, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import WINDOW


async def _call(world: World, capability: str, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "teamlore.cli.main", "mcp", "--capability", capability],
        cwd=str(world.repo),
        env={**os.environ, **world.fake.env()},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        results = []
        for name, args in calls:
            result = await session.call_tool(name, args)
            results.append((result.is_error, json.loads(result.content[0].text)))
        return names, results


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return make_world(tmp_path, home)


def test_extract_preview_matches_the_cli_and_discloses_no_transcript(world: World) -> None:
    names, results = anyio.run(
        _call,
        world,
        "team",
        [
            ("threadshare_memory_extract_preview", {"runner": "claude", **WINDOW}),
            ("threadshare_memory_extract_preview", {"runner": "claude", "since": WINDOW["since"]}),
            ("threadshare_memory_consolidate_preview", {"runner": "claude"}),
        ],
    )
    assert {"threadshare_memory_extract_preview", "threadshare_memory_consolidate_preview"} <= names
    (ok_error, preview), (bad_error, refusal), (_, consolidation) = results
    assert not ok_error and preview["sent"] is False and len(preview["plans"]) == 1
    code, over_cli = world.cli(
        "memory",
        "extract",
        "--runner",
        "claude",
        "--since",
        WINDOW["since"],
        "--until",
        WINDOW["until"],
    )
    assert code == 0 and over_cli == preview
    text = json.dumps(preview)
    assert "release script" not in text and "<<past-" not in text and str(world.repo) not in text
    assert bad_error and refusal["error"]["code"] == "WINDOW_INVALID"
    assert consolidation["plans"] == [] and consolidation["sent"] is False
    assert world.fake.sent() == [] and world.authorizations() == []
    plan_file = world.home / "runner-plans" / f"{preview['plans'][0]['planDigest']}.json"
    assert plan_file.stat().st_mode & 0o777 == 0o600


def test_the_read_only_tier_has_no_previews(world: World) -> None:
    names, _ = anyio.run(_call, world, "team-read", [])
    assert not {n for n in names if n.endswith("_preview")}


def _cli_plan(world: World, *flags: str) -> tuple[int, dict[str, Any]]:
    window = ("--since", WINDOW["since"], "--until", WINDOW["until"])
    return world.cli("memory", "extract", "--runner", "claude", *window, *flags)


def test_extract_takes_the_seeds_skill_and_terminal_state_filters_as_flat_flags(
    world: World,
) -> None:
    """`memory extract --skill-capability-keys` / `--capability-terminal-states` are the
    seed's `skillCapabilityKeys` / `capabilityTerminalStates`, as in `memory recall`: the CLI
    and the MCP preview answer the same, refusals included."""
    skill = {"skillCapabilityKeys": ["release-check"], "capabilityTerminalStates": ["failed"]}
    shell = {"toolCapabilityKeys": ["shell"], "capabilityTerminalStates": ["failed"]}
    _, results = anyio.run(
        _call,
        world,
        "team",
        [
            ("threadshare_memory_extract_preview", {"runner": "claude", **WINDOW, **skill}),
            ("threadshare_memory_extract_preview", {"runner": "claude", **WINDOW, **shell}),
            (
                "threadshare_memory_extract_preview",
                {"runner": "claude", **WINDOW, "capabilityTerminalStates": ["failed"]},
            ),
        ],
    )
    (_, by_skill), (_, by_shell), (refused, alone) = results
    skill_flags = ("--skill-capability-keys", "release-check")
    states_flag = ("--capability-terminal-states", "failed")
    assert _cli_plan(world, *skill_flags, *states_flag) == (0, by_skill)
    shell_flags = ("--tool-capability-keys", "shell", *states_flag)
    assert _cli_plan(world, *shell_flags) == (0, by_shell)
    # the failed pytest run matches (too few turns to plan); no turn invoked a Skill
    assert "Turns matching: 1," in by_shell["note"]
    assert "Turns matching: 1," not in by_skill["note"]
    code, cli_alone = _cli_plan(world, *states_flag)
    assert refused and code == 2 and cli_alone == alone
    assert alone["error"]["code"] == "RECALL_REQUEST_INVALID"


def test_extract_refuses_the_new_filters_beside_a_request_document(world: World) -> None:
    code, out = world.cli(
        "memory", "extract", "--runner", "claude", "--request", "-", "--skill-capability-keys", "x"
    )
    assert code == 2 and out["error"]["code"] == "USAGE"


def test_a_bad_endpoint_is_named_as_the_tool_argument_over_mcp_and_as_the_flag_in_the_cli(
    world: World,
) -> None:
    bad = {"runner": "openai", "runnerEndpoint": "file:///etc/passwd", **WINDOW}
    _, [(is_error, refusal)] = anyio.run(
        _call, world, "team", [("threadshare_memory_extract_preview", bad)]
    )
    assert is_error and refusal["error"]["code"] == "INVALID_ARGUMENT"
    assert refusal["error"]["message"] == (
        "runnerEndpoint: base_url must be an http:// or https:// URL"
    )
    code, over_cli = world.cli(
        "memory", "extract", "--runner", "openai", "--runner-endpoint", "file:///etc/passwd",
        "--since", WINDOW["since"], "--until", WINDOW["until"],
    )  # fmt: skip
    assert code == 2 and over_cli["error"]["message"] == (
        "--runner-endpoint: base_url must be an http:// or https:// URL"
    )
    assert world.fake.sent() == []
