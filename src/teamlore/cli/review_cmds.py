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
from teamlore.cli.memory_cmds import RepositoryOption, _cwd, read_request
from teamlore.cli.output import (
    FormatOption,
    OutputFormat,
    fail,
    literal,
    print_json,
    run,
    say,
    stdout,
    styled,
)
from teamlore.core import errors
from teamlore.ops.registry import OpContext, run_operation
from teamlore.ops.review_ops import prepare_request_from_review


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
    run("memory.review", {"kind": kind}, fmt, _render_review, cwd=_cwd(repository))


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
    run("memory.prepare", document, fmt, _render_prepare, cwd=_cwd(repository))


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
    run("memory.discard", payload, fmt, _render_discard, cwd=_cwd(repository))


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
    cwd = _cwd(repository)
    try:
        reviewed = run_operation("memory.review", OpContext(cwd=cwd), {"kind": kind})
    except errors.TeamloreError as err:
        fail(err, fmt)
    items = [i for i in reviewed["items"] if not candidates or i["candidateId"] in candidates]
    missing = sorted(set(candidates) - {i["candidateId"] for i in items})
    if missing:
        fail(
            errors.TeamloreError(
                errors.CANDIDATE_NOT_FOUND, f"no reviewable candidate {', '.join(missing)}"
            ),
            fmt,
        )
    drifted = [i for i in items if i.get("drift")]
    if drifted:
        fail(
            errors.TeamloreError(
                errors.CONSOLIDATION_DRIFT,
                f"{drifted[0]['drift']['message']}; discard {drifted[0]['candidateId']} and "
                "synthesize again",
                candidateId=drifted[0]["candidateId"],
            ),
            fmt,
        )
    blocked = [i for i in items if i["blocked"]]
    if blocked:
        fail(
            errors.TeamloreError(
                errors.LINT_BLOCKED,
                f"{len(blocked)} candidate(s) would write blocked content; discard them or confirm "
                "the others with --candidate",
                candidates=[
                    {"candidateId": i["candidateId"], "findings": i["lintFindings"]}
                    for i in blocked
                ],
            ),
            fmt,
        )
    if not items:
        run_result = {"status": "nothing-to-confirm", "planId": None}
        if fmt is OutputFormat.json:
            print_json(run_result)
        else:
            stdout.print("No candidates are awaiting review.")
        return
    if not yes and (fmt is OutputFormat.json or not sys.stdin.isatty()):
        fail(errors.TeamloreError(errors.USAGE, "confirming without a terminal needs --yes"), fmt)
    confirmed: list[str] = []
    for item in items:
        if not yes:
            stdout.print(
                Panel(
                    Text(literal(item["content"])),
                    title=Text(literal(item["candidateId"])),
                    expand=False,
                )
            )
            for statement in item["statements"]:
                _render_statement(statement)
            if not typer.confirm("Is every statement above true?", default=False):
                continue
        confirmed.append(item["candidateId"])
    if not confirmed:
        stdout.print("Nothing confirmed; no plan recorded.")
        return
    request = prepare_request_from_review(reviewed["items"], confirmed)
    run("memory.prepare", request, fmt, _render_prepare, cwd=cwd)


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
    serve_ui(_cwd(repository), home=None, port=port, open_browser=not no_open)


def serve_ui(repository: Path, *, home: Path | None, port: int, open_browser: bool) -> None:
    """Serve the review page until Ctrl-C; refusals print their code and exit 1."""
    from teamlore.ui.server import serve

    try:
        serve(repository, home=home, port=port, open_browser=open_browser, announce=_announce)
    except errors.TeamloreError as err:
        fail(err, OutputFormat.text)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
