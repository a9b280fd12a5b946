"""The real MCP server over stdio, driven by the official SDK client: one helper for the team
tool tests (`teamlore mcp --capability team`, launched in a worktree)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp.client.stdio import stdio_client

from mcp import ClientSession, StdioServerParameters


async def team_calls(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list, list]:
    """(tools listed, one JSON payload per call); an error payload is exactly an isError call."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "teamlore.cli.main", "mcp", "--capability", "team"],
        cwd=str(root),
        env={**os.environ},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        results = []
        for name, args in calls:
            result = await session.call_tool(name, args)
            payload = json.loads(result.content[0].text)
            assert result.is_error == ("error" in payload)
            results.append(payload)
        return tools, results
