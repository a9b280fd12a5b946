"""The lean commands: `sync`, `status`, `sessions list|show|search` and `memory search`.

A sync then a search is how a person checks that a turn they just finished is findable, so these
run without typer or any other command module (`lean_invocation`, run by the console entry
`teamlore.cli.entry`): their options are declared with `teamlore.cli.params`, parsed from the
same declarations, and typer parses only what that parse leaves to it (usage errors, `--help`).
`teamlore.cli.main` registers them on the typer app in this order (docs/architecture.md, "A
short CLI process").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from teamlore.cli.literal import literal
from teamlore.cli.output import (
    FormatOption,
    LexicalOption,
    OutputFormat,
    QueryArgument,
    RepositoryOption,
    counted,
    cwd_of,
    fail,
    matched_by,
    paths_line,
    print_unpadded,
    query_text,
    run,
    say,
    say_left_out,
    say_titled,
    say_wrapped,
    stdout,
    styled,
    wrapped_lines,
)
from teamlore.cli.params import Argument, Option, command_path, invocation
from teamlore.core.paths import display_path
from teamlore.ops.sessions import LIST_PAGE_SESSIONS, SHOW_PAGE_TURNS

PROVIDERS = "codex|claude|pi"  # what `--provider` takes, as `--help` names it
# times are UTC unless they carry an offset (`core.timeutil.parse_instant`), as `memory recall`'s
SinceOption = Option(
    None, "--since", help="Window start: ISO date/time (UTC), inclusive.", metavar="DATE"
)
UntilOption = Option(
    None, "--until", help="Window end: ISO date/time (UTC), exclusive.", metavar="DATE"
)
# `sessions list` selects the sessions active in the window (their first to last activity
# overlaps it: sessions/queries.py), while its table shows when each started
ListSinceOption = Option(
    None,
    "--since",
    help="Sessions still active at or after this ISO date/time (UTC), even if they started"
    " before it.",
    metavar="DATE",
)
ListUntilOption = Option(
    None,
    "--until",
    help="Sessions that started before this ISO date/time (UTC), exclusive.",
    metavar="DATE",
)
SessionKeyArgument = Argument(
    ...,
    help="A sessionKey from `teamlore sessions list`, or its first 8 or more characters.",
)


def _session_operations() -> None:
    """Register the session operations (`memory search`, run from this module too, needs none
    of them: docs/architecture.md, "A short CLI process")."""
    from teamlore.ops.sessions import index  # noqa: F401


# -- sync / status ----------------------------------------------------------------------------


def _render_sync(result: dict[str, Any]) -> None:
    files, totals = result["files"], result["totals"]
    say_wrapped(
        f"Indexed {files['changed']} changed of {counted(files['seen'], 'file')} "
        f"({result['bytesRead'] / 1048576:.1f} MiB read): "
        f"{counted(result['sessions'], 'session')}, {counted(result['turns'], 'turn')} written. "
        f"Index holds {counted(totals['sessions'], 'session')}, {counted(totals['turns'], 'turn')}."
    )
    if files["unavailable"]:
        gone = files["unavailable"]
        stdout.print(
            f"{counted(gone, 'file')} disappeared; "
            f"{'its' if gone == 1 else 'their'} history is kept."
        )
    if result.get("reanalyzedTurns"):
        turns = counted(result["reanalyzedTurns"], "turn")
        stdout.print(f"Re-analyzed {turns} for the new search analyzer.")
    for source in result["sources"]:
        if not source["exists"] and not source["unreadable"]:  # unreadable: a diagnostic
            say(styled(f"no {source['provider']} sessions at {source['path']}", "dim"))
    if result.get("damagedIndexKept"):
        say_wrapped(f"The damaged index was set aside, not deleted: {result['damagedIndexKept']}.")
    for name in result.get("restoredRepositories") or []:
        say("Registered repository ", styled(name, "bold"), " again, from config.toml.")
    if result.get("repository"):
        repo = result["repository"]
        say("Registered repository ", styled(repo["name"], "bold"), f" ({repo['worktreeKey']}).")
    delivery = result.get("delivery") or {}
    if delivery.get("repositories"):
        _render_delivery(delivery)
    _render_vectors(result.get("vectors") or {})
    if result["diagnosticCount"]:
        shown = result["diagnostics"][:10]
        diagnostics = counted(result["diagnosticCount"], "diagnostic")
        say(styled(diagnostics, "yellow"), _which_follow(len(shown), result["diagnosticCount"]))
        for d in shown:
            _print_diagnostic(d)
    if files["failed"]:
        what = "file or folder" if files["failed"] == 1 else "files or folders"
        say(styled(f"{files['failed']} {what} could not be read (above).", "red"))


def _which_follow(shown: int, count: int) -> str:
    """The end of a heading over `shown` of `count` lines: `:`, or ` (the first N):`."""
    return ":" if shown == count else f" (the first {shown}):"


def _print_diagnostic(d: dict[str, Any]) -> None:
    where = ":".join(str(part) for part in (d["file"], d["line"]) if part)
    stdout.print(f"  {d['code']}  {where}  {d['message']}")


def _render_delivery(delivery: dict[str, Any]) -> None:
    by = delivery["mappedBy"]
    foreign = [f"{by[k]} by {label}" for k, label in _MAPPED_BY if by.get(k)]
    say_wrapped(
        f"{counted(delivery['repositories'], 'repository', 'repositories')}: "
        f"{counted(delivery['sessionsMapped'], 'session')} mapped"
        + (f" ({', '.join(foreign)})" if foreign else "")
        + f", {counted(delivery['commitsAdded'], 'new commit')},"
        f" {counted(delivery['deliveryEdges'], 'delivery edge')}."
    )
    for gone in delivery["repositoriesSkipped"]:
        say(
            styled(f"skipped {gone['path']}", "yellow"),
            f": {_SKIP_REASONS.get(gone['reason'], gone['reason'])}"
            " (`teamlore repo forget PATH` drops it).",
        )
    if delivery["sessionsUnmapped"]:
        unmapped = delivery["sessionsUnmapped"]
        say_wrapped(
            f"{counted(unmapped, 'session')} could not be mapped to a"
            " registered repository; `teamlore sessions list --unmapped` shows their folders."
        )


_MAPPED_BY = (("gitRemote", "git remote"), ("pathAlias", "path alias"))
_SKIP_REASONS = {
    "missing": "the folder is gone (deleted or moved)",
    "not-a-repository": "the folder is no longer a git worktree",
    "replaced": "the folder now holds another repository",
    "unreadable": "git could not read its history",
    "untrusted": "git refuses it: another user owns it (git's safe.directory)",
}


def _render_vectors(vectors: dict[str, Any]) -> None:
    """What the embedding step of a sync did (docs/hybrid-search.md, "Session search")."""
    if vectors.get("status") == "done":
        dropped, turns = vectors["droppedVectors"], vectors["turns"]
        say_wrapped(
            f"Embedded {counted(vectors['embeddedTurns'], 'turn')} for hybrid search"
            + (f" (model changed: {counted(dropped, 'old vector')} dropped)" if dropped else "")
            + f"; {vectors['turnsWithVector']} of {counted(turns, 'turn')}"
            f" {'has' if turns == 1 else 'have'} a vector."
        )
    elif vectors.get("status") == "unavailable":
        say_wrapped(
            f"Turns not embedded ({vectors['code']}: {vectors['message']});"
            " search uses words only until a sync can embed them.",
            style="yellow",
        )


def sync(
    source: list[str] = Option(
        [],
        "--source",
        "-s",
        metavar="PROVIDER=PATH",
        help="Session folder or file to index (replaces the default locations; repeatable).",
    ),
    provider: list[str] = Option(
        [], "--provider", "-p", help="Only this provider (repeatable).", metavar=PROVIDERS
    ),
    repository: str | None = Option(
        None,
        "--repository",
        "-r",
        help="Register this git worktree and link sessions to commits.",
        metavar="PATH",
    ),
    rebuild: bool = Option(False, "--rebuild", help="Reparse every session file from scratch."),
    discard_history: bool = Option(
        False,
        "--discard-history",
        help="With --rebuild: confirm setting aside a damaged index that holds the history of"
        " deleted transcripts.",
    ),
    wait: float = Option(
        60.0, "--wait", help="Seconds to wait for another running sync.", metavar="SECONDS"
    ),
    regenerate_secret: bool = Option(
        False,
        "--regenerate-secret",
        help="Make a new origin secret and re-key config, index, team-memory state and personal"
        " memory under it (nothing else is indexed).",
    ),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Index new and changed session files (Codex, Claude Code, Pi) incrementally."""
    if regenerate_secret:
        if source or provider or repository or rebuild or discard_history:
            from teamlore.core import errors

            fail(
                errors.TeamloreError(errors.USAGE, "--regenerate-secret takes no other option"), fmt
            )
        run("secret.regenerate", {}, fmt, _render_regenerated)
        return
    _session_operations()
    run(
        "sync",
        {
            "sources": source,
            "providers": provider,
            "repository": repository,
            "rebuild": rebuild,
            "discardHistory": discard_history or None,
            "wait_seconds": wait,
        },
        fmt,
        _render_sync,
        progress_label="Indexing sessions",
    )


def _render_regenerated(result: dict[str, Any]) -> None:
    """What the new secret re-keyed, and what it could not (docs/sessions.md)."""
    stdout.print(f"New origin secret: {counted(result['keysMapped'], 'key')} re-derived under it.")
    for item in result["migrated"]:
        stdout.print(f"  re-keyed {item['what']}: {counted(item['changed'], 'change')}")
    for item in result["notMigrated"]:
        say(styled(f"  left as it was: {item['what']} ({item['count']})", "yellow"))
        stdout.print(f"    {item['why']}")


def _render_status(result: dict[str, Any]) -> None:
    stdout.print(
        f"State dir   {result['stateDir']}  (schema {result['schemaVersion']}, "
        f"{result['analyzerVersion']})"
    )
    stdout.print(f"Last sync   {result['lastSyncAt'] or 'never'}")
    subagents = result["subagentSessions"]
    stdout.print(
        f"Sessions    {result['sessions']}"
        + (f" ({subagents} of them subagents)" if subagents else "")
        + f"  turns {result['turns']} "
        f"(sealed {result['sealedTurns']})  tool uses {result['toolUses']}"
    )
    files = result["files"]
    failed = f", {files['failed']} failed (retried by the next sync)" if files["failed"] else ""
    stdout.print(
        f"Files       {files['ok']} ok, {files['unavailable']} unavailable (history kept){failed}"
    )
    unreadable = result["lastSyncUnreadable"]
    if unreadable["count"]:
        say(
            "Unreadable  ",
            styled(f"{unreadable['count']} at the last sync", "red"),
            _which_follow(len(unreadable["recent"]), unreadable["count"]),
        )
        for d in unreadable["recent"]:
            _print_diagnostic(d)
    stdout.print(
        f"Repos       {result['repositories']}  commits {result['commits']}  "
        f"delivery edges {result['deliveryEdges']}"
    )
    for s in result["sources"]:
        # ✗ in words: not there, or not to be looked at (the line under it says why)
        missing = "" if s["exists"] or s["unreadable"] else " (not found)"
        mark = "✓" if s["exists"] else "✗"
        stdout.print(f"Source      {mark} {s['provider']:<7} {s['path']}{missing}")
        if s["unreadable"]:
            say(styled(f"              cannot be read: {s['unreadable']}", "red"))
    diag = result["diagnostics"]
    if not diag["recent"]:
        stdout.print(f"Diagnostics {diag['count']}")
    else:
        latest = (
            "" if len(diag["recent"]) == diag["count"] else f" (the latest {len(diag['recent'])})"
        )
        stdout.print(f"Diagnostics {diag['count']}{latest}:")
        for d in diag["recent"]:
            _print_diagnostic(d)
    if "integrity" in result:
        stdout.print(f"Integrity   {result['integrity']}")


def status(
    check: bool = Option(False, "--check", help="Also run the SQLite integrity check."),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Show the health of the session index."""
    _session_operations()
    run("status", {"check": check}, fmt, _render_status)


# -- sessions ---------------------------------------------------------------------------------


# `sessions list` at 80 columns: a repository name is cut at this many characters; with less
# room than WIDE_TITLE_CHARS for the title / cwd, the start column shows the day alone; the
# title / cwd column keeps at least MIN_TITLE_CHARS whatever the terminal's width
REPOSITORY_COLUMN_CHARS = 14
WIDE_TITLE_CHARS = 24
MIN_TITLE_CHARS = 12


def path_tail(folder: str, width: int) -> str:
    """`folder` in at most `width` characters, keeping its last components:
    `…/spotter-worktrees/spotter-4te` (a folder's end tells sessions apart, not its start)."""
    if len(folder) <= width:
        return folder
    separator = "\\" if "\\" in folder and "/" not in folder else "/"
    kept = ""
    for part in reversed(folder.split(separator)):
        longer = f"{part}{separator}{kept}" if kept else part
        if len(longer) + 2 > width:
            break
        kept = longer
    if not kept:  # even the last component does not fit: its end does
        return "…" + folder[-(width - 1) :]
    return f"…{separator}{kept}"


def _render_folders(result: dict[str, Any]) -> None:
    """`sessions list --unmapped`: the folders to map, each once with how many sessions it
    holds and the newest start, most sessions first; a folder cut at its start as in the
    session table (`…/spotter-4te`), whole in `--format json`."""
    folders = result["folders"]
    count_width = max(len("sessions"), *(len(str(f["sessions"])) for f in folders))
    # a narrow terminal shows the day, not the minute (as the session table does)
    started = 16 if stdout.width - count_width - 16 - 4 >= WIDE_TITLE_CHARS else 10
    header = "newest (UTC)" if started == 16 else "newest day"
    room = max(stdout.width - count_width - started - 4, MIN_TITLE_CHARS)
    say(f"{'sessions':>{count_width}}  {header:<{started}}  folder")
    cut = False
    for f in folders:
        newest = (f["newestStartedAt"] or "")[:started].replace("T", " ")
        folder = literal(display_path(f["cwd"])) if f["cwd"] else "(no folder recorded)"
        shown = path_tail(folder, room)
        cut = cut or shown != folder
        say(f"{f['sessions']:>{count_width}}  {newest:<{started}}  {shown}")
    if cut:
        command = "teamlore sessions list --unmapped --format json"
        for line in wrapped_lines("", f"A folder cut at its start (…/) is whole in `{command}`."):
            say(styled(line, "dim"))
    if result["moreFolders"]:
        total = len(folders) + result["moreFolders"]
        more = counted(result["moreFolders"], "more folder")
        say(styled(f"… {more} (`--limit {total}` lists them all)", "dim"))


def _label(session: dict[str, Any], unmapped: bool) -> tuple[str, bool]:
    """What the `title / cwd` column says of `session` uncut, and whether that is its folder."""
    from teamlore.ops.sessions.titles import listed_title

    title = None if unmapped else listed_title(session)
    if title:
        return literal(title), False
    return literal(display_path(session["cwd"]) if session["cwd"] else ""), True


def _label_width(label: tuple[str, bool], session: dict[str, Any]) -> int:
    """The cells `label` takes in its column, its `(file gone)` mark included."""
    from rich.cells import cell_len

    return cell_len(label[0]) + (0 if session.get("available", True) else len(" (file gone)"))


def _render_list(result: dict[str, Any], *, unmapped: bool = False, filtered: bool = False) -> None:
    if unmapped and result["sessions"]:
        _render_folders(result)
        return
    if not result["sessions"]:
        if unmapped:
            say("Every indexed session is mapped to a registered repository.")
        elif filtered:  # the index may hold sessions: these filters leave none
            say("No sessions match these filters; `teamlore sessions list` lists every one.")
        else:
            say("No sessions yet. `teamlore sync` indexes your Codex, Claude Code and Pi sessions.")
        return
    from rich.table import Table  # a text listing only: `--format json` never imports rich
    from rich.text import Text

    # a column no listed session fills would take the title's width at 80 columns
    mapped = any(s["repository"] for s in result["sessions"])
    last = "cwd" if unmapped else "title / cwd"
    repos = [
        literal(s["repository"]["name"]) if s["repository"] else "" for s in result["sessions"]
    ]
    repo_width = (
        min(REPOSITORY_COLUMN_CHARS, max(map(len, ["repository", *repos]))) if mapped else 0
    )
    turns_width = max(len("turns"), *(len(str(s["turns"])) for s in result["sessions"]))
    provider_width = max(len("provider"), *(len(s["provider"]) for s in result["sessions"]))

    def room(started_width: int) -> int:
        """What the other columns (each padded by a space on both sides) leave the last."""
        widths = [12, provider_width, started_width, turns_width, *([repo_width] * mapped)]
        return stdout.width - sum(widths) - 2 * len(widths) - 2

    labels = [_label(s, unmapped) for s in result["sessions"]]
    # a label the row has no room for goes on a line of its own under it (all of them, so the
    # rows read alike), the width of the terminal its own; the row's start column then has
    # room for the minute
    widths = map(_label_width, labels, result["sessions"])
    below = any(width > room(10) for width in widths) and stdout.width - 2 > room(10)
    # a narrow terminal shows the day a session started, not its minute: the title gains 6
    started_chars = 16 if room(16) >= (0 if below else WIDE_TITLE_CHARS) else 10
    started_header = "started (UTC)" if started_chars == 16 else "day (UTC)"
    started_width = max(started_chars, len(started_header))
    label_room = stdout.width - 2 if below else max(room(started_width), MIN_TITLE_CHARS)
    headers = ("session", "provider", started_header, "turns", *(("repository",) * mapped))
    rows = []
    for s, repo in zip(result["sessions"], repos, strict=True):
        started = (s["startedAt"] or "")[:started_chars].replace("T", " ")
        cells = [literal(s["sessionKey"][:12]), literal(s["provider"]), started, str(s["turns"])]
        rows.append([*cells, *([repo] * mapped)])
    # the last column gets what the others leave of the terminal's width (or a line of its
    # own), a folder keeps its end (`…/spotter-worktrees/spotter-4te`), a title its start
    table = Table(*headers, *(() if below else (last,)), box=None)
    for column in table.columns:
        column.no_wrap = True
        column.overflow = "ellipsis"
    # the key is what a reader copies into `sessions show`: narrow terminals cut the others
    table.columns[0].min_width = 12
    if mapped:
        table.columns[4].max_width = repo_width
    if not below:
        table.columns[-1].max_width = label_room
    folder_cut = False
    shown_labels = [Text(f"  {last}")] if below else []
    for s, row, (label, is_folder) in zip(result["sessions"], rows, labels, strict=True):
        gone = "" if s.get("available", True) else " (file gone)"
        shown = path_tail(label, label_room - len(gone)) if is_folder else label
        folder_cut = folder_cut or (is_folder and shown != label)
        cwd = Text(shown)
        if gone:  # a long title is cut before it, not the mark
            cwd.truncate(label_room - len(gone), overflow="ellipsis")
            cwd.append(gone, style="dim")
        elif below:
            cwd.truncate(label_room, overflow="ellipsis")
        cells = [Text(cell) for cell in row]
        if below:
            table.add_row(*cells)
            shown_labels.append(Text("  ") + cwd)
        else:
            table.add_row(*cells, cwd)
    print_unpadded(table, shown_labels)
    if folder_cut:  # a folder to write a [paths] alias for is copied whole, not from the table
        command = f"teamlore sessions list{' --unmapped' if unmapped else ''} --format json"
        for line in wrapped_lines("", f"A folder cut at its start (…/) is whole in `{command}`."):
            say(styled(line, "dim"))
    if result["more"]:
        listed = len(result["sessions"])
        say(
            styled(
                f"… {counted(result['more'], 'more session')}"
                f" (`--limit {listed + result['more']}` lists them all)",
                "dim",
            )
        )


def sessions_list(
    provider: str | None = Option(
        None, "--provider", "-p", help="Only this provider's sessions.", metavar=PROVIDERS
    ),
    repository: str | None = Option(
        None, "--repository", "-r", help="Only sessions of this git worktree.", metavar="PATH"
    ),
    since: str | None = ListSinceOption,
    until: str | None = ListUntilOption,
    limit: int = Option(
        LIST_PAGE_SESSIONS, "--limit", "-n", help="At most this many sessions, newest first."
    ),
    unmapped: bool = Option(
        False,
        "--unmapped",
        help="The folders of the sessions no registered repository owns, each once with how"
        " many it holds, most first (`--format json` lists the sessions too; `--limit` bounds"
        " both); map them with `teamlore sync --repository PATH` or [paths] aliases in"
        " config.toml.",
    ),
    fmt: OutputFormat = FormatOption,
) -> None:
    """List indexed sessions, newest first (by when each started). --since/--until select the
    sessions active in the window: one that started before --since and went on into it is
    listed."""
    _session_operations()
    run(
        "sessions.list",
        {
            "provider": provider,
            "repository": repository,
            "since": since,
            "until": until,
            "limit": limit,
            "unmapped": unmapped,
        },
        fmt,
        lambda result: _render_list(
            result, unmapped=unmapped, filtered=any((provider, repository, since, until))
        ),
    )


def _render_show(
    result: dict[str, Any], *, whole_tool: bool = False, limit: int = SHOW_PAGE_TURNS
) -> None:
    """`sessions show`'s text view (a text run only: `--format json` never loads it)."""
    from teamlore.cli.session_view import render_show

    render_show(result, whole_tool=whole_tool, limit=limit)


def sessions_show(
    session_key: str = SessionKeyArgument,
    turn: int | None = Option(
        None, "--turn", "-t", help="Only this turn (1-based), its text uncut."
    ),
    tool: int | None = Option(
        None,
        "--tool",
        help="With --turn: only this tool call of the turn (its #number), printed whole.",
    ),
    start: int = Option(1, "--from", help="First turn of the page (1-based)."),
    limit: int = Option(SHOW_PAGE_TURNS, "--limit", "-n", help="Turns per page (1..10000)."),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Show a session's turns, tool uses (with the error of each failed one), exit codes,
    paths written and commits, a page of turns at a time."""
    _session_operations()
    run(
        "sessions.show",
        {"session_key": session_key, "turn": turn, "tool": tool, "start": start, "limit": limit},
        fmt,
        lambda result: _render_show(result, whole_tool=tool is not None, limit=limit),
    )


def _render_exclusion(result: dict[str, Any]) -> None:
    key = result["sessionKey"][:12]
    if result["excluded"]:
        state = "is now" if result["changed"] else "was already"
        say(f"Session {key} {state} kept out of extraction (recall, runner, previews).")
    else:
        state = "is back in" if result["changed"] else "was not kept out of"
        say(f"Session {key} {state} extraction.")


def sessions_exclude(
    session_key: str = SessionKeyArgument,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Keep a session out of extraction: recall, the batch runner and previews skip it."""
    run("sessions.exclude", {"session_key": session_key}, fmt, _render_exclusion)


def sessions_include(
    session_key: str = SessionKeyArgument,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Take an excluded session back into extraction."""
    run("sessions.include", {"session_key": session_key}, fmt, _render_exclusion)


def _render_search(result: dict[str, Any]) -> None:
    refreshed = result.get("refreshed") or {}
    if refreshed.get("turns"):
        say(
            styled(
                f"Indexed {counted(refreshed['turns'], 'new turn')} from"
                f" {counted(refreshed['files'], 'grown file')} first.",
                "dim",
            )
        )
    if refreshed.get("skipped"):
        say_wrapped(
            f"Searched the index as it is ({refreshed['skipped']});"
            " `teamlore sync` brings it up to date.",
            style="dim",
        )
    ranking = result.get("ranking") or {}
    if ranking and not ranking["rankedAll"]:
        say_wrapped(
            f"More than {ranking['window']} turns match: the newest {ranking['window']}"
            " were ranked. Add words or filters to search them all.",
            style="dim",
        )
    say(styled(paths_line(result), "dim"))
    if not result["hits"]:  # under the header, as `memory search` says it
        say("No matching turns. Try other words, or `teamlore sync` to index new sessions.")
    elif _meaning_only(result["hits"]):
        say(styled("No turn holds these words; the nearest by meaning:", "dim"))
    for h in result["hits"]:
        say(
            styled(h["sessionKey"][:12], "bold"),
            f" turn {h['turn']} ({h['provider']}, score {h['score']:.2f}, {matched_by(h)})",
        )
        say(f"  {h['snippet']}")


def _meaning_only(hits: list[dict[str, Any]]) -> bool:
    """Whether no hit holds a word of the query: a meaning is found for any query, even one of
    nonsense words, and its scores alone do not tell a near answer from none."""
    return all(hit.get("matchedBy") == ["vector"] for hit in hits)


def sessions_search(
    query: list[str] = QueryArgument,
    provider: str | None = Option(
        None, "--provider", "-p", help="Only this provider's turns.", metavar=PROVIDERS
    ),
    repository: str | None = Option(
        None, "--repository", "-r", help="Only turns of this worktree's sessions.", metavar="PATH"
    ),
    since: str | None = SinceOption,
    until: str | None = UntilOption,
    limit: int = Option(20, "--limit", "-n", help="Turns to return (1..500)."),
    lexical: bool = LexicalOption,
    no_sync: bool = Option(
        False,
        "--no-sync",
        help="Search the index as it is; by default the grown files of recent sessions are"
        " indexed first.",
    ),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Search past turns: words (BM25 over user, assistant and tool text) fused with meaning
    (embeddings of each turn's prompt and answer); --lexical for words only. Turns appended
    to recent sessions since the last sync are indexed first (docs/sessions.md)."""
    _session_operations()
    run(
        "sessions.search",
        {
            "query": query_text(query),
            "provider": provider,
            "repository": repository,
            "since": since,
            "until": until,
            "limit": limit,
            "lexical": lexical,
            "sync_first": not no_sync,
        },
        fmt,
        _render_search,
    )


# -- memory search ----------------------------------------------------------------------------


def _render_memory_search(result: dict[str, Any]) -> None:
    coverage = result.get("coverage")
    note = "" if coverage == "complete" else styled(f" (coverage {coverage})", "yellow")
    say(f"generation {result.get('generation')}, {paths_line(result)}", note)
    if result.get("stale"):
        say(styled(f"Not synced: {result['stale']}.", "yellow"))
    left_out = say_left_out(result.get("leftOut") or [])
    documents = result.get("documents") or 0
    if not result["results"] and documents:
        more = " (or fix the files above)" if left_out else ""
        say(f"No matching memory among {counted(documents, 'document')}. Try other words{more}.")
    elif not result["results"]:
        say("No reviewed memory yet: entries appear here after `teamlore memory promote`.")
    elif _meaning_only(result["results"]):
        say(styled("No document holds these words; the nearest by meaning:", "dim"))
    for hit in result["results"]:
        # short lines a hit, as `org search` prints them: the text view reads at 80 columns;
        # the path stays whole (copied), the snippet, the document's words, is the terminal's
        say_titled(hit["id"], f"{hit['type']}, score {hit['score']:.2f}, {matched_by(hit)}")
        say(f"  {hit['path']}")
        say(f"  {hit['snippet']}")


def memory_search(
    query: list[str] = QueryArgument,
    limit: int = Option(10, "--limit", "-n", help="Results to return (1..100)."),
    lexical: bool = LexicalOption,
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Search the reviewed team memory by words and by meaning (docs/hybrid-search.md)."""
    # the team-memory operations load with the one command that uses them here
    from teamlore.ops.memory import search  # noqa: F401

    run(
        "memory.search",
        {"query": query_text(query), "limit": limit, "lexical": lexical},
        fmt,
        _render_memory_search,
        cwd=cwd_of(repository),
    )


# the commands a process runs with only this module and the session operations imported; a
# command's --help is not lean (the help lists every command)
LEAN_COMMANDS: dict[tuple[str, ...], Callable[..., None]] = {
    ("sync",): sync,
    ("status",): status,
    ("sessions", "list"): sessions_list,
    ("sessions", "show"): sessions_show,
    ("sessions", "search"): sessions_search,
    ("memory", "search"): memory_search,
}


def lean_command(args: list[str]) -> tuple[str, ...] | None:
    """The lean command `teamlore ARGS` runs, if it is one."""
    return command_path(LEAN_COMMANDS, args)


def lean_invocation(args: list[str]) -> Callable[[], None] | None:
    """`teamlore ARGS` ready to run here, when it is a lean command in the plain form
    `params.parse_argv` reads; None when typer has to parse it."""
    path = lean_command(args)
    return None if path is None else invocation(LEAN_COMMANDS[path], args[len(path) :])
