"""What `sessions list` and `sessions show` say of where a session and its turns came from
(docs/sessions.md, "Titles, subagents and turns without a prompt"), computed when they are shown
from what the index holds: no column of its own, so an index written before needs no re-read.

- A session its provider gave no title is named by its first prompt (`derivedTitle`): the
  prompt's first line, its secrets masked (core/secrets), cut to `TITLE_CHARS`; client-injected
  texts (Codex `<environment_context>`, AGENTS.md, Claude Code `<command-name>`) and a bare slash
  command are passed over while a later prompt has words. A subagent is named by its parent and
  the description of the Task/Agent call that started it (`subagent of e7840f44bb6d: Poem about
  Thai green curry`); Claude Code's compaction summariser (`agent-acompact-*`), a session of no
  turns, says that it is one.
- A Task/Agent call names the subagent session it started (`subagentSessionKey`), and the
  subagent's session says which call of which turn of its parent started it (`subagent`): the
  call's result carries the subagent's `agentId`, the subagent's file name (§1.9).
- A turn the client started with no prompt (a Claude Code slash command, a background task's
  `<task-notification>`, the work going on after an interrupt) says what started it
  (`startedBy`), read from the transcript lines between it and the turn before: the index keeps
  where each turn starts and ends in its file, not the client's records between them.
- What `sessions show` returns of a turn's texts has their secrets masked (`mask_shown`).
"""

from __future__ import annotations

import json
import re
import sqlite3
from itertools import accumulate, pairwise
from pathlib import Path
from typing import Any, BinaryIO

from teamlore.core.secrets.mask import masked_text

TITLE_CHARS = 80  # a derived title is cut this long (the list cuts it again to its column)
AGENT_TOOLS = ("Task", "Agent")  # Claude Code's subagent call: Task up to 2.1.39, then Agent
COMPACTION_AGENT = "acompact-"  # the agent id of Claude Code's compaction summariser
# a subagent call's result names the subagent: `agentId: a9cad17 (internal ID …)`
_AGENT_ID = re.compile(r"\bagentId: ?([A-Za-z0-9_-]+)")
# the start of every text the providers' clients inject (`<environment_context>`, `<command-name>`,
# `# AGENTS.md instructions for`): the parsers leave them out of the prompts, and the adapters
# that name them are loaded only for a prompt that starts so (a listing loads no adapter)
_MAY_BE_INJECTED = ("<", "# ", "Operation stopped", "This session is being continued")
_SLASH_COMMAND = re.compile(r"/\S+")
_PLACEHOLDER = re.compile(r"\[image: [^\]]*\]")
# the transcript lines read before a turn without a prompt, at most (a long run of progress
# records between two turns is not what started the second)
STARTER_LINES = 200
# a transcript line read for what started a turn, at most: the client's records that do (a slash
# command, a task notification) are short, and a longer line (a pasted log, a tool result) is
# passed over unread, as the index's reader passes over one over `reader.MAX_LINE_BYTES`
STARTER_LINE_BYTES = 1 << 20
_READ_BYTES = 1 << 20  # the file is read this much at a time


def with_derived_titles(conn: sqlite3.Connection, sessions: list[dict[str, Any]]) -> None:
    """Give each listed session its `derivedTitle` (None when its provider titled it) and, a
    subagent, the call that started it (`subagent`)."""
    parents = _Parents(conn)
    rows = _rows(conn, [str(s["sessionKey"]) for s in sessions])
    firsts = _first_prompts(conn, [int(r["id"]) for r in rows.values()])
    for session in sessions:
        row = rows[session["sessionKey"]]
        session["subagent"] = subagent = _subagent(row, parents)
        session["derivedTitle"] = (
            None
            if session["title"]
            else _derived_title(conn, int(row["id"]), subagent, firsts.get(int(row["id"])))
        )


def listed_titles(conn: sqlite3.Connection, keys: list[str]) -> dict[str, str | None]:
    """What `sessions list`'s `title / cwd` column calls each of these sessions (None: untitled,
    the list shows its folder), by key."""
    from teamlore.ops.sessions.titles import listed_title

    sessions: list[dict[str, Any]] = []
    for at in range(0, len(keys), _BATCH):
        batch = keys[at : at + _BATCH]
        rows = conn.execute(
            "SELECT session_key, title, parent_session_key FROM sessions"
            f" WHERE session_key IN ({', '.join('?' * len(batch))})",
            batch,
        )
        sessions.extend(
            {"sessionKey": str(key), "title": title, "parentSessionKey": parent}
            for key, title, parent in rows
        )
    with_derived_titles(conn, sessions)
    return {s["sessionKey"]: listed_title(s) for s in sessions}


def annotate_show(conn: sqlite3.Connection, shown: dict[str, Any]) -> None:
    """`sessions show`'s result with its derived title, the parent call of a subagent, the
    subagent each Task/Agent call started and what started each turn without a prompt."""
    session = shown["session"]
    row = _row(conn, session["sessionKey"])
    session["subagent"] = subagent = _subagent(row, _Parents(conn))
    session["derivedTitle"] = (
        None if session["title"] else _derived_title(conn, int(row["id"]), subagent)
    )
    children = {
        str(r["agent_id"]): str(r["session_key"])
        for r in conn.execute(
            "SELECT agent_id, session_key FROM sessions"
            " WHERE parent_session_key = ? AND agent_id IS NOT NULL",
            (session["sessionKey"],),
        )
    }
    for turn in shown["turns"]:
        for tool in turn["tools"]:
            if tool["name"] in AGENT_TOOLS:
                agent = _agent_id(tool["result"].get("head"), tool["result"].get("tail"))
                tool["subagentSessionKey"] = children.get(agent) if agent else None
    promptless = [t for t in shown["turns"] if not t["user"]]
    if promptless:
        started = _starters(conn, row, [t["ordinal"] for t in promptless])
        for turn in promptless:
            turn["startedBy"] = started.get(turn["ordinal"], [])


# -- secrets --------------------------------------------------------------------------------


def mask_shown(shown: dict[str, Any]) -> None:
    """Mask the secrets of the turn texts `sessions show` returns, as memory search masks a hit's
    (`…[40 chars]`, core/secrets/mask.py): the prompt, the assistant's text, each notice and
    each tool call's command and input (`curl -H "Authorization: Bearer …"`, `export TOKEN=…`:
    what a search hit masks too). A text the secret rules' cheap test lets pass is returned as it
    is; the index keeps the text as typed. A call's output is shown as the index holds it
    (docs/sessions.md, "Showing a session"): masking it too cost 0.5-2 s a page of the fixture
    sessions, some 1 MB of tool output each, against 25 ms."""
    for turn in shown["turns"]:
        turn["user"] = _masked(turn["user"])
        turn["notices"] = _masked(turn["notices"])
        _mask_assistant(turn)
        for tool in turn["tools"]:
            if tool.get("command") is not None:
                tool["command"] = _masked(tool["command"])
            if tool.get("input") is not None:
                tool["input"] = _masked_json(tool["input"])


def _masked(value: Any) -> Any:
    """`value` (a text, or a JSON value holding texts) with the secrets of its texts masked."""
    if isinstance(value, str):
        return masked_text(value)
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item) for item in value]
    return value


def _masked_json(value: Any) -> Any:
    """A tool call's input masked as its JSON text, as the index holds it and search masks it:
    a value is judged beside its key (`{"password": "hunter2…"}`), which a value alone is not.
    Masks stay inside their strings, so the text parses back; if it did not, each text alone."""
    if not isinstance(value, (dict, list)):
        return _masked(value)
    text = json.dumps(value, ensure_ascii=False)
    masked = masked_text(text)
    if masked == text:
        return value
    try:
        return json.loads(masked)
    except ValueError:
        return _masked(value)


def _mask_assistant(turn: dict[str, Any]) -> None:
    """The assistant's text masked piece by piece between the places its tool calls were made
    (`assistantOffset`), each place moved to where its piece now ends: the text view still
    prints each call after the words that preceded it."""
    text = turn["assistant"]
    if not text:
        return
    places = {
        min(max(int(t["assistantOffset"]), 0), len(text))
        for t in turn["tools"]
        if t.get("assistantOffset") is not None
    }
    bounds = sorted({0, len(text), *places})
    pieces = [masked_text(text[a:b]) for a, b in pairwise(bounds)]
    moved = dict(zip(bounds, accumulate([0, *(len(p) for p in pieces)]), strict=True))
    turn["assistant"] = "".join(pieces)
    for tool in turn["tools"]:
        if tool.get("assistantOffset") is not None:
            tool["assistantOffset"] = moved[min(max(int(tool["assistantOffset"]), 0), len(text))]


# -- titles ---------------------------------------------------------------------------------


def _row(conn: sqlite3.Connection, key: str) -> sqlite3.Row:
    row = conn.execute("SELECT * FROM sessions WHERE session_key = ?", (key,)).fetchone()
    assert isinstance(row, sqlite3.Row)
    return row


# sessions read per query when a listing's rows and first prompts are read together (under
# SQLite's oldest limit of 999 parameters)
_BATCH = 500


def _rows(conn: sqlite3.Connection, keys: list[str]) -> dict[str, sqlite3.Row]:
    """The listed sessions' rows by key, read a batch at a time (not one query a session)."""
    found: dict[str, sqlite3.Row] = {}
    for at in range(0, len(keys), _BATCH):
        batch = keys[at : at + _BATCH]
        for row in conn.execute(
            "SELECT id, session_key, parent_session_key, agent_id FROM sessions"
            f" WHERE session_key IN ({', '.join('?' * len(batch))})",
            batch,
        ):
            found[str(row["session_key"])] = row
    return found


def _first_prompts(conn: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    """Each session's first prompt (`_prompt_title`'s first candidate), a batch at a time: the
    usual session is named by it, and only one whose first prompt names nothing (injected, a
    bare slash command) reads its later prompts."""
    found: dict[int, str] = {}
    for at in range(0, len(ids), _BATCH):
        batch = ids[at : at + _BATCH]
        for session_id, text in conn.execute(
            "SELECT t.session_id, t.user_text FROM turns t WHERE t.id IN (SELECT (SELECT f.id"
            " FROM turns f WHERE f.session_id = s.value AND f.user_text != ''"
            " AND f.rolled_back = 0 ORDER BY f.ordinal LIMIT 1) FROM json_each(?) s)",
            (json.dumps(batch),),
        ):
            found[int(session_id)] = str(text)
    return found


def _derived_title(
    conn: sqlite3.Connection,
    session_id: int,
    subagent: dict[str, Any] | None,
    first_prompt: str | None = None,
) -> str | None:
    """The session's first prompt's line; a subagent's parent and call; what the compaction
    summariser is (`first_prompt`: its first prompt, already read)."""
    if subagent is not None and subagent["kind"] == "compaction":
        return f"compaction summary of {subagent['parentSessionKey'][:12]}"
    prompt = _prompt_title(conn, session_id, first_prompt)
    if subagent is None:
        return prompt
    named = subagent["description"] or prompt
    return f"subagent of {subagent['parentSessionKey'][:12]}" + (f": {named}" if named else "")


def _prompt_title(
    conn: sqlite3.Connection, session_id: int, first_prompt: str | None = None
) -> str | None:
    """The first line of the session's first prompt with words (see the module's docstring;
    `first_prompt`: the first prompt, already read, whose line when it names the session spares
    reading the others)."""
    if first_prompt is not None:
        line = _prompt_line(first_prompt)
        if line is not None and not _SLASH_COMMAND.fullmatch(line):
            return _cut(line)
    fallback = None
    for (text,) in conn.execute(
        "SELECT user_text FROM turns WHERE session_id = ? AND user_text != ''"
        " AND rolled_back = 0 ORDER BY ordinal LIMIT 20",
        (session_id,),
    ):
        line = _prompt_line(str(text))
        if line is None:
            continue
        if not _SLASH_COMMAND.fullmatch(line):
            return _cut(line)
        fallback = fallback or _cut(line)
    return fallback


def _prompt_line(text: str) -> str | None:
    """A prompt's first line with words, its secrets masked; None for a client-injected one."""
    stripped = text.strip()
    if stripped.startswith(_MAY_BE_INJECTED) and _injected(stripped):
        return None
    return _first_line(masked_text(stripped))


def _injected(text: str) -> bool:
    from teamlore.sessions.providers.claude import INJECTED_PREFIXES
    from teamlore.sessions.providers.codex import INJECTED_USER_PREFIXES

    return text.startswith((*INJECTED_PREFIXES, *INJECTED_USER_PREFIXES))


def _first_line(text: str) -> str | None:
    """The first line with words: an image placeholder alone (`[image: image/png, 24021 bytes]`)
    says nothing of the prompt."""
    for line in text.splitlines():
        words = " ".join(line.split())
        if words and _PLACEHOLDER.sub("", words).strip():
            return words
    return None


def _cut(line: str) -> str:
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


# -- subagents ------------------------------------------------------------------------------


class _Parents:
    """Each parent session's subagent calls by the agent id their result names, read once."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.calls: dict[str, dict[str, dict[str, Any]]] = {}

    def call(self, parent: str, agent: str) -> dict[str, Any] | None:
        if parent not in self.calls:
            self.calls[parent] = self._read(parent)
        return self.calls[parent].get(agent)

    def _read(self, parent: str) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for r in self.conn.execute(
            "SELECT t.ordinal, u.seq, u.input, u.result_head, u.result_tail"
            " FROM sessions s JOIN turns t ON t.session_id = s.id"
            " JOIN tool_uses u ON u.turn_id = t.id"
            f" WHERE s.session_key = ? AND u.name IN ({', '.join('?' * len(AGENT_TOOLS))})"
            " ORDER BY t.ordinal, u.seq",
            (parent, *AGENT_TOOLS),
        ):
            agent = _agent_id(r["result_head"], r["result_tail"])
            if agent:
                found.setdefault(
                    agent,
                    {"turn": r["ordinal"], "tool": r["seq"] + 1, "description": _described(r)},
                )
        return found


def _agent_id(head: str | None, tail: str | None) -> str | None:
    ids = _AGENT_ID.findall("\n".join(p for p in (head, tail) if p))
    return str(ids[-1]) if ids else None


def _described(row: sqlite3.Row) -> str | None:
    try:
        given = json.loads(row["input"] or "null")
    except ValueError:
        return None
    description = given.get("description") if isinstance(given, dict) else None
    return (
        _cut(masked_text(" ".join(description.split()))) if isinstance(description, str) else None
    )


def _subagent(row: sqlite3.Row, parents: _Parents) -> dict[str, Any] | None:
    """Whose subagent the session is and which call started it (None: not a subagent)."""
    parent, agent = row["parent_session_key"], row["agent_id"]
    if not parent or not agent:
        return None
    if str(agent).startswith(COMPACTION_AGENT):
        return {"kind": "compaction", "parentSessionKey": parent, "turn": None, "tool": None,
                "description": None}  # fmt: skip
    call = parents.call(str(parent), str(agent)) or {
        "turn": None,
        "tool": None,
        "description": None,
    }
    return {"kind": "task", "parentSessionKey": parent, **call}


# -- turns without a prompt -------------------------------------------------------------------


def _starters(
    conn: sqlite3.Connection, row: sqlite3.Row, ordinals: list[int]
) -> dict[int, list[str]]:
    """What the client wrote before each of these turns (Claude Code transcripts only; a session
    read from several files, or whose file is gone, says nothing): one query for the page's
    turns, one read of the file for all of them."""
    files = conn.execute(
        "SELECT path, status, resume_offset, resume_line FROM source_files WHERE session_id = ?",
        (row["id"],),
    ).fetchall()
    if row["provider"] != "claude" or len(files) != 1 or files[0]["status"] != "ok":
        return {}
    spans: dict[int, tuple[int, int]] = {}
    for ordinal, first, before in conn.execute(
        "SELECT t.ordinal, t.first_line, p.last_line FROM turns t LEFT JOIN turns p"
        " ON p.session_id = t.session_id AND p.ordinal = t.ordinal - 1"
        " WHERE t.session_id = ? AND t.ordinal IN (SELECT value FROM json_each(?))",
        (row["id"], json.dumps(ordinals)),
    ):
        if first is not None:
            spans[int(ordinal)] = (max(int(before or 1), int(first) - STARTER_LINES), first - 1)
    known = (int(files[0]["resume_offset"]), int(files[0]["resume_line"]))
    records = _lines(Path(str(files[0]["path"])), spans.values(), known)
    return {
        ordinal: _deduped(
            [s for n in range(start, end + 1) if (s := _starter(records.get(n))) is not None]
        )
        for ordinal, (start, end) in spans.items()
    }


def _lines(path: Path, spans: Any, known: tuple[int, int] = (0, 0)) -> dict[int, bytes]:
    """The physical lines (1-based) of `path` inside the spans, in one pass over the part of
    the file they are in. The lines before them are counted, never held: from the file's start,
    or, when the spans are nearer its end, back from where the index's last complete line ends
    (`known`: its offset and number). A line longer than `STARTER_LINE_BYTES` is passed over
    without being held (no record that starts a turn is that long)."""
    wanted = sorted({n for start, end in spans for n in range(start, end + 1) if n > 0})
    if not wanted:
        return {}
    try:
        with path.open("rb") as f:
            offset, number = _back_to(f, wanted[0], known) if _nearer_end(wanted, known) else (0, 1)
            return _read_lines(f, offset, number, wanted)
    except OSError:
        return {}


def _nearer_end(wanted: list[int], known: tuple[int, int]) -> bool:
    """Whether reading back from the index's last line passes fewer lines than from line 1."""
    offset, last = known
    return offset > 0 and wanted[-1] <= last and last - wanted[0] < wanted[-1]


def _back_to(f: BinaryIO, first: int, known: tuple[int, int]) -> tuple[int, int]:
    """Where line `first` starts (its offset, and `first`), found by counting newlines back
    from the end of line `known[1]` at offset `known[0]`; the file's start (0, 1) when the file
    is not as the index read it there."""
    end, last = known
    f.seek(end - 1)
    if f.read(1) != b"\n":
        return 0, 1
    remaining = last - first + 2  # the newlines that end lines first - 1 .. last
    high = end
    while high > 0:
        low = max(0, high - _READ_BYTES)
        f.seek(low)
        chunk = f.read(high - low)
        count = chunk.count(b"\n")
        if count >= remaining:
            at = len(chunk)
            for _ in range(remaining):
                at = chunk.rindex(b"\n", 0, at)
            return low + at + 1, first
        remaining -= count
        high = low
    return 0, 1


def _read_lines(f: BinaryIO, offset: int, number: int, wanted: list[int]) -> dict[int, bytes]:
    """The `wanted` lines (sorted) from line `number` at `offset` on: a line not wanted is
    passed by counting newlines, a wanted one is held up to `STARTER_LINE_BYTES`."""
    found: dict[int, bytes] = {}
    wanted_set = set(wanted)
    line = bytearray()
    over = False  # the line held is longer than the cap: passed over
    later = 0  # the index in `wanted` of the next wanted line
    f.seek(offset)
    while chunk := f.read(_READ_BYTES):
        view, at, size = memoryview(chunk), 0, len(chunk)
        while at < size:
            if number not in wanted_set:
                while later < len(wanted) and wanted[later] < number:
                    later += 1
                if later == len(wanted):
                    return found
                need = wanted[later] - number  # newlines to the next wanted line's start
                count = chunk.count(b"\n", at)
                if count < need:
                    number += count
                    break
                for _ in range(need):
                    at = chunk.index(b"\n", at) + 1
                number += need
                continue
            newline = chunk.find(b"\n", at)
            end = size if newline < 0 else newline
            if not over and len(line) + end - at > STARTER_LINE_BYTES:
                over, line = True, bytearray()
            elif not over:
                line += view[at:end]
            if newline < 0:
                break
            if not over:
                found[number] = bytes(line)
            line, over, number, at = bytearray(), False, number + 1, newline + 1
    if line and not over and number in wanted_set:  # a last line without its newline
        found[number] = bytes(line)
    return found


def _starter(line: bytes | None) -> str | None:
    """What a client-written `user` record says started the agent's work, or None."""
    from teamlore.sessions.providers.claude import INTERRUPT_MARKERS

    try:
        record = json.loads(line) if line else None
    except (ValueError, RecursionError):  # a line nested deeper than json reads, as `_lines`
        return None  # reads what the index's reader passed over as bad JSON
    if not isinstance(record, dict) or record.get("type") != "user" or record.get("isMeta"):
        return None
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        content = "\n".join(t for t in texts if isinstance(t, str))
    if not isinstance(content, str):
        return None
    text = content.strip()
    if text in INTERRUPT_MARKERS:
        return text
    if text.startswith("<task-notification>"):
        summary = _tag(text, "summary") or _tag(text, "status") or ""
        return _cut(masked_text(f"task notification: {summary}".strip().rstrip(":")))
    command = _tag(text, "command-name")
    if command:
        args = _tag(text, "command-args")
        return _cut(masked_text(f"{command} {args}" if args else command))
    if text.startswith("<bash-input>"):
        return _cut(masked_text(f"! {_tag(text, 'bash-input')}"))
    return None


def _tag(text: str, name: str) -> str | None:
    found = re.search(rf"<{name}>(.*?)</{name}>", text, re.DOTALL)
    return " ".join(found.group(1).split()) if found else None


def _deduped(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
