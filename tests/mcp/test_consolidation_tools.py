"""Consolidation through a real MCP client (`--capability team`, the SDK's stdio client) and the
CLI: synthesize, stage, review, prepare and promote give the same results and refusals on both,
and a flow may switch transport at any step."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from team_mcp import running_team_server, team_calls

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "consolidation"))
from consolidation_world import (
    DOCTRINE,
    SCENE,
    World,
    confirm_all,
    update_scene_and_create_doctrine,
)


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return World(tmp_path, home)


Calls = Callable[..., list[dict[str, Any]]]


@pytest.fixture()
def mcp(world: World) -> Iterator[Calls]:
    """`mcp(world, *calls)`: the JSON payloads of those tool calls, made to the one team server
    the test keeps running while it switches between MCP and the CLI."""
    with running_team_server(world.root) as server:
        yield lambda _world, *calls: server.calls(*calls)


def cli(world: World, *args: str, stdin: dict[str, Any] | None = None) -> dict[str, Any]:
    done = world.cli(*args, "--format", "json", input=None if stdin is None else json.dumps(stdin))
    payload: dict[str, Any] = json.loads(done.stdout)
    assert (done.returncode != 0) == ("error" in payload), done.stderr
    return payload


def test_the_synthesize_tool_is_a_team_tool_with_camel_case_arguments(world: World) -> None:
    tools, _ = anyio.run(team_calls, world.root, [])
    tool = next(t for t in tools if t.name == "threadshare_memory_synthesize")
    assert set(tool.input_schema["properties"]) == {"ifDue", "full"}
    assert tool.annotations.read_only_hint is False
    review = next(t for t in tools if t.name == "threadshare_memory_review")
    assert "consolidation" in json.dumps(review.input_schema)


def test_the_whole_flow_across_mcp_and_cli_gives_identical_results(
    world: World, mcp: Calls
) -> None:
    (over_mcp, not_due_mcp, both_mcp) = mcp(
        world,
        ("threadshare_memory_synthesize", {"full": True}),
        ("threadshare_memory_synthesize", {"ifDue": True}),
        ("threadshare_memory_synthesize", {"ifDue": True, "full": True}),
    )
    assert over_mcp == cli(world, "memory", "synthesize", "--full")
    assert not_due_mcp == cli(world, "memory", "synthesize", "--if-due")
    assert not_due_mcp["status"] == "not-due"
    assert both_mcp["error"]["code"] == "INVALID_ARGUMENT"

    task = over_mcp["task"]
    patch = update_scene_and_create_doctrine(task)
    bad = update_scene_and_create_doctrine(task)
    bad["operations"][0]["basedOnEntryIds"] = ["no-such-entry"]
    (bad_mcp,) = mcp(world, ("threadshare_memory_stage", bad))
    assert bad_mcp == cli(world, "memory", "stage", "--request", "-", stdin=bad)
    assert bad_mcp["error"]["code"] == "CONSOLIDATION_INVALID"
    assert bad_mcp["error"]["details"]["reason"] == "unknown-entry"

    (staged,) = mcp(world, ("threadshare_memory_stage", patch))
    replayed = cli(world, "memory", "stage", "--request", "-", stdin=patch)
    assert {**staged, "idempotent": True} == replayed

    (review_mcp, pending_mcp) = mcp(
        world,
        ("threadshare_memory_review", {"kind": "consolidation"}),
        ("threadshare_memory_synthesize", {}),
    )
    assert review_mcp == cli(world, "memory", "review", "--kind", "consolidation")
    assert pending_mcp == cli(world, "memory", "synthesize")
    assert pending_mcp["status"] == "pending-review"

    (item,) = review_mcp["items"]
    request = confirm_all(item)
    partial = json.loads(json.dumps(request))
    partial["candidates"][0]["statements"].pop()
    (partial_mcp,) = mcp(world, ("threadshare_memory_prepare", partial))
    assert partial_mcp == cli(world, "memory", "prepare", "--request", "-", stdin=partial)
    assert partial_mcp["error"]["code"] == "UNVERIFIED_CLAIM"

    (prepared,) = mcp(world, ("threadshare_memory_prepare", request))
    promoted = cli(world, "memory", "promote", "--plan", prepared["planId"])
    assert promoted["status"] == "applied"
    assert "\nheat: 2\n" in world.read(SCENE).decode()
    assert len(world.read(DOCTRINE).decode()) <= 1200

    (after_mcp, status_mcp) = mcp(
        world, ("threadshare_memory_synthesize", {}), ("threadshare_memory_status", {})
    )
    assert after_mcp == cli(world, "memory", "synthesize")
    assert after_mcp["status"] == "nothing-new"
    assert status_mcp == cli(world, "memory", "status")
    assert status_mcp["consolidation"]["runs"]["applied"] == 1


def test_the_team_instructions_explain_the_consolidation_workflow() -> None:
    from teamlore.mcp.server import compose_instructions

    team = compose_instructions(("team",))
    assert "threadshare_memory_synthesize" in team and '{kind: "consolidation"}' in team
    assert "threadshare_memory_synthesize" not in compose_instructions(("team-read",))
