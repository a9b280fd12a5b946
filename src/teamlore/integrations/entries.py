"""The entries teamlore writes into a client's config: MCP servers and hooks, as plain data.

The operations layer decides what to install (which tiers, which launch command); the client
modules (`claude`, `codex`) say in which files and under which keys; the installer applies them.
A user-scope entry pins this interpreter (and `TEAMLORE_HOME` when set); a project-scope entry is
safe to commit: the command is `teamlore` on PATH, with no interpreter path, state dir or user
name in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from teamlore.integrations.config_files import Kind

TEAM_SERVER = "teamlore"
PERSONAL_SERVER = "teamlore_personal"
ORG_SERVER = "teamlore_org"  # a remote `teamlore org serve` (docs/org.md)
HOOK_TIMEOUT_SECONDS = 10  # the client's limit; the hook itself gives up far earlier


@dataclass(frozen=True)
class ServerSpec:
    """One MCP server: the stdio launch plus the Codex-only table keys (required, tools…)."""

    name: str
    command: str
    args: list[str]
    env: dict[str, str]
    codex_table: dict[str, Any]


@dataclass(frozen=True)
class RemoteServerSpec:
    """A remote MCP server over Streamable HTTP whose bearer token the client reads from an
    environment variable at launch: the token is never written into a config file."""

    name: str
    url: str
    token_variable: str


@dataclass(frozen=True)
class HookSpec:
    event: str  # SessionStart, Stop, SessionEnd
    command: str
    timeout: int = HOOK_TIMEOUT_SECONDS


@dataclass(frozen=True)
class KeyEdit:
    key: tuple[str, ...]
    value: Any
    guarded: bool = True  # an existing different value we did not write is a conflict
    # the keys of the value (a server entry) that install sets; a key the user added to
    # teamlore's entry since (`enabled = false`, `tool_timeout_sec`) is theirs and stays
    owns: frozenset[str] = frozenset()
    # a feature flag a user set to false stays off without --force (docs/agents.md): install
    # then adds nothing that needs it (Codex's hooks)
    kept_off: bool = False
    # the key that overrides this flag when set (Codex reads `[features] hooks` over its older
    # alias `codex_hooks`): its `false` keeps the flag off too, and --force turns it on
    overridden_by: tuple[str, ...] | None = None


@dataclass
class FileEdits:
    """Edits of one file: keys and hooks inside a JSON/TOML config, or (`kind="file"`, with
    `content`) the whole file, which teamlore then owns (installer.py, "whole files")."""

    path: Path
    kind: Kind | Literal["file"]
    private: bool  # a new file is created 0600 (files in the user's home)
    keys: list[KeyEdit] = field(default_factory=list)
    hooks: list[HookSpec] = field(default_factory=list)
    content: bytes | None = None


def hook_group(hook: HookSpec) -> dict[str, Any]:
    """The `{"hooks": [{type, command, timeout}]}` group both clients read."""
    return {"hooks": [{"type": "command", "command": hook.command, "timeout": hook.timeout}]}
