"""`teamlore mcp`: the MCP server's launch, parsed without typer.

Claude Code and Codex start this process at every session start, and Codex waits for its tool
list, so it loads neither typer, rich nor any other command module: the console entry
(`teamlore.cli.entry`) and `python -m teamlore.cli.main mcp …` (what `teamlore install`
registers) parse its flags with `teamlore.cli.params` and start the server; typer parses only
what that parse leaves to it (`--help`, usage errors). docs/architecture.md, "A short CLI
process".
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable

from teamlore.cli import single_blas_thread
from teamlore.cli.params import Option, invocation


def mcp(
    capability: list[str] = Option(
        [],
        "--capability",
        "-c",
        help="Which tools exist (repeatable): team-read (default), team, init, read, relay, "
        "org (the org index's read-only tools, local).",
    ),
    repository: str | None = Option(
        None,
        "--repository",
        "-r",
        help="Worktree the team tools act on (default: cwd).",
        metavar="PATH",
    ),
    client_id: str | None = Option(
        None, "--client-id", help="Personal tiers: this client's namespace (not authentication)."
    ),
    global_context: bool = Option(
        False, "--global", help="Personal tiers: grant the global context (profile, preferences)."
    ),
    workspace: list[str] = Option(
        [],
        "--workspace",
        help="Personal tiers: grant the project context of this registered worktree (repeatable).",
        metavar="PATH",
    ),
    accept_user_turns: bool = Option(
        False,
        "--accept-client-reported-user-turns",
        help="Relay tier: accept user turns this client reports (host opt-in).",
    ),
) -> None:
    """Serve teamlore over MCP on stdio."""
    from teamlore.core import errors
    from teamlore.mcp.server import serve

    try:
        serve(
            capabilities=capability or ["team-read"],
            repository=repository,
            client_id=client_id,
            global_context=global_context,
            workspaces=workspace,
            accept_user_turns=accept_user_turns,
        )
    except errors.TeamloreError as err:
        from teamlore.cli.output import OutputFormat, fail  # only a refused launch prints

        fail(err, OutputFormat.text)


def lean_invocation(args: list[str]) -> Callable[[], None] | None:
    """`teamlore mcp ARGS` ready to run without typer, when ARGS are in the plain form
    `params.parse_argv` reads; None when typer has to parse them."""
    return invocation(mcp, args)


def serve_from_argv(args: list[str]) -> None:
    """Run `teamlore mcp ARGS` and exit, when ARGS are plain; return (typer parses them) when
    not. The server's modules load with the collector off, as the CLI's do (cli/entry.py)."""
    invocation = lean_invocation(args)
    if invocation is None:  # --help or a usage error: typer says it
        return
    single_blas_thread()  # `python -m teamlore.cli.main mcp` does not pass cli/entry.py
    gc.disable()
    import teamlore.mcp.server  # noqa: F401

    gc.freeze()
    gc.enable()
    invocation()
    sys.exit(0)
