"""`teamlore memory promote --plan ID`: approve and apply a reviewed promotion plan."""

from __future__ import annotations

from typing import Any

from teamlore.cli.app import memory_app
from teamlore.cli.entry import INTERRUPTED_EXIT
from teamlore.cli.output import (
    FormatOption,
    OutputFormat,
    cwd_of,
    run,
    say,
    stderr,
    stdout,
    styled,
)
from teamlore.cli.params import Option
from teamlore.cli.promoted import render_promoted


def _render_promote(result: dict[str, Any]) -> None:
    how = "already applied" if result["idempotent"] else "applied"
    if result["resumed"]:
        how = "applied (resumed an interrupted promotion)"
    stdout.print(f"Plan {result['planId']} {how}.")
    render_promoted(result)


@memory_app.command("promote", short_help="Apply a promotion plan to this worktree (no commit).")
def promote(
    plan: str = Option(
        ...,
        "--plan",
        help="Id of the plan you reviewed (printed by confirm and prepare; `memory status` lists "
        "the plans not yet promoted).",
    ),
    digest: str | None = Option(
        None, "--digest", help="The planDigest you reviewed; a different plan is refused."
    ),
    repository: str | None = Option(
        None,
        "--repository",
        "-r",
        help="Worktree to act on (default: the current directory).",
        metavar="PATH",
    ),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Approve and apply a promotion plan to this worktree (no stage, commit or push)."""
    try:
        run(
            "memory.promote",
            {"planId": plan, "planDigest": digest},
            fmt,
            _render_promote,
            cwd=cwd_of(repository),
        )
    except SystemExit as stop:
        if stop.code == INTERRUPTED_EXIT:  # Ctrl-C: say what it left
            _say_interrupted(plan)
        raise


def _say_interrupted(plan_id: str) -> None:
    """On stderr (a JSON view's stdout stays empty): the plan is half applied, and the command
    that finishes it; nothing when Ctrl-C came before the first file was written."""
    from teamlore.ops.memory.store import interrupted_promotion_note

    note = interrupted_promotion_note(plan_id)
    if note is not None:
        say(styled("interrupted", "bold yellow"), ": ", note, console=stderr)
