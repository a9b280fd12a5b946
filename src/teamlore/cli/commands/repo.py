"""`teamlore repo list` and `teamlore repo forget PATH`: the registered repositories."""

from __future__ import annotations

from typing import Any

from teamlore.cli.app import repo_app
from teamlore.cli.literal import literal
from teamlore.cli.output import (
    FormatOption,
    OutputFormat,
    print_unpadded,
    run,
    say,
    stdout,
    styled,
)
from teamlore.cli.params import Argument

_STATUS_WORDS = {
    "ok": "ok",
    "missing": "gone (deleted or moved)",
    "not-a-repository": "no longer a git worktree",
    "replaced": "now another repository",
    "unreadable": "git cannot read it",
    "untrusted": "another user owns it",
}


def _render_list(result: dict[str, Any]) -> None:
    repos = result["repositories"]
    if not repos:
        say("No repository is registered. `teamlore sync --repository PATH` registers one.")
        return
    from rich.table import Table  # text output only (docs/architecture.md, "A short CLI process")
    from rich.text import Text

    table = Table("repository", "status", "sessions", "commits", "path", box=None)
    table.columns[4].overflow = "fold"
    for r in repos:
        status = _STATUS_WORDS.get(r["status"], r["status"])
        table.add_row(
            Text(literal(r["name"])),
            Text(status, style="" if r["status"] == "ok" else "yellow"),
            str(r["sessions"]),
            str(r["commits"]),
            Text(literal(r["path"])),
        )
    print_unpadded(table)
    if any(r["status"] != "ok" for r in repos):
        say("`teamlore repo forget PATH` stops tracking one; its sessions stay indexed.")


@repo_app.command("list", short_help="List the registered repositories and what the index holds.")
def repo_list(fmt: OutputFormat = FormatOption) -> None:
    """List the registered repositories, whether each folder is still there, and how many
    sessions and commits the index holds for it."""
    run("repo.list", {}, fmt, _render_list)


def _render_forget(result: dict[str, Any]) -> None:
    forgotten = result["forgotten"]
    say("Forgot ", styled(forgotten["name"], "bold"), f" ({forgotten['path']}).")
    kept = result["sessionsKept"]
    which = (
        "session that belonged to it stays" if kept == 1 else "sessions that belonged to it stay"
    )
    stdout.print(f"{kept} {which} indexed and searchable.")
    if not result["repositoryHistoryKept"]:
        stdout.print("Its commits and delivery edges were dropped from the index.")


@repo_app.command("forget")
def repo_forget(
    path: str = Argument(..., help="The registered repository's folder (it may be gone)."),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Stop tracking a registered repository. Its indexed sessions are kept (they lose the
    mapping); the repository on disk is never touched."""
    run("repo.forget", {"path": path}, fmt, _render_forget)
