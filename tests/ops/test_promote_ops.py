"""`memory.promote` over the registry, the CLI and MCP: same results, same errors."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcp.client.stdio import stdio_client

from mcp import ClientSession, StdioServerParameters
from support import git, git_run, teamlore_cli
from teamlore.ops.registry import CAPABILITY_TIERS, OpContext, load_operations, run_operation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "promotion"))
from test_apply import A, B, World, two_new_entries

AT_80 = {"COLUMNS": "80"}


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return World(tmp_path, home)


def test_promote_is_a_team_capability_tool_that_writes_the_repository() -> None:
    op = load_operations().get("memory.promote")

    assert (op.capability, op.mcp_tool, op.side_effect) == (
        "team",
        "threadshare_memory_promote",
        "repo-write",
    )
    assert op.capability not in CAPABILITY_TIERS["team-read"]
    assert "ONLY with a plan id the user gave you" in op.description
    schema = op.input_model.model_json_schema()
    assert schema["required"] == ["planId"]
    assert set(schema["properties"]) == {"planId", "planDigest"}


def test_the_owner_is_the_worktree_of_the_callers_directory(world: World) -> None:
    plan_id, files = two_new_entries(world)
    below = world.root / ".threadshare"

    result = run_operation(
        "memory.promote", OpContext(cwd=below, home=world.home), {"planId": plan_id}
    )

    assert result["status"] == "applied"
    assert [f["targetPath"] for f in result["files"]] == [A, B]
    assert result["candidates"] == [
        {"candidateId": "cand-1", "revision": 2},
        {"candidateId": "cand-2", "revision": 2},
    ]
    assert (world.root / A).read_bytes() == files[A]


@pytest.mark.parametrize(
    "args",
    [
        ["--plan", "not-a-uuid"],
        ["--plan", str(uuid.uuid4()), "--digest", "xyz"],
    ],
)
def test_malformed_arguments_are_usage_errors(world: World, args: list[str]) -> None:
    done = teamlore_cli("memory", "promote", *args, "--format", "json", cwd=world.root)

    assert done.returncode == 2
    assert orjson.loads(done.stdout)["error"]["code"] == "INVALID_ARGUMENT"


def test_the_text_output_names_every_file_and_says_nothing_was_committed(world: World) -> None:
    plan_id, _ = two_new_entries(world)

    done = teamlore_cli("memory", "promote", "--plan", plan_id, cwd=world.root)

    assert done.returncode == 0, done.stderr
    assert f"Plan {plan_id} applied." in done.stdout
    assert f"{A}: written" in done.stdout and f"{B}: written" in done.stdout
    assert "nothing was staged, committed or pushed" in done.stdout


def test_a_promotion_into_a_stopped_merge_says_what_finishes_it_as_assemble_does(
    world: World,
) -> None:
    """`git merge` stopped on the file a plan writes (both branches added it; the person removed
    it for the promotion to write): promote said only that nothing was staged, while
    `memory assemble` over a stopped merge names each file it wrote that is still unmerged and
    the `git add` that finishes the merge. Promote says it the same way (a warning: it wrote
    the working tree only); the rest of its note is as it was."""
    plan_id, _ = two_new_entries(world)
    target = world.root / A
    git(world.root, "checkout", "-q", "-b", "theirs")
    target.write_text("theirs\n")
    git(world.root, "add", A)
    git(world.root, "commit", "-q", "-m", "theirs")
    git(world.root, "checkout", "-q", "main")
    target.write_text("ours\n")
    git(world.root, "add", A)
    git(world.root, "commit", "-q", "-m", "ours")
    stopped = git_run(world.root, "merge", "-q", "theirs")  # with an identity, as any user
    assert stopped.returncode != 0 and (world.root / ".git" / "MERGE_HEAD").exists()
    target.unlink()

    done = teamlore_cli("memory", "promote", "--plan", plan_id, cwd=world.root, env=AT_80)

    assert done.returncode == 0, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    said = " ".join(done.stdout.split())
    assert (
        "working tree only: nothing was staged, committed or pushed;"
        f" {A} is still unmerged from the stopped merge: check it, then `git add {A}` finishes"
        " the merge (and `git commit` records it); `git status` lists the changed" in said
    ), done.stdout
    assert B not in said.split("working tree only")[1]  # only the unmerged file is named


async def _mcp(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[Any]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "teamlore.cli.main", "mcp", "--capability", "team"],
        cwd=str(root),
        env={**os.environ},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = [tool.name for tool in (await session.list_tools()).tools]
        return tools, [await session.call_tool(name, args) for name, args in calls]


def test_cli_and_mcp_promote_give_the_same_results_and_errors(world: World) -> None:
    plan_id, files = two_new_entries(world)
    unknown = str(uuid.uuid4())

    tools, (applied, missing) = anyio.run(
        _mcp,
        world.root,
        [
            ("threadshare_memory_promote", {"planId": plan_id}),
            ("threadshare_memory_promote", {"planId": unknown}),
        ],
    )

    assert "threadshare_memory_promote" in tools
    over_mcp = json.loads(applied.content[0].text)
    assert over_mcp["status"] == "applied" and not over_mcp["idempotent"]
    assert (world.root / A).read_bytes() == files[A]
    assert missing.is_error
    cli_missing = teamlore_cli(
        "memory", "promote", "--plan", unknown, "--format", "json", cwd=world.root
    )
    # the same refusal, except that the tool's caller is also pointed at the tool to call
    over_cli = orjson.loads(cli_missing.stdout)["error"]
    refused = json.loads(missing.content[0].text)["error"]
    assert refused == {**over_cli, "next": refused["next"]}
    assert over_cli["code"] == "PLAN_NOT_FOUND"
    assert "`threadshare_memory_prepare`" in refused["next"]
    assert "`threadshare_memory_prepare`" not in over_cli["next"]
    # a person makes plans as the README's flow does (`confirm`, then `promote`)
    assert over_cli["next"].startswith("Make a plan with `teamlore memory confirm`")
    replay = orjson.loads(
        teamlore_cli(
            "memory", "promote", "--plan", plan_id, "--format", "json", cwd=world.root
        ).stdout
    )
    assert replay["idempotent"] is True
    assert {k: v for k, v in replay.items() if k not in ("idempotent", "files", "projection")} == {
        k: v
        for k, v in over_mcp.items()
        if k not in ("idempotent", "files", "projection", "candidateGeneration")
    } | {"candidateGeneration": None}
