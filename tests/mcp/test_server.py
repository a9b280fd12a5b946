"""The real MCP server over stdio, driven by the official SDK client, against the real CLI."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.stdio import stdio_client

from mcp import ClientSession, StdioServerParameters
from support import initialized_repository, teamlore_cli
from teamlore.core import errors

ENTRY = """---
id: release-needs-stable-export-order
type: work_method
status: approved
priority: 80
confidence: high
provenance_strength: observed
claim_support: human-confirmed
limitations: ["not-authorship"]
scope: repo
scene: release-readiness
occurred: []
evidence: {"commits":[],"paths":[]}
superseded_by: null
---
Invoice export must sort rows by id; unordered exports made test_export flaky in release jobs.
"""

ENTRY_ZH = ENTRY.replace(
    "release-needs-stable-export-order", "migration-lock-timeout-3f9a2c"
).replace(
    ENTRY.splitlines()[-1],
    "数据库迁移在 staging 上必须把锁等待超时设为 30 秒，否则 alembic 升级会超时。",
)


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    root = initialized_repository(tmp_path, home)
    entries = root / ".threadshare" / "memory" / "entries"
    (entries / "release-needs-stable-export-order.md").write_text(ENTRY)
    (entries / "migration-lock-timeout-3f9a2c.md").write_text(ENTRY_ZH)
    return root


def server_params(repo: Path, capability: str = "team-read") -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "teamlore.cli.main", "mcp", "--capability", capability],
        cwd=str(repo),
        env={**os.environ},
    )


async def _session_calls(
    repo: Path, calls: list[tuple[str, dict[str, Any]]], capability: str = "team-read"
) -> tuple[Any, list[Any], list[Any]]:
    async with (
        stdio_client(server_params(repo, capability)) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        tools = (await session.list_tools()).tools
        results = [await session.call_tool(name, args) for name, args in calls]
        return init, tools, results


def mcp_calls(
    repo: Path, calls: list[tuple[str, dict[str, Any]]], capability: str = "team-read"
) -> tuple[Any, list[Any], list[Any]]:
    return anyio.run(_session_calls, repo, calls, capability)


def test_team_read_serves_read_only_search_and_status_with_instructions(repo: Path) -> None:
    init, tools, _ = mcp_calls(repo, [])
    by_name = {t.name: t for t in tools}
    assert set(by_name) == {"threadshare_memory_search", "threadshare_memory_status"}
    for tool in tools:
        assert tool.annotations.read_only_hint is True
        assert tool.input_schema["type"] == "object"
    assert "threadshare_memory_search" in (init.instructions or "")
    assert by_name["threadshare_memory_search"].input_schema["required"] == ["query"]


def _mcp_payload(result: Any) -> dict[str, Any]:
    payload = json.loads(result.content[0].text)
    assert result.structured_content == payload
    assert result.is_error == ("error" in payload)
    return payload


CASES: list[tuple[str, list[str], dict[str, Any]]] = [
    ("threadshare_memory_search", ["memory", "search", "flaky export"], {"query": "flaky export"}),
    ("threadshare_memory_search", ["memory", "search", "迁移"], {"query": "迁移"}),
    (
        "threadshare_memory_search",
        ["memory", "search", "release", "--limit", "1"],
        {"query": "release", "limit": 1},
    ),
    ("threadshare_memory_search", ["memory", "search", "?!"], {"query": "?!"}),
    # empty and blank alike: QUERY_EMPTY (`""` was INVALID_ARGUMENT, at least 1 character)
    ("threadshare_memory_search", ["memory", "search", ""], {"query": ""}),
    ("threadshare_memory_search", ["memory", "search", " "], {"query": " "}),
    (
        "threadshare_memory_search",
        ["memory", "search", "x", "--limit", "0"],
        {"query": "x", "limit": 0},
    ),
    ("threadshare_memory_status", ["memory", "status"], {}),
]


def _as_request_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """The CLI names a refused field by the flag the user typed (`--limit:`), MCP by the
    request field (`limit:`), and where the CLI's next step sends a person to `--help`, MCP's
    points at the tool's schema; everything else must be identical."""
    error = payload.get("error")
    if not error:
        return payload
    message = re.sub(r"^--([a-z-]+):", lambda m: _camel(m.group(1)) + ":", error["message"])
    code = errors.registered_codes()[error["code"]]
    assert error["next"] == errors.next_step(code)
    next_step = errors.tool_next_step(code)
    return {"error": {**error, "message": message, "problem": message, "next": next_step}}


def _camel(flag: str) -> str:
    head, *rest = flag.split("-")
    return head + "".join(part.title() for part in rest)


def test_cli_and_mcp_give_the_same_results_and_errors(repo: Path) -> None:
    _, _, results = mcp_calls(repo, [(tool, args) for tool, _, args in CASES])
    for (tool, cli_args, _), result in zip(CASES, results, strict=True):
        proc = teamlore_cli(*cli_args, "--format", "json", cwd=repo)
        cli_payload = json.loads(proc.stdout)
        assert _as_request_fields(cli_payload) == _mcp_payload(result), (tool, cli_args)
        assert (proc.returncode != 0) == ("error" in cli_payload)


def test_an_empty_or_blank_query_is_query_empty_over_cli_and_mcp(repo: Path) -> None:
    queries = ["", " "]
    _, _, results = mcp_calls(repo, [("threadshare_memory_search", {"query": q}) for q in queries])
    for query, result in zip(queries, results, strict=True):
        proc = teamlore_cli("memory", "search", query, "--format", "json", cwd=repo)
        assert proc.returncode == 2
        for payload in (json.loads(proc.stdout), _mcp_payload(result)):
            assert payload["error"]["code"] == "QUERY_EMPTY", payload
            assert payload["error"]["message"] == "the query is empty"


def test_search_finds_english_and_chinese_entries(repo: Path) -> None:
    _, _, (english, chinese, lexical) = mcp_calls(
        repo,
        [
            ("threadshare_memory_search", {"query": "flaky export"}),
            ("threadshare_memory_search", {"query": "迁移"}),
            ("threadshare_memory_search", {"query": "迁移", "lexical": True}),
        ],
    )
    assert _mcp_payload(english)["results"][0]["id"] == "release-needs-stable-export-order"
    hybrid = _mcp_payload(chinese)
    assert hybrid["paths"] == ["lexical", "vector"]
    assert hybrid["results"][0]["id"] == "migration-lock-timeout-3f9a2c"
    assert hybrid["results"][0]["matchedBy"] == ["lexical", "vector"]
    words_only = _mcp_payload(lexical)
    assert words_only["paths"] == ["lexical"] and words_only["vector"]["ran"] is False
    assert [r["id"] for r in words_only["results"]] == ["migration-lock-timeout-3f9a2c"]
    assert _mcp_payload(english)["coverage"] == "complete"


def test_arguments_cannot_reach_tools_outside_the_capability(repo: Path) -> None:
    _, _, (result,) = mcp_calls(repo, [("threadshare_memory_stage", {"request": {}})])
    assert result.is_error and _mcp_payload(result)["error"]["code"] == "USAGE"


def test_extra_arguments_are_refused(repo: Path) -> None:
    _, _, (result,) = mcp_calls(
        repo, [("threadshare_memory_search", {"query": "x", "repository": "/etc"})]
    )
    assert _mcp_payload(result)["error"]["code"] == "INVALID_ARGUMENT"


def test_only_the_team_capability_explains_the_extraction_workflow() -> None:
    from teamlore.mcp.server import compose_instructions

    team = compose_instructions(("team",))
    read_only = compose_instructions(("team-read",))
    assert "threadshare_memory_recall" in team and "plan id the user gave" in team
    assert "threadshare_memory_recall" not in read_only
    assert read_only.startswith("teamlore holds this repository's reviewed team memory")
