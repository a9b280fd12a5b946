"""`teamlore memory …`: the team memory commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from teamlore.cli.output import FormatOption, OutputFormat, run, stdout

memory_app = typer.Typer(
    help="Team memory: the reviewed .threadshare/memory tree of a repository.",
    no_args_is_help=True,
)

RepositoryOption = typer.Option(
    None, "--repository", "-r", help="Worktree to act on (default: the current directory)."
)


def _cwd(repository: str | None) -> Path:
    return Path(repository).expanduser().absolute() if repository else Path.cwd()


def _render_init(result: dict[str, Any]) -> None:
    if result["created"]:
        stdout.print(f"Created the team memory skeleton in {result['worktree']}:")
        for path in result["created"]:
            stdout.print(f"  {path}", highlight=False)
    else:
        stdout.print(f"{result['worktree']} already has a team memory tree; nothing to do.")


@memory_app.command("init")
def init(repository: str | None = RepositoryOption, fmt: OutputFormat = FormatOption) -> None:
    """Create .threadshare/memory in this git worktree (idempotent)."""
    run("memory.init", {}, fmt, _render_init, cwd=_cwd(repository))


def _render_status(result: dict[str, Any]) -> None:
    projection = result.get("projection") or {}
    stdout.print(f"Memory tree  {result['memoryRoot']} ({result['tree']})", highlight=False)
    if projection:
        stdout.print(
            f"Projection   generation {projection['generation']}, coverage {projection['coverage']}"
        )
        for d in projection.get("diagnostics", [])[:10]:
            stdout.print(
                f"  [yellow]{d['code']}[/] {d['file']}:{d.get('line') or ''} {d['why']}",
                highlight=False,
            )
    entries = result["entries"]
    stdout.print(f"Entries      {entries['approved']} approved, {entries['deprecated']} deprecated")
    candidates = ", ".join(f"{n} {state}" for state, n in result["candidates"].items())
    stdout.print(f"Candidates   {candidates}")
    lint = result.get("lint") or {}
    if lint:
        stdout.print(
            f"Lint         {lint['blocking']} blocking, {lint['warnings']} warnings "
            f"in {lint['files']} files"
        )


@memory_app.command("status")
def status(repository: str | None = RepositoryOption, fmt: OutputFormat = FormatOption) -> None:
    """Show the team memory's projection generation, coverage, counts and lint summary."""
    run("memory.status", {}, fmt, _render_status, cwd=_cwd(repository))


def _render_search(result: dict[str, Any]) -> None:
    coverage = result.get("coverage")
    note = "" if coverage == "complete" else f" [yellow](coverage {coverage})[/]"
    stdout.print(f"generation {result.get('generation')}{note}")
    if not result["results"]:
        stdout.print("No matching memory.")
    for hit in result["results"]:
        stdout.print(
            f"[bold]{hit['id']}[/] ({hit['type']}, {hit['path']}, score {hit['score']:.3g})",
            highlight=False,
        )
        stdout.print(f"  {hit['snippet']}", highlight=False)


@memory_app.command("search")
def search(
    query: str = typer.Argument(..., help="Words, identifiers or Chinese text."),
    limit: int = typer.Option(10, "--limit", "-n"),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Search the reviewed team memory (BM25)."""
    run(
        "memory.search", {"query": query, "limit": limit}, fmt, _render_search, cwd=_cwd(repository)
    )


def _render_lint(result: dict[str, Any]) -> None:
    findings = result.get("findings", [])
    table = Table("severity", "rule", "where", "message")
    for f in findings:
        where = f"{f['file']}:{f['line']}" if f.get("line") else f["file"]
        table.add_row(f["severity"], f["rule"], where, f["message"])
    if findings:
        stdout.print(table)
    blocked = sum(1 for f in findings if f["severity"] == "block")
    stdout.print(f"{len(findings)} findings, {blocked} blocking.")


@memory_app.command("lint")
def lint(
    paths: list[str] = typer.Argument(None, help="Files to lint (default: the whole tree)."),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Lint memory files for secrets, session ids, local paths, capacity and format."""
    result = run("memory.lint", {"paths": paths or []}, fmt, _render_lint, cwd=_cwd(repository))
    if any(f["severity"] == "block" for f in result.get("findings", [])):
        raise typer.Exit(1)
