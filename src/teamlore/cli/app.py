"""The typer applications. Command modules (`teamlore.cli.*_cmds`) add their commands to these;
`teamlore.cli.main` imports every such module, so a new command group needs no central list."""

from __future__ import annotations

import typer

# Commands a `teamlore` process can run with only `teamlore.cli.main`'s own commands and the
# session operations imported (see `lean_command`): a sync then a search is how a person checks
# that a turn they just finished is findable, and importing every command module and operation
# was most of that wait.
LEAN_COMMANDS = (
    ("sync",),
    ("status",),
    ("sessions", "list"),
    ("sessions", "show"),
    ("sessions", "search"),
)
lean = False  # set by cli/entry.py before importing cli/main for a lean command


def lean_command(args: list[str]) -> bool:
    """Whether `teamlore ARGS` is a lean command (its --help is not: the help lists every
    command)."""
    return (
        any(tuple(args[: len(c)]) == c for c in LEAN_COMMANDS)
        and "--help" not in args
        and "-h" not in args
    )


app = typer.Typer(
    name="teamlore",
    help="Local-first memory for coding agents: index your Codex and Claude Code sessions, "
    "turn past work into reviewed team memory, and serve it to agents over MCP.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts print literally: `[models.<name>]` stays (cli/output.py)
)
sessions_app = typer.Typer(
    help="Browse and search indexed agent sessions.", no_args_is_help=True, rich_markup_mode=None
)
memory_app = typer.Typer(
    help="Team memory: the reviewed .threadshare/memory tree of a repository.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
personal_app = typer.Typer(
    help="Personal memory: your profile, preferences and project notes, kept for every agent.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
repo_app = typer.Typer(
    help="The git repositories this machine's index links sessions to.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(sessions_app, name="sessions")
app.add_typer(repo_app, name="repo")
app.add_typer(memory_app, name="memory")
app.add_typer(personal_app, name="personal")
