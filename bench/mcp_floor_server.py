"""The SDK floor for bench_mcp_start.py: the smallest stdio server the `mcp` package makes (the
lowlevel `Server` teamlore's server is built on, one tool, no work). Whatever any MCP server on
this SDK pays to start; teamlore's server is measured against it."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOL = types.Tool(name="noop", description="Does nothing.", input_schema={"type": "object"})


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL])


async def main() -> None:
    server: Server[Any] = Server("floor", on_list_tools=list_tools)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
