"""`teamlore memory synthesize`: start an L2/L3 consolidation (a ConsolidationTask@v1)."""

from __future__ import annotations

from typing import Any

from teamlore.cli.app import memory_app
from teamlore.cli.output import (
    FormatOption,
    OutputFormat,
    RepositoryOption,
    counted,
    cwd_of,
    fail,
    run,
    say_wrapped,
    stdout,
)
from teamlore.cli.params import Option
from teamlore.core import errors


def _render_synthesize(result: dict[str, Any]) -> None:
    task = result["task"]
    if task is None:
        say_wrapped(f"No consolidation task: {result['note']}.")
    else:
        say_wrapped(f"Consolidation task {task['taskId']} ({result['mode']}): {result['note']}.")
        for entry in task["entries"]:
            stdout.print(f"  entry {entry['entryId']}")
        for entry in task.get("leftEntries") or []:
            stdout.print(f"  entry {entry['entryId']} ({entry['status']}: no longer approved)")
        for scene in task["scenes"]:
            stdout.print(f"  scene {scene['name']} (heat {scene['heat']})")
        stdout.print("  The agent answers with a ConsolidationPatch@v1 (see --format json).")
        _say_deferred(task.get("deferred"))
    say_wrapped(
        f"{counted(result['newSinceBaseline'], 'approved entry', 'approved entries')}"
        " new since the last consolidation"
        + (
            f", {counted(result['leftSinceBaseline'], 'entry', 'entries')} no longer approved"
            if result.get("leftSinceBaseline")
            else ""
        )
        + f" (due at {result['dueAt']})."
    )
    if result.get("next"):
        say_wrapped(result["next"], len("Next: "), lead="Next: ")


def _say_deferred(deferred: dict[str, Any] | None) -> None:
    """What a task over its budget left out, and how the rest gets consolidated."""
    if deferred is None:
        return
    budget = f"a task holds at most {deferred['budgetBytes'] // 1024} KiB"
    if deferred["newOrChanged"]:
        say_wrapped(
            f"{counted(deferred['newOrChanged'], 'entry', 'entries')} new or changed left for "
            f"a next pass ({budget}). {deferred['next']}"
        )
    if deferred["alreadyConsolidated"]:
        say_wrapped(
            f"{counted(deferred['alreadyConsolidated'], 'entry', 'entries')} already "
            "consolidated not shown: the scenes already rest on them."
        )


@memory_app.command(
    "synthesize", short_help="Start a consolidation of entries into scenes and doctrine."
)
def synthesize(
    if_due: bool = Option(
        False, "--if-due", help="No task unless 20 approved entries are new or changed."
    ),
    full: bool = Option(
        False, "--full", help="Carry every approved entry, not only new or changed ones."
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Start a consolidation: approved entries, scenes and doctrine for the agent to fold into
    scenes and doctrine (it answers with a ConsolidationPatch@v1 through `memory stage`)."""
    if if_due and full:
        fail(errors.TeamloreError(errors.USAGE, "--if-due and --full cannot be combined"), fmt)
    run(
        "memory.synthesize",
        {"ifDue": if_due, "full": full},
        fmt,
        _render_synthesize,
        cwd=cwd_of(repository),
    )
