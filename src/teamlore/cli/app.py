"""The typer applications. Command modules (`teamlore.cli.commands.*`) add their commands to these;
`teamlore.cli.main` imports every such module, so a new command group needs no central list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from teamlore.cli.params import with_typer_params

# set by cli/entry.py before importing cli/main when typer parses a lean command
# (`teamlore.cli.commands.sessions.LEAN_COMMANDS`): only those commands are registered then
lean = False


class App(typer.Typer):
    """A typer app whose commands may declare options with `teamlore.cli.params` (typer-free
    declarations the lean commands parse without typer)."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        register = super().command(*args, **kwargs)

        def decorator(command: Any) -> Any:
            register(with_typer_params(command))
            return command

        return decorator


app = App(
    name="teamlore",
    help="Local-first memory for coding agents: index your Codex and Claude Code sessions, "
    "turn past work into reviewed team memory, and serve it to agents over MCP.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts print literally: `[models.<name>]` stays (cli/output.py)
)
sessions_app = App(
    help="Browse and search indexed agent sessions.", no_args_is_help=True, rich_markup_mode=None
)
memory_app = App(
    help="Team memory: the reviewed .threadshare/memory tree of a repository.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
personal_app = App(
    help="Personal memory: your profile, preferences and project notes, kept for every agent.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
repo_app = App(
    help="The git repositories this machine's index links sessions to.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
org_app = App(
    help="An organisation's memory: many repositories in one index, served over HTTP.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
org_token_app = App(
    help="Bearer tokens of `teamlore org serve`.", no_args_is_help=True, rich_markup_mode=None
)
org_app.add_typer(org_token_app, name="token")
app.add_typer(sessions_app, name="sessions")
app.add_typer(repo_app, name="repo")
app.add_typer(memory_app, name="memory")
app.add_typer(personal_app, name="personal")
app.add_typer(org_app, name="org")
