"""`mcp-config`: ready-to-paste MCP server configuration for Codex and Claude Code.

CLI-only and read-only: it looks at the running interpreter, `TEAMLORE_HOME` and the operation
registry, and prints

- for Codex, a `[mcp_servers.<name>]` block for `config.toml` (absolute interpreter path,
  `-m teamlore.cli.main mcp …` args, `env`, `enabled_tools` = exactly the tools the chosen
  capabilities register, and an approval mode that makes the host ask before write tools);
- for Claude Code, a `.mcp.json` entry, the equivalent `claude mcp add` line and a
  `SessionStart` hook (settings.json) that injects `teamlore personal show` output.

Codex entries carry `required = true` and `startup_timeout_sec`: without them `codex exec` starts
its first turn before a slow server is ready and never offers its tools (docs/agents.md).

`--portable` prints the form that is safe to commit for a team (`.mcp.json`, a project's
`.codex/config.toml`): the command is `teamlore` on PATH, with no interpreter path, no
`TEAMLORE_HOME`, no user name and no path of this machine (`--workspace` is refused with it).

`--wsl` wraps every command in `wsl.exe -d <distro> -u <user> -e /usr/bin/env TEAMLORE_HOME=… …`
so a Windows-side host (Codex desktop app) can start the server inside WSL.

Approval mode: Codex's `default_tools_approval_mode` values mean auto (decide from the tool's
annotations), prompt (always ask), writes (ask unless the tool is read-only; newer Codex only)
and approve (never ask: auto-approve). Servers that expose write tools therefore get "prompt",
with a per-tool "auto" for their read-only tools, so reads flow and every write is confirmed.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from teamlore import __version__
from teamlore.core import errors
from teamlore.core.locations import pinned_state_dir, state_dir_path
from teamlore.core.shapes.strict import STRICT
from teamlore.integrations import codex as codex_files
from teamlore.ops.personal.memory import launch_contexts
from teamlore.ops.registry import (
    Capability,
    OpContext,
    load_capabilities,
    operation,
)
from teamlore.personal.config import load_personal_settings_readonly
from teamlore.personal.init_import import CLIENT_ID_PATTERN

ClientName = Literal["codex", "claude"]
ApprovalMode = Literal["auto", "prompt", "writes", "approve"]

TEAM_CAPABILITIES = frozenset({"team-read", "team"})
PERSONAL_CAPABILITIES = frozenset({"init", "read", "relay"})
WRITE_CAPABILITIES = frozenset({"team", "init", "relay"})
DEFAULT_CLIENT_IDS: dict[str, str] = {"codex": "codex-cli", "claude": "claude-code"}
CODEX_STARTUP_TIMEOUT_SEC = 30
PORTABLE_COMMAND = "teamlore"
WSL_EXE = "wsl.exe"
ENV_BIN = "/usr/bin/env"
ACCEPT_USER_TURNS_FLAG = "--accept-client-reported-user-turns"  # `teamlore mcp`'s relay opt-in

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _default_capabilities() -> list[Capability]:
    return ["team-read"]


class McpConfigRequest(BaseModel):
    model_config = STRICT

    client: ClientName | None = Field(None, description="codex, claude, or both when omitted")
    capabilities: list[Capability] = Field(default_factory=_default_capabilities, min_length=1)
    client_id: str | None = Field(None, description="personal tiers: the --client-id to launch")
    global_context: bool = Field(False, description="personal tiers: launch with --global")
    workspaces: list[str] = Field(default_factory=list)
    name: str | None = Field(None, description="the server id (default from the capabilities)")
    wsl: bool = False
    distro: str | None = None
    wsl_user: str | None = None
    approval_mode: ApprovalMode | None = None
    portable: bool = Field(
        False, description="`teamlore` on PATH, no interpreter path or TEAMLORE_HOME (to commit)"
    )
    acceptUserTurns: bool = Field(
        False,
        description="relay tier: launch with --accept-client-reported-user-turns (host opt-in)",
    )

    @field_validator("capabilities")
    @classmethod
    def _dedupe(cls, value: list[Capability]) -> list[Capability]:
        return list(dict.fromkeys(value))

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and not _NAME.match(value):
            raise ValueError("use 1-64 ASCII letters, digits, '_' or '-'")
        return value

    @field_validator("client_id")
    @classmethod
    def _client_id(cls, value: str | None) -> str | None:
        if value is not None and not CLIENT_ID_PATTERN.match(value):
            raise ValueError(
                "use 1-128 ASCII letters, digits, '_' or '-' (as `teamlore mcp` accepts)"
            )
        return value


def default_server_name(capabilities: list[str]) -> str:
    if capabilities == ["team-read"]:
        return "teamlore"
    return "teamlore_" + "_".join(c.replace("-", "_") for c in capabilities)


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _toml_array(values: list[str]) -> str:
    return "[" + ", ".join(_toml_string(v) for v in values) + "]"


def _comment(value: str) -> str:
    return value.replace("\r", " ").replace("\n", " ")


class _Plan:
    """Everything derived from the request once; each client renders from it."""

    def __init__(self, request: McpConfigRequest, state_home: Path | None = None) -> None:
        self.request = request
        self.state_home = state_home if state_home is not None else state_dir_path()
        self.capabilities: list[str] = list(request.capabilities)
        self.personal = [c for c in self.capabilities if c in PERSONAL_CAPABILITIES]
        self.team = [c for c in self.capabilities if c in TEAM_CAPABILITIES]
        self.name = request.name or default_server_name(self.capabilities)
        self.python = os.path.abspath(sys.executable)
        self.home = pinned_state_dir(os.environ)  # `$XDG_STATE_HOME`'s too (not passed on)
        if request.portable:
            self.home = None
            if request.wsl:
                raise errors.TeamloreError(
                    errors.INVALID_ARGUMENT, "--portable and --wsl do not combine"
                )
            if request.workspaces:
                # the form to commit names nothing of this machine, and a teammate's server
                # would refuse a folder it does not have: refused, not dropped unsaid
                raise errors.TeamloreError(
                    errors.INVALID_ARGUMENT,
                    "--portable and --workspace do not combine: a workspace is a path on this"
                    " machine, which the form to commit leaves out and a teammate's server"
                    " would not find; leave out --workspace (team tools then act on the folder"
                    " the host starts the server in), or --portable for a form of your own",
                )
        self.workspaces = [self._workspace(w) for w in request.workspaces]
        self.notes: list[str] = []
        if request.global_context and not self.personal:
            raise errors.TeamloreError(
                errors.INVALID_ARGUMENT, "--global applies to the personal capabilities"
            )
        if self.personal and not request.global_context and not self.workspaces:
            raise errors.TeamloreError(
                errors.INVALID_ARGUMENT,
                "personal capabilities need a context: add --global and/or --workspace PATH",
            )
        if self.workspaces and not self.personal and len(self.workspaces) > 1:
            raise errors.TeamloreError(
                errors.INVALID_ARGUMENT,
                "team capabilities serve one worktree: pass at most one --workspace",
            )
        if self.team and len(self.workspaces) > 1:
            self.notes.append(
                "team tools act on the server's working directory; with several workspaces "
                "no --repository is pinned"
            )
        self._relay_opt_in()
        self._personal_contexts()
        self.tools, self.write_tools = self._tools()
        if not self.tools:
            self.notes.append(
                f"no tools are registered for {', '.join(self.capabilities)} in teamlore "
                f"{__version__}; enabled_tools is empty"
            )
        writes = bool(self.write_tools) or any(c in WRITE_CAPABILITIES for c in self.capabilities)
        self.approval_mode: str | None = request.approval_mode or ("prompt" if writes else None)
        self.read_tools = [t for t in self.tools if t not in self.write_tools]
        self.wsl = self._wsl() if request.wsl else None

    def _relay_opt_in(self) -> None:
        """The relay tier accepts user turns only when the launch opts in (docs/personal.md);
        say so when it is asked for without the opt-in, refuse the opt-in without relay."""
        relay = "relay" in self.capabilities
        if self.request.acceptUserTurns and not relay:
            raise errors.TeamloreError(
                errors.INVALID_ARGUMENT,
                f"{ACCEPT_USER_TURNS_FLAG} applies to --capability relay",
            )
        if relay and not self.request.acceptUserTurns:
            self.notes.append(
                f"relay needs {ACCEPT_USER_TURNS_FLAG}: without it memory_submit_user_turn "
                "refuses every turn (SUBMISSION_DISABLED); add the flag if this host reports "
                "the user's own messages verbatim"
            )

    def _personal_contexts(self) -> None:
        """Refuse at config time what `teamlore mcp` would refuse at launch: a workspace outside
        every registered repository (`UNREGISTERED_WORKSPACE`, docs/personal.md); say which
        granted contexts `[personal] allowed_scopes` does not allow (the tools would refuse)."""
        if not self.personal:
            return
        contexts = launch_contexts(
            self.state_home,
            global_context=self.request.global_context,
            workspaces=self.workspaces,
        )
        settings = load_personal_settings_readonly(self.state_home)
        blocked = [c for c in contexts if not settings.scope_allowed(c)]
        if blocked:
            self.notes.append(
                f"[personal] allowed_scopes does not allow {', '.join(blocked)}: the personal "
                "tools refuse that context until `teamlore personal config --scope` allows it"
            )

    @staticmethod
    def _workspace(raw: str) -> str:
        path = Path(os.path.abspath(Path(raw).expanduser()))
        if not path.is_dir():
            raise errors.TeamloreError(
                errors.INVALID_ARGUMENT, f"--workspace {raw}: not an existing directory"
            )
        return str(path)

    def _tools(self) -> tuple[list[str], list[str]]:
        # its launch's modules only (a doctor checking an entry imported every operation's)
        registry = load_capabilities(*self.capabilities)
        tools: dict[str, bool] = {}
        for capability in self.capabilities:
            for op in registry.for_capability(capability):
                if op.mcp_tool is not None:
                    tools.setdefault(op.mcp_tool, op.side_effect != "read")
        return list(tools), [t for t, write in tools.items() if write]

    def _wsl(self) -> dict[str, str]:
        if not sys.platform.startswith("linux"):
            raise errors.TeamloreError(
                errors.INVALID_ARGUMENT,
                "--wsl must run inside the WSL distribution that will run teamlore",
            )
        distro = self.request.distro or os.environ.get("WSL_DISTRO_NAME")
        if not distro:
            raise errors.TeamloreError(
                errors.INVALID_ARGUMENT,
                "--wsl needs a distribution: run inside WSL or pass --distro NAME",
            )
        user = self.request.wsl_user or os.environ.get("USER") or getpass.getuser()
        self.notes.append(
            "under --wsl, workspaces are WSL paths (/home/…), never Windows paths (C:\\…)"
        )
        return {"distro": distro, "user": user}

    # -- the launch command -------------------------------------------------------------

    def mcp_args(self, client: str) -> list[str]:
        args = [] if self.request.portable else ["-m", "teamlore.cli.main"]
        args.append("mcp")
        for capability in self.capabilities:
            args += ["--capability", capability]
        if self.team and len(self.workspaces) == 1:
            args += ["--repository", self.workspaces[0]]
        if self.personal:
            args += ["--client-id", self.request.client_id or DEFAULT_CLIENT_IDS[client]]
            if self.request.global_context:
                args.append("--global")
            for workspace in self.workspaces:
                args += ["--workspace", workspace]
        if self.request.acceptUserTurns:
            args.append(ACCEPT_USER_TURNS_FLAG)
        return args

    def launch(self, client: str) -> dict[str, Any]:
        """`{command, args, env}` as the host will run it."""
        command = PORTABLE_COMMAND if self.request.portable else self.python
        args = [command, *self.mcp_args(client)]
        env = {"TEAMLORE_HOME": self.home} if self.home else {}
        if self.wsl is None:
            return {"command": args[0], "args": args[1:], "env": env}
        assignments = [f"{k}={v}" for k, v in env.items()]
        wrapped = ["-d", self.wsl["distro"], "-u", self.wsl["user"], "-e", ENV_BIN]
        return {"command": WSL_EXE, "args": [*wrapped, *assignments, *args], "env": {}}

    # -- Codex ----------------------------------------------------------------------------

    def codex(self) -> dict[str, Any]:
        launch = self.launch("codex")
        table: dict[str, Any] = {"command": launch["command"], "args": launch["args"]}
        if launch["env"]:
            table["env"] = launch["env"]
        table["enabled_tools"] = self.tools
        table["required"] = True
        table["startup_timeout_sec"] = CODEX_STARTUP_TIMEOUT_SEC
        if self.approval_mode:
            table["default_tools_approval_mode"] = self.approval_mode
        per_tool = self.read_tools if self.approval_mode in ("prompt", "writes") else []
        if per_tool:
            table["tools"] = {tool: {"approval_mode": "auto"} for tool in per_tool}
        return {"serverName": self.name, "table": table, "toml": self._codex_toml(table)}

    def _codex_toml(self, table: dict[str, Any]) -> str:
        from teamlore.integrations.codex import user_config_label  # tomlkit: only when printed

        where = "Windows %USERPROFILE%\\.codex\\config.toml" if self.wsl else user_config_label()
        lines = [
            f"# teamlore {__version__} MCP server for Codex: paste into {where}",
            f"#   capabilities: {', '.join(self.capabilities)}",
            f"#   command: {_comment(self.launch('codex')['command'])}",
            f"#   TEAMLORE_HOME: {_comment(self.home or '(default state dir)')}",
        ]
        if self.wsl:
            lines.append(
                f"#   WSL distribution: {_comment(self.wsl['distro'])}; "
                f"Linux user: {_comment(self.wsl['user'])}"
            )
        if self.approval_mode == "prompt":
            lines.append(
                "#   Codex asks before every write tool; read-only tools run without asking."
            )
        lines += [
            f"[mcp_servers.{self.name}]",
            f"command = {_toml_string(table['command'])}",
            f"args = {_toml_array(table['args'])}",
        ]
        if "env" in table:
            pairs = ", ".join(f"{k} = {_toml_string(v)}" for k, v in table["env"].items())
            lines.append(f"env = {{ {pairs} }}")
        lines.append(f"enabled_tools = {_toml_array(table['enabled_tools'])}")
        lines.append("required = true  # codex exec waits for the server instead of skipping it")
        lines.append(f"startup_timeout_sec = {table['startup_timeout_sec']}")
        mode = table.get("default_tools_approval_mode")
        if mode:
            lines.append(f"default_tools_approval_mode = {_toml_string(mode)}")
        for tool, settings in table.get("tools", {}).items():
            lines += ["", f"[mcp_servers.{self.name}.tools.{tool}]"]
            lines.append(f"approval_mode = {_toml_string(settings['approval_mode'])}")
        return "\n".join(lines) + "\n"

    # -- Claude Code ----------------------------------------------------------------------

    def claude(self) -> dict[str, Any]:
        launch = self.launch("claude")
        entry: dict[str, Any] = {
            "type": "stdio",
            "command": launch["command"],
            "args": launch["args"],
            "env": launch["env"],
        }
        add = ["claude", "mcp", "add", "--scope", "user", self.name]
        for key, value in launch["env"].items():
            add += ["-e", f"{key}={value}"]
        add += ["--", launch["command"], *launch["args"]]
        result: dict[str, Any] = {
            "serverName": self.name,
            "mcpJson": {"mcpServers": {self.name: entry}},
            "addCommand": shlex.join(add),
            "addArgv": add,
        }
        if self.wsl is None:
            result["sessionStartHook"] = self.session_start_hook()
        else:
            self.notes.append(
                "the SessionStart hook is omitted under --wsl: install Claude Code inside WSL "
                "and run mcp-config there without --wsl"
            )
        return result

    def session_start_hook(self) -> dict[str, Any]:
        """settings.json snippet: inject `teamlore personal show` at every session start."""
        show = shlex.join([self.python, "-m", "teamlore.cli.main", "personal", "show"])
        prefix = f"TEAMLORE_HOME={shlex.quote(self.home)} " if self.home else ""
        command = f'{prefix}{show} --workspace "$CLAUDE_PROJECT_DIR"'
        return {
            "hooks": {
                "SessionStart": [
                    {"hooks": [{"type": "command", "command": command, "timeout": 30}]}
                ]
            }
        }


@operation(
    "mcp-config",
    input_model=McpConfigRequest,
    side_effect="read",
    description="Print MCP server configuration for Codex (config.toml) and Claude Code.",
)
def mcp_config(ctx: OpContext, request: McpConfigRequest) -> dict[str, Any]:
    """Print ready-to-paste MCP configuration for Codex and Claude Code."""
    plan = _Plan(request, ctx.home)
    clients: list[str] = [request.client] if request.client else ["codex", "claude"]
    result: dict[str, Any] = {
        "serverName": plan.name,
        "capabilities": plan.capabilities,
        "tools": plan.tools,
        "writeTools": plan.write_tools,
        "approvalMode": plan.approval_mode,
        "python": plan.python,
        "teamloreHome": plan.home,
        "wsl": plan.wsl,
        "portable": request.portable,
    }
    if "codex" in clients:
        result["codex"] = plan.codex()
        if not (request.wsl or request.portable):  # those go to another config.toml
            plan.notes += codex_files.config_notes(plan.name, plan.tools)
    if "claude" in clients:
        result["claude"] = plan.claude()
    result["notes"] = plan.notes
    return result
