"""docs/cli.md is every command's `--help`, generated from the typer app, and kept up to date here
(as simonw/llm keeps docs/help.md with cog).

After adding or changing a command, option or help text, regenerate it and commit the diff:

    TEAMLORE_REGEN=1 python -m pytest tests/cli/test_cli_reference.py
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from teamlore.cli.main import app
from teamlore.cli.main import main as _registers_every_command  # noqa: F401

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
REGEN = "TEAMLORE_REGEN=1 python -m pytest tests/cli/test_cli_reference.py"
WIDTH = 78  # what `teamlore … --help` prints off a terminal (click: 80 columns less 2)

HEADER = """# CLI reference

Every command's `--help`, as `teamlore` prints it. Generated from the typer app: do not edit by
hand; regenerate with `{regen}`.
"""


def commands(command: Any, path: list[str], parent: Any) -> Iterator[tuple[list[str], Any]]:
    """Depth first, groups before their commands, commands in alphabetical order. (Typer vendors
    its own click, so commands and contexts are typed loosely here.)"""
    context = command.context_class(
        command,
        info_name=path[-1],
        parent=parent,
        terminal_width=WIDTH,
        max_content_width=WIDTH + 2,
    )
    yield path, context
    if hasattr(command, "list_commands"):
        for name in sorted(command.list_commands(context)):
            sub = command.get_command(context, name)
            if sub is not None and not sub.hidden:
                yield from commands(sub, [*path, name], context)


def reference() -> str:
    sections = [HEADER.format(regen=REGEN)]
    for path, context in commands(typer.main.get_command(app), ["teamlore"], None):
        help_text = context.command.get_help(context).rstrip()
        sections.append(f"## {' '.join(path)}\n\n```\n{help_text}\n```\n")
    return "\n".join(sections)


def test_cli_reference_is_up_to_date() -> None:
    current = reference()
    if os.environ.get("TEAMLORE_REGEN") == "1":
        REFERENCE.write_text(current, encoding="utf-8")
    assert REFERENCE.read_text(encoding="utf-8") == current, (
        f"docs/cli.md is out of date with the CLI. Regenerate it with `{REGEN}`, commit the diff."
    )


def test_the_reference_lists_every_command_group() -> None:
    text = reference()
    for heading in ("## teamlore memory", "## teamlore sessions", "## teamlore personal"):
        assert heading in text


def test_every_option_and_argument_says_what_it_does() -> None:
    """`--help` is where a person learns a command: no option or argument without help text."""
    silent = [
        f"{' '.join(path)} {'/'.join(param.opts)}"
        for path, context in commands(typer.main.get_command(app), ["teamlore"], None)
        for param in context.command.params
        if not getattr(param, "hidden", False) and not (getattr(param, "help", "") or "").strip()
    ]
    assert silent == []
