"""Every MCP tool's name, title, description, input schema and annotations, per capability tier,
is pinned in tests/mcp/tool_contracts.json: a changed tool is a deliberate, reviewed diff. (The
order of the list is registration order, not part of the contract.)

After adding or changing a tool, regenerate the file and commit the diff:

    TEAMLORE_REGEN=1 python -m pytest tests/mcp/test_tool_contracts.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client.stdio import stdio_client

from mcp import ClientSession, StdioServerParameters
from support import git, teamlore_cli
from teamlore.mcp.server import tools_for
from teamlore.ops.registry import CAPABILITY_TIERS

SNAPSHOT = Path(__file__).parent / "tool_contracts.json"
REGEN = "TEAMLORE_REGEN=1 python -m pytest tests/mcp/test_tool_contracts.py"


def contract(tool: types.Tool) -> dict[str, Any]:
    dumped = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {key: dumped[key] for key in sorted(dumped) if key != "name"}


def current_contracts() -> dict[str, Any]:
    tiers = {tier: sorted(tool.name for tool in tools_for([tier])) for tier in CAPABILITY_TIERS}
    tools: dict[str, Any] = {}
    for tier in CAPABILITY_TIERS:
        for tool in tools_for([tier]):
            tools[tool.name] = contract(tool)
    return {"tiers": tiers, "tools": dict(sorted(tools.items()))}


def render(contracts: dict[str, Any]) -> str:
    return json.dumps(contracts, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def test_every_tool_matches_its_pinned_contract() -> None:
    current = render(current_contracts())
    if os.environ.get("TEAMLORE_REGEN") == "1":
        SNAPSHOT.write_text(current, encoding="utf-8")
    pinned = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    now = json.loads(current)
    changed = sorted(
        name
        for name in set(pinned["tools"]) | set(now["tools"])
        if pinned["tools"].get(name) != now["tools"].get(name)
    )
    assert (changed, pinned["tiers"]) == ([], now["tiers"]), (
        f"MCP tool contracts changed ({', '.join(changed) or 'tier membership'}). If deliberate, "
        f"regenerate tests/mcp/tool_contracts.json with `{REGEN}` and commit the diff."
    )


def test_the_real_server_lists_exactly_the_pinned_team_tools(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "acme"
    root.mkdir()
    git(root, "init", "-q")
    assert teamlore_cli("memory", "init", cwd=root).returncode == 0
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "teamlore.cli.main", "mcp", "--capability", "team"],
        cwd=str(root),
        env={**os.environ},
    )

    async def listed() -> list[types.Tool]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return (await session.list_tools()).tools

    tools = anyio.run(listed)
    pinned = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert sorted(tool.name for tool in tools) == pinned["tiers"]["team"]
    assert {tool.name: contract(tool) for tool in tools} == {
        name: pinned["tools"][name] for name in pinned["tiers"]["team"]
    }
