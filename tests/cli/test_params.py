"""The lean commands parse their plain arguments without typer (`teamlore.cli.params`): whatever
that parse accepts, it turns into exactly the call typer makes, and whatever it does not fully
understand it leaves to typer (usage errors, `--help`, unusual forms)."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from teamlore.cli.commands import sessions as session_commands
from teamlore.cli.main import app
from teamlore.core import errors

PLAIN = [
    ["sync"],
    ["sync", "--source", "claude=/x", "-s", "codex=/y", "--source=pi=/z=w", "--format", "json"],
    ["sync", "-p", "claude", "--provider=codex", "--rebuild", "--discard-history", "--wait", "5"],
    ["sync", "--wait=2.5", "-r", "repo dir", "-f", "text"],
    ["status"],
    ["status", "--check", "--format=json"],
    ["sessions", "list", "-p", "codex", "--since", "2026-01-01", "--until", "2026-02-01"],
    ["sessions", "list", "--limit", "3", "--unmapped", "-r", "", "-f", "json"],
    ["sessions", "show", "abc123", "--turn", "2", "-f", "json"],
    ["sessions", "show", "-t", "1", "abc123"],
    ["sessions", "show", "abc123", "--from", "101", "-n", "50"],
    ["sessions", "search", "release", "job", "failed", "-n", "3", "--lexical"],
    ["sessions", "search", '"a phrase"', "迁移", "--provider", "claude", "--until=2026-03-01"],
    ["sessions", "search", "x", "--repository", "r", "--since", "s", "--limit", "20"],
    ["sessions", "search", "x", "--no-sync", "--lexical"],
    ["memory", "search", "x"],
    ["memory", "search", "release", "job", "-n", "3", "--lexical", "-r", "repo dir", "-f", "json"],
    # after `--`, every token is a word of the query (a word may start with `-`)
    ["sessions", "search", "--", "-x"],
    ["sessions", "search", "-n", "3", "--", "-x", "--limit"],
    ["sessions", "search", "-"],
    ["memory", "search", "--lexical", "--", "-x"],
]

LEFT_TO_TYPER = [
    ["sync", "--bogus"],  # unknown option: typer's usage error
    ["sync", "--no-rebuild"],
    ["sync", "--rebuild=yes"],  # a flag with a value
    ["sync", "--wait", "1e3"],  # numbers other than plain digits
    ["sync", "--wait", " 5"],
    ["sync", "-fjson"],  # an option joined to its value
    ["sync", "--format", "JSON"],  # not a choice as written
    ["sync", "--repository"],  # a missing value
    ["sync", "--repository", "--rebuild"],
    ["sync", "extra"],  # a word the command does not take
    ["status", "--check", "--check"],
    ["sessions", "list", "--limit", "-1"],
    ["sessions", "list", "--limit", "1_0"],
    ["sessions", "list", "-n", "1", "-n", "2"],  # repeated: typer keeps the last
    ["sessions", "show"],  # a missing argument
    ["sessions", "show", "a", "b"],
    ["sessions", "search"],
    ["sessions", "search", "x", "--help"],
    ["sessions", "search", "x", "-h"],
    ["sessions", "searchx", "x"],
    ["sessions"],
    ["memory", "search"],
    ["memory", "search", "x", "--limit", "many"],
    ["memory", "status"],  # not a lean command
]


@pytest.fixture()
def captured(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every `run(...)` a lean command makes, instead of running the operation."""
    calls: list[tuple[Any, ...]] = []

    def run(name: str, payload: dict[str, Any], fmt: Any, render: Any, **kw: Any) -> None:
        calls.append((name, payload, fmt, render.__name__, kw))

    monkeypatch.setattr(session_commands, "run", run)
    return calls


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_a_plain_command_line_makes_the_call_typer_makes(
    argv: list[str], captured: list[tuple[Any, ...]]
) -> None:
    invocation = session_commands.lean_invocation(argv)
    assert invocation is not None
    invocation()
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    lean, typer = captured
    assert lean == typer and type(lean[2]) is type(typer[2])


@pytest.mark.parametrize("argv", LEFT_TO_TYPER, ids=" ".join)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert session_commands.lean_invocation(argv) is None


@pytest.mark.parametrize(
    ("argv", "query"),
    [
        (["sessions", "search", "-foo"], ["-foo"]),  # typer alone: `-f oo`
        (
            ["sessions", "search", "cart", "-n", "3", "-rounding", "--lexical"],
            ["cart", "-rounding"],
        ),
        (["sessions", "search", "-1", "--format=json"], ["-1"]),
        (["memory", "search", "-x", "-n", "2"], ["-x"]),
    ],
)
def test_a_query_word_that_starts_with_a_dash_is_the_querys_on_either_path(
    argv: list[str], query: list[str], captured: list[tuple[Any, ...]]
) -> None:
    """A word that is no option of a search command is a word of its query, in the lean parse
    and in typer's (`main` puts the query's words after `--` for it)."""
    from teamlore.cli.main import _query_after_dashes

    invocation = session_commands.lean_invocation(argv)
    assert invocation is not None
    invocation()
    result = CliRunner().invoke(app, _query_after_dashes(argv))
    assert result.exit_code == 0, result.output
    lean, typer = captured
    assert lean == typer and lean[1]["query"] == " ".join(query)


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions", "search", "-fjson", "x"],  # an option with its value attached
        ["sessions", "search", "x", "-n5"],
        ["sessions", "search", "x", "--bogus"],  # a mistyped long option: typer refuses it
        ["sessions", "show", "-foo"],  # no query: an unknown option stays one
    ],
)
def test_an_option_as_typed_stays_an_option(argv: list[str]) -> None:
    from teamlore.cli.main import _query_after_dashes

    assert _query_after_dashes(argv) == argv


def test_a_refused_field_is_named_by_the_flag_typed_on_either_path(
    captured: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from teamlore.cli import output

    def refuse(name: str, ctx: Any, payload: dict[str, Any]) -> dict[str, Any]:
        raise errors.TeamloreError(errors.INVALID_ARGUMENT, "providers: unknown provider 'x'")

    monkeypatch.setattr(session_commands, "run", output.run)
    monkeypatch.setattr(output, "run_operation", refuse)
    argv = ["sync", "-p", "x", "--format", "json"]
    invocation = session_commands.lean_invocation(argv)
    assert invocation is not None
    with pytest.raises(SystemExit) as exited:
        invocation()
    lean = capsys.readouterr().out
    result = CliRunner().invoke(app, argv)
    assert exited.value.code == result.exit_code == 2
    assert lean == result.stdout
    assert '"--provider: unknown provider' in lean


def test_a_number_too_long_to_convert_is_typers_usage_error() -> None:
    # more digits than Python's int() converts (sys.get_int_max_str_digits): a ValueError in the
    # fast parse was a traceback and exit 1 instead of typer's usage error
    argv = ["sessions", "list", "--limit", "9" * 5000]
    assert session_commands.lean_invocation(argv) is None
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2 and "--limit" in result.output


@pytest.mark.parametrize(
    "command", list(session_commands.LEAN_COMMANDS.values()), ids=lambda c: c.__name__
)
def test_a_lean_commands_parameters_are_read_as_inspect_reads_them(command: Any) -> None:
    import inspect

    from teamlore.cli.params import declared

    signature = inspect.signature(command).parameters
    assert declared(command) == {name: p.default for name, p in signature.items()}
