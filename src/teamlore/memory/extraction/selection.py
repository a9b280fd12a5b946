"""Bounded selection of sealed turns of the owner (glossary: owner; found by
`teamlore.ops.owner`) for extraction.

Selection, for a normalized MemoryExtractionRequest@v1:
- turns of main sessions (not subagent sidechains) mapped to the owner worktree, sealed, with a
  revision, neither aborted nor rolled back by the provider (docs/sessions.md), observed (start,
  else end, else session start) inside the half-open window;
- narrowed by providers, session keys, tool capability keys (a tool family such as `shell` or
  `edit`, or an exact tool name, used in the turn), skill capability keys (a Skill the turn
  invoked: Claude Code's `Skill` tool with that `skill` name), capability terminal states (how a
  matching tool or Skill invocation ended: `completed` = it succeeded, `failed` = it returned an
  error, `pending` = no result was recorded, `unknown` = the provider did not say; `cancelled`
  matches nothing, since an interrupted turn is never selected), result evidence
  (`provider-completed`: the turn has an assistant answer; `abandoned`: no answer and no tool
  result; `unknown`: the rest) and the query (all analyzed terms must match the turn's FTS
  document). Every filter narrows: a turn must pass each one given, and one item of a list is
  enough; terminal states apply to the invocations the tool and Skill keys match
  (docs/extraction.md, "Filters");
- more than `MAX_MATCHED_TURNS` matches is `QUERY_TOO_BROAD` (never a prefix);
- sessions with fewer than `MIN_SESSION_TURNS` matched turns are rejected
  (`insufficient-eligible-turns`), the rest are scored and ranked (score desc, sessionKey asc).

Session score — the recipe `extraction-candidates@1` (`SCORING_RECIPE`; recall reports it in
`selection.recipe`; a change to a weight or a signal is a new version). The reference
product's value signals, docs/extraction.md "recall"; the weights are ours:
  40 x direct delivery edges + 25 x observed delivery edges (distinct turn->commit edges)
  + 15 x recovered failures (a tool call that failed and later succeeded with the same command)
  + min(round(10 x tool calls / turns), 10)       tool density
  + min(2 x turns that wrote files, 10)             edits
  + 5 when the last matched turn ends with an assistant answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.core.analyzer import parse_query
from teamlore.core.canonical import digest
from teamlore.core.timeutil import parse_instant
from teamlore.memory.extraction.evidence import CatalogEdge
from teamlore.models.glosses import segmented
from teamlore.repo import tables
from teamlore.repo.binding import (
    RepositoryIdentity,
    is_within,
    normalize_posix,
)
from teamlore.sessions.index_db import body_match
from teamlore.sessions.queries import resolve_session_key

REQUEST_FORMAT = "threadshare-memory-extraction-request@v1"
MAX_WINDOW_DAYS = 366
MAX_MATCHED_TURNS = 200
SCORING_RECIPE = "extraction-candidates@1"
MIN_SESSION_TURNS = 3
MAX_QUERY_BYTES = 8 * 1024
# turns the provider cut short or the user undid are never offered to recall
ELIGIBLE_TURN = "t.aborted = 0 AND t.rolled_back = 0"
PROVIDERS = ("claude", "codex", "pi")
RESULT_EVIDENCE = ("abandoned", "provider-completed", "unknown")
# a capability terminal state → the tool_uses statuses that mean it (none is recorded cancelled)
TERMINAL_STATES: dict[str, tuple[str, ...]] = {
    "cancelled": (),
    "completed": ("ok",),
    "failed": ("error",),
    "pending": ("pending",),
    "unknown": ("unknown",),
}
SKILL_TOOL = "Skill"  # Claude Code invokes a Skill through this tool, input {"skill": name}
_CANONICAL = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


# -- request ----------------------------------------------------------------------------------


def _window_error(message: str) -> errors.TeamloreError:
    return errors.TeamloreError(errors.WINDOW_INVALID, message)


def canonical_instant(value: str, what: str) -> str:
    """`value` when it is a canonical UTC instant (`YYYY-MM-DDTHH:MM:SS.mmmZ`), else refuse."""
    if not _CANONICAL.match(value):
        hint = ""
        with contextlib.suppress(ValueError):
            hint = f" (did you mean {parse_instant(value)}?)"
        raise _window_error(
            f"{what} must be a canonical UTC instant YYYY-MM-DDTHH:MM:SS.mmmZ{hint}"
        )
    try:
        datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        raise _window_error(f"{what} {value!r} is not a real calendar instant") from None
    return value


def _moment(value: str) -> datetime:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def check_window(after: str, before: str) -> tuple[str, str]:
    """A canonical, non-empty, half-open window of at most `MAX_WINDOW_DAYS` days."""
    # named as the MCP arguments and the CLI's flags (`since`, `--since`) and, after them, as a
    # request document's fields: the message is the same on every side
    after = canonical_instant(after, "`since` (window.after)")
    before = canonical_instant(before, "`until` (window.before)")
    start, end = _moment(after), _moment(before)
    if end <= start:
        raise _window_error("the window is empty or reversed: `since` must be before `until`")
    if end - start > timedelta(days=MAX_WINDOW_DAYS):
        # the step is this case's (the code's `next` is about a missing or reversed window):
        # the earliest `since` that fits with this `until`, in the form `since` takes
        earliest = (end - timedelta(days=MAX_WINDOW_DAYS)).strftime("%Y-%m-%dT%H:%M:%S.%f")
        raise _window_error(
            f"the window spans more than {MAX_WINDOW_DAYS} days; narrow it"
        ).advising(
            f"Narrow the window to at most {MAX_WINDOW_DAYS} days: keep `until` and give "
            f"`since` {earliest[:-3]}Z or later (or an earlier `until`)."
        )
    return after, before


def _sorted_unique(values: list[str] | None) -> list[str]:
    return sorted({v.strip() for v in values or [] if v.strip()})


def normalize_request(
    *,
    after: str,
    before: str,
    query: str = "",
    providers: list[str] | None = None,
    session_keys: list[str] | None = None,
    tool_capability_keys: list[str] | None = None,
    skill_capability_keys: list[str] | None = None,
    result_evidence: list[str] | None = None,
    capability_terminal_states: list[str] | None = None,
) -> dict[str, Any]:
    """The normalized MemoryExtractionRequest@v1 (every filter present, sorted, unique)."""
    after, before = check_window(after, before)
    if len(query.encode("utf-8")) > MAX_QUERY_BYTES:
        raise errors.TeamloreError(
            errors.RECALL_REQUEST_INVALID, f"query is longer than {MAX_QUERY_BYTES} bytes"
        )
    filters = {
        "providers": _sorted_unique(providers),
        "sessionKeys": _sorted_unique(session_keys),
        "toolCapabilityKeys": _sorted_unique(tool_capability_keys),
        "skillCapabilityKeys": _sorted_unique(skill_capability_keys),
        "resultEvidence": _sorted_unique(result_evidence),
        "capabilityTerminalStates": _sorted_unique(capability_terminal_states),
    }
    _check_capability_filters(filters)
    for value in filters["providers"]:
        if value not in PROVIDERS:
            raise errors.TeamloreError(
                errors.RECALL_REQUEST_INVALID,
                f"unknown provider {value!r}; use {', '.join(PROVIDERS)}",
            )
    for value in filters["resultEvidence"]:
        if value not in RESULT_EVIDENCE:
            raise errors.TeamloreError(
                errors.RECALL_REQUEST_INVALID,
                f"unknown result evidence {value!r}; use {', '.join(RESULT_EVIDENCE)}",
            )
    return {
        "format": REQUEST_FORMAT,
        "window": {"after": after, "before": before},
        "query": query.strip(),
        "filters": filters,
    }


def with_full_session_keys(
    index_conn: sqlite3.Connection, request: dict[str, Any]
) -> dict[str, Any]:
    """`request` with each of its `sessionKeys` as the full key. A key may be given as `sessions
    list` shows it (a unique prefix of at least 8 hex characters) or as the provider's session
    id, as `sessions show` takes it; one no session has is SESSION_NOT_FOUND, where it made a
    recall that matched nothing."""
    keys = request["filters"]["sessionKeys"]
    if not keys:
        return request
    full = sorted({resolve_session_key(index_conn, key) for key in keys})
    return {**request, "filters": {**request["filters"], "sessionKeys": full}}


def _check_capability_filters(filters: dict[str, list[str]]) -> None:
    for value in filters["capabilityTerminalStates"]:
        if value not in TERMINAL_STATES:
            raise errors.TeamloreError(
                errors.RECALL_REQUEST_INVALID,
                f"unknown capability terminal state {value!r}; use {', '.join(TERMINAL_STATES)}",
            )
    keyed = filters["toolCapabilityKeys"] or filters["skillCapabilityKeys"]
    if filters["capabilityTerminalStates"] and not keyed:
        raise errors.TeamloreError(
            errors.RECALL_REQUEST_INVALID,
            "capabilityTerminalStates needs toolCapabilityKeys or skillCapabilityKeys: "
            "it says how the invocations of those tools or Skills ended",
        )


def _capability_conditions(filters: dict[str, list[str]]) -> list[tuple[str, list[Any]]]:
    """One SQL condition per capability filter given: the turn invoked one of those tools
    (family or name) or Skills, and, when terminal states are given, that invocation ended in
    one of them."""
    states = [s for state in filters["capabilityTerminalStates"] for s in TERMINAL_STATES[state]]
    ended = ""
    if filters["capabilityTerminalStates"]:
        ended = f" AND u.status IN ({', '.join('?' * len(states))})" if states else " AND 0"
    conditions: list[tuple[str, list[Any]]] = []
    tools = filters["toolCapabilityKeys"]
    if tools:
        marks = ", ".join("?" * len(tools))
        conditions.append(
            (
                "EXISTS (SELECT 1 FROM tool_uses u WHERE u.turn_id = t.id"
                f" AND (u.family IN ({marks}) OR u.name IN ({marks})){ended})",
                [*tools, *tools, *states],
            )
        )
    skills = filters["skillCapabilityKeys"]
    if skills:
        marks = ", ".join("?" * len(skills))
        conditions.append(
            (
                "EXISTS (SELECT 1 FROM tool_uses u WHERE u.turn_id = t.id AND u.name = ?"
                " AND json_valid(u.input)"
                f" AND json_extract(u.input, '$.skill') IN ({marks}){ended})",
                [SKILL_TOOL, *skills, *states],
            )
        )
    return conditions


# -- selection --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolRow:
    seq: int
    name: str
    family: str
    command: str | None
    input: str | None
    status: str
    exit_code: int | None
    result_head: str | None
    result_tail: str | None
    result_bytes: int | None
    result_sha256: str | None
    result_truncated: bool

    def call_text(self) -> str:
        detail = self.command if self.command else (self.input or "")
        return f"{self.name}\n{detail}" if detail else self.name

    def call_key(self) -> str:
        return f"{self.family}\x00{self.name}\x00{' '.join(self.call_text().split())}"


@dataclass(slots=True)
class SelectedTurn:
    turn_id: int
    session_key: str
    index: int  # the turn's ordinal in its session
    revision: str
    observed_at: str
    user_text: str
    assistant_text: str
    tools: list[ToolRow] = field(default_factory=list)
    written_paths: tuple[str, ...] = ()
    edges: tuple[CatalogEdge, ...] = ()


@dataclass(slots=True)
class SessionSelection:
    session_key: str
    provider: str
    turns: list[SelectedTurn]
    score: int = 0
    contributions: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Selection:
    request_digest: str
    result_set_digest: str
    matched_turns: int
    sessions: list[SessionSelection]
    rejected: list[dict[str, Any]]

    def source_binding_digest(self, session: SessionSelection) -> str:
        return digest(
            {
                "requestDigest": self.request_digest,
                "resultSetDigest": self.result_set_digest,
                "sessionKey": session.session_key,
                "turnBindings": [
                    {
                        "turnIndex": t.index,
                        "revision": t.revision,
                        "payloadSha256": sorted(
                            {u.result_sha256 for u in t.tools if u.result_sha256}
                        ),
                    }
                    for t in session.turns
                ],
                "deliveryEdgeRevisions": sorted(
                    {e.revision for t in session.turns for e in t.edges}
                ),
            }
        )


def request_digest(request: dict[str, Any], owner: RepositoryIdentity) -> str:
    scope = {"repositoryKey": owner.repository_key, "worktreeKey": owner.worktree_key}
    return digest({"request": request, "scope": scope})


def _observed(row: sqlite3.Row) -> str | None:
    for column in ("started_at", "ended_at", "session_started_at"):
        raw = row[column]
        if raw:
            try:
                return parse_instant(raw)
            except ValueError:
                continue
    return None


def _result_evidence(row: sqlite3.Row, has_result: bool) -> str:
    if row["assistant_text"].strip():
        return "provider-completed"
    return "unknown" if has_result else "abandoned"


def _conditions(
    owner: RepositoryIdentity, request: dict[str, Any], excluded: frozenset[str]
) -> tuple[list[str], list[Any]]:
    window = request["window"]
    filters = request["filters"]
    day_lo = (_moment(window["after"]) - timedelta(days=1)).strftime("%Y-%m-%d")
    day_hi = (_moment(window["before"]) + timedelta(days=1)).strftime("%Y-%m-%d")
    where = [
        "s.worktree_key = ?",
        "s.parent_session_key IS NULL",
        "t.sealed = 1",
        "t.revision IS NOT NULL",
        ELIGIBLE_TURN,
        "substr(coalesce(t.started_at, t.ended_at, s.started_at), 1, 10) BETWEEN ? AND ?",
    ]
    params: list[Any] = [owner.worktree_key, day_lo, day_hi]
    for column, values in (
        ("s.provider", filters["providers"]),
        ("s.session_key", filters["sessionKeys"]),
    ):
        if values:
            where.append(f"{column} IN ({', '.join('?' * len(values))})")
            params.extend(values)
    if excluded:  # sessions kept out of extraction (memory/extraction/exclusions.py)
        where.append(f"s.session_key NOT IN ({', '.join('?' * len(excluded))})")
        params.extend(sorted(excluded))
    for condition, values in _capability_conditions(filters):
        where.append(condition)
        params.extend(values)
    if request["query"]:
        # a spaceless Chinese query as its words, like every search (docs/hybrid-search.md)
        match = segmented(parse_query(request["query"])).match_all()
        if not match:
            raise errors.TeamloreError(errors.QUERY_EMPTY, "the query has no searchable terms")
        where.append("t.id IN (SELECT rowid FROM turns_fts WHERE turns_fts MATCH ?)")
        params.append(body_match(match))
    return where, params


def _candidate_rows(
    conn: sqlite3.Connection,
    owner: RepositoryIdentity,
    request: dict[str, Any],
    excluded: frozenset[str],
) -> list[sqlite3.Row]:
    where, params = _conditions(owner, request, excluded)
    sql = (
        "SELECT t.id, t.ordinal, t.revision, t.started_at, t.ended_at, t.user_text,"
        " t.assistant_text, s.session_key, s.provider, s.cwd, s.started_at AS session_started_at,"
        " EXISTS (SELECT 1 FROM tool_uses u WHERE u.turn_id = t.id"
        "   AND u.result_sha256 IS NOT NULL) AS has_result"
        " FROM turns t JOIN sessions s ON s.id = t.session_id"
        f" WHERE {' AND '.join(where)} ORDER BY s.session_key, t.ordinal"
    )
    return conn.execute(sql, params).fetchall()


def excluded_matches(
    conn: sqlite3.Connection,
    owner: RepositoryIdentity,
    request: dict[str, Any],
    excluded: frozenset[str],
) -> list[str]:
    """The `excluded` sessions that would otherwise have had eligible turns on the request's
    days (to say why nothing was extracted; docs/extraction.md)."""
    if not excluded:
        return []
    where, params = _conditions(owner, request, frozenset())
    where.append(f"s.session_key IN ({', '.join('?' * len(excluded))})")
    params.extend(sorted(excluded))
    sql = (
        "SELECT DISTINCT s.session_key FROM turns t JOIN sessions s ON s.id = t.session_id"
        f" WHERE {' AND '.join(where)} ORDER BY s.session_key"
    )
    return [str(row[0]) for row in conn.execute(sql, params)]


def select_turns(
    conn: sqlite3.Connection,
    owner: RepositoryIdentity,
    request: dict[str, Any],
    excluded: frozenset[str] = frozenset(),
) -> Selection:
    """The bounded selection of `request` for `owner` (refuses more than 200 matches), never
    a turn of an `excluded` session."""
    after, before = request["window"]["after"], request["window"]["before"]
    wanted_evidence = set(request["filters"]["resultEvidence"])
    matched: list[tuple[sqlite3.Row, str]] = []
    for row in _candidate_rows(conn, owner, request, excluded):
        observed = _observed(row)
        if observed is None or not (after <= observed < before):
            continue
        if (
            wanted_evidence
            and _result_evidence(row, bool(row["has_result"])) not in wanted_evidence
        ):
            continue
        matched.append((row, observed))
    if len(matched) > MAX_MATCHED_TURNS:
        raise errors.TeamloreError(
            errors.QUERY_TOO_BROAD,
            f"{len(matched)} sealed turns match (the limit is {MAX_MATCHED_TURNS}); "
            "narrow the window, add a query or filter by session",
            matchedTurns=len(matched),
            limit=MAX_MATCHED_TURNS,
        )
    req_digest = request_digest(request, owner)
    result_set = digest(
        {
            "requestDigest": req_digest,
            "turns": sorted(
                (
                    {
                        "sessionKey": row["session_key"],
                        "turnIndex": row["ordinal"],
                        "revision": row["revision"],
                        "observedAt": observed,
                    }
                    for row, observed in matched
                ),
                key=lambda t: (t["sessionKey"], t["turnIndex"]),
            ),
        }
    )
    grouped: dict[str, list[tuple[sqlite3.Row, str]]] = defaultdict(list)
    for row, observed in matched:
        grouped[row["session_key"]].append((row, observed))
    sessions: list[SessionSelection] = []
    rejected: list[dict[str, Any]] = []
    for session_key in sorted(grouped):
        rows = grouped[session_key]
        if len(rows) < MIN_SESSION_TURNS:
            rejected.append(
                {
                    "sessionKey": session_key,
                    "turns": len(rows),
                    "reason": "insufficient-eligible-turns",
                }
            )
            continue
        turns = [_load_turn(conn, owner, row, observed) for row, observed in rows]
        session = SessionSelection(session_key, str(rows[0][0]["provider"]), turns)
        score_session(session)
        sessions.append(session)
    sessions.sort(key=lambda s: (-s.score, s.session_key))
    return Selection(req_digest, result_set, len(matched), sessions, rejected)


def load_turns(
    conn: sqlite3.Connection, owner: RepositoryIdentity, session_key: str, indexes: list[int]
) -> list[SelectedTurn]:
    """The given turns of one owner session as selected now (for rebinding a recorded task)."""
    if not indexes:
        return []
    marks = ", ".join("?" * len(indexes))
    rows = conn.execute(
        "SELECT t.id, t.ordinal, t.revision, t.started_at, t.ended_at, t.user_text,"
        " t.assistant_text, s.session_key, s.provider, s.cwd, s.started_at AS session_started_at"
        " FROM turns t JOIN sessions s ON s.id = t.session_id"
        f" WHERE s.session_key = ? AND s.worktree_key = ? AND t.sealed = 1"
        f" AND t.revision IS NOT NULL AND {ELIGIBLE_TURN} AND t.ordinal IN ({marks})"
        " ORDER BY t.ordinal",
        (session_key, owner.worktree_key, *indexes),
    ).fetchall()
    return [_load_turn(conn, owner, row, _observed(row) or "") for row in rows]


def _load_turn(
    conn: sqlite3.Connection, owner: RepositoryIdentity, row: sqlite3.Row, observed: str
) -> SelectedTurn:
    tools = [
        ToolRow(
            seq=u["seq"],
            name=u["name"],
            family=u["family"],
            command=u["command"],
            input=u["input"],
            status=u["status"],
            exit_code=u["exit_code"],
            result_head=u["result_head"],
            result_tail=u["result_tail"],
            result_bytes=u["result_bytes"],
            result_sha256=u["result_sha256"],
            result_truncated=bool(u["result_truncated"]),
        )
        for u in conn.execute(
            "SELECT * FROM tool_uses WHERE turn_id = ? ORDER BY seq", (row["id"],)
        )
    ]
    writes = [
        r["path"]
        for r in conn.execute(
            "SELECT path FROM file_touches WHERE turn_id = ? AND kind = 'write' ORDER BY id",
            (row["id"],),
        )
    ]
    stored = tables.turn_edges(conn, row["id"], repository_key=owner.repository_key)
    edges = tuple(
        CatalogEdge(
            commit_hash=e.hash,
            strength=e.strength,
            reasons=e.reasons,
            limitations=e.limitations,
            revision=e.revision,
        )
        for e in sorted(stored, key=lambda e: e.hash)
    )
    return SelectedTurn(
        turn_id=row["id"],
        session_key=row["session_key"],
        index=row["ordinal"],
        revision=row["revision"],
        observed_at=observed,
        user_text=row["user_text"],
        assistant_text=row["assistant_text"],
        tools=tools,
        written_paths=repo_relative_paths(writes, row["cwd"], owner.worktree_root),
        edges=edges,
    )


def repo_relative_paths(paths: list[str], cwd: str | None, worktree_root: Path) -> tuple[str, ...]:
    """The written paths that lie inside the worktree, relative to its root (sorted, unique)."""
    root = str(worktree_root)
    base = normalize_posix(cwd or "")
    out: set[str] = set()
    for path in paths:
        if not path or "\x00" in path:
            continue
        if path.startswith("/"):
            joined = path
        elif base is not None and "\\" not in path:
            joined = os.path.join(base, path)
        else:
            continue
        joined = os.path.normpath(joined)
        directory = normalize_posix(os.path.dirname(joined))
        if directory is None:
            continue
        absolute = os.path.join(directory, os.path.basename(joined))
        if is_within(absolute, root) and absolute != root:
            out.add(absolute[len(root.rstrip("/")) + 1 :])
    return tuple(sorted(out))


def score_session(session: SessionSelection) -> None:
    """Fill in `score` and `contributions` (see the module doc for the formula)."""
    direct = {
        (t.index, e.commit_hash) for t in session.turns for e in t.edges if e.strength == "direct"
    }
    observed = {
        (t.index, e.commit_hash) for t in session.turns for e in t.edges if e.strength == "observed"
    }
    failed: set[str] = set()
    recovered = 0
    calls = 0
    for turn in session.turns:
        for tool in turn.tools:
            calls += 1
            key = tool.call_key()
            if tool.status == "error":
                failed.add(key)
            elif tool.status == "ok" and key in failed:
                failed.discard(key)
                recovered += 1
    turns = len(session.turns)
    contributions = {
        "directDeliveryEdges": 40 * len(direct),
        "observedDeliveryEdges": 25 * len(observed),
        "recoveredFailures": 15 * recovered,
        "toolDensity": min(round(10 * calls / turns), 10) if turns else 0,
        "edits": min(2 * sum(1 for t in session.turns if t.written_paths), 10),
        "conclusiveAnswer": 5 if session.turns and session.turns[-1].assistant_text.strip() else 0,
    }
    session.contributions = contributions
    session.score = sum(contributions.values())


def payload_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# -- the recall note ---------------------------------------------------------------------------
# How many chunks came back, and when none did, why each session the request reached gave none
# (docs/extraction.md, "recall"). A session with fewer than MIN_SESSION_TURNS matching turns is
# named with its count, and with the open last turn it may be waiting for: the last turn of a
# session stays open (unsealed) until the user's next prompt or the client's end-of-turn record
# (docs/sessions.md), so a session that ended with a full answer months ago can be a turn short.


# Sessions named when nothing was extracted: enough to see why, bounded for a terminal
MAX_SESSIONS_NAMED = 10


def recall_note(
    selection: Selection,
    chunks: int,
    returned: int,
    deferred: int,
    *,
    why_nothing: str = "",
) -> str:
    """The note; `why_nothing`: `why_nothing(...)` when no chunk was built."""
    if selection.matched_turns == 0:
        return (
            "No sealed turns of this worktree match the request; nothing to extract." + why_nothing
        )
    if chunks == 0:
        return (
            f"Turns matching: {selection.matched_turns}, but no session has enough of them "
            "or every matching turn was already extracted." + why_nothing
        )
    extra = f"; {deferred} more come back after these are staged" if deferred else ""
    return f"{returned} of {chunks} chunks returned{extra}."


def why_nothing(
    index_conn: sqlite3.Connection,
    selection: Selection,
    sessions_json: list[dict[str, Any]],
    excluded: list[str],
    window: dict[str, str],
) -> str:
    """` Sessions considered: KEY (why), …`: each session the request reached and why it gave
    no chunk, by session key only (docs/extraction.md)."""
    open_last = _open_last_turns(index_conn, [r["sessionKey"] for r in selection.rejected], window)
    reasons = [
        (
            r["sessionKey"],
            f"{r['turns']} matching turn{'' if r['turns'] == 1 else 's'},"
            f" fewer than {MIN_SESSION_TURNS}"
            + ("; its last turn is still open" if r["sessionKey"] in open_last else ""),
        )
        for r in selection.rejected
    ]
    reasons += [
        (s["sessionKey"], "every matching turn already extracted")
        for s in sessions_json
        if s["chunks"] == 0
    ]
    reasons += [(key, "excluded from extraction") for key in excluded]
    if not reasons:
        return ""
    named = "; ".join(f"{key} ({why})" for key, why in sorted(reasons)[:MAX_SESSIONS_NAMED])
    more = len(reasons) - MAX_SESSIONS_NAMED
    return f" Sessions considered: {named}" + (f"; and {more} more." if more > 0 else ".")


def _open_last_turns(
    conn: sqlite3.Connection, session_keys: list[str], window: dict[str, str]
) -> set[str]:
    """Those of `session_keys` whose last turn is open and started inside the request's window
    (`after` inclusive, `before` exclusive): the turn recall left out, which would have counted
    once sealed."""
    if not session_keys:
        return set()
    marks = ", ".join("?" * len(session_keys))
    rows = conn.execute(
        "SELECT s.session_key, t.sealed, coalesce(t.started_at, t.ended_at, s.started_at) AS at"
        " FROM sessions s JOIN turns t ON t.session_id = s.id"
        f" WHERE s.session_key IN ({marks})"
        " AND t.ordinal = (SELECT max(ordinal) FROM turns WHERE session_id = s.id)",
        session_keys,
    ).fetchall()
    return {
        str(key)
        for key, sealed, at in rows
        if not sealed and at and window["after"] <= _instant(at) < window["before"]
    }


def _instant(raw: str) -> str:
    """A turn's time in the window's canonical form (as selection compares them)."""
    try:
        return parse_instant(raw)
    except ValueError:
        return ""
