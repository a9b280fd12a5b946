"""`teamlore mcp-config`: print MCP server configuration for Codex and Claude Code.

The lead registers `mcp_config` on the app (`app.command("mcp-config")(mcp_config)`).
"""

from __future__ import annotations

import json
from typing import Any

import typer

from teamlore.cli.literal import literal
from teamlore.cli.output import FormatOption, OutputFormat, run


def _print(text: str = "") -> None:
    typer.echo(literal(text))  # plain stdout: the snippets must paste exactly, no rich markup


def render_mcp_config(result: dict[str, Any]) -> None:
    codex = result.get("codex")
    claude = result.get("claude")
    if codex:
        _print(codex["toml"].rstrip("\n"))
    if claude:
        if codex:
            _print()
        _print("# Claude Code: add the server for every project (user scope):")
        _print(claude["addCommand"])
        _print()
        _print(
            "# ...or share it with the project: merge into .mcp.json at the repository root"
            + ("" if result.get("portable") else " (add --portable for the form safe to commit)")
            + ":"
        )
        _print(json.dumps(claude["mcpJson"], indent=2, ensure_ascii=False))
        hook = claude.get("sessionStartHook")
        if hook:
            _print()
            _print(
                "# Claude Code SessionStart hook (merge into ~/.claude/settings.json): puts "
                "`teamlore personal show` into the context of every new session:"
            )
            _print(json.dumps(hook, indent=2, ensure_ascii=False))
    for note in result.get("notes", []):
        _print(f"# NOTE: {note}")


def mcp_config(
    client: str | None = typer.Option(
        None, "--client", help="codex or claude (default: both)", metavar="codex|claude"
    ),
    capability: list[str] = typer.Option(
        ["team-read"],
        "--capability",
        "-c",
        help="Tools to expose: team-read, team, init, read, relay, org (repeatable).",
    ),
    client_id: str | None = typer.Option(
        None, "--client-id", help="Personal tiers: client id the server runs as."
    ),
    global_context: bool = typer.Option(
        False, "--global", help="Personal tiers: include the global (profile/preferences) context."
    ),
    workspace: list[str] = typer.Option(
        [],
        "--workspace",
        "-w",
        help="Project folder the server serves (repeatable).",
        metavar="PATH",
    ),
    name: str | None = typer.Option(None, "--name", help="Server id (default: from capabilities)."),
    wsl: bool = typer.Option(
        False, "--wsl", help="Wrap the command in wsl.exe for a Windows-side host."
    ),
    distro: str | None = typer.Option(None, "--distro", help="WSL distribution (--wsl)."),
    user: str | None = typer.Option(None, "--user", help="Linux user (--wsl)."),
    approval_mode: str | None = typer.Option(
        None,
        "--approval-mode",
        help="Codex default_tools_approval_mode: auto, prompt, writes or approve "
        "(default: prompt when the server has write tools).",
    ),
    portable: bool = typer.Option(
        False,
        "--portable",
        help="Safe to commit: `teamlore` on PATH, no interpreter path, no TEAMLORE_HOME.",
    ),
    accept_user_turns: bool = typer.Option(
        False,
        "--accept-client-reported-user-turns",
        help="Relay tier: launch with the opt-in that lets the server accept the user turns "
        "this host reports (without it relay refuses every turn).",
    ),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Print MCP server configuration for Codex config.toml and Claude Code.

    `teamlore install` writes the same entries into the clients' own files for you."""
    run(
        "mcp-config",
        {
            "client": client,
            "capabilities": capability,
            "client_id": client_id,
            "global_context": global_context,
            "workspaces": workspace,
            "name": name,
            "wsl": wsl,
            "distro": distro,
            "wsl_user": user,
            "approval_mode": approval_mode,
            "portable": portable,
            "acceptUserTurns": accept_user_turns,
        },
        fmt,
        render_mcp_config,
    )
