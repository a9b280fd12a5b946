"""The real MCP server over stdio, driven by the official SDK client: helpers for the team
tool tests (`teamlore mcp --capability team`, launched in a worktree)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from anyio.from_thread import start_blocking_portal
from mcp.client.stdio import stdio_client

from mcp import ClientSession, StdioServerParameters


@contextlib.asynccontextmanager
async def team_session(root: Path) -> AsyncIterator[ClientSession]:
    """One `teamlore mcp --capability team` server started in `root`, initialized."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "teamlore.cli.main", "mcp", "--capability", "team"],
        cwd=str(root),
        env={**os.environ},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """One tool call's JSON payload; an error payload is exactly an isError call."""
    result = await session.call_tool(name, args)
    payload: dict[str, Any] = json.loads(result.content[0].text)
    assert result.is_error == ("error" in payload)
    return payload


async def team_calls(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list, list]:
    """(tools listed, one JSON payload per call) of a server started for these calls."""
    async with team_session(root) as session:
        tools = (await session.list_tools()).tools
        return tools, [await call(session, name, args) for name, args in calls]


class TeamServer:
    """One team server kept running through a whole flow, called from plain test code: a flow
    that switches between MCP and the CLI at every step talks to the server an agent keeps
    open, not to a new one per step (each start costs a second)."""

    def __init__(self, portal: Any, session: ClientSession) -> None:
        self._portal, self._session = portal, session

    def tools(self) -> list[Any]:
        return list(self._portal.call(self._session.list_tools).tools)

    def calls(self, *calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
        return [self._portal.call(call, self._session, name, args) for name, args in calls]


@contextlib.contextmanager
def running_team_server(root: Path) -> Iterator[TeamServer]:
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(team_session(root)) as session,
    ):
        yield TeamServer(portal, session)
