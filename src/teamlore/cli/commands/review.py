"""`teamlore memory review | prepare | discard`: thin adapters over the review operations."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from teamlore.cli.app import app, memory_app
from teamlore.cli.commands.memory import read_request
from teamlore.cli.literal import literal
from teamlore.cli.output import (
    FormatOption,
    OutputFormat,
    RepositoryOption,
    cwd_of,
    fail,
    run,
    say,
    stdout,
    styled,
)
from teamlore.core import errors


def _render_statement(statement: dict[str, Any]) -> None:
    marker = {
        "not-needed (typed fact)": styled("typed fact", "green"),
        "confirmed": styled("confirmed", "green"),
    }.get(statement["confirmation"], styled("needs your confirmation", "yellow"))
    say("  ", styled(statement["statementId"], "bold"), " ", marker)
    for line in statement["text"].split("\n"):  # a consolidation operation spans lines
        say(f"    {line}")
    stdout.print(
        f"    provenance {statement['provenanceStrength']}, claim support "
        f"{statement['claimSupport']}, limitations {', '.join(statement['limitations']) or '-'}"
    )
    for evidence in statement["evidence"]:
        say(f"    · {evidence['display']}")
        if evidence.get("excerpt"):
            say("      ", styled(evidence["excerpt"], "dim"))


def _render_review(result: dict[str, Any]) -> None:
    if not result["items"] and not result["failed"]:
        stdout.print("No candidates are awaiting review.")
        return
    for item in result["items"]:
        title = f"{item['candidateId']} (revision {item['revision']})"
        stdout.print(
            Panel(Text(literal(item["content"])), title=Text(literal(title)), expand=False)
        )
        if item.get("skill"):
            skill = item["skill"]
            say(
                "  skill ",
                styled(skill["name"], "bold"),
                f" ({skill['action']}): {skill['description']}",
            )
        stdout.print(
            f"  {item['kind']}: provenance {item['provenanceStrength']}, claim support "
            f"{item['claimSupport']}, limitations {', '.join(item['limitations']) or '-'}"
        )
        for statement in item["statements"]:
            _render_statement(statement)
        if item.get("drift"):
            say("  ", styled("drift", "red"), f" {item['drift']['message']}")
        if item["blocked"]:
            for finding in item["lintFindings"]:
                say("  ", styled("blocked", "red"), f" {finding['rule']}: {finding['message']}")
            stdout.print(f"  discard it: teamlore memory discard --candidate {item['candidateId']}")
        for file in item["files"]:
            say("  ", styled(file["targetPath"], "bold"), f" ({file['role']})")
            stdout.print(Syntax(literal(file["diff"]), "diff", word_wrap=True))
        offer = "approve all offered" if item["approveAll"]["offered"] else "confirm one by one"
        stdout.print(f"  {offer}; approvalDigest {item['approvalDigest']}")
    for failed in result["failed"]:
        say(styled("adjudication failed", "yellow"), f" {failed['candidateId']}: {failed['next']}")


@memory_app.command("review")
def review(
    kind: str = typer.Option(
        "entry", "--kind", help="Candidate kind to review: entry, skill or consolidation."
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Show quarantined candidates: statements, evidence, assessments and the exact file diff."""
    run("memory.review", {"kind": kind}, fmt, _render_review, cwd=cwd_of(repository))


def _render_prepare(result: dict[str, Any]) -> None:
    stdout.print(f"Plan {result['planId']} generated ({len(result['files'])} file(s)).")
    for file in result["files"]:
        stdout.print(f"  {file['targetPath']} ({file['role']})")
    stdout.print(f"Next: {result['next']}")


@memory_app.command("prepare")
def prepare(
    request: str = typer.Option(..., "--request", help="PrepareRequest@v1 JSON file, or -."),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Confirm reviewed statements and record a promotion plan (PrepareRequest@v1)."""
    document = read_request(request, fmt)
    run("memory.prepare", document, fmt, _render_prepare, cwd=cwd_of(repository))


def _render_discard(result: dict[str, Any]) -> None:
    stdout.print(f"Discarded {result['candidateId']} (was {result['previousStatus']}).")


@memory_app.command("discard")
def discard(
    candidate: str = typer.Option(..., "--candidate", help="Candidate id to discard."),
    revision: int | None = typer.Option(None, "--revision", help="Expected revision."),
    reason: str | None = typer.Option(
        None, "--reason", help="Why you discard it (kept in the local state only)."
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Discard a draft, quarantined or adjudication-failed candidate."""
    payload = {"candidateId": candidate, "expectedRevision": revision, "reason": reason}
    run("memory.discard", payload, fmt, _render_discard, cwd=cwd_of(repository))


@memory_app.command("confirm")
def confirm(
    candidates: list[str] = typer.Option(
        [], "--candidate", help="Candidate to confirm (repeatable; default: every one reviewed)."
    ),
    yes: bool = typer.Option(False, "--yes", help="Confirm without asking (you read the review)."),
    kind: str = typer.Option(
        "entry", "--kind", help="Candidate kind to confirm: entry, skill or consolidation."
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Confirm reviewed statements one by one, then record a promotion plan (runs prepare).

    Nothing is confirmed if a chosen candidate is blocked by lint (discard or re-stage it) or
    unknown."""
    interactive = not yes and fmt is OutputFormat.text and sys.stdin.isatty()
    payload = {"kind": kind, "candidateIds": candidates}
    ask = None if yes else _ask if interactive else _needs_yes
    run("memory.confirm", payload, fmt, _render_confirm, cwd=cwd_of(repository), confirm=ask)


def _ask(item: dict[str, Any]) -> bool:
    """Show one reviewed candidate and ask the person whether every statement is true."""
    title = Text(literal(item["candidateId"]))
    stdout.print(Panel(Text(literal(item["content"])), title=title, expand=False))
    for statement in item["statements"]:
        _render_statement(statement)
    return typer.confirm("Is every statement above true?", default=False)


def _needs_yes(item: dict[str, Any]) -> bool:
    raise errors.TeamloreError(errors.USAGE, "confirming without a terminal needs --yes")


def _render_confirm(result: dict[str, Any]) -> None:
    if result.get("status") == "nothing-to-confirm":
        stdout.print("No candidates are awaiting review.")
    elif result.get("status") == "nothing-confirmed":
        stdout.print("Nothing confirmed; no plan recorded.")
    else:
        _render_prepare(result)


def _announce(url: str, review: dict[str, Any]) -> None:
    stdout.print(
        f"{review['count']} candidate(s) waiting for review. Open (one-time link):\n  {url}\n"
        "Press Ctrl-C to stop.",
        highlight=False,
    )


@app.command("ui")
def ui(
    repository: str | None = RepositoryOption,
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (default: a free one)."),
    no_open: bool = typer.Option(False, "--no-open", help="Print the URL; do not open a browser."),
) -> None:
    """Review, confirm, prepare and promote team memory in your browser (a local page on
    127.0.0.1, opened with a one-time link)."""
    serve_ui(cwd_of(repository), home=None, port=port, open_browser=not no_open)


def serve_ui(repository: Path, *, home: Path | None, port: int, open_browser: bool) -> None:
    """Serve the review page until Ctrl-C; refusals print their code and exit 1."""
    from teamlore.ui.server import serve

    try:
        serve(repository, home=home, port=port, open_browser=open_browser, announce=_announce)
    except errors.TeamloreError as err:
        fail(err, OutputFormat.text)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
