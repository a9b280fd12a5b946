"""The typer side of the command line: the declared apps (`teamlore.cli.app`) as typer apps, for
`--help`, the forms the plain parse leaves (`teamlore.cli.params`) and typer's usage errors. Only
a process that needs typer imports this module (`teamlore.cli.main`)."""

from __future__ import annotations

import functools
from pathlib import PurePath
from typing import Any, get_args, get_origin

import typer
from typer.core import TyperCommand, TyperGroup

from teamlore.cli.app import App
from teamlore.cli.params import with_typer_params

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


def to_typer(declared: App) -> typer.Typer:
    """`declared` (and its groups) as a typer app, its commands registered in the order they
    were declared."""
    group = declared.options.get("workflow")
    options = {k: v for k, v in declared.options.items() if k != "workflow"}
    if group is not None:
        options["cls"] = _workflow_group(group)
    built = typer.Typer(**options)
    for callback in declared.callbacks:
        built.callback()(callback)
    for name, options, command in declared.commands:
        built.command(name, **{"cls": Command, **options})(with_typer_params(command))
    for sub, name in declared.groups:
        built.add_typer(to_typer(sub), name=name)
    return built


@functools.cache
def _workflow_group(order: tuple[str, ...]) -> type[WorkflowGroup]:
    return type("DeclaredWorkflowGroup", (WorkflowGroup,), {"workflow": order})
