"""`teamlore … --help` as a newcomer reads it on an 80-column terminal: every value named in a
person's words, every command summary whole, the memory commands in the order they are used."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer

from support import Cli, teamlore_cli
from teamlore.cli.main import app
from teamlore.cli.main import main as _registers_every_command  # noqa: F401

# what typer prints for a value without a metavar: `<str>`, `<list[str]>`, `<int range>`,
# `<float>`, and `{path}` for a required argument in the usage line
PYTHON_TYPE = re.compile(r"<(?:str|int|float|bool|path|list\[[^\]]*\]|\w+ range)>|\{\w+\}")


def command_paths(command: Any, path: list[str], parent: Any) -> Iterator[tuple[list[str], bool]]:
    """Every command and group below `command` (path, is it a group); typer vendors its own
    click, so it is typed loosely."""
    context = command.context_class(command, info_name=path[-1], parent=parent)
    yield path, hasattr(command, "list_commands")
    for name in getattr(command, "list_commands", lambda _: [])(context):
        sub = command.get_command(context, name)
        if sub is not None and not sub.hidden:
            yield from command_paths(sub, [*path, name], context)


PATHS = list(command_paths(typer.main.get_command(app), ["teamlore"], None))


@pytest.fixture(scope="module")
def every_help(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`teamlore … --help` for every command and group, by command path (in-process: click's
    test runner prints 80 columns wide, a terminal of 80 columns 78)."""
    cli = Cli(tmp_path_factory.mktemp("state"))
    return {" ".join(path): cli.text(*path[1:], "--help") for path, _ in PATHS}


@pytest.fixture(scope="module")
def group_helps() -> dict[str, str]:
    """`teamlore <group> --help` on a terminal of 80 columns, by group path."""
    helps = {}
    for path, is_group in PATHS:
        if is_group:
            done = teamlore_cli(*path[1:], "--help", env={"COLUMNS": "80"})
            assert done.returncode == 0, done.stderr
            helps[" ".join(path)] = done.stdout
    return helps


def command_rows(help_text: str) -> list[str]:
    """The lines of a group help's `Commands:` section."""
    return help_text.split("\nCommands:\n", 1)[1].rstrip("\n").splitlines()


def test_no_help_names_a_value_by_its_python_type(every_help: dict[str, str]) -> None:
    """`--provider <list[str]>`, `--port <int range>`, `--scope <str>`, `{path}` read as code."""
    assert len(every_help) > 50
    found = {
        path: sorted(set(PYTHON_TYPE.findall(text)))
        for path, text in every_help.items()
        if PYTHON_TYPE.search(text)
    }
    assert found == {}


def test_a_value_that_takes_only_a_few_words_names_them(every_help: dict[str, str]) -> None:
    assert "--scope user|project" in every_help["teamlore install"]
    assert "--format text|json" in every_help["teamlore memory review"]
    assert "Usage: teamlore repo forget [OPTIONS] PATH\n" in every_help["teamlore repo forget"]
    assert "\n  QUERY...  Words" in every_help["teamlore sessions search"]


def test_every_command_summary_reads_whole_on_one_line(group_helps: dict[str, str]) -> None:
    """Click cut a summary that did not fit with `...` (`Index new and changed session files
    (Codex, Claude Code, Pi)...`)."""
    assert {"teamlore", "teamlore memory", "teamlore sessions", "teamlore hook"} <= set(group_helps)
    cut = [
        f"{path}: {row}"
        for path, text in group_helps.items()
        for row in command_rows(text)
        if not re.fullmatch(r"  [a-z-]+ +\S.*\.", row) or row.endswith("...")
    ]
    assert cut == []


def test_memory_commands_are_listed_in_the_order_of_the_workflow(
    group_helps: dict[str, str],
) -> None:
    listed = [row.split()[0] for row in command_rows(group_helps["teamlore memory"])]
    assert listed == [
        *("init", "status", "recall", "stage", "extract", "review", "confirm", "prepare"),
        *("discard", "promote", "synthesize", "consolidate", "assemble", "search", "lint"),
        "reverify-runner",
    ]
