"""`teamlore memory review | prepare | discard`: thin adapters over the review operations."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from teamlore.cli.app import app, memory_app
from teamlore.cli.commands.memory import read_request
from teamlore.cli.literal import literal
from teamlore.cli.output import (
    FormatOption,
    OutputFormat,
    RepositoryOption,
    ask_line,
    counted,
    cwd_of,
    fail,
    run,
    say,
    say_command,
    say_file,
    say_wrapped,
    stderr,
    stdout,
    styled,
    wrapped_lines,
)
from teamlore.cli.params import Option
from teamlore.core import errors

if TYPE_CHECKING:  # rich only renders text: a `--format json` run never imports it
    from rich.text import Text

# A diff longer than this many lines is cut in the text view, saying how many lines follow and
# how to see them whole (`--full-diff`, `--format json`, the page).
DIFF_LINES = 60

_DIFF_STYLES = {"+": "green", "-": "red", "@": "cyan"}


def _block(text: Text | str, indent: int) -> None:
    """`text` wrapped at the terminal's width under an indent: every byte on screen, none cut
    (docs/extraction.md, "What a reviewer sees")."""
    from rich.text import Text

    body = text if isinstance(text, Text) else Text(literal(text))
    width = max(stdout.width - indent, 20)
    for line in body.split("\n", allow_blank=True):
        pieces = line.wrap(stdout, width)
        for piece in pieces[:-1]:
            piece.rstrip()  # the space it broke at: a copy or a pipe gets no padding
        for piece in pieces:
            stdout.print(Text(" " * indent).append_text(piece), soft_wrap=True)


def _render_statement(statement: dict[str, Any]) -> None:
    marker = {
        "not-needed (typed fact)": styled("typed fact", "green"),
        "confirmed": styled("confirmed", "green"),
    }.get(statement["confirmation"], styled("needs your confirmation", "yellow"))
    say("  ", styled(statement["statementId"], "bold"), " ", marker)
    # as promotion writes it: what a person confirms is what reaches git
    _block(statement.get("writtenText", statement["text"]), 4)  # an operation spans lines
    if statement.get("writtenNotice"):
        _block(styled(statement["writtenNotice"], "yellow"), 4)
    _block(
        f"provenance {statement['provenanceStrength']}, claim support "
        f"{statement['claimSupport']}, limitations {', '.join(statement['limitations']) or '-'}",
        4,
    )
    for evidence in statement["evidence"]:
        _block(f"· {evidence['display']}", 4)
        if evidence.get("excerpt"):
            _block(styled(evidence["excerpt"], "dim"), 6)
        if evidence.get("open"):
            _block(f"open it: {evidence['open']}", 6)


# what `literal` prints for one character: an escape, or the character
_SHOWN_CHARACTER = re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})|.", re.DOTALL)


def _folded(text: str, first: int, rest: int) -> list[str]:
    """`text` as printed (`literal`) in pieces of at most `first`, then `rest` cells; an escape
    (`\\x07`) is never cut in two."""
    from rich.cells import cell_len

    pieces, piece, used, limit = [], "", 0, first
    for shown in _SHOWN_CHARACTER.findall(literal(text)):
        cells = cell_len(shown)
        if used + cells > limit and piece:
            pieces.append(piece)
            piece, used, limit = "", 0, rest
        piece += shown
        used += cells
    return [*pieces, piece]


def _diff_text(lines: list[str], width: int) -> Text:
    """Diff lines folded at `width` cells (a long path or JSON line goes on in the next line
    rather than off the screen). A folded line goes on after its marker and `↳`, so its rest
    never reads as a line of its own (an added `+++ b/…` or `@@`)."""
    from rich.text import Text

    diff = Text()
    width = max(width, 20)
    for line in lines:
        marker, style = line[:1], _DIFF_STYLES.get(line[:1], "")
        first, *rest = _folded(line[1:], width - 1, width - 2)
        diff.append(marker + first + "\n", style=style)
        for piece in rest:
            diff.append(f"{marker}↳{piece}\n", style=style)
    diff.rstrip()
    return diff


def diff_lines(diff: str) -> list[str]:
    """A unified diff's lines as git counts them: only a newline ends one (`str.splitlines`
    also cuts at U+2028, a form feed, …, and showed a line the file does not have)."""
    return diff.removesuffix("\n").split("\n") if diff else []


def _render_target(path: str, role: str, indent: int = 2) -> None:
    """`path (role)` folded at the terminal's width as a diff line is: a path has no spaces to
    wrap at, so a folded one goes on after `↳` and never reads as a file name of its own."""
    from rich.text import Text

    width = max(stdout.width - indent, 20)
    bold = len(literal(path))
    for number, piece in enumerate(_folded(f"{path} ({role})", width, width - 1)):
        line = Text(" " * indent + ("↳" if number else ""))
        line.append(piece[:bold], style="bold").append(piece[bold:])
        bold = max(bold - len(piece), 0)
        stdout.print(line, soft_wrap=True)


def _render_diff(file: dict[str, Any], full: bool) -> None:
    _render_target(file["targetPath"], file["role"])
    from rich.text import Text

    for warning in file.get("warnings", []):
        found = f" {warning['rule']}: {warning['message']}"
        _block(Text.assemble(styled("warn", "yellow"), literal(found)), 2)
    lines = diff_lines(file["diff"])
    shown = lines if full else lines[:DIFF_LINES]
    _block(_diff_text(shown, stdout.width - 2), 2)
    if len(shown) < len(lines):
        _block(
            styled(
                f"… {len(lines) - len(shown)} more lines of this diff; see them all with "
                "`teamlore memory review --full-diff` (or `--format json`, or `teamlore ui`)",
                "yellow",
            ),
            2,
        )


def short_id(candidate_id: str) -> str:
    """A candidate's id as people read and type it (`extract-d028d5124c49-c1`)."""
    from teamlore.ops.memory.review import short_candidate_id

    return short_candidate_id(candidate_id)


def _render_candidate(item: dict[str, Any]) -> None:
    from rich.text import Text

    from teamlore.ops.memory.review import what_it_changes

    change = what_it_changes(item)  # said on the first line: an update reads as one at once
    say(
        styled(f"Candidate {short_id(item['candidateId'])}", "bold"),
        f" (revision {item['revision']})",
        *((" · ", styled(change, "yellow")) if change else ()),
    )
    _block(Text(literal(item.get("writtenContent", item["content"])), style="bold"), 2)
    if item.get("writtenNotice"):
        _block(styled(item["writtenNotice"], "yellow"), 2)


def _render_replaced(item: dict[str, Any]) -> None:
    """What promoting it does to memory that exists: the entries it updates or merges, the
    candidates it merged (`ops.memory.review.what_it_replaces`)."""
    from rich.text import Text

    from teamlore.ops.memory.review import what_it_replaces

    for replaced in what_it_replaces(item):
        _block(styled(replaced["says"], "yellow"), 2)
        if replaced["content"]:
            _block(Text(literal(replaced["content"]), style="dim"), 4)


def _review_renderer(
    full_diff: bool, *, first: bool = True, more: str | None = None, head: bool = False
) -> Any:
    """The text view of one page of the review: `first` (the first page says when nothing
    awaits review), `more` (the command for the next page, said when there is one; None: the
    caller shows the next page itself), `head` (the whole queue follows: say first how many
    candidates it holds, when more than one)."""

    def render(result: dict[str, Any]) -> None:
        total = (result.get("page") or {}).get("total") or 0
        if head and total > 1:
            say_wrapped(
                f"{counted(total, 'candidate')} awaiting review, every one shown below "
                "(`--limit N` shows a page at a time)."
            )
            stdout.print()
        _render_review(result, full_diff=full_diff, first=first)
        page = result.get("page") or {}
        if more is not None and page.get("nextCursor"):
            say_wrapped(
                f"{page['returned']} of {counted(page['total'], 'candidate')} shown; the next "
                f"page: `{more} --cursor {page['nextCursor']}`"
            )

    return render


def _render_review(result: dict[str, Any], *, full_diff: bool = False, first: bool = True) -> None:
    if not result["items"] and not result["failed"]:
        if first and not (result.get("page") or {}).get("total"):
            others = result.get("awaitingOtherKinds")
            kind = result.get("kind") or "entry"
            if others:  # `memory review` alone reviews entries: say what does await
                say_wrapped(f"No {kind} candidates are awaiting review; {result['next']}")
            else:
                stdout.print("No candidates are awaiting review.")
        elif first:
            stdout.print("No candidates after this cursor.")
        return
    from teamlore.ops.memory.review import shown_to_a_person

    for item in map(shown_to_a_person, result["items"]):
        _render_item(item, full_diff=full_diff)
        stdout.print()
    for failed in result["failed"]:
        ident = short_id(failed["candidateId"])
        say(styled("adjudication failed", "yellow"), f" {ident}: {failed['next']}")


def _render_item(item: dict[str, Any], *, full_diff: bool) -> None:
    """One reviewed candidate (as `shown_to_a_person` gives it): its head, the summary line,
    what it replaces, its statements, why it is blocked, each file's diff and the approval
    digest. `memory review` shows each candidate so, and `memory confirm` in the same order
    before it asks (with every diff line: there a person approves)."""
    from rich.text import Text

    from teamlore.ops.memory.review import claim_support_shown, left_out_of_a_plan

    _render_candidate(item)
    if item.get("skill"):
        skill = item["skill"]
        say(
            "  skill ",
            styled(skill["name"], "bold"),
            f" ({skill['action']}): {skill['description']}",
        )
    _block(
        f"{item['kind']}: provenance {item['provenanceStrength']}, claim support "
        f"{claim_support_shown(item)}, limitations {', '.join(item['limitations']) or '-'}",
        2,
    )
    _render_replaced(item)
    for statement in item["statements"]:
        _render_statement(statement)
    if item.get("drift"):
        say("  ", styled("drift", "red"), f" {item['drift']['message']}")
    if item["blocked"]:
        for finding in item["lintFindings"]:
            found = f" {finding['rule']}: {finding['message']}"
            _block(Text.assemble(styled("blocked", "red"), literal(found)), 2)
        # and what it holds that does not block (it has no file to list them under)
        for finding in item.get("lintWarnings") or []:
            found = f" {finding['rule']}: {finding['message']}"
            _block(Text.assemble(styled("warn", "yellow"), literal(found)), 2)
        left_out = left_out_of_a_plan(item)
        if left_out is not None and left_out["next"].endswith(" --extract-again"):
            say("  discard it and extract it again:")
            say_command(left_out["next"])
        elif left_out is not None:  # a drifted consolidation's: `<command>, then synthesize again`
            command, _, then = left_out["next"].partition(", then ")
            say(f"  discard it, then {then}:" if then else "  discard it:")
            say_command(command)
            if left_out.get("extractAgain"):  # a plain discard drops its lesson
                say("  or keep its lesson, extract it again:")
                say_command(left_out["extractAgain"])
    for file in item["files"]:
        _render_diff(file, full_diff)
    offer = "approve all offered" if item["approveAll"]["offered"] else "confirm one by one"
    _block(f"{offer}; approval digest {item['approvalDigest']}", 2)


@memory_app.command(
    "review", short_help="Show quarantined candidates: statements, evidence, diffs."
)
def review(
    kind: str = Option(
        "entry",
        "--kind",
        help="Candidate kind to review: entry, skill or consolidation.",
        metavar="entry|skill|consolidation",
    ),
    candidate: str | None = Option(
        None,
        "--candidate",
        help="Review this one candidate (its id as review shows it, or a unique abbreviation).",
        metavar="ID",
    ),
    limit: int | None = Option(
        None,
        "--limit",
        help="Candidates per page (at most 50). Without it the text view shows every "
        "candidate and --format json a page of 5, as the MCP tool does.",
        metavar="N",
    ),
    cursor: str | None = Option(
        None,
        "--cursor",
        help="The page after this cursor (page.nextCursor of the page before).",
        metavar="CURSOR",
    ),
    full_diff: bool = Option(
        False,
        "--full-diff",
        help=f"Print every line of each diff (the text view shows the first {DIFF_LINES}).",
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Show quarantined candidates: statements, evidence, assessments and the exact file diff.

    The text view wraps every line at the terminal's width (nothing is cut); a diff longer
    than 60 lines says how many lines follow and how to see them. It shows every candidate,
    saying first how many, unless --limit, --cursor or --candidate asks for a page; --format
    json gives the operation's page, as the MCP tool does."""
    payload = {"kind": kind, "candidateId": candidate, "limit": limit, "cursor": cursor}
    where = cwd_of(repository)
    if fmt is OutputFormat.json or any(v is not None for v in (candidate, limit, cursor)):
        more = " ".join(
            ["teamlore memory review"]
            + ([f"--kind {kind}"] if kind != "entry" else [])
            + ([f"--limit {limit}"] if limit is not None else [])
        )
        run("memory.review", payload, fmt, _review_renderer(full_diff, more=more), cwd=where)
        return
    # a person at the terminal reviews the whole queue: every page, one after the other
    from teamlore.ops.memory.review import MAX_REVIEW_PAGE

    payload["limit"] = MAX_REVIEW_PAGE
    page = run("memory.review", payload, fmt, _review_renderer(full_diff, head=True), cwd=where)
    while page["page"]["nextCursor"] is not None:
        payload["cursor"] = page["page"]["nextCursor"]
        render = _review_renderer(full_diff, first=False)
        page = run("memory.review", payload, fmt, render, cwd=where)


def _render_prepare(result: dict[str, Any]) -> None:
    stdout.print(f"Plan {result['planId']} generated ({counted(len(result['files']), 'file')}).")
    for file in result["files"]:
        say_file(file["targetPath"], f" ({file['role']})")
    say_wrapped(result["next"], len("Next: "), lead="Next: ")


@memory_app.command("prepare", short_help="Record a promotion plan from a PrepareRequest@v1.")
def prepare(
    request: str = Option(
        ..., "--request", help="PrepareRequest@v1 JSON file, or -.", metavar="FILE"
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Confirm reviewed statements and record a promotion plan (PrepareRequest@v1)."""
    document = read_request(request, fmt)
    run("memory.prepare", document, fmt, _render_prepare, cwd=cwd_of(repository))


def _render_discard(result: dict[str, Any]) -> None:
    if result["status"] != "discarded":  # the person gave no reason when asked
        say("Not discarded: no reason given.")
        return
    stdout.print(f"Discarded {short_id(result['candidateId'])} (was {result['previousStatus']}).")
    for turns in result.get("turnsPutBack") or []:
        span = turns["turnRange"]
        stdout.print(
            f"Turns {span['start']}-{span['end']} of session {turns['sessionKey'][:12]} go back "
            "to be extracted:\n  the next `teamlore memory recall` offers them again."
        )


@memory_app.command("discard", short_help="Discard a draft, quarantined or failed candidate.")
def discard(
    candidate: str = Option(
        ...,
        "--candidate",
        help="Candidate to discard, as `memory review` shows it (or a unique abbreviation).",
    ),
    revision: int | None = Option(None, "--revision", help="Expected revision."),
    reason: str | None = Option(
        None,
        "--reason",
        help="Why you discard it (kept in the local state only). On a terminal without it, "
        "teamlore asks; without a terminal (or with --format json) it is required: a discard "
        "cannot be undone.",
    ),
    extract_again: bool = Option(
        False,
        "--extract-again",
        help="Put the turns it was extracted from back, so `memory recall` offers them again "
        "(the lesson is right but the candidate cannot be promoted as it is). Without it they "
        "stay extracted.",
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Discard a draft, quarantined or adjudication-failed candidate. On a terminal without
    --reason it asks why (Enter alone keeps the candidate); without a terminal --reason is
    required: a discard cannot be undone."""
    # asked (or refused) only once the operation found a candidate it can discard: a wrong id
    # is refused before the question, not after the person typed why
    if reason is not None and not reason.strip():
        raise errors.TeamloreError(  # `--reason ""` would discard with no reason kept
            errors.USAGE, "--reason is empty: say why you discard it (it cannot be undone)"
        )
    terminal = fmt is OutputFormat.text and sys.stdin.isatty()
    ask = None if reason is not None else _why if terminal else _needs_reason
    payload = {
        "candidateId": candidate,
        "expectedRevision": revision,
        "reason": reason,
        "extractAgain": extract_again,
    }
    run("memory.discard", payload, fmt, _render_discard, cwd=cwd_of(repository), confirm=ask)


def _needs_reason(asked: dict[str, Any]) -> bool:
    """Without a terminal nobody can be asked why, and on one a discard without a reason
    keeps the candidate (`_why`): refused as `memory confirm` refuses (`_needs_yes`)."""
    raise errors.TeamloreError(
        errors.USAGE,
        f"discarding {short_id(asked['candidateId'])} needs a reason (it cannot be undone), and"
        " without a terminal nobody can be asked: give --reason, run it on a terminal, or"
        " discard it in your browser with `teamlore ui`",
    )


def _why(asked: dict[str, Any]) -> bool:
    """Ask the person why they discard the candidate `memory.discard` found (`asked`): the
    answer goes in `asked["reason"]`; Enter alone keeps the candidate (False)."""
    asked["reason"] = ask_line(
        f"Say why you discard {short_id(asked['candidateId'])}; it cannot be undone "
        "[Enter alone keeps it]"
    )
    return bool(asked["reason"])


@memory_app.command(
    "confirm", short_help="Confirm reviewed statements and record a promotion plan."
)
def confirm(
    candidates: list[str] = Option(
        [],
        "--candidate",
        help="Candidate to confirm, as `memory review` shows it (repeatable; default: every one "
        "reviewed).",
    ),
    yes: bool = Option(
        False,
        "--yes",
        help="Confirm without asking, only candidates whose every statement is a typed fact "
        "teamlore verified (the others stay in quarantine).",
    ),
    kind: str = Option(
        "entry",
        "--kind",
        help="Candidate kind to confirm: entry, skill or consolidation.",
        metavar="entry|skill|consolidation",
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Confirm reviewed statements, then record a promotion plan (runs prepare).

    On a terminal each statement that needs a person is shown with its evidence and asked
    about: y (it is true), d (discard the whole candidate), q (stop asking: plan what you
    confirmed so far) or N (not now: the candidate stays in quarantine). Each answer is kept
    as it is given: Ctrl-C stops without a plan and says what it kept, and the next run asks
    only about the rest. The first question comes once the first candidates are reviewed, the
    next ones as you reach them. A candidate enters the plan when every statement is confirmed
    or a typed fact. Without a terminal, --yes confirms only candidates made entirely of typed
    facts; use the page (`teamlore ui`) or `memory prepare` for the rest. A candidate blocked by
    lint is left out and named (discard it); nothing is confirmed if a chosen candidate is
    blocked or unknown."""
    interactive = not yes and fmt is OutputFormat.text and sys.stdin.isatty()
    payload = {"kind": kind, "candidateIds": candidates}
    asked: list[dict[str, Any]] = []
    ask = _typed_facts_only if yes else _asker(asked) if interactive else _needs_yes
    try:
        run("memory.confirm", payload, fmt, _render_confirm, cwd=cwd_of(repository), confirm=ask)
    except SystemExit as stop:
        # Ctrl-C or Ctrl-D, or a refusal once the person answered: say what was kept
        if interactive and (stop.code == 130 or (stop.code and asked)):
            _say_kept(asked)
        raise


# what a person may answer about one statement: y = true, d = discard the candidate, q = stop
# asking (plan what is confirmed so far), n = not now
ANSWERS = ("y", "d", "q", "n")


def _asker(asked: list[dict[str, Any]]) -> Callable[[dict[str, Any]], bool]:
    """Ask the person about each candidate, keeping each item asked about in `asked`: the
    operation marks there what it kept of the answers (`recorded`, `discarded`)."""

    def ask(item: dict[str, Any]) -> bool:
        asked.append(item)
        return _ask(item)

    return ask


def _ask(item: dict[str, Any]) -> bool:
    """Show one reviewed candidate as `memory review` does — summary line, statements, then
    every line it writes (here a person approves, so no diff is cut) — then ask about each
    statement that needs a person. The answers go in the item for `memory.confirm` to keep
    (`ops.memory.confirm`): the statements confirmed, `discard`, `stop`."""
    from teamlore.ops.memory.confirm import CONFIRMED
    from teamlore.ops.memory.review import shown_to_a_person

    _render_item(shown_to_a_person(item), full_diff=True)
    confirmed = item.setdefault(CONFIRMED, [])
    for statement in item["statements"]:
        if statement["confirmation"] != "required":
            continue
        answer = _answer(*_question(item, statement["statementId"]))
        if answer == "y":
            confirmed.append(statement["statementId"])
            continue
        if answer == "d":
            item["discard"] = True
        elif answer == "q":
            item["stop"] = True
        else:
            say("  ", styled("not confirmed", "yellow"), "; the candidate stays in quarantine")
        return False
    return True


def _say_kept(asked: list[dict[str, Any]]) -> None:
    """What a `memory confirm` stopped by Ctrl-C, or by a refusal, kept of the person's answers
    (each was stored as it was given), and that no plan was made."""
    confirmed = [
        f"{short_id(item['candidateId'])} {', '.join(item['recorded'])}"
        for item in asked
        if item.get("recorded")
    ]
    gone = [short_id(item["candidateId"]) for item in asked if item.get("discarded")]
    kept = []
    if confirmed:
        n = sum(len(item["recorded"]) for item in asked if item.get("recorded"))
        kept.append(f"{counted(n, 'statement')} confirmed ({'; '.join(confirmed)})")
    if gone:
        kept.append(f"{counted(len(gone), 'candidate')} discarded ({', '.join(gone)})")
    if not kept:
        say_wrapped("Stopped: nothing confirmed or discarded, no plan made.", 0)
        return
    say_wrapped(
        f"Stopped: no plan made. Kept what you answered: {' and '.join(kept)}. "
        "`teamlore memory confirm` asks only about the rest; `q` at a question stops and "
        "plans what is confirmed.",
        0,
    )


def _question(item: dict[str, Any], statement_id: str) -> tuple[str, str]:
    """What a person is asked about one statement, and what `y` means; a consolidation's
    statements are operations on the scenes and doctrine, applied or not rather than true."""
    if item.get("kind") == "consolidation":
        return f"Apply operation {statement_id}? [y/d/q/N]", "apply it"
    return f"Is statement {statement_id} true? [y/d/q/N]", "true"


def _answer(question: str, yes: str = "true") -> str:
    """The person's answer: `y`, `d`, `q` or `n` (an empty line). Ctrl-C or Ctrl-D stops the
    command as an interrupted one (exit 130, no plan; the answers given before are kept,
    `output.run`, `_say_kept`)."""
    while True:
        # the prompt on stdout, as the lines above it (`input`'s own goes to stderr)
        sys.stdout.write(f"{question}: ")
        sys.stdout.flush()
        try:
            typed = input() or "n"
        except (KeyboardInterrupt, EOFError):
            sys.stdout.write("\n")  # the shell's prompt starts on a line of its own
            raise KeyboardInterrupt from None
        answer = typed.strip().casefold()[:1]
        if answer in ANSWERS:
            return answer
        say_wrapped(
            f"answer y ({yes}), d (discard the candidate), q (stop: plan what you confirmed so "
            "far) or n (not now)",
            0,
        )


def _typed_facts_only(item: dict[str, Any]) -> bool:
    """`--yes`: only a candidate whose statements need no person (typed facts teamlore
    verified, or statements a person already confirmed)."""
    waiting = [s["statementId"] for s in item["statements"] if s["confirmation"] == "required"]
    if waiting:
        first, *rest = wrapped_lines(
            "skipped ",
            f"{short_id(item['candidateId'])}: {counted(len(waiting), 'statement')}"
            f" ({', '.join(waiting)}) {'needs' if len(waiting) == 1 else 'need'} a person;"
            " run `teamlore memory confirm` on a terminal or use `teamlore ui`",
        )
        say(styled("skipped", "yellow"), first[len("skipped") :], console=stderr)
        for line in rest:
            say(line, console=stderr)
    return not waiting


def _needs_yes(item: dict[str, Any]) -> bool:
    raise errors.TeamloreError(
        errors.USAGE,
        "confirming needs a terminal (each statement is asked about): run it on one, or review"
        " in your browser with `teamlore ui`; --yes confirms only candidates made of typed facts",
    )


def _render_confirm(result: dict[str, Any]) -> None:
    if result.get("stopped"):  # `q`: what was not asked about stays, what was answered is kept
        stopped, after = result["stopped"], result["stopped"]["notShown"]
        more = f", and so {'does' if after == 1 else 'do'} {counted(after, 'more candidate')}"
        say_wrapped(
            f"Stopped at {short_id(stopped['candidateId'])}: it stays in quarantine"
            f"{more + ', not shown yet' if after else ''}. What you confirmed is kept.",
            0,
        )
    if result.get("status") == "nothing-to-confirm" and result.get("awaitingOtherKinds"):
        say_wrapped(
            f"No {result.get('kind') or 'entry'} candidates are awaiting review; {result['next']}."
        )
    elif result.get("status") == "nothing-to-confirm":
        stdout.print("No candidates are awaiting review.")
    elif result.get("status") == "nothing-confirmed":
        # a `y` to a statement is kept even when its candidate has one not confirmed yet
        say_wrapped("No candidate has every statement confirmed; no plan recorded.", 0)
    for discarded in result.get("discarded", []):  # each discarded when it was answered
        _render_discard(discarded)
    if result.get("status") not in ("nothing-to-confirm", "nothing-confirmed"):
        _render_prepare(result)
    for skipped in result.get("skipped", []):  # discarded, promoted or staged elsewhere
        said = f"Skipped {short_id(skipped['candidateId'])}: {skipped['why']} ({skipped['code']})."
        say_wrapped(said, 0)
    for out in result.get("leftOut", []):
        left_out = styled(f"Left out {short_id(out['candidateId'])}", "yellow")
        said = f": {out['why']}; discard it: {out['next']}"
        if out.get("extractAgain"):  # a plain discard drops its lesson
            said += f", or keep its lesson: {out['extractAgain']}"
        _block(left_out.append(literal(said)), 0)


def _announce(url: str, review: dict[str, Any]) -> None:
    stdout.print(
        f"{counted(review['count'], 'candidate')} waiting for review."
        f" Open (one-time link):\n  {url}\n"
        "Press Ctrl-C to stop.",
        highlight=False,
    )


@app.command("ui", short_help="Review, confirm and promote team memory in your browser.")
def ui(
    repository: str | None = RepositoryOption,
    port: int = Option(
        0, "--port", min=0, max=65535, help="Port on 127.0.0.1 (default: a free one)."
    ),
    no_open: bool = Option(False, "--no-open", help="Print the URL; do not open a browser."),
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
        raise SystemExit(130) from None
