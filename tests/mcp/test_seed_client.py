"""A client written only from the seeds' text (tool names, request and response shapes) works
against teamlore: over the real MCP server (stdio, the official SDK client) and the CLI.

Everything sent below is shaped as seed 000 §5/§9, seed 003 §5.6/§6.7 and seed 004 §4 write it;
everything read back is read by the seed's field names. Setup (a registered repository with one
reviewed entry from the real fixtures, a personal config) uses our helpers; the client does not.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.client.stdio import stdio_client

from mcp import ClientSession, StdioServerParameters
from support import release_repository, shared_fixtures, teamlore_cli

ENTRY = "0-7-x-macos-linux-insights-engine-windows-core-cli-windows-e"
WINDOW = {"after": "2026-03-01T00:00:00.000Z", "before": "2026-03-08T00:00:00.000Z"}


def server(cwd: Path, *flags: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "teamlore.cli.main", "mcp", *flags],
        cwd=str(cwd),
        env={**os.environ},
    )


async def session_calls(
    params: StdioServerParameters, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[set[str], list[tuple[bool, dict[str, Any]]]]:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name for tool in (await session.list_tools()).tools}
        results = []
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            results.append((bool(result.is_error), dict(result.structured_content or {})))
        return tools, results


def calls(
    params: StdioServerParameters, *requests: tuple[str, dict[str, Any]]
) -> tuple[set[str], list[tuple[bool, dict[str, Any]]]]:
    return anyio.run(session_calls, params, list(requests))


def test_personal_memory_as_seed_004_writes_it(tmp_path: Path, home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / "config.toml").write_text(
        '[personal]\nallowed_provenance = ["agent_observation"]\nallowed_scopes = ["global"]\n'
    )
    read_tools, (flags, empty) = calls(
        server(tmp_path, "--capability", "read", "--client-id", "codex-cli", "--global"),
        ("memory_status", {}),
        ("memory_read", {"contextId": "global"}),
    )
    # 004 §4.6: the read-only Codex config is enabled_tools = ["memory_read","memory_status"]
    assert read_tools == {"memory_read", "memory_status"}
    assert flags[1]["readEnabled"] is True and "global" in flags[1]["contexts"]
    assert empty == (False, empty[1]) and empty[1]["empty"] is True  # 004 §4.4: empty, no guess

    init_tools, (accepted, status) = calls(
        server(tmp_path, "--capability", "init", "--client-id", "chatgpt-desktop", "--global"),
        (
            "memory_init",
            {
                "importId": "chatgpt-2026-09-07",
                "contextId": "global",
                "sourceLabel": "chatgpt-desktop",
                "basis": "saved_memories",
                "understanding": "The user keeps a rescued three-legged tortoise named Quillon.",
                "gaps": "Chat history before 2026 was not visible.",
            },
        ),
        ("memory_status", {"importId": "chatgpt-2026-09-07"}),
    )
    assert init_tools == {"memory_init", "memory_status"}
    assert accepted[0] is False and accepted[1]["accepted"] is True
    outcome = status[1]["import"]  # 004 §4.3: { import: { state, retainedIn, issue } }
    assert outcome["state"] in ("pending", "claimed", "processed")
    assert {"state", "retainedIn", "issue"} <= set(outcome)


def test_team_memory_as_seeds_000_and_003_write_it(tmp_path: Path, home: Path) -> None:
    root = release_repository(tmp_path, home)
    fixture = shared_fixtures("threadshare-memory", "entries", f"{ENTRY}.md")
    shutil.copy(fixture, root / ".threadshare/memory/entries" / fixture.name)
    request = {  # MemoryExtractionRequest@v1 with every filter the seed names
        "format": "threadshare-memory-extraction-request@v1",
        "window": WINDOW,
        "filters": {"providers": ["codex"], "resultEvidence": ["provider-completed"]},
    }
    skill_filtered = {
        **request,
        "filters": {
            "skillCapabilityKeys": ["release-check"],
            "capabilityTerminalStates": ["failed"],
        },
    }
    tools, (found, recalled, narrowed, refused) = calls(
        server(root, "--capability", "team"),
        ("threadshare_memory_search", {"query": "Windows Engine", "limit": 5}),
        ("threadshare_memory_recall", {"request": request, "limit": 1}),
        ("threadshare_memory_recall", {"request": skill_filtered, "limit": 1}),
        ("threadshare_memory_promote", {"planId": "0b5e0e1c-6d0a-4b8e-9f7a-2c1d3e4f5a6b"}),
    )
    assert {"threadshare_memory_search", "threadshare_memory_recall", "threadshare_memory_stage",
            "threadshare_memory_prepare", "threadshare_memory_promote"} <= tools  # fmt: skip

    # search (000 §5): generation, coverage and items [{rank, entryId, revision}]
    result = found[1]
    assert isinstance(result["generation"], int) and result["coverage"] == "complete"
    first = result["items"][0]
    assert (first["rank"], first["entryId"]) == (1, ENTRY) and first["revision"] >= 1

    # recall: ExtractionTask@v1 sources; the seed's capability filters are honoured, not refused
    task = recalled[1]["sources"][0]
    assert task["format"] == "threadshare-memory-extraction-task@v1"
    assert narrowed == (False, narrowed[1]) and narrowed[1]["sources"] == []

    # errors carry the seed's {code, problem, next}
    error = refused[1]["error"]
    assert refused[0] is True and {"code", "problem", "next"} <= set(error)

    # stage a CandidateDraftBatch@v1 exactly as 000 §9 writes it → AdjudicationTask@v1
    evidence = task["evidenceCatalog"][0]["evidenceId"]
    batch = {
        "format": "threadshare-memory-candidate-draft-batch@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "candidates": [
            {
                "content": "Run the release tests before pushing a v-prefixed tag.",
                "type": "work_method",
                "priority": 70,
                "confidence": "medium",
                "scene": None,
                "statements": [
                    {
                        "statementId": "s1",
                        "text": "Run the release tests before pushing a v-prefixed tag.",
                        "evidenceIds": [evidence],
                    }
                ],
            }
        ],
    }
    _, [(failed, staged)] = calls(
        server(root, "--capability", "team"), ("threadshare_memory_stage", batch)
    )
    assert failed is False
    assert staged["adjudicationTask"]["format"] == "threadshare-memory-adjudication-task@v1"

    # the CLI speaks the same shapes: recall --request, search --format json
    proc = teamlore_cli("memory", "recall", "--request", "-", "--format", "json", cwd=root,
                        input=json.dumps(request))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    cli_search = teamlore_cli("memory", "search", "Windows Engine", "--format", "json", cwd=root)
    assert json.loads(cli_search.stdout)["items"][0]["entryId"] == ENTRY
    bad = teamlore_cli(
        "memory",
        "promote",
        "--plan",
        "0b5e0e1c-6d0a-4b8e-9f7a-2c1d3e4f5a6b",
        "--format",
        "json",
        cwd=root,
    )
    assert bad.returncode == 1 and {"code", "problem", "next"} <= set(
        json.loads(bad.stdout)["error"]
    )
