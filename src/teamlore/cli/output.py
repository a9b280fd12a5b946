"""How CLI commands print: exact JSON with `--format json`, readable rich text otherwise.

Errors: `{"error": {"code", "message"}}` on stdout in JSON mode, one line on stderr otherwise;
exit 1 for refusals and failures, 2 for usage errors.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any, NoReturn

import orjson
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from teamlore.core import errors
from teamlore.ops.registry import OpContext, run_operation


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


FormatOption = typer.Option(
    OutputFormat.text, "--format", "-f", help="Output format: text for people, json for programs."
)

stdout = Console(soft_wrap=True)
stderr = Console(stderr=True, soft_wrap=True)


def print_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")
    sys.stdout.flush()


def fail(err: errors.TeamloreError, fmt: OutputFormat) -> NoReturn:
    if fmt is OutputFormat.json:
        print_json({"error": err.to_json()})
    else:
        stderr.print(f"[bold red]error[/] {err.code}: {escape(err.message)}", highlight=False)
    raise typer.Exit(err.exit_code)


@contextmanager
def progress_for(fmt: OutputFormat, label: str) -> Iterator[Callable[[int, int, str], None] | None]:
    if fmt is OutputFormat.json or not sys.stderr.isatty():
        yield None
        return
    with Progress(
        TextColumn(f"[bold]{label}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=stderr,
        transient=True,
    ) as progress:
        task = progress.add_task("", total=None)

        def update(done: int, total: int, what: str) -> None:
            progress.update(task, completed=done, total=total, description=what[-40:])

        yield update


def run(
    name: str,
    payload: dict[str, Any],
    fmt: OutputFormat,
    render: Callable[[dict[str, Any]], None],
    *,
    progress_label: str | None = None,
    cwd: Path | None = None,
) -> dict[str, Any]:
    """Run one registered operation and print its result (or its error)."""
    try:
        with progress_for(fmt, progress_label or name) as progress:
            ctx = OpContext(cwd=cwd or Path.cwd(), progress=progress if progress_label else None)
            result = run_operation(name, ctx, {k: v for k, v in payload.items() if v is not None})
    except errors.TeamloreError as err:
        fail(err, fmt)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except Exception as exc:
        if os.environ.get("TEAMLORE_DEBUG"):
            raise
        refusal = errors.refusal_for(exc)
        if refusal.error is errors.INTERNAL:
            refusal.message += " (set TEAMLORE_DEBUG=1 for a traceback)"
        fail(refusal, fmt)
    if fmt is OutputFormat.json:
        print_json(result)
    else:
        render(result)
    return result
