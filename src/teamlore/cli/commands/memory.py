"""`teamlore memory …`: the team memory commands."""

from __future__ import annotations

import os
import re
import sys
from typing import Any

import orjson

from teamlore.cli.app import memory_app
from teamlore.cli.commands import sessions as session_commands
from teamlore.cli.literal import literal
from teamlore.cli.output import (
    FormatOption,
    OutputFormat,
    RepositoryOption,
    counted,
    cwd_of,
    fail,
    hanging,
    run,
    say,
    say_command,
    say_file,
    say_how_many_more,
    say_ignored_by_git,
    say_left_out,
    say_wrapped,
    stdout,
    styled,
    wrapped_lines,
)
from teamlore.cli.params import Argument, Option
from teamlore.core import errors
from teamlore.core.timeutil import parse_instant


def _render_init(result: dict[str, Any]) -> None:
    if result["created"]:
        stdout.print(f"Created the team memory skeleton in {result['worktree']}:")
        for path in result["created"]:
            stdout.print(f"  {path}")
    else:
        stdout.print(f"{result['worktree']} already has a team memory tree; nothing to do.")
    say_ignored_by_git(result["ignoredByGit"])


@memory_app.command("init", short_help="Create .threadshare/memory in this git worktree.")
def init(repository: str | None = RepositoryOption, fmt: OutputFormat = FormatOption) -> None:
    """Create .threadshare/memory in this git worktree (idempotent)."""
    run("memory.init", {}, fmt, _render_init, cwd=cwd_of(repository))


def _render_status(result: dict[str, Any]) -> None:
    from teamlore.ops.memory.review import short_candidate_id

    projection = result.get("projection") or {}
    stdout.print(f"Memory tree  {result['memoryRoot']} ({result['tree']})")
    if result.get("treeProblem"):
        _say_flagged("unsafe", result["treeProblem"])
    if projection:
        stdout.print(
            f"Projection   generation {projection['generation']}, coverage {projection['coverage']}"
        )
        diagnostics = projection.get("diagnostics", [])
        for d in diagnostics[:10]:
            _say_flagged(d["code"], f"{d['file']}:{d.get('line') or ''} {d['why']}")
        say_how_many_more(10, len(diagnostics))
    if result.get("stale"):
        say("  ", styled("not synced", "yellow"), f" {result['stale']}")
    entries = result["entries"]
    stdout.print(f"Entries      {entries['approved']} approved, {entries['deprecated']} deprecated")
    candidates = ", ".join(f"{n} {state}" for state, n in result["candidates"].items())
    stdout.print(f"Candidates   {candidates}")
    _render_adjudication(result.get("adjudication"))
    plans = result["plansToPromote"]
    if plans:
        waiting = counted(len(plans), "plan")
        order = " (newest first)" if len(plans) > 1 else ""
        stdout.print(f"Promotion    {waiting} prepared, not yet promoted{order}:")
        for plan_id in plans[:5]:
            stdout.print(f"  teamlore memory promote --plan {plan_id}")
        say_how_many_more(5, len(plans))
    _render_voided_plans(result.get("plansVoided") or [])
    consolidation = result["consolidation"]
    due = "due" if consolidation["due"] else f"due at {consolidation['dueAt']}"
    baseline = short_candidate_id(consolidation["baselineRunId"] or "") or (
        f"consolidated.json ({counted(consolidation['committedEntries'], 'entry', 'entries')})"
        if consolidation.get("committedEntries") is not None
        else "none yet"
    )
    line = (
        f"baseline {baseline}, "
        f"{counted(consolidation['newSinceBaseline'], 'approved entry', 'approved entries')}"
        f" new since"
        + (
            f", {counted(consolidation['leftSinceBaseline'], 'entry', 'entries')} no longer"
            " approved"
            if consolidation.get("leftSinceBaseline")
            else ""
        )
        + f" ({due})"
        + (
            f", {short_candidate_id(consolidation['pendingRunId'])} awaiting review"
            if consolidation["pendingRunId"]
            else ""
        )
    )
    for piece in hanging("Consolidation ", line, len("Consolidation ")):
        say(piece)
    lint = result.get("lint") or {}
    if lint:
        stdout.print(
            f"Lint         {lint['blocking']} blocking, {counted(lint['warnings'], 'warning')} "
            f"in {counted(lint['files'], 'file')}"
        )
        _say_lint_rules(lint.get("rules") or {})
    say_ignored_by_git(result["ignoredByGit"])
    _render_recovery(result.get("promotionRecovery") or {})


def _at_width() -> bool:
    """Whether lint's and status's lines of teamlore's own words are wrapped at the width: on a
    terminal, or where COLUMNS names one; a pipe or a CI log keeps one finding a line, for grep
    and for editors that jump to `path:line`."""
    return stdout.is_terminal or "COLUMNS" in os.environ


def _lines(lead: str, text: str, indent: int = 2, *, wrap: bool | None = None) -> list[str]:
    """`lead` then `text`, wrapped at words when `wrap` (by default `_at_width`; commands
    whole), else one line."""
    wrap = _at_width() if wrap is None else wrap
    return wrapped_lines(lead, text, indent) if wrap else [f"{lead}{text}"]


def _say_flagged(flag: str, text: str) -> None:
    """`  flag text` with the flag in yellow, the text wrapped at words under it (commands
    whole)."""
    first, *rest = _lines(f"  {flag} ", text, indent=4)
    say("  ", styled(flag, "yellow"), first.removeprefix(f"  {flag}"))
    for line in rest:
        say(line)


def _say_lint_rules(rules: dict[str, int]) -> None:
    """Under the lint counts: the rule of each finding and where to read the findings (the
    counts alone do not say what is wrong)."""
    if not rules:
        return
    for rule, n in rules.items():
        say("  ", styled(rule, "yellow"), f" ({n})" if n > 1 else "")
    it = "it" if sum(rules.values()) == 1 else "each"
    say(f"  next: `teamlore memory lint` shows {it} with its file, line and what to do")


def _render_adjudication(waiting: dict[str, Any] | None) -> None:
    """Drafts that wait for their adjudication, and the command that runs it (or plans it)."""
    if not waiting:
        return
    drafts = counted(waiting["drafts"], "draft") + (
        " awaits" if waiting["drafts"] == 1 else " await"
    )
    plans = waiting["plans"]
    if not waiting["unplannedDrafts"]:
        which = "its plan" if len(plans) == 1 else f"its {len(plans)} plans, one at a time"
        stdout.print(f"Adjudication {drafts} adjudication; approve {which}:")
        for digest in plans:
            stdout.print(f"  teamlore memory extract --approve-plan {digest}", soft_wrap=True)
        return
    unplanned = waiting["unplannedDrafts"]
    staged = waiting.get("stagedDraftIds") or []
    if len(staged) == unplanned:  # an agent staged them (`memory stage`): no runner needed
        _render_staged_again(drafts, staged, plans)
        return
    without = "no plan" if unplanned == waiting["drafts"] else f"no plan for {unplanned}"
    stdout.print(f"Adjudication {drafts} adjudication, {without} yet; plan it with:")
    stdout.print("  teamlore memory extract --runner … --since … --until …")
    for digest in plans:
        stdout.print(f"  teamlore memory extract --approve-plan {digest}", soft_wrap=True)


def _render_staged_again(drafts: str, staged: list[str], plans: list[str]) -> None:
    """Drafts an agent staged whose adjudication task went stale: the agent stages the same
    draft batch again (ADJUDICATION_STALE says so), or a person discards them."""
    from teamlore.core.remedies import NOT_ADJUDICATED, discard_command
    from teamlore.ops.memory.review import short_candidate_id

    them = "it" if len(staged) == 1 else "them"
    say_wrapped(
        f"Adjudication {drafts} adjudication, staged by `memory stage`: stage the same draft "
        f"batch again (it answers with the adjudication task to decide), or discard {them}:"
    )
    stdout.print("  teamlore memory stage --request FILE")
    shown = short_candidate_id(staged[0]) if len(staged) == 1 else "ID"
    say_command(discard_command(shown, NOT_ADJUDICATED), indent=2)
    for digest in plans:
        stdout.print(f"  teamlore memory extract --approve-plan {digest}", soft_wrap=True)


def _render_voided_plans(voided: list[dict[str, Any]]) -> None:
    """Plans prepared and not promoted that promote would refuse now, each with why."""
    from teamlore.ops.memory.review import short_candidate_id

    if not voided:
        return
    waiting = counted(len(voided), "plan")
    # what makes each again (`next`: a consolidation is synthesized again, entries reviewed)
    todo = {short_candidate_id(plan.get("next") or "") for plan in voided}
    said = f": {todo.pop()}" if len(todo) == 1 else ""
    _say_commands_fitting(f"Promotion    {waiting} prepared can no longer be promoted", said)
    for plan in voided[:5]:
        why = f"{short_candidate_id(plan['why'])} ({plan['voidCode']})"
        if not said:
            why += f"; {short_candidate_id(plan['next'])}"
        _say_commands_fitting(f"  {plan['planId']}: ", why, indent=4)
    say_how_many_more(5, len(voided))


_IN_PARENTHESES = re.compile(r" ?\(`(teamlore [^`]*)`\)")


def _say_commands_fitting(lead: str, text: str, indent: int = 2) -> None:
    """`_lines`, the lead in yellow when it is a heading; a `(command)` too wide for the line
    (a discard with its --reason) is taken out of the sentence and said under it, broken
    before a flag as `say_command` breaks it, so every line fits the width."""
    from rich.cells import cell_len

    lines = _lines(lead, text, indent)
    commands = _IN_PARENTHESES.findall(text)
    if commands and _at_width() and any(cell_len(line) > stdout.width for line in lines):
        lines = _lines(lead, f"{_IN_PARENTHESES.sub('', text)}:", indent)
    else:
        commands = []
    for line in lines:
        say(styled(line, "yellow") if line.startswith("Promotion") else line)
    for command in commands:
        say_command(command, indent=indent + 2)


def _render_recovery(recovery: dict[str, Any]) -> None:
    """A promotion a kill interrupted that status finished (or could not): what it wrote and
    the step after, as `memory promote` renders it; each head line fits 80 columns with the
    plan's id whole."""
    from teamlore.cli.promoted import render_promoted

    for resumed in recovery.get("resumed") or []:
        if resumed["status"] == "applied":
            say(f"Promotion    {resumed['planId']} interrupted; finished now:")
            # the memory files git ignores are listed above, with the tree's
            render_promoted(resumed, ignored=False)
        else:
            error = resumed.get("error") or {}
            say(styled(f"Promotion    {resumed['planId']} could not be finished:", "yellow"))
            for line in _lines("  ", f"{error.get('code')}: {error.get('message')}", indent=4):
                say(line)
    if recovery.get("next"):
        say(styled("Promotion    interrupted: ", "yellow"), str(recovery["next"]))


@memory_app.command("status", short_help="Show coverage, counts and lint of the team memory.")
def status(repository: str | None = RepositoryOption, fmt: OutputFormat = FormatOption) -> None:
    """Show the team memory's projection generation, coverage, counts and lint summary."""
    run(
        "memory.status",
        {},
        fmt,
        _render_status,
        cwd=cwd_of(repository),
        progress_label="Linting memory",
    )


# `memory search` runs without typer (a lean command, cli/commands/sessions.py)
memory_app.command("search", short_help="Search the reviewed team memory by words and by meaning.")(
    session_commands.memory_search
)


def _render_lint(result: dict[str, Any]) -> None:
    findings = result.get("findings", [])
    # one finding a line, `path:line block|warn rule message`: editors jump to it, grep finds
    # it, and the severity is in words as well as in colour (a pipe or a log has no colour);
    # on a terminal the message, teamlore's own words, goes on under it at the terminal's
    # width, commands whole
    at_terminal = stdout.is_terminal
    for f in findings:
        where = f"{f['file']}:{f['line']}" if f.get("line") else f["file"]
        style = "red" if f["severity"] == "block" else "yellow"
        lead = f"{where} {f['severity']} {f['rule']} "
        lines = _lines(lead, f["message"], wrap=at_terminal)
        if at_terminal and len(lines[0]) > stdout.width >= len(lead):  # a long path
            lines = [lead.rstrip(), *wrapped_lines("  ", f["message"])]
        for line in lines:
            say(styled(line, style))
    blocked = sum(1 for f in findings if f["severity"] == "block")
    say(f"{counted(len(findings), 'finding')}, {blocked} blocking.")


@memory_app.command("lint", short_help="Lint memory files for secrets, local paths and format.")
def lint(
    paths: list[str] = Argument(
        None,
        help="Files or folders (their .md files) to lint (default: the whole tree).",
        metavar="PATH",
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Lint memory files for secrets, session ids, local paths, capacity and format."""
    result = run(
        "memory.lint",
        {"paths": paths or []},
        fmt,
        _render_lint,
        cwd=cwd_of(repository),
        progress_label="Linting memory",
    )
    if any(f["severity"] == "block" for f in result.get("findings", [])):
        raise SystemExit(1)


# far above any request the contracts allow (8 drafts of at most 64 KiB each, a Skill body of
# 64 KiB): a larger file is not a request, and /dev/zero must not fill the memory
MAX_REQUEST_BYTES = 16 << 20
# a request nests a few levels; past ~255 pydantic and orjson cannot write it back (INTERNAL),
# so deeper is refused, as the MCP server refuses such a frame (`mcp.server.MAX_FRAME_DEPTH`)
MAX_REQUEST_DEPTH = 200
TOO_DEEP = f"nests too deeply (keep arrays and objects under {MAX_REQUEST_DEPTH} levels)"


def read_request(source: str, fmt: OutputFormat) -> dict[str, Any]:
    """A JSON document from a file or `-` (stdin); unreadable, too large or invalid →
    INVALID_ARGUMENT."""
    try:
        if source == "-":
            data = sys.stdin.buffer.read(MAX_REQUEST_BYTES + 1)
            if not data:  # `< /dev/null`, or stdin closed (`<&-`: cli.closed_stdin_as_empty)
                fail(
                    errors.TeamloreError(
                        errors.INVALID_ARGUMENT,
                        "-: standard input is empty; pipe the request in, or give the file that"
                        " holds it instead of -",
                    ),
                    fmt,
                )
        else:
            with open(source, "rb") as handle:
                data = handle.read(MAX_REQUEST_BYTES + 1)
        if len(data) > MAX_REQUEST_BYTES:
            fail(
                errors.TeamloreError(
                    errors.INVALID_ARGUMENT,
                    f"{source}: larger than {MAX_REQUEST_BYTES >> 20} MiB; not a request",
                ),
                fmt,
            )
        document = orjson.loads(data)
    except OSError as exc:
        fail(errors.TeamloreError(errors.INVALID_ARGUMENT, f"{source}: {exc.strerror}"), fmt)
    except orjson.JSONDecodeError as exc:
        problem = TOO_DEEP if "depth limit" in str(exc) else f"not JSON ({exc})"  # orjson: 1,024
        fail(errors.TeamloreError(errors.INVALID_ARGUMENT, f"{source}: {problem}"), fmt)
    if not isinstance(document, dict):
        fail(errors.TeamloreError(errors.INVALID_ARGUMENT, f"{source}: not a JSON object"), fmt)
    if _nests_deeper_than(document, MAX_REQUEST_DEPTH):
        fail(errors.TeamloreError(errors.INVALID_ARGUMENT, f"{source}: {TOO_DEEP}"), fmt)
    return document


def _nests_deeper_than(document: Any, limit: int) -> bool:
    """Whether arrays and objects in `document` nest more than `limit` levels (no recursion)."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
    return False


def _instant(value: str | None, fmt: OutputFormat) -> str | None:
    """The CLI accepts any ISO-8601 date or time and sends the canonical UTC form."""
    if value is None:
        return None
    try:
        return parse_instant(value)
    except ValueError as exc:
        fail(errors.TeamloreError(errors.INVALID_ARGUMENT, str(exc)), fmt)


def _render_recall(result: dict[str, Any]) -> None:
    """The tasks under the session each comes from, named as `sessions list` names it (its key's
    first 12 hex and title, cut to the width); then what was left out, coverage and note."""
    tasks = result.get("sources") or []
    stdout.print(counted(len(tasks), "extraction task"))
    session_of = {
        task_id: session
        for session in result.get("selection", {}).get("sessions", [])
        for task_id in session.get("taskIds", [])
    }
    shown_session = None
    for source in tasks:
        task = source.get("task", source)
        session = session_of.get(task["taskId"])
        if session is not None and session is not shown_session:
            _say_session(session)
            shown_session = session
        chunk = task.get("chunk", {})
        turns = chunk.get("turnRange", {})
        say(
            "    ",
            styled(task["taskId"][:24], "bold"),
            f" turns {turns.get('start')}–{turns.get('end')},"
            f" {counted(len(task.get('evidenceCatalog', [])), 'evidence item')}",
        )
    contexts = (result.get("skillContext") or {}, result.get("memoryContext") or {})
    say_left_out([d for c in contexts for d in c.get("leftOut", [])], "recalled", "recall")
    for key in ("coverage", "note", "next"):
        if result.get(key):
            _render_field(key, result[key])
    if tasks:  # with none there is nothing to hand an agent
        stdout.print("Use --format json to get the tasks for an agent.")


def _say_session(session: dict[str, Any]) -> None:
    """`  session 0f3a9c2b7d1e  Fix the flaky export test`, the title cut to the width."""
    from rich.text import Text

    line = Text(f"  session {session['sessionKey'][:12]}")
    if session.get("title"):
        line.append(f"  {literal(session['title'])}")
    line.truncate(stdout.width, overflow="ellipsis")
    say(line)


# a session's key as `sessions list` shows it and `sessions show` takes it: its first 12 hex
_SESSION_KEY = re.compile(r"\b([0-9a-f]{12})[0-9a-f]{52}\b")

# a result field's name as people say it (`notClaimable` → `not claimable`) where splitting
# its camelCase does not read well
_FIELD_WORDS = {"alreadyExtractedTurns": "turns already extracted"}


def _in_words(name: str) -> str:
    """`notClaimable` → `not claimable`: a JSON field's name in the text view."""
    return _FIELD_WORDS.get(name) or re.sub(r"(?<=[a-z0-9])([A-Z])", r" \1", name).lower()


def _render_field(key: str, value: Any) -> None:
    """`key: value` for people: a mapping one `  name: value` line per item (names in words), a
    list of tasks (coverage's deferred and not claimable ones) its count then one line per task
    as the tasks above are shown, other lists and nested values as JSON (never a Python repr);
    session keys in text as `sessions list` shows them (12 hex)."""
    if isinstance(value, str):  # a sentence of teamlore's own, wrapped under its key
        say_wrapped(_SESSION_KEY.sub(r"\1", value), len(key) + 2, lead=f"{key}: ")
        return
    if not isinstance(value, dict):
        say(f"{key}: {_json_text(value)}")
        return
    say(f"{key}:")
    for field, item in value.items():
        name = _in_words(field)
        if isinstance(item, list) and all(_is_task_summary(task) for task in item):
            say(f"  {name}: {len(item)}")
            for task in item:
                turns = task["turnRange"]
                status = f" ({task['status']})" if task.get("status") else ""
                say(f"    {task['taskId'][:24]} turns {turns['start']}–{turns['end']}{status}")
            continue
        if isinstance(item, str):
            say_wrapped(item, len(name) + 4, lead=f"  {name}: ")
        else:
            say(f"  {name}: {_json_text(item)}")


def _is_task_summary(value: Any) -> bool:
    return (
        isinstance(value, dict) and "taskId" in value and isinstance(value.get("turnRange"), dict)
    )


def _json_text(value: Any) -> str:
    import orjson

    return orjson.dumps(value).decode()


# The MemoryExtractionRequest@v1 selection flags, shared by `memory recall` and `memory extract`.
# the window is required unless --request gives it (WINDOW_INVALID otherwise, exit 2)
SinceOption = Option(
    None,
    "--since",
    help="Window start (ISO date/time, UTC); required, as --until is, unless --request.",
    metavar="DATE",
)
UntilOption = Option(
    None, "--until", help="Window end, exclusive; required unless --request.", metavar="DATE"
)
QueryOption = Option("", "--query", "-q", help="Only turns matching these terms.")
ProvidersOption = Option([], "--providers", help="claude, codex, pi.", metavar="claude|codex|pi")
SessionKeysOption = Option([], "--session-keys", help="Only these sessions.")
ToolCapabilityKeysOption = Option(
    [], "--tool-capability-keys", help="Only turns that used these tools (family or name)."
)
SkillCapabilityKeysOption = Option(
    [], "--skill-capability-keys", help="Only turns that invoked these Skills (by name)."
)
ResultEvidenceOption = Option(
    [], "--result-evidence", help="provider-completed, abandoned, unknown."
)
CapabilityTerminalStatesOption = Option(
    [],
    "--capability-terminal-states",
    help="With tool or Skill keys: completed, failed, pending, unknown (cancelled matches "
    "nothing).",
)
ExtractionRequestOption = Option(
    None,
    "--request",
    help="A MemoryExtractionRequest@v1 JSON file, or - for stdin.",
    metavar="FILE",
)


def selection_filters(
    providers: list[str],
    session_keys: list[str],
    tool_capability_keys: list[str],
    skill_capability_keys: list[str],
    result_evidence: list[str],
    capability_terminal_states: list[str],
) -> dict[str, list[str]]:
    """The MemoryExtractionRequest@v1 filters of `memory recall` / `memory extract` flags."""
    return {
        "providers": providers,
        "sessionKeys": session_keys,
        "toolCapabilityKeys": tool_capability_keys,
        "skillCapabilityKeys": skill_capability_keys,
        "resultEvidence": result_evidence,
        "capabilityTerminalStates": capability_terminal_states,
    }


@memory_app.command("recall", short_help="Turn past sessions into extraction tasks for an agent.")
def recall(
    since: str | None = SinceOption,
    until: str | None = UntilOption,
    query: str = QueryOption,
    providers: list[str] = ProvidersOption,
    session_keys: list[str] = SessionKeysOption,
    tool_capability_keys: list[str] = ToolCapabilityKeysOption,
    skill_capability_keys: list[str] = SkillCapabilityKeysOption,
    result_evidence: list[str] = ResultEvidenceOption,
    capability_terminal_states: list[str] = CapabilityTerminalStatesOption,
    request: str | None = ExtractionRequestOption,
    limit: int = Option(8, "--limit", "-n", help="Tasks to return (1..8)."),
    chunk_bytes: int = Option(
        40_960,
        "--chunk-bytes",
        help="Transcript bytes per task (8192..40960): smaller for an agent that cuts long "
        "tool results.",
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Turn past sessions of this worktree into bounded, evidence-bound extraction tasks."""
    payload: dict[str, Any] = {
        "since": _instant(since, fmt),
        "until": _instant(until, fmt),
        "query": query or None,
        **selection_filters(
            providers,
            session_keys,
            tool_capability_keys,
            skill_capability_keys,
            result_evidence,
            capability_terminal_states,
        ),
        "limit": limit,
        "chunkBytes": chunk_bytes,
    }
    if request is not None:
        payload = {"request": read_request(request, fmt), "limit": limit, "chunkBytes": chunk_bytes}
    run(
        "memory.recall",
        {k: v for k, v in payload.items() if v not in (None, [])},
        fmt,
        _render_recall,
        cwd=cwd_of(repository),
    )


def _render_stage(result: dict[str, Any]) -> None:
    """Drafts: each with the known memory its dedup recall found closest (what the adjudication
    compares it with), its summary whole under it (at most 240 characters, the document's
    words: the terminal wraps them); another draft of the batch recalled is marked as one (it
    can be skipped to, not updated or merged). Adjudication: what became of each draft. Ids are
    shown short, as review shows them (`--candidate` takes them back; JSON keeps them whole)."""
    from teamlore.ops.memory.review import short_candidate_id

    say(f"{result.get('status')}: task {short_candidate_id(str(result.get('taskId')))}")
    task = result.get("adjudicationTask") or {}
    recalled = {s["draftRef"]: s["ordered"] for s in task.get("recallSets", [])}
    summaries = {(p["sourceKind"], p["id"]): p["summary"] for p in task.get("pool", [])}
    algorithm = task.get("binding", {}).get("recallAlgorithmVersion")
    batch = {d["candidateId"] for d in task.get("drafts", [])}
    for candidate in result.get("candidates", []):
        for line in wrapped_lines("  ", _stage_line(candidate), indent=4):
            say(line)
        hits = recalled.get(candidate["candidateId"])
        if hits is None:
            continue
        if not hits:
            say("    nothing similar in the team memory")
            continue
        say(f"    closest known memory ({algorithm}):")
        for hit in hits:
            summary = summaries.get((hit["sourceKind"], hit["id"]), "")
            drafted = hit["sourceKind"] == "candidate" and hit["id"] in batch
            mark = " (a draft of this batch: skip only)" if drafted else ""
            say(f"      {hit['rank']}. {hit['sourceKind']} {short_candidate_id(hit['id'])}{mark}")
            if summary:
                say(f"         {summary}")
    if result.get("next"):
        for line in wrapped_lines("next: ", result["next"], indent=len("next: ")):
            say(line)


def _stage_line(candidate: dict[str, Any]) -> str:
    """One staged candidate: a draft, an adjudicated draft, or (other candidate kinds) its
    scalar fields."""
    from teamlore.ops.memory.review import short_candidate_id, short_target_id

    ident = short_candidate_id(str(candidate.get("candidateId")))
    if "candidateStatus" in candidate and "action" in candidate:
        targets = ", ".join(map(short_target_id, candidate.get("targetIds") or []))
        action = f"{candidate['action']} {targets}".strip()
        return f"{ident}: {action} -> {candidate['candidateStatus']}"
    if "provenanceStrength" in candidate and "status" in candidate:
        kind = candidate.get("kind", "draft")  # entry drafts carry no kind; a Skill does
        provenance = candidate["provenanceStrength"]
        target = f" for {candidate['targetPath']}" if candidate.get("targetPath") else ""
        return f"{kind} {ident}{target} ({candidate['status']}, provenance {provenance})"
    return ", ".join(
        f"{key} {ident if key == 'candidateId' else value}"
        for key, value in candidate.items()
        if isinstance(value, str | int | float) and not isinstance(value, bool)
    )


@memory_app.command("stage", short_help="Stage an agent's drafts, then its adjudication.")
def stage(
    request: str = Option(
        ...,
        "--request",
        help="CandidateDraftBatch@v1, AdjudicationResult@v1, SkillCandidate@v1 (shaped as "
        "recall's guidance.skillShape) or ConsolidationPatch@v1 JSON, or -.",
        metavar="FILE",
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Stage an agent's candidate drafts, then its adjudication (quarantines kept candidates);
    or a Skill (SkillCandidate@v1), quarantined at once; or a ConsolidationPatch@v1."""
    run("memory.stage", read_request(request, fmt), fmt, _render_stage, cwd=cwd_of(repository))


def _render_assemble(result: dict[str, Any]) -> None:
    other = result["linkedProvider"]
    if result["targetLinksTo"]:
        say_wrapped(
            f"{result['target']} links to {result['targetLinksTo']}: not changed. "
            f"`teamlore memory assemble -p {other}` writes the block there, and "
            "the agent reads it through the link."
        )
    else:
        verb = "Updated" if result["changed"] else "Unchanged:"
        stdout.print(f"{verb} {result['target']} (managed team memory block)")
        if result["repairedMarkerLines"]:
            numbers = result["repairedMarkerLines"]
            were = "was on line" if len(numbers) == 1 else "were on lines"
            lines = ", ".join(str(n) for n in numbers)
            stdout.print(f"Repaired the damaged markers ({were} {lines}).")
        stdout.print(result["block"])
    for skill in result["skills"]:
        for copy in (skill, *skill.get("files", [])):
            state = "written" if copy["changed"] else "unchanged"
            say_file(copy["path"], f" ({state})")
    for path in result.get("removed", []):
        say_file(path, " (removed: its Skill file left the memory tree)")
    if result.get("orphans"):
        say_wrapped(
            "Not removed, edited since teamlore wrote them although their Skill file left the "
            f"memory tree: {', '.join(result['orphans'])}. Agents still load them: remove them "
            "(`git rm`, or `rm` when not committed) unless you mean to keep them."
        )
    if result["skillsLinkTo"]:
        say_wrapped(
            f"{result['skillsFolder']} links to {result['skillsLinkTo']}: "
            f"`teamlore memory assemble -p {other}` projects the team's Skills there."
        )
    elif not result["skills"]:
        stdout.print("No team Skills to project.")
    entries = result.get("approvedEntries", 0)
    them, they_are = ("it", "it is") if entries == 1 else ("them", "they are")
    say_wrapped(
        f"{counted(entries, 'approved entry', 'approved entries')}: agents search {them} with "
        f"threadshare_memory_search (the block says so); {they_are} not copied into the block."
    )
    if not result.get("hasDoctrine") or not result.get("scenes"):
        say_wrapped(
            "Doctrine and scenes are made by consolidation: `teamlore memory synthesize` gives "
            "your agent the task, it stages a ConsolidationPatch@v1, you review and promote it "
            "(`teamlore memory review --kind consolidation`; docs/memory.md)."
        )
    say_wrapped(
        result.get("git")
        or "Nothing was staged or committed; see the changes with `git status` and `git diff`."
    )
    say_ignored_by_git(result["ignoredByGit"])


@memory_app.command("assemble", short_help="Write team memory into CLAUDE.md/AGENTS.md and skills.")
def assemble(
    provider: str = Option(
        ...,
        "--provider",
        "-p",
        help="claude: CLAUDE.md + .claude/skills/; codex: AGENTS.md + .agents/skills/.",
        metavar="claude|codex",
    ),
    repair: bool = Option(
        False,
        "--repair",
        help="The BEGIN/END markers were damaged by hand: replace each old block, drop stray "
        "markers, keep every other byte.",
    ),
    check: bool = Option(
        False,
        "--check",
        help="Write nothing; exit 1 (ASSEMBLY_STALE) naming each file that is not what "
        "assemble would write now, or that holds an unresolved git merge. For CI.",
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Write reviewed team memory into CLAUDE.md/AGENTS.md and project the team's Skills."""
    payload = {"provider": provider, "repair": repair, "check": check}
    render = _render_check if check else _render_assemble
    run("memory.assemble", payload, fmt, render, cwd=cwd_of(repository))


def _render_check(result: dict[str, Any]) -> None:
    checked = result["checked"]
    if not checked:
        stdout.print("Nothing to check: the other provider's assemble writes the linked files.")
        return
    stdout.print(
        f"Up to date: what `teamlore memory assemble -p {result['provider']}` writes now "
        f"({counted(len(checked), 'file')}):"
    )
    for path in checked:
        stdout.print(f"  {path}")
