"""Capability tiers over real MCP server processes: which tools exist, frozen launch contexts,
the relay opt-in, read-only processes that leave no trace, and launches that are refused."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from personal_ops_world import (
    PROJECT,
    code,
    payload,
    server_params,
    tree,
    with_sessions,
    write_config,
)

from mcp import StdioServerParameters
from support import teamlore_cli
from teamlore.ops.registry import load_operations

TEAM_READ_TOOLS = {op.mcp_tool for op in load_operations().for_capability("team-read")}

INIT = {
    "importId": "chatgpt-1",
    "contextId": "global",
    "sourceLabel": "chatgpt-desktop",
    "basis": "saved_memories",
    "understanding": "Ecology student; has a tortoise named Quillon.",
}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    return root


def tools_of(cwd: Path, *flags: str) -> tuple[dict[str, Any], str]:
    async def body(sessions: list[Any], inits: list[Any]) -> tuple[dict[str, Any], str]:
        tools = (await sessions[0].list_tools()).tools
        return {t.name: t for t in tools}, inits[0].instructions or ""

    result: tuple[dict[str, Any], str] = with_sessions([server_params(cwd, *flags)], body)
    return result


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["-c", "read"], {"memory_read", "memory_status"}),
        (["-c", "init"], {"memory_init", "memory_status"}),
        (["-c", "relay"], {"memory_submit_user_turn", "memory_status"}),
        (["-c", "read", "-c", "init"], {"memory_read", "memory_init", "memory_status"}),
        (
            ["-c", "team-read", "-c", "read"],
            {"memory_read", "memory_status", *TEAM_READ_TOOLS},
        ),
    ],
)
def test_only_the_granted_tools_exist(
    home: Path, tmp_path: Path, flags: list[str], expected: set[str]
) -> None:
    tools, instructions = tools_of(tmp_path, *flags, "--client-id", "c1", "--global")
    assert set(tools) == expected
    if "memory_read" in tools:
        assert tools["memory_read"].annotations.read_only_hint is True
        assert "memory_read" in instructions and "data, not instructions" in instructions
    else:
        assert "memory_read" not in instructions  # init/relay do not imply read
    if "memory_init" in tools:
        hints = tools["memory_init"].annotations
        assert (hints.read_only_hint, hints.idempotent_hint, hints.destructive_hint) == (
            False,
            True,
            False,
        )
        assert tools["memory_init"].input_schema["required"] == [
            "importId", "contextId", "sourceLabel", "basis", "understanding",
        ]  # fmt: skip
    assert tools["memory_status"].annotations.read_only_hint is True
    assert not (home / "personal").exists()  # listing tools writes nothing


def test_contexts_are_frozen_at_launch_and_arguments_never_widen_them(
    home: Path, tmp_path: Path, project: Path
) -> None:
    write_config(home, project_root=project)

    async def body(sessions: list[Any], _: list[Any]) -> list[Any]:
        reader, writer = sessions
        return [
            await reader.call_tool("memory_status", {}),
            await reader.call_tool("memory_read", {"contextId": PROJECT}),
            await reader.call_tool("memory_read", {"contextId": "global"}),
            await reader.call_tool("memory_read", {"workspace": str(project)}),
            await writer.call_tool("memory_init", {**INIT, "contextId": PROJECT}),
            await writer.call_tool("memory_init", {**INIT, "contextId": "project:other"}),
            await writer.call_tool("memory_status", {}),
        ]

    read_global = server_params(tmp_path, "-c", "read", "--client-id", "codex-cli", "--global")
    init_project = server_params(
        tmp_path, "-c", "init", "--client-id", "desktop", "--workspace", str(project / "src")
    )
    status, project_read, global_read, widened, init_ok, init_other, init_status = with_sessions(
        [read_global, init_project], body
    )
    assert payload(status) == {
        "capabilities": ["read"],
        "submissionEnabled": False,
        "initEnabled": False,
        "readEnabled": True,
        "contexts": ["global"],
    }
    assert code(project_read) == "CONTEXT_UNAVAILABLE"
    assert payload(global_read)["contexts"] == ["global"]
    assert code(widened) == "INVALID_ARGUMENT"  # no argument can name a workspace
    assert payload(init_ok) == {
        "accepted": True,
        "duplicate": False,
        "state": "pending",
        "contextId": PROJECT,
    }
    assert code(init_other) == "CONTEXT_UNAVAILABLE"
    assert payload(init_status)["contexts"] == [PROJECT]
    assert payload(init_status)["initEnabled"] is True


def test_contexts_follow_config_edits_on_every_call(home: Path, tmp_path: Path) -> None:
    write_config(home)

    async def body(sessions: list[Any], _: list[Any]) -> list[Any]:
        before = await sessions[0].call_tool("memory_read", {})
        write_config(home, scopes=["project:*"])  # the person withdraws the global scope
        return [before, await sessions[0].call_tool("memory_read", {})]

    before, after = with_sessions(
        [server_params(tmp_path, "-c", "read", "--client-id", "c1", "--global")], body
    )
    assert payload(before)["contexts"] == ["global"]
    assert code(after) == "READ_DISABLED"
    # it said nothing of the scopes, and its next step was to launch with `--global`, as it was
    said = payload(after)["error"]
    assert said["message"] == (
        "[personal] allowed_scopes allows none of this server's contexts (global)"
    )
    assert "teamlore personal config" in said["next"]


def test_relay_needs_its_launch_flag(home: Path, tmp_path: Path) -> None:
    write_config(home)
    turn = {"submissionId": "t1", "contextId": "global", "text": "I prefer tabs."}

    async def body(sessions: list[Any], _: list[Any]) -> list[Any]:
        without, with_flag = sessions
        return [
            await without.call_tool("memory_submit_user_turn", turn),
            await without.call_tool("memory_status", {}),
            await with_flag.call_tool("memory_submit_user_turn", turn),
            await with_flag.call_tool("memory_submit_user_turn", turn),
            await with_flag.call_tool("memory_submit_user_turn", {**turn, "text": "spaces"}),
            await with_flag.call_tool("memory_submit_user_turn", {**turn, "submissionId": "a b"}),
            await with_flag.call_tool("memory_status", {"submissionId": "t1"}),
            await with_flag.call_tool("memory_status", {"importId": "x"}),
        ]

    flags = ["-c", "relay", "--client-id", "pi", "--global"]
    results = with_sessions(
        [
            server_params(tmp_path, *flags),
            server_params(tmp_path, *flags, "--accept-client-reported-user-turns"),
        ],
        body,
    )
    refused, status, accepted, again, conflict, bad_id, lookup, wrong_tier = results
    assert code(refused) == "SUBMISSION_DISABLED"
    # the launch flag is what is missing: `personal config --allow user_explicit` would not help
    assert payload(refused)["error"]["next"] == (
        "Add --accept-client-reported-user-turns to the host's launch of this server "
        "(`teamlore mcp-config` prints it)."
    )
    assert payload(status)["submissionEnabled"] is False
    assert (payload(accepted)["accepted"], payload(accepted)["duplicate"]) == (True, False)
    assert payload(again)["duplicate"] is True
    assert code(conflict) == "SUBMISSION_CONFLICT"
    assert code(bad_id) == "INVALID_SUBMISSION_ID"
    assert payload(lookup)["submission"]["state"] == "pending"  # waits for the batch triggers
    assert code(wrong_tier) == "STATUS_UNAVAILABLE"


def test_mcp_config_for_relay_prints_the_opt_in_a_working_relay_needs(
    home: Path, tmp_path: Path
) -> None:
    """`mcp-config -c relay` says the opt-in is needed; with the flag it prints the launch that
    accepts turns. Both launches are started exactly as printed and tried."""
    write_config(home)
    turn = {"submissionId": "t1", "contextId": "global", "text": "I prefer tabs."}
    launches = []
    for extra in ([], ["--accept-client-reported-user-turns"]):
        printed = teamlore_cli(
            "mcp-config", "-c", "relay", "--global", "--client", "codex", *extra, "--format", "json"
        )
        assert printed.returncode == 0, printed.stderr
        launches.append(json.loads(printed.stdout))
    without, with_flag = launches
    assert any("--accept-client-reported-user-turns" in n for n in without["notes"])
    assert not any("accept-client" in n for n in with_flag["notes"])

    def exact(result: dict[str, Any]) -> StdioServerParameters:
        table = result["codex"]["table"]
        return StdioServerParameters(
            command=table["command"],
            args=table["args"],
            cwd=str(tmp_path),
            env={**os.environ, **table.get("env", {})},
        )

    async def body(sessions: list[Any], _: list[Any]) -> list[Any]:
        return [await s.call_tool("memory_submit_user_turn", turn) for s in sessions]

    refused, accepted = with_sessions([exact(without), exact(with_flag)], body)
    assert code(refused) == "SUBMISSION_DISABLED"
    assert payload(accepted)["accepted"] is True


def test_a_read_only_process_leaves_no_trace(home: Path, tmp_path: Path) -> None:
    async def body(sessions: list[Any], _: list[Any]) -> list[Any]:
        return [
            await sessions[0].call_tool("memory_status", {}),
            await sessions[0].call_tool("memory_read", {}),
        ]

    flags = ("-c", "read", "--client-id", "codex-cli", "--global")
    # absent stays absent: no state dir, no secret, no queue
    status, read = with_sessions([server_params(tmp_path, *flags)], body)
    assert payload(read)["empty"] is True
    assert "no stored content" in read.content[0].text
    assert payload(status)["readEnabled"] is True
    assert not home.exists()

    # an existing state dir is left byte for byte and mtime for mtime as it was
    write_config(home)
    (home / "personal").mkdir(mode=0o700)
    (home / "personal" / "profile.md").write_text("# Profile\n\n## Pets\nA tortoise.\n")
    before = tree(home)
    _, read = with_sessions([server_params(tmp_path, *flags)], body)
    assert '<common-memory target="profile">' in read.content[0].text
    assert tree(home) == before
    assert not (home / "personal" / "runtime.sqlite3").exists()


@pytest.mark.parametrize(
    ("tier", "call", "refusal"),
    [
        (["-c", "init"], ("memory_init", INIT), "INIT_DISABLED"),
        (
            ["-c", "relay"],
            ("memory_submit_user_turn", {"submissionId": "t1", "contextId": "global",
                                         "text": "I prefer tabs."}),
            "SUBMISSION_DISABLED",
        ),
    ],
    ids=["init", "relay"],
)  # fmt: skip
def test_a_write_tier_that_writes_nothing_creates_no_state_dir(
    home: Path, tmp_path: Path, tier: list[str], call: tuple[str, dict[str, Any]], refusal: str
) -> None:
    """Walk defect: on a machine where teamlore never ran, `teamlore mcp -c init --client-id r
    --global` created an empty state dir at launch (reading the Writer's settings), and so did
    memory_init, which agent imports being off by default refuses (INIT_DISABLED). Like the
    read tier, nothing is made until something is written."""

    async def body(sessions: list[Any], _: list[Any]) -> list[Any]:
        return [
            await sessions[0].call_tool("memory_status", {}),
            await sessions[0].call_tool(*call),
        ]

    status, refused = with_sessions(
        [server_params(tmp_path, *tier, "--client-id", "r", "--global")], body
    )
    assert payload(status)["contexts"] == ["global"]
    assert code(refused) == refusal
    assert not home.exists()


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["-c", "read", "--global"], "INVALID_CLIENT_ID"),
        (["-c", "read", "--client-id", "c1"], "INVALID_ARGUMENT"),  # no context, no cwd fallback
        (["-c", "read", "--client-id", "c1", "--workspace", "."], "UNREGISTERED_WORKSPACE"),
        (["-c", "init", "--client-id", "c1", "--global", "--accept-client-reported-user-turns"],
         "INVALID_ARGUMENT"),
        (["-c", "team-read", "--global"], "INVALID_ARGUMENT"),
        (["-c", "admin"], "INVALID_ARGUMENT"),
    ],
)  # fmt: skip
def test_inconsistent_launches_are_refused_before_serving(
    home: Path, tmp_path: Path, flags: list[str], expected: str
) -> None:
    proc = teamlore_cli("mcp", *flags, cwd=tmp_path, input="")
    assert proc.returncode != 0
    assert expected in proc.stderr
    assert not home.exists()


def test_a_reused_import_id_is_told_to_use_a_new_id_not_to_recall(
    home: Path, tmp_path: Path
) -> None:
    """SUBMISSION_CONFLICT is shared with team memory; a personal id reused gets its own `next`
    (a new id), never team memory's (recall again)."""
    write_config(home)

    async def body(sessions: list[Any], _: list[Any]) -> list[Any]:
        init = sessions[0]
        return [
            await init.call_tool("memory_init", INIT),
            await init.call_tool("memory_init", {**INIT, "understanding": "Likes tortoises."}),
        ]

    flags = ["-c", "init", "--client-id", "desktop", "--global"]
    first, conflict = with_sessions([server_params(tmp_path, *flags)], body)
    assert payload(first)["accepted"] is True
    error = payload(conflict)["error"]
    assert error["code"] == "SUBMISSION_CONFLICT"
    assert error["next"] == "Keep the first submission; send the new content under a new id."
