"""The `teamlore` command line: thin adapters over the operation registry."""

from __future__ import annotations

import sys

if __name__ == "__main__":  # `python -m teamlore.cli.main`, as the console entry starts
    from teamlore.cli import closed_stdin_as_empty, in_utf8_mode

    in_utf8_mode()
    closed_stdin_as_empty()
if __name__ == "__main__" and sys.argv[1:2] == ["mcp"]:
    # how `teamlore install` launches the MCP server: no typer unless its flags need it
    from teamlore.cli.mcp_command import serve_from_argv

    serve_from_argv(sys.argv[2:])

import importlib
import pkgutil
import shlex
import tempfile
from pathlib import Path
from typing import Any

import typer

from teamlore import __version__
from teamlore.cli import app as cli_app
from teamlore.cli import mcp_command, reader_went_away
from teamlore.cli.app import app as declared
from teamlore.cli.app import memory_app, sessions_app
from teamlore.cli.commands import sessions as session_commands
from teamlore.cli.output import (
    FormatOption,
    OutputFormat,
    counted,
    fail,
    hanging,
    run,
    say,
    say_wrapped,
    stdout,
    styled,
)
from teamlore.cli.params import query_after_dashes
from teamlore.cli.typer_app import to_typer
from teamlore.core import errors
from teamlore.core.paths import display_path


def _version(value: bool) -> None:
    if value:
        typer.echo(f"teamlore {__version__}")
        raise typer.Exit()


@declared.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """teamlore."""


# sync, status and sessions list|show|search (`cli/commands/sessions.py`: they also run without
# typer); the help lists them first, in this order
declared.command(short_help="Index new and changed session files (Codex, Claude Code, Pi).")(
    session_commands.sync
)
declared.command()(session_commands.status)
sessions_app.command("list")(session_commands.sessions_list)
sessions_app.command(
    "show", short_help="Show a session's turns, tool uses, exit codes and commits."
)(session_commands.sessions_show)
sessions_app.command("search", short_help="Search past turns by words and by meaning.")(
    session_commands.sessions_search
)
sessions_app.command("exclude", short_help="Keep a session out of extraction.")(
    session_commands.sessions_exclude
)
sessions_app.command("include")(session_commands.sessions_include)


def _render_demo(result: dict[str, Any]) -> None:
    say(styled("teamlore demo", "bold"), f" in {display_path(result['directory'])}\n")
    for number, step in enumerate(result["steps"], 1):
        name = f"{number:>2}. {step['step']}"
        # the summary wraps at words under itself (`hanging`)
        first, *rest = hanging(f"{name}  ", step["summary"], len(name) + 2)
        say(styled(name, "bold cyan"), first[len(name) :])
        for line in rest:
            say(line)
        if step["step"] == "sessions-search":
            for query, hits in step["searches"].items():
                top = hits[0]["snippet"] if hits else "no hits"
                say_wrapped(top, 8, lead=f"      {query}: {counted(len(hits), 'hit')} — ")
        elif step["step"] == "review":
            from teamlore.ops.memory.review import short_candidate_id

            for item in step["result"]["items"]:
                supports = ", ".join(
                    f"{s['statementId']}={s['claimSupport']}" for s in item["statements"]
                )
                lead = f"      {short_candidate_id(item['candidateId'])} "
                for line in hanging(lead, f"{item['provenanceStrength']}: {supports}", len(lead)):
                    say(line)
        elif step["step"] in ("promote", "skill-promote", "consolidation-promote"):
            for path, text in step["files"].items():
                say()
                say(styled(path, "bold"))
                stdout.print(text.rstrip())
            stdout.print()
        elif step["step"] == "memory-search":
            for query, found in step["searches"].items():
                ids = ", ".join(r["id"] for r in found["results"]) or "none"
                say(f"      {query}: {ids}")
        elif step["step"] in ("assemble", "consolidation-assemble"):
            say()
            say(styled("CLAUDE.md", "bold"), " (managed block)")
            stdout.print(step["block"])
            for path in step.get("skills", []):
                say(f"      {path}")
            stdout.print()
        elif step["step"] == "git-status":
            for line in step["porcelain"].splitlines():
                say(f"      {line}")
    # lines to paste into a shell: a folder with a space in it (`TMPDIR="/tmp/bo tmp dir"`) is
    # quoted, as install quotes the command of its hooks
    stdout.print(
        f"\nExplore it yourself:\n  cd {shlex.quote(result['repository'])}\n"
        f"  export TEAMLORE_HOME={shlex.quote(result['stateDir'])}\n"
        '  teamlore sessions search 迁移\n  teamlore memory search "invoice export"'
    )


@declared.command(short_help="Run the whole pipeline on bundled sample sessions.")
def demo(
    directory: str | None = typer.Option(
        None,
        "--dir",
        help="Empty folder for the demo (default: a new temporary folder).",
        metavar="PATH",
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


declared.command()(mcp_command.mcp)  # parsed without typer when plain (cli/mcp_command.py)


def _load_command_modules() -> None:
    """Import every module of `teamlore.cli.commands` (each adds its commands to the apps)."""
    import teamlore.cli.commands as package
    from teamlore.cli.commands import memory  # noqa: F401  (the memory group lists its own first)
    from teamlore.cli.commands.mcp_config import mcp_config

    declared.command(
        "mcp-config", short_help="Print MCP server configuration for Codex and Claude Code."
    )(mcp_config)
    from teamlore.cli.watch import watch

    declared.command(short_help="Keep the index fresh; answer searches from a warm process.")(watch)
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")


if not cli_app.lean:  # the lean commands need only their own operations (commands/sessions)
    _load_command_modules()
else:  # the lean command of the memory group (commands/memory registers it otherwise)
    memory_app.command(
        "search", short_help="Search the reviewed team memory by words and by meaning."
    )(session_commands.memory_search)

app = to_typer(declared)

# the exceptions of the click typer parses with (typer 0.2x vendors its own copy of click)
_click_errors = sys.modules[typer.BadParameter.__module__]


def main() -> None:
    """Run the app; a usage error typer finds (an unknown option, a missing argument, a value of
    the wrong type) is reported as every refusal is (docs/cli-output.md, "Errors")."""
    try:
        code = app(args=_query_after_dashes(sys.argv[1:]), standalone_mode=False)
    except _click_errors.UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `teamlore memory`: the group's help
            exc.show()
            sys.exit(exc.exit_code)
        fail(_usage_refusal(exc), _requested_format(sys.argv[1:]))
    except _click_errors.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except typer.Abort:  # typer.Abort is click's Abort where typer does not vendor click
        print("Aborted!", file=sys.stderr)
        sys.exit(1)
    except BrokenPipeError:
        sys.exit(reader_went_away())
    except errors.TeamloreError as err:  # refused before its operation ran (CWD_GONE)
        fail(err, _requested_format(sys.argv[1:]))
    sys.exit(code if isinstance(code, int) else 0)  # a command returns None, typer.Exit its code


def _query_after_dashes(args: list[str]) -> list[str]:
    """`args` with a search query's words after `--` when one starts with `-` (`teamlore
    sessions search -foo`: `params.query_after_dashes`), as the lean parse reads them."""
    for size in (3, 2):
        command = declared.find(tuple(args[:size])) if len(args) >= size else None
        if command is not None:
            return [*args[:size], *query_after_dashes(command, args[size:])]
    return args


def _usage_refusal(exc: Any) -> errors.TeamloreError:
    command = exc.ctx.command_path if exc.ctx is not None else "teamlore"
    cause = exc.__cause__
    if type(cause).__name__ == "ValidationError" and hasattr(cause, "errors"):
        # typer checks a value with pydantic: its words (`Value error, 'xml' is not one of
        # 'text', 'json'`) become a person's, as every refusal's are (core/errors.py)
        exc.message = errors.first_problem(cause, plain=True)[1]
    message = exc.format_message().rstrip(".")
    refusal = errors.TeamloreError(errors.USAGE, f"{command}: {message[:1].lower()}{message[1:]}")
    option = getattr(exc, "option_name", None)  # no such option: a query word, perhaps
    params = exc.ctx.command.params if exc.ctx is not None else []
    if option and any(getattr(p, "metavar", None) == "QUERY" for p in params):
        refusal.advising(
            "Run the command with `--help` to see its options; to search for a word that"
            f" starts with `--`, put `--` before the query: `{command} -- {option}`."
        )
    return refusal


def _requested_format(args: list[str]) -> OutputFormat:
    """`--format json` as typed, read without the parse that just failed."""
    for flag, value in zip(args, [*args[1:], ""], strict=True):
        if flag == "--":
            break
        if (flag in ("--format", "-f") and value == "json") or flag in ("--format=json", "-fjson"):
            return OutputFormat.json
    return OutputFormat.text


if __name__ == "__main__":
    main()
