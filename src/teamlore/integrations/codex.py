"""Where Codex keeps MCP servers and hooks.

- user scope: `~/.codex/config.toml` (`$CODEX_HOME/config.toml`) and `~/.codex/hooks.json`;
- project scope: `<repo>/.codex/config.toml` and `<repo>/.codex/hooks.json` (Codex reads them
  only in a project the user trusted).

Server tables carry `required = true` and `startup_timeout_sec`, so `codex exec` waits for the
server instead of starting without its tools. Hooks need `[features] codex_hooks = true` (a user's
`false` there, or in `hooks`, the feature's current name, which overrides it, stays, and then no
hook is added, unless `--force`), and
Codex runs a new or changed hook only after the user trusted it once (`/hooks` in the Codex TUI;
`codex exec --dangerously-bypass-hook-trust` for vetted automation).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from teamlore.integrations.entries import FileEdits, HookSpec, KeyEdit, RemoteServerSpec, ServerSpec

CLI_NAME = "codex"
HOOKS_FEATURE = ("features", "codex_hooks")
HOOKS_SWITCH = ("features", "hooks")  # Codex 0.171's name for it, which overrides codex_hooks
# what install writes in a server table (a stdio server, or a remote one); every other key in
# teamlore's table is the user's
SERVER_KEYS = frozenset(
    {"command", "args", "env", "enabled_tools", "required", "startup_timeout_sec"}
    | {"default_tools_approval_mode", "tools"}  # a tier with write tools (mcp_config._Plan)
    | {"url", "bearer_token_env_var"}
)


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    configured = env.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".codex"


def user_config_label(env: Mapping[str, str] | None = None) -> str:
    """The user's Codex config.toml as a person names it: `$CODEX_HOME/config.toml` when
    CODEX_HOME says where Codex keeps it, else `~/.codex/config.toml`."""
    return (
        "$CODEX_HOME/config.toml"
        if (env or os.environ).get("CODEX_HOME")
        else ("~/.codex/config.toml")
    )


def config_files(scope: str, root: Path | None) -> tuple[Path, Path]:
    """(config.toml, hooks.json) for the scope."""
    base = (root / ".codex") if scope == "project" and root is not None else codex_home()
    return base / "config.toml", base / "hooks.json"


def plan_files(
    scope: str, root: Path | None, servers: list[ServerSpec], hooks: list[HookSpec]
) -> list[FileEdits]:
    config_path, hooks_path = config_files(scope, root)
    private = scope == "user"
    keys = [KeyEdit(("mcp_servers", s.name), s.codex_table, owns=SERVER_KEYS) for s in servers]
    if hooks:
        keys.append(
            KeyEdit(HOOKS_FEATURE, True, guarded=False, kept_off=True, overridden_by=HOOKS_SWITCH)
        )
    files = [FileEdits(config_path, "toml", private, keys=keys)]
    if hooks:
        files.append(FileEdits(hooks_path, "json", private, hooks=hooks))
    return files


def remote_key(server: RemoteServerSpec) -> KeyEdit:
    """A Streamable HTTP server whose bearer token Codex reads from `bearer_token_env_var`."""
    table = {"url": server.url, "bearer_token_env_var": server.token_variable}
    return KeyEdit(("mcp_servers", server.name), table, owns=SERVER_KEYS)


def read_user_config(env: Mapping[str, str] | None = None) -> dict[str, Any] | str:
    """The user's `$CODEX_HOME/config.toml` parsed, `{}` when absent, or why it cannot be read.
    Parsed with tomlkit, as every edit of it is (`tomllib` is for teamlore's own config.toml, which
    only `core.config` reads)."""
    path = codex_home(env) / "config.toml"
    try:
        parsed: dict[str, Any] = tomlkit.parse(path.read_text(encoding="utf-8-sig")).unwrap()
        return parsed
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, TOMLKitError) as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")


def config_notes(name: str, tools: list[str], env: Mapping[str, str] | None = None) -> list[str]:
    """What the user's Codex config.toml means for pasting `[mcp_servers.<name>]` (docs/agents.md):
    an entry of the same name to replace, `enabled_tools` there that this tier does not register
    (or misses), and other servers marked `required = true` that can stop `codex exec`."""
    where = user_config_label(env)
    config = read_user_config(env)
    if isinstance(config, str):
        return [f"{where} cannot be read ({config}); fix it before pasting, Codex refuses it too"]
    servers = config.get("mcp_servers")
    if not isinstance(servers, dict):
        return []
    notes: list[str] = []
    existing = servers.get(name)
    if isinstance(existing, dict):
        notes.append(
            f"{where} already has [mcp_servers.{name}]: replace that table (a second one with "
            "the same name makes the whole file invalid), or pick another --name"
        )
        notes += _enabled_tools_notes(name, existing.get("enabled_tools"), tools)
    required = sorted(
        other
        for other, table in servers.items()
        if other != name and isinstance(table, dict) and table.get("required") is True
    )
    if required:
        notes.append(
            f"{where} marks {', '.join(required)} required = true: codex exec stops when "
            f"{'that server does' if len(required) == 1 else 'any of them does'} not start, "
            "whatever teamlore does"
        )
    return notes


def _enabled_tools_notes(name: str, enabled: object, tools: list[str]) -> list[str]:
    if not isinstance(enabled, list):
        return []
    unknown = [str(t) for t in enabled if t not in tools]
    missing = [t for t in tools if t not in enabled]
    notes: list[str] = []
    if unknown:
        notes.append(
            f"[mcp_servers.{name}] enables {', '.join(unknown)}, which this tier does not "
            "register: Codex silently offers nothing for them"
        )
    if missing:
        notes.append(
            f"[mcp_servers.{name}] enabled_tools leaves out {', '.join(missing)}; the block "
            "below enables them"
        )
    return notes
