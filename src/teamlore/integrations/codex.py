"""Where Codex keeps MCP servers and hooks.

- user scope: `~/.codex/config.toml` (`$CODEX_HOME/config.toml`) and `~/.codex/hooks.json`;
- project scope: `<repo>/.codex/config.toml` and `<repo>/.codex/hooks.json` (Codex reads them
  only in a project the user trusted).

Server tables carry `required = true` and `startup_timeout_sec`, so `codex exec` waits for the
server instead of starting without its tools. Hooks need `[features] codex_hooks = true`, and
Codex runs a new or changed hook only after the user trusted it once (`/hooks` in the Codex TUI;
`codex exec --dangerously-bypass-hook-trust` for vetted automation).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from teamlore.integrations.entries import FileEdits, HookSpec, KeyEdit, RemoteServerSpec, ServerSpec

CLI_NAME = "codex"
HOOKS_FEATURE = ("features", "codex_hooks")


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    configured = env.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".codex"


def config_files(scope: str, root: Path | None) -> tuple[Path, Path]:
    """(config.toml, hooks.json) for the scope."""
    base = (root / ".codex") if scope == "project" and root is not None else codex_home()
    return base / "config.toml", base / "hooks.json"


def plan_files(
    scope: str, root: Path | None, servers: list[ServerSpec], hooks: list[HookSpec]
) -> list[FileEdits]:
    config_path, hooks_path = config_files(scope, root)
    private = scope == "user"
    keys = [KeyEdit(("mcp_servers", s.name), s.codex_table) for s in servers]
    if hooks:
        keys.append(KeyEdit(HOOKS_FEATURE, True, guarded=False))
    files = [FileEdits(config_path, "toml", private, keys=keys)]
    if hooks:
        files.append(FileEdits(hooks_path, "json", private, hooks=hooks))
    return files


def remote_key(server: RemoteServerSpec) -> KeyEdit:
    """A Streamable HTTP server whose bearer token Codex reads from `bearer_token_env_var`."""
    table = {"url": server.url, "bearer_token_env_var": server.token_variable}
    return KeyEdit(("mcp_servers", server.name), table)
