"""MCP tool arguments are JSON and are read strictly: a value of another JSON type than the tool's
schema declares (`"limit": "5"`, `"lexical": "yes"`) is refused with INVALID_ARGUMENT and one line
naming the argument, for every tool of every tier. The arguments were read in pydantic's lax mode,
which took both. The real server over stdio (the official SDK client); the CLI, which parses its
flags from text, keeps reading them as before."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from mcp.client.stdio import stdio_client

from mcp import ClientSession, StdioServerParameters
from support import initialized_repository, teamlore_cli

PERSONAL = [
    *("--capability", "init", "--capability", "read", "--capability", "relay"),
    *("--client-id", "strict-test", "--global", "--accept-client-reported-user-turns"),
]
LAUNCHES = [["--capability", "team"], ["--capability", "org"], PERSONAL]

# a valid value for each required argument whose schema has a pattern; other strings get "x",
# an enum its first value
VALID = {
    "planId": "0f0e0d0c-0b0a-4909-8807-060504030201",
    "importId": "import-1",
    "submissionId": "turn-1",
    "contextId": "global",
    "sourceLabel": "chatgpt",
}
# a value of another JSON type than the one declared
WRONG: dict[str, Any] = {"integer": "5", "boolean": "yes", "string": 5, "array": "x", "object": "x"}


@contextlib.asynccontextmanager
async def session(cwd: Path, launch: list[str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "teamlore.cli.main", "mcp", *launch],
        cwd=str(cwd),
        env={**os.environ},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as started:
        await started.initialize()
        yield started


def declared_type(schema: dict[str, Any]) -> str | None:
    for option in [schema, *schema.get("anyOf", [])]:
        if option.get("type") not in (None, "null"):
            return str(option["type"])
    return None


def valid(name: str, schema: dict[str, Any]) -> Any:
    return schema["enum"][0] if "enum" in schema else VALID.get(name, "x")


async def wrong_typed_calls(cwd: Path) -> list[tuple[str, str, str, Any, dict[str, Any]]]:
    """(tool, argument, declared type, value sent, answer) for each argument of each tool of
    every tier, sent with a value of another JSON type and every required argument valid."""
    answers = []
    for launch in LAUNCHES:
        async with session(cwd, launch) as client:
            for tool in (await client.list_tools()).tools:
                properties = tool.input_schema.get("properties", {})
                base = {
                    name: valid(name, properties[name])
                    for name in tool.input_schema.get("required", [])
                }
                for name, schema in properties.items():
                    kind = declared_type(schema)
                    if kind is None or "enum" in schema:
                        continue
                    sent = WRONG[kind]
                    result = await client.call_tool(tool.name, {**base, name: sent})
                    answer = json.loads(result.content[0].text)
                    assert result.is_error == ("error" in answer)
                    answers.append((tool.name, name, kind, sent, answer))
    return answers


def test_every_argument_of_every_tool_refuses_a_value_of_another_json_type(
    tmp_path: Path, home: Path
) -> None:
    repo = initialized_repository(tmp_path, home)
    answers = anyio.run(wrong_typed_calls, repo)
    for tool, name, kind, sent, answer in answers:
        error = answer.get("error") or {}
        assert error.get("code") == "INVALID_ARGUMENT", (tool, name, sent, answer)
        message = error["message"]
        assert message.startswith(f"{name}: ") and "\n" not in message, (tool, message)
        if kind in ("integer", "boolean"):
            assert message == f"{name}: Input should be a valid {kind}, not a string", tool
    checked = {(tool, name) for tool, name, *_ in answers}
    assert {
        ("threadshare_memory_search", "limit"),
        ("threadshare_memory_search", "lexical"),
        ("threadshare_memory_review", "limit"),
        ("threadshare_memory_recall", "chunkBytes"),
        ("threadshare_memory_discard", "extractAgain"),
        ("threadshare_memory_assemble", "check"),
        ("threadshare_org_search", "limit"),
        ("memory_init", "importId"),
        ("memory_submit_user_turn", "text"),
    } <= checked


async def right_typed_calls(cwd: Path) -> list[dict[str, Any]]:
    async with session(cwd, ["--capability", "team"]) as client:
        calls = [
            ("threadshare_memory_search", {"query": "release", "limit": 5, "lexical": True}),
            # JSON Schema's integer: a number without a fraction, as some clients send it
            ("threadshare_memory_search", {"query": "release", "limit": 5.0}),
            ("threadshare_memory_search", {"query": "release", "limit": 5.5}),
            ("threadshare_memory_search", {"query": "release", "lexical": 1}),
        ]
        return [
            json.loads((await client.call_tool(name, args)).content[0].text) for name, args in calls
        ]


def test_values_of_the_declared_types_pass_and_the_cli_still_parses_its_flags(
    tmp_path: Path, home: Path
) -> None:
    repo = initialized_repository(tmp_path, home)
    typed, whole_float, fraction, number_for_boolean = anyio.run(right_typed_calls, repo)
    assert "error" not in typed and "error" not in whole_float, (typed, whole_float)
    assert fraction["error"]["message"] == "limit: Input should be a valid integer, not a number"
    assert number_for_boolean["error"]["message"] == (
        "lexical: Input should be a valid boolean, not a number"
    )
    cli = teamlore_cli(
        "memory", "search", "release", "--limit", "5", "--lexical", "--format", "json", cwd=repo
    )
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert json.loads(cli.stdout) == typed  # `--limit 5` came from argv as text
