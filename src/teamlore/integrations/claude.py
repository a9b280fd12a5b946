"""Where Claude Code keeps MCP servers and hooks.

- user scope: servers in `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set),
  hooks in `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json`);
- project scope: servers in `<repo>/.mcp.json`, hooks in `<repo>/.claude/settings.json`, both
  meant to be committed. Claude Code asks each user once before it starts a project's servers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from teamlore.integrations.entries import FileEdits, HookSpec, KeyEdit, RemoteServerSpec, ServerSpec

CLI_NAME = "claude"
# what install writes in a server entry (stdio or http); every other key is the user's
SERVER_KEYS = frozenset({"type", "command", "args", "env", "url", "headers"})


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def user_servers_file(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("CLAUDE_CONFIG_DIR"):
        return config_dir(env) / ".claude.json"
    return Path.home() / ".claude.json"


def server_files(scope: str, root: Path | None) -> tuple[Path, Path]:
    """(servers file, settings file) for the scope."""
    if scope == "project":
        assert root is not None
        return root / ".mcp.json", root / ".claude" / "settings.json"
    return user_servers_file(), config_dir() / "settings.json"


def server_entry(server: ServerSpec) -> dict[str, object]:
    return {"type": "stdio", "command": server.command, "args": server.args, "env": server.env}


def plan_files(
    scope: str, root: Path | None, servers: list[ServerSpec], hooks: list[HookSpec]
) -> list[FileEdits]:
    servers_path, settings_path = server_files(scope, root)
    private = scope == "user"
    keys = [KeyEdit(("mcpServers", s.name), server_entry(s), owns=SERVER_KEYS) for s in servers]
    files = [FileEdits(servers_path, "json", private, keys=keys)]
    if hooks:
        files.append(FileEdits(settings_path, "json", private, hooks=hooks))
    return files


def remote_key(server: RemoteServerSpec) -> KeyEdit:
    """An HTTP server whose Authorization header Claude Code expands from the environment
    (`${VAR}`, its documented expansion), so the file holds the variable's name only."""
    headers = {"Authorization": f"Bearer ${{{server.token_variable}}}"}
    return KeyEdit(
        ("mcpServers", server.name),
        {"type": "http", "url": server.url, "headers": headers},
        owns=SERVER_KEYS,
    )
