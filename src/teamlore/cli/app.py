"""The typer applications. Command modules (`teamlore.cli.commands.*`) add their commands to these;
`teamlore.cli.main` imports every such module, so a new command group needs no central list."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath
from typing import Any, get_args, get_origin

import typer
from typer.core import TyperCommand, TyperGroup

from teamlore.cli.params import with_typer_params

# set by cli/entry.py before importing cli/main when typer parses a lean command
# (`teamlore.cli.commands.sessions.LEAN_COMMANDS`): only those commands are registered then
lean = False


# what `--help` shows for a value whose declaration names no metavar, by the value's type (typer
# shows the Python type: `<str>`, `<list[str]>`, `<int range>`)
_PLACEHOLDERS: dict[type, str] = {str: "TEXT", int: "N", float: "NUMBER"}


def _placeholder(param: Any) -> str:
    """A person's word for what `param` takes: its choices (`text|json`), a path (`PATH`), or
    what kind of value it is (`TEXT`, `N`)."""
    described = param.type_descriptor
    if described.choices:
        return "|".join(str(getattr(c, "value", c)) for c in described.choices)
    kind = described.annotation
    if get_origin(kind) is list:
        (kind,) = get_args(kind)
    if isinstance(kind, type) and issubclass(kind, PurePath):
        return "PATH"
    return _PLACEHOLDERS.get(kind, "VALUE") if isinstance(kind, type) else "VALUE"


class Command(TyperCommand):
    """A command whose `--help` names each value in a person's words: the declared metavar, else
    `_placeholder`'s; an argument reads `QUERY...` / `PATH` as click prints one, not typer's
    `{path}` or `QUERY <list[str]>`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.metavar is not None or getattr(param, "is_flag", False):
                continue
            is_argument = param.param_type_name == "argument"
            param.metavar = (param.name or "").upper() if is_argument else _placeholder(param)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                shown = _argument(param)
                pieces.append(shown if param.required else f"[{shown}]")
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments, options = [], []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append((_argument(param), record[1]))
            else:
                options.append(record)
        for title, records in (("Arguments", arguments), ("Options", options)):
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


def _argument(param: Any) -> str:
    return f"{param.metavar}..." if param.nargs != 1 else str(param.metavar)


class WorkflowGroup(TyperGroup):
    """A group that lists its commands in `workflow` order (the order a person runs them), the
    ones `workflow` does not name after them in the order they were added."""

    workflow: tuple[str, ...] = ()

    def list_commands(self, ctx: Any) -> list[str]:
        added = super().list_commands(ctx)
        return sorted(added, key=lambda name: _place(self.workflow, name))


def _place(order: tuple[str, ...], name: str) -> int:
    return order.index(name) if name in order else len(order)


class MemoryGroup(WorkflowGroup):
    """docs/memory.md: find and stage candidates, review and confirm them, promote the plan,
    consolidate the entries, assemble them for the agents; then the reading and upkeep."""

    workflow = (
        *("init", "status", "recall", "stage", "extract", "review", "confirm", "prepare"),
        *("discard", "promote", "synthesize", "consolidate", "assemble", "search", "lint"),
        "reverify-runner",
    )


class App(typer.Typer):
    """A typer app whose commands may declare options with `teamlore.cli.params` (typer-free
    declarations the lean commands parse without typer), and whose `--help` is `Command`'s."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        kwargs.setdefault("cls", Command)
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
    cls=MemoryGroup,
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
