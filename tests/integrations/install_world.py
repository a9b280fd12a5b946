"""The install tests' world: a private HOME with stand-in `claude` / `codex` on PATH, seeded
client config files, and the operations run in-process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from teamlore.core import errors
from teamlore.ops.registry import OpContext, run_operation

CODEX_CONFIG = """\
# my Codex settings
model = "o3"  # the one I like
approval_policy = "on-request"

[mcp_servers.other]
command = "other-server"
args = ["--fast"]

[profiles.work]
model = "gpt-5.5"
"""
CLAUDE_JSON = '{\n  "numStartups": 3,\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}'
CLAUDE_SETTINGS = '{\n  "theme": "dark",\n  "hooks": {\n    "Stop": []\n  }\n}\n'


def op(name: str, cwd: Path, **payload: Any) -> dict[str, Any]:
    return run_operation(name, OpContext(cwd=cwd), payload)


def refused(name: str, cwd: Path, **payload: Any) -> errors.TeamloreError:
    with pytest.raises(errors.TeamloreError) as caught:
        op(name, cwd, **payload)
    return caught.value


def seed_user_configs(home: Path) -> dict[Path, bytes]:
    files = {
        home / ".codex" / "config.toml": CODEX_CONFIG.encode(),
        home / ".claude.json": CLAUDE_JSON.encode(),
        home / ".claude" / "settings.json": CLAUDE_SETTINGS.encode(),
    }
    for path, data in files.items():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
    return files


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
