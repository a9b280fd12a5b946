"""The `teamlore` command line: thin adapters over the operation registry."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import typer

from teamlore import __version__
from teamlore.cli import app as cli_app
from teamlore.cli.app import app, memory_app, sessions_app
from teamlore.cli.commands import sessions as session_commands
from teamlore.cli.output import FormatOption, OutputFormat, fail, run, say, stdout, styled


def _version(value: bool) -> None:
    if value:
        typer.echo(f"teamlore {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """teamlore."""


# sync, status and sessions list|show|search (`cli/commands/sessions.py`: they also run without
# typer); the help lists them first, in this order
app.command()(session_commands.sync)
app.command()(session_commands.status)
sessions_app.command("list")(session_commands.sessions_list)
sessions_app.command("show")(session_commands.sessions_show)
sessions_app.command("search")(session_commands.sessions_search)
sessions_app.command("exclude")(session_commands.sessions_exclude)
sessions_app.command("include")(session_commands.sessions_include)


def _render_demo(result: dict[str, Any]) -> None:
    say(styled("teamlore demo", "bold"), f" in {result['directory']}\n")
    for number, step in enumerate(result["steps"], 1):
        say(styled(f"{number:>2}. {step['step']}", "bold cyan"), f"  {step['summary']}")
        if step["step"] == "sessions-search":
            for query, hits in step["searches"].items():
                top = hits[0]["snippet"][:90] if hits else "no hits"
                stdout.print(f"      {query!r}: {len(hits)} hits — {top}")
        elif step["step"] == "review":
            for item in step["result"]["items"]:
                supports = ", ".join(
                    f"{s['statementId']}={s['claimSupport']}" for s in item["statements"]
                )
                stdout.print(
                    f"      {item['candidateId'][:16]} {item['provenanceStrength']}: {supports}",
                )
        elif step["step"] in ("promote", "skill-promote", "consolidation-promote"):
            for path, text in step["files"].items():
                say()
                say(styled(path, "bold"))
                stdout.print(text.rstrip())
            stdout.print()
        elif step["step"] == "memory-search":
            for query, found in step["searches"].items():
                ids = ", ".join(r["id"] for r in found["results"]) or "none"
                stdout.print(f"      {query!r}: {ids}")
        elif step["step"] in ("assemble", "consolidation-assemble"):
            say()
            say(styled("CLAUDE.md", "bold"), " (managed block)")
            stdout.print(step["block"])
            for path in step.get("skills", []):
                stdout.print(f"      {path}")
            stdout.print()
        elif step["step"] == "git-status":
            for line in step["porcelain"].splitlines():
                stdout.print(f"      {line}")
    stdout.print(
        f"\nExplore it yourself:\n  cd {result['repository']}\n"
        f"  export TEAMLORE_HOME={result['stateDir']}\n"
        '  teamlore sessions search 迁移\n  teamlore memory search "invoice export"'
    )


@app.command()
def demo(
    directory: str | None = typer.Option(
        None, "--dir", help="Empty folder for the demo (default: a new temporary folder)."
    ),
    ui: bool = typer.Option(
        False, "--ui", help="Stop before confirmation and review the candidates in your browser."
    ),
    no_open: bool = typer.Option(False, "--no-open", help="With --ui: print the URL only."),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Run the whole pipeline on bundled sample sessions in a throwaway folder."""
    target = directory or tempfile.mkdtemp(prefix="teamlore-demo-")
    payload = {"directory": target, "reviewInBrowser": ui}
    result = run("demo", payload, fmt, _render_demo, progress_label="Demo")
    if ui:
        from teamlore.cli.commands.review import serve_ui

        home = Path(result["stateDir"])
        serve_ui(Path(result["repository"]), home=home, port=0, open_browser=not no_open)


@app.command()
def mcp(
    capability: list[str] = typer.Option(
        [],
        "--capability",
        "-c",
        help="Which tools exist (repeatable): team-read (default), team, init, read, relay, "
        "org (the org index's read-only tools, local).",
    ),
    repository: str | None = typer.Option(
        None, "--repository", "-r", help="Worktree the team tools act on (default: cwd)."
    ),
    client_id: str | None = typer.Option(
        None, "--client-id", help="Personal tiers: this client's namespace (not authentication)."
    ),
    global_context: bool = typer.Option(
        False, "--global", help="Personal tiers: grant the global context (profile, preferences)."
    ),
    workspace: list[str] = typer.Option(
        [],
        "--workspace",
        help="Personal tiers: grant the project context of this registered worktree (repeatable).",
    ),
    accept_user_turns: bool = typer.Option(
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
        fail(err, OutputFormat.text)


def _load_command_modules() -> None:
    """Import every module of `teamlore.cli.commands` (each adds its commands to the apps)."""
    import teamlore.cli.commands as package
    from teamlore.cli.commands import memory  # noqa: F401  (the memory group lists its own first)
    from teamlore.cli.commands.mcp_config import mcp_config

    app.command("mcp-config")(mcp_config)
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")


if not cli_app.lean:  # the lean commands need only their own operations (commands/sessions)
    _load_command_modules()
else:  # the lean command of the memory group (commands/memory registers it otherwise)
    memory_app.command("search")(session_commands.memory_search)


def main() -> None:
    try:
        app()
    except BrokenPipeError:
        sys.exit(1)


if __name__ == "__main__":
    main()
