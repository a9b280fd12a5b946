"""The text view of `teamlore sessions show`: a page of turns, one turn, or one tool call whole.

Every cut says how to read what it left out with a command that works as printed
(docs/sessions.md, "Showing a session"): prose cut on a page is printed whole by `--turn N`, a
tool call's argument or error output by `--turn N --tool M`; the page's last line names the
next page with the page size that was asked for, and how many turns the session has.
"""

from __future__ import annotations

import json
import re
from typing import Any

from teamlore.cli.literal import literal
from teamlore.cli.output import CLIP_CHARS, clip, counted, say, stdout, styled, wrapped_lines
from teamlore.core.paths import display_path
from teamlore.ops.sessions import SHOW_PAGE_TURNS

# a tool call's main argument and each line of a failed call's error are cut this long
TOOL_CLIP_CHARS = 300
# a failed call shows this many first lines of its output (the error) in the turn view, and
# this many last lines (where a traceback's exception and a build's summary are)
ERROR_LINES = 6
ERROR_TAIL_LINES = 3

# what an open turn is, said under the first one shown (docs/sessions.md, "Sealed and open
# turns"): the last turn of a session stays open until the user's next prompt or the client's
# end-of-turn record, however long ago it ended
OPEN_MEANS = (
    "open: not sealed yet; a later prompt or the client's end-of-turn record seals it."
    " Extraction reads sealed turns only."
)
# and of a subagent's turn: no prompt follows it, and extraction reads main sessions only
# (memory/extraction/selection.py); what the subagent found is its parent's call's result
SUBAGENT_OPEN_MEANS = (
    "open: a subagent's transcript gets no later prompt to seal it. Extraction reads main"
    " sessions, not subagents: this one's result is the output of the call of its parent that"
    " started it{where}."
)


def render_show(
    result: dict[str, Any], *, whole_tool: bool = False, limit: int = SHOW_PAGE_TURNS
) -> None:
    """`sessions show`'s result as text; `whole_tool`: the one tool call `--tool` asked for;
    `limit`: the page size asked for (`--limit`), which the next page's command repeats."""
    s = result["session"]
    key = s["sessionKey"][:12]
    folder = display_path(s["cwd"]) if s["cwd"] else ""
    ended = f" → {s['endedAt']}" if s["endedAt"] else ""  # no end recorded: none said
    _say_header(key, f" {s['provider']} {folder}".rstrip(), f"{s['startedAt'] or ''}{ended}")
    _render_lineage(s)
    if s.get("excludedFromExtraction"):
        say(
            styled("excluded from extraction", "yellow"),
            f" (`teamlore sessions include {key}` takes it back)",
        )
    # one turn (`--turn N`) is printed whole; a page cuts long prose and points at the turn
    one_turn = "page" not in result
    explained = False
    for t in result["turns"]:
        say()
        say(
            styled(f"── turn {t['ordinal']}", "bold cyan"),
            styled(" (open)", "yellow") if not t["sealed"] else "",
            styled(" (aborted)", "yellow") if t.get("aborted") else "",
            styled(" (rolled back)", "yellow") if t.get("rolledBack") else "",
            f" {t['startedAt'] or ''}",
        )
        if not t["sealed"] and not explained:
            for line in wrapped_lines("", open_means(s), len("open: ")):
                say(styled(line, "dim"))
            explained = True
        if whole_tool:
            for tool in t["tools"]:
                _render_whole_tool(tool)
            continue

        def prose(text: str, ordinal: int = t["ordinal"]) -> str:
            return text if one_turn else cut(text, CLIP_CHARS, f"--turn {ordinal}")

        if t["user"]:
            say(styled("user", "bold"), " ", prose(t["user"]))
        elif "startedBy" in t:
            say(styled(started_by(t["startedBy"]), "dim"))
        for kind, item in speech_and_tools(t):
            if kind == "assistant":
                say(styled("assistant", "bold"), " ", prose(item))
            else:
                _render_tool(item, t["ordinal"])
        for notice in t.get("notices", []):
            say(styled(notice["kind"], "bold red"), " ", prose(notice["text"]))
        for edge in t.get("deliveryEdges", []):
            say(
                styled(f"  delivered {edge['hash'][:12]} {edge['strength']}", "green"),
                f" reasons: {', '.join(edge['reasons']) or '-'};"
                f" limitations: {', '.join(edge['limitations']) or '-'}",
            )
    _render_page(result, limit)


def _say_header(key: str, where: str, when: str) -> None:
    """The session's key, provider and folder, then its times: on one line where it fits the
    width, else the times on a line of their own (a folder is not cut)."""
    from rich.cells import cell_len  # text output only: rich is loaded to print it anyway

    when = when.strip()
    if not when or cell_len(literal(f"{key}{where} {when}")) <= stdout.width:
        say(styled(key, "bold"), f"{where} {when}".rstrip())
    else:
        say(styled(key, "bold"), where)
        say(f"  {when}")


def open_means(session: dict[str, Any]) -> str:
    """What the `(open)` mark means in this session: a subagent's turn is never sealed."""
    subagent = session.get("subagent")
    if not subagent:
        return OPEN_MEANS
    where = " (the command above shows it)" if subagent["turn"] is not None else ""
    return SUBAGENT_OPEN_MEANS.format(where=where)


def _render_lineage(session: dict[str, Any]) -> None:
    """Under the header: the title (the provider's, else the one derived from the first prompt,
    cut to the terminal's width in cells) and, a subagent, the call of its parent that started
    it, as the command that shows it; teamlore's words wrapped at words, the command whole."""
    from rich.text import Text

    if session.get("title"):
        say(literal(session["title"]))
    elif session.get("derivedTitle") and not session.get("subagent"):
        # cut at 80 characters by the index: a Chinese one is wider than 80 columns
        title = Text(literal(session["derivedTitle"]))
        title.truncate(stdout.width, overflow="ellipsis")
        say(title)
    subagent = session.get("subagent")
    if not subagent:
        return
    parent = subagent["parentSessionKey"][:12]
    if subagent["kind"] == "compaction":
        said = (
            f"compaction summariser of {parent}: Claude Code's summary of that session's earlier"
            " turns; its turns restate the session, so they are not indexed"
        )
    elif subagent["turn"] is None:
        said = f"subagent of {parent} (the call that started it is not in the index)"
    else:
        call = f"--turn {subagent['turn']} --tool {subagent['tool']}"
        about = f": {literal(subagent['description'])}" if subagent["description"] else ""
        said = (
            f"subagent of {parent}, started by its turn {subagent['turn']} call"
            f" #{subagent['tool']}{about} (`teamlore sessions show {parent} {call}`)"
        )
    for line in wrapped_lines("", said):
        say(line)


def started_by(starters: list[str]) -> str:
    """The line that opens a turn without a prompt: what the client wrote before it."""
    if not starters:
        return "(no prompt: the transcript does not say what started this turn)"
    return f"(no prompt; after {', '.join(literal(s) for s in starters)})"


def _render_page(result: dict[str, Any], limit: int) -> None:
    """The page's last line: which turns of how many, and the next page's command as typed."""
    page, s = result.get("page"), result["session"]
    total = counted(s["turns"], "turn")
    if page and page["next"] is not None:
        size = "" if limit == SHOW_PAGE_TURNS else f" -n {limit}"
        first, last = result["turns"][0]["ordinal"], result["turns"][-1]["ordinal"]
        which = f"Turn {first}" if first == last else f"Turns {first}–{last}"
        say()
        say(
            styled(
                f"{which} of {s['turns']} shown."
                f" Next page: `teamlore sessions show {s['sessionKey'][:12]}"
                f" --from {page['next']}{size}`.",
                "dim",
            )
        )
    elif page and not result["turns"] and (s.get("subagent") or {}).get("kind") != "compaction":
        say(styled(f"No turns from turn {page['from']} on (the session has {total}).", "dim"))


def cut(text: str, limit: int, command: str) -> str:
    """`text` cut to `limit` characters with a marker naming the `command` options
    (`--turn 3`, `--turn 3 --tool 5`) that print it whole."""
    return clip(text, limit, f": {command} prints them")


def speech_and_tools(turn: dict[str, Any]) -> list[tuple[str, Any]]:
    """The turn's assistant prose and tool uses in the order they happened: each tool use
    records how much assistant text preceded it (`assistantOffset`); without one (an index
    written by an older version) the tools come before the prose."""
    text, items, done = turn["assistant"], [], 0
    for tool in turn["tools"]:
        offset = tool.get("assistantOffset")
        if offset is not None and offset > done:
            if piece := text[done:offset].strip("\n"):
                items.append(("assistant", piece))
            done = offset
        items.append(("tool", tool))
    if rest := text[done:].strip("\n"):
        items.append(("assistant", rest))
    return items


# the input field that says what a tool call was about, for tools without a command
# (Glob/Grep: pattern, WebFetch: url, WebSearch: query, Read/Edit/Write: file_path, …)
MAIN_ARGUMENTS = ("pattern", "url", "query", "file_path", "path", "notebook_path", "description")


def main_argument(tool: dict[str, Any]) -> str:
    """What the call was about: its command, else its main input field (with the path a
    search ran in), else the paths it wrote or read."""
    if tool["command"]:
        return str(tool["command"])
    given = tool.get("input")
    if isinstance(given, dict):
        found = [f"{key}={given[key]}" for key in MAIN_ARGUMENTS if given.get(key)]
        if found:
            return " ".join(found[:2])
    elif isinstance(given, str) and given.strip():
        return given
    return ", ".join(tool["pathsWritten"]) or ", ".join(tool["pathsRead"]) or ""


def _render_tool(tool: dict[str, Any], turn: int) -> None:
    exit_code = "" if tool["exitCode"] is None else f" exit {tool['exitCode']}"
    whole = f"--turn {turn} --tool {tool['seq']}"  # what prints the call whole
    # an argument of several lines (an apply_patch) goes on under its call, indented
    argument = cut(main_argument(tool), TOOL_CLIP_CHARS, whole).replace("\n", "\n    ")
    say(
        f"  #{tool['seq']} ",
        styled(tool["name"], "magenta"),
        f" ({tool['family']}, {tool['status']}{exit_code}) {argument}",
    )
    if tool.get("subagentSessionKey"):
        say(f"    subagent {tool['subagentSessionKey'][:12]}")
    if tool["status"] == "error":
        _render_error(tool, whole)
    for c in tool["commits"]:
        say(f"    commit {c['hash']}")


# where an error message starts in a failed call's output (a build prints its banner first)
_ERROR_LINE = re.compile(
    r"error|fail|fatal|exception|traceback|panic|cannot|denied|not found|no such", re.IGNORECASE
)


def _render_error(tool: dict[str, Any], whole: str) -> None:
    """The first lines of a failed call's output from where its error starts, and its last
    lines (errors print last: a traceback's exception, a build's summary), saying how many lines
    are hidden before and between them; `whole`: the options that print the call whole."""
    output = "\n".join(p for p in (tool["result"].get("head"), tool["result"].get("tail")) if p)
    lines = [line for line in output.splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if _ERROR_LINE.search(line)), 0)
    after = lines[start + ERROR_LINES :]
    tail = after[-ERROR_TAIL_LINES:]
    between = len(after) - len(tail)
    if start:
        say("    ", styled(f"… {start} more lines before the error: {whole} prints them", "dim"))
    for line in lines[start : start + ERROR_LINES]:
        say("    ", styled(cut(line, TOOL_CLIP_CHARS, whole), "red"))
    if between:
        say("    ", styled(f"… {between} more lines: {whole} prints them", "dim"))
    for line in tail:
        say("    ", styled(cut(line, TOOL_CLIP_CHARS, whole), "red"))


def _render_whole_tool(tool: dict[str, Any]) -> None:
    """One tool call as the index holds it: its whole input and output (an output longer
    than the index keeps is its head and tail, and says so)."""
    exit_code = "" if tool["exitCode"] is None else f" exit {tool['exitCode']}"
    say(
        f"#{tool['seq']} ",
        styled(tool["name"], "magenta"),
        f" ({tool['family']}, {tool['status']}{exit_code})",
    )
    given = tool.get("input")
    if given is None or isinstance(given, str):
        shown = given or tool["command"] or ""
    else:
        shown = json.dumps(given, indent=2, ensure_ascii=False)
    say(styled("input", "bold"))
    say(shown)
    result = tool["result"]
    say(styled("output", "bold"), f" ({result.get('bytes') or 0} bytes)")
    say(result.get("head") or "")
    if result.get("truncated"):
        say(
            styled(
                f"… the index keeps the head and tail of this output (sha256 {result['sha256']})",
                "yellow",
            )
        )
    if result.get("tail"):
        say(result["tail"])
    for path in tool["pathsWritten"]:
        say(f"wrote {path}")
    for c in tool["commits"]:
        say(f"commit {c['hash']}")
