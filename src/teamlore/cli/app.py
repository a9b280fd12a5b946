"""The command line's apps, declared without typer. Command modules (`teamlore.cli.commands.*`)
add their commands to these; a plain invocation runs its command straight from the declaration
(`teamlore.cli.commands.plain_invocation`), and `teamlore.cli.typer_app` turns the declarations
into typer apps for everything else (`--help`, usage errors). `teamlore.cli.main` imports every
command module, so a new command needs only an entry in `teamlore.cli.commands.COMMAND_MODULES`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# set by cli/entry.py before importing cli/main when typer parses a lean command
# (`teamlore.cli.commands.sessions.LEAN_COMMANDS`): only those commands are registered then
lean = False

Command = Callable[..., Any]


class App:
    """A command group as `typer.Typer` is declared: `App(**typer_options)`, `@app.command(name,
    **options)`, `app.add_typer(group, name=...)`, `@app.callback()`, recorded in order. Options
    may be declared with `teamlore.cli.params` (typer-free). `workflow=(...)` lists the group's
    commands in the order a person runs them (the others follow in the order they were added)."""

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.commands: list[tuple[str | None, dict[str, Any], Command]] = []
        self.groups: list[tuple[App, str]] = []
        self.callbacks: list[Command] = []

    def command(self, name: str | None = None, **options: Any) -> Callable[[Command], Command]:
        def record(command: Command) -> Command:
            self.commands.append((name, options, command))
            return command

        return record

    def add_typer(self, group: App, *, name: str) -> None:
        self.groups.append((group, name))

    def callback(self) -> Callable[[Command], Command]:
        def record(callback: Command) -> Command:
            self.callbacks.append(callback)
            return callback

        return record

    def find(self, path: tuple[str, ...]) -> Command | None:
        """The command `path` names (`("memory", "status")`), as declared so far."""
        head, rest = path[0], path[1:]
        if not rest:
            return next((c for n, _, c in self.commands if _named(n, c) == head), None)
        group = next((g for g, name in self.groups if name == head), None)
        return group.find(rest) if group is not None else None


def _named(name: str | None, command: Command) -> str:
    """A command's name as typer gives it: the declared one, else the function's, dashed."""
    return name or command.__name__.lower().replace("_", "-")


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
    # docs/memory.md: find and stage candidates, review and confirm them, promote the plan,
    # consolidate the entries, assemble them for the agents; then the reading and upkeep
    workflow=(
        *("init", "status", "recall", "stage", "extract", "review", "confirm", "prepare"),
        *("discard", "promote", "synthesize", "consolidate", "assemble", "search", "lint"),
        "reverify-runner",
    ),
    short_help="Team memory: the reviewed .threadshare/memory tree.",
    help="Team memory: the reviewed .threadshare/memory tree of a repository.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
personal_app = App(
    short_help="Personal memory: your profile, preferences and notes.",
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
    short_help="An organisation's memory: many repositories in one index.",
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
