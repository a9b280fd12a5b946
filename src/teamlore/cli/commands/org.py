"""`teamlore org …`: an organisation's memory across repositories (docs/org.md)."""

from __future__ import annotations

import re
from typing import Any

from teamlore.cli.app import org_app, org_token_app
from teamlore.cli.literal import literal
from teamlore.cli.output import (
    FormatOption,
    LexicalOption,
    OutputFormat,
    QueryArgument,
    counted,
    fail,
    matched_by,
    paths_line,
    query_text,
    run,
    say,
    say_how_many_more,
    say_titled,
    say_wrapped,
    stderr,
    stdout,
    styled,
)
from teamlore.cli.params import Argument, Option
from teamlore.core import errors
from teamlore.core.paths import display_path, working_directory
from teamlore.core.text.hidden import escaped

# no `envvar=`: the operation reads TEAMLORE_ORG_DATABASE itself, so that a refusal names
# where the URL came from (ops/org/stores.py)
DatabaseOption = Option(
    None,
    "--database",
    "-d",
    help="postgresql://… of a team server (default: $TEAMLORE_ORG_DATABASE, else the "
    "embedded index in the state dir).",
    metavar="URL",
)


def _run(
    name: str,
    payload: dict[str, Any],
    fmt: OutputFormat,
    render: Any,
    database: str | None,
    progress: str | None = None,
    before_error: Any = None,
    each: Any = None,
) -> dict[str, Any]:
    return run(
        name,
        payload,
        fmt,
        render,
        org_database=database,
        progress_label=progress,
        before_error=before_error,
        each=each,
    )


# a line break or a tab inside one field of a line (a file's name): shown as its escape, as
# ESC and U+202E are (`cli.literal`), so each finding stays one line (`path:line block …`)
_BREAKS = re.compile("[\n\r\t]")


def _one_line(text: str) -> str:
    return _BREAKS.sub(escaped, text)


def _render_add(result: dict[str, Any]) -> None:
    remote = f" ({result['remote']})" if result["remote"] else ""
    say_wrapped(f"Added {result['repository']}{remote} to the org index, {result['index']}.")
    say_wrapped("Run `teamlore org sync` to index its committed memory.")


@org_app.command("add")
def add(
    path: str = Argument(..., help="A clone whose committed .threadshare/memory is indexed."),
    name: str | None = Option(None, "--name", help="Name in the index (default: folder's)."),
    database: str | None = DatabaseOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Add a repository's clone to the org index."""
    _run("org.add", {"path": path, "name": name}, fmt, _render_add, database)


@org_app.command("remove")
def remove(
    name: str = Argument(..., help="The repository's name in the index."),
    database: str | None = DatabaseOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Remove a repository and its documents from the org index."""

    def render(result: dict[str, Any]) -> None:
        say_wrapped(
            f"Removed {result['repository']} ({counted(result['documentsRemoved'], 'document')})."
        )

    _run("org.remove", {"name": name}, fmt, render, database)


RESYNC = "`teamlore org sync` indexes HEAD"


def _repository_line(repo: dict[str, Any]) -> None:
    """The repository's line: name, state, documents, commit, then its remote, which goes on
    a line of its own under it when the one line would pass the terminal's width."""
    from rich.cells import cell_len

    state = repo["state"]
    style = {"ok": "green", "missing": "yellow", "skipped": "red"}.get(state, "")
    commit = (repo.get("commit") or "")[:12]
    since = {"behind": " (HEAD has moved on)", "not-in-history": " (not in HEAD's history)"}
    parts = [
        styled(repo["name"], "bold"),
        "  ",
        styled(state, style) if style else state,
        f"  {counted(repo['documents'], 'document')}",
        f"  at {commit}{since.get(repo.get('commitState') or '', '')}" if commit else "",
    ]
    remote = f"  {repo['remote']}" if repo.get("remote") else ""
    width = sum(cell_len(literal(str(part))) for part in parts) + cell_len(literal(remote))
    if width <= stdout.width:
        say(*parts, remote)
    else:
        say(*parts)
        say(f"    remote {repo['remote']}")
    if repo.get("commitState") == "not-in-history":
        say(styled(f"    rewritten (force-push, rebase or amend?): {RESYNC}", "yellow"))
    if repo.get("problem"):
        say(f"    {_one_line(repo['problem'])}")
    _say_findings(repo.get("findings", []))


def _say_findings(findings: list[dict[str, Any]]) -> None:
    """The first five lint findings of a repository, each at its file and line with its
    severity in words, as `memory lint` prints them (a pipe or a log has no colour)."""
    for finding in findings[:5]:
        where = f"{finding['file']}:{finding['line']}" if finding.get("line") else finding["file"]
        severity = finding.get("severity") or "block"  # the only ones that skip a repository
        line = f"{where} {severity} {finding['rule']} {finding['message']}"
        say(styled(f"    {_one_line(line)}", "red"))
    say_how_many_more(5, len(findings), "    ")


@org_app.command("list")
def list_repositories(
    database: str | None = DatabaseOption, fmt: OutputFormat = FormatOption
) -> None:
    """List the org index's repositories, their clones and sync states."""

    def render(result: dict[str, Any]) -> None:
        say(f"Org index: {result['index']}")
        if not result["repositories"]:
            say("No repositories yet: `teamlore org add PATH`.")
        for repo in result["repositories"]:
            _repository_line(repo)
            say(f"    {display_path(repo['path'])}")

    _run("org.list", {}, fmt, render, database)


NOT_SYNCED = ("skipped", "missing")  # outcomes that make `org sync` exit 1


def _render_sync(result: dict[str, Any]) -> None:
    """The sync's last lines (each repository's were said as it was synced: `_say_now`)."""
    if not result["repositories"]:
        say("No repository in the org index yet: add one with `teamlore org add CLONE`.")
    say_wrapped(f"Index generation {result['generation']}, {result['index']}.")
    left = [r["repository"] for r in result["repositories"] if r["outcome"] in NOT_SYNCED]
    if left:
        say(styled(f"Not synced: {', '.join(left)} (see above); exit 1.", "yellow"))


def _before_sync_error(err: errors.TeamloreError) -> None:
    """A sync the index's failure stopped (its database lost): after the repositories done
    before it (said as each was synced), the ones it did not finish; then the error."""
    if "repositories" not in err.details:
        return
    done = len(err.details["repositories"])
    when = (
        f"after {counted(done, 'repository', 'repositories')} (these stay as synced)"
        if done
        else "before any repository was synced"
    )
    left = ", ".join(err.details.get("notSynced", [])) or "none"
    say_wrapped(f"Stopped by the error below {when}; not synced: {left}.", style="yellow")


def _say_now(repo: dict[str, Any]) -> None:
    """One repository's result the moment it is synced, flushed: a log of a sync killed
    part-way (`org sync > log`, then kill -9) holds each repository synced before it."""
    _say_synced(repo)
    stdout.file.flush()


def _say_synced(repo: dict[str, Any]) -> None:
    """One repository's result: its outcome and counts, then what changed and why not."""
    outcome = repo["outcome"]
    style = {"synced": "green", "missing": "yellow", "skipped": "red"}.get(outcome, "")
    counts = (
        f" ({repo['added']} added, {repo['changed']} changed, {repo['deleted']} deleted)"
        if outcome == "synced"
        else ""
    )
    say(
        styled(repo["repository"], "bold"),
        "  ",
        styled(outcome, style) if style else outcome,
        f"  {counted(repo['documents'], 'document')}",
        counts,
    )
    if repo.get("remoteChanged"):
        was = repo["previousRemote"] or "none"
        say_wrapped(f"remote now {repo['remote'] or 'none'} (was {was})", 6, lead="    ")
    if repo.get("replacedCommit"):
        was, now = repo["replacedCommit"][:12], (repo.get("commit") or "")[:12]
        say(f"    {was} is no longer in HEAD's history; now at {now} (HEAD)")
    if repo.get("problem"):
        say_wrapped(_one_line(repo["problem"]), 6, lead="    ")
    if outcome == "skipped" and repo.get("headCommit"):
        held = (repo.get("commit") or "")[:12]
        kept = f"the index keeps {held}" if held else "nothing of it is indexed yet"
        say(f"    HEAD {repo['headCommit'][:12]} is not indexed; {kept}")
    _say_findings(repo.get("findings", []))


@org_app.command("sync", short_help="Index each repository's committed memory.")
def sync(
    wait: float = Option(
        120.0,
        "--wait",
        help="Seconds to wait while another org sync holds the index.",
        metavar="SECONDS",
    ),
    lexical: bool = Option(False, "--lexical", help="Store no embeddings."),
    database: str | None = DatabaseOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Index each repository's committed memory: new, changed and deleted documents; exit 1
    when a repository is skipped or missing (the others are synced)."""
    result = _run(
        "org.sync",
        {"wait": wait, "lexical": lexical},
        fmt,
        _render_sync,
        database,
        "org sync",
        before_error=_before_sync_error,
        each=_say_now,
    )
    if any(repo["outcome"] in NOT_SYNCED for repo in result["repositories"]):
        raise SystemExit(1)  # a cron job (`pull && org sync`) notices; the output says which


def _render_search(result: dict[str, Any]) -> None:
    say(f"generation {result['generation']}, {paths_line(result)}")
    if not result["results"]:
        say("No matching memory in the org index.")
    for hit in result["results"]:
        # short lines a hit, so the text view reads at 80 columns (`memory search`'s)
        say_titled(
            f"{hit['repository']}: {hit['id']}",
            f"{hit['kind']}, score {hit['score']:.2f}, {matched_by(hit)}",
        )
        say(f"  {_one_line(hit['path'])}")
        say(f"  {hit['snippet']}")


@org_app.command("search", short_help="Search every repository's reviewed memory.")
def search(
    query: list[str] = QueryArgument,
    limit: int = Option(10, "--limit", "-n", help="Results to return (1..100)."),
    repository: list[str] = Option(
        [], "--repository", "-r", help="Only this repository (repeatable)."
    ),
    kind: list[str] = Option(
        [],
        "--kind",
        "-k",
        help="Only this kind: entry, scene, doctrine, skill (repeatable).",
        metavar="entry|scene|doctrine|skill",
    ),
    lexical: bool = LexicalOption,
    database: str | None = DatabaseOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Search every repository's reviewed memory; results name their repository."""
    payload = {
        "query": query_text(query),
        "limit": limit,
        "repository": repository,
        "kind": kind,
        "lexical": lexical,
    }
    _run("org.search", payload, fmt, _render_search, database)


@org_app.command("status", short_help="Show the org index: where it is, what it holds.")
def status(database: str | None = DatabaseOption, fmt: OutputFormat = FormatOption) -> None:
    """Show the org index: where it is, its repositories and document counts."""

    def render(result: dict[str, Any]) -> None:
        say(f"Org index   {result['index']}, generation {result['generation']}")
        say(f"Documents   {result['documents']} ({result['embedded']} with embeddings)")
        if "pgvectorAvailable" in result:  # a PostgreSQL server's: offered or not, unused yet
            offered = "offered by the server" if result["pgvectorAvailable"] else "not offered"
            say(f"pgvector    {offered} (vectors are ranked in the serving process)")
        for repo in result["repositories"]:
            _repository_line(repo)

    _run("org.status", {}, fmt, render, database)


@org_app.command("serve", short_help="Serve the org index's read-only MCP tools over HTTP.")
def serve(
    host: str = Option("127.0.0.1", "--host", help="Address to listen on (loopback)."),
    port: int = Option(8765, "--port", help="Port to listen on (1..65535)."),
    allow_remote: bool = Option(
        False, "--allow-remote", help="Listen beyond loopback (put a TLS reverse proxy in front)."
    ),
    rate: int = Option(120, "--rate", help="Requests per minute each token may make (1 or more)."),
    database: str | None = DatabaseOption,
) -> None:
    """Serve the org index's read-only MCP tools over Streamable HTTP at /mcp (bearer tokens)."""
    from teamlore.mcp.org_http import ServeOptions
    from teamlore.mcp.org_http import serve as serve_http

    # a number out of range is INVALID_ARGUMENT, as `org search --limit` and every other
    # command's (docs/cli-output.md: USAGE is what the argument parser itself refuses)
    if not 1 <= port <= 65535:
        fail(_out_of_range("--port", "between 1 and 65535"), OutputFormat.text)
    if rate < 1:
        fail(_out_of_range("--rate", "1 or more requests a minute"), OutputFormat.text)
    try:
        serve_http(
            ServeOptions(
                host=host,
                port=port,
                cwd=working_directory(),
                database=database,
                rate=rate,
                allow_remote=allow_remote,
            )
        )
    except errors.TeamloreError as err:
        fail(err, OutputFormat.text)


def _out_of_range(flag: str, allowed: str) -> errors.TeamloreError:
    return errors.TeamloreError(errors.INVALID_ARGUMENT, f"{flag}: must be {allowed}")


@org_token_app.command("create", short_help="Create a bearer token for org serve (shown once).")
def token_create(
    name: str = Argument(..., help="Who or what the token is for."),
    database: str | None = DatabaseOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Create a bearer token for org serve; it is shown once, only its hash is kept."""

    def render(result: dict[str, Any]) -> None:
        stdout.print(result["token"], markup=False, highlight=False, soft_wrap=True)
        notice = "Shown once: store it now (teamlore keeps only its hash)."
        say(styled(notice, "yellow"), console=stderr)  # stdout is the token: T=$(…) takes it

    _run("org.token_create", {"name": name}, fmt, render, database)


@org_token_app.command("revoke")
def token_revoke(
    name: str = Argument(..., help="The token's name."),
    database: str | None = DatabaseOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Revoke a token: its next request to org serve gets 401."""
    _run("org.token_revoke", {"name": name}, fmt, lambda r: say(f"Revoked {r['name']}."), database)


@org_token_app.command("list")
def token_list(database: str | None = DatabaseOption, fmt: OutputFormat = FormatOption) -> None:
    """List the tokens of org serve (names and dates, never a token)."""

    def render(result: dict[str, Any]) -> None:
        if not result["tokens"]:
            say("No tokens: `teamlore org token create NAME`.")
        for token in result["tokens"]:
            revoked = f", revoked {token['revokedAt']}" if token["revokedAt"] else ""
            say(f"{token['name']}  created {token['createdAt']}{revoked}")

    _run("org.token_list", {}, fmt, render, database)
