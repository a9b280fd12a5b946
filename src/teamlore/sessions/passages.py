"""A turn's passages: what it said, each notice, each tool call with its output
(docs/sessions.md, "Passages").

A turn's searchable text (`TurnRecord.search_text`) is its passages joined by `SEPARATOR`, in a
fixed order: the user's prompt, the assistant's text, each notice, each tool use (its call,
the paths it wrote and the edges of its result). The separator is a gap to the analyzer, so the
analyzed body in `turns_fts` is the same as before passages existed; what the index adds is
where each passage starts in that body (`turn_passages.starts`). A search then counts the query
terms each passage holds without analyzing anything again, ranks a turn by its best passage, and
cuts the snippet from that passage alone, its secrets masked first (`masked`): the index holds
the text as typed, a search's output never shows a secret.
"""

from __future__ import annotations

import heapq
import json
import re
import sqlite3
from array import array
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any, NamedTuple

from teamlore.core.analyzer import (
    SNIPPET_CHARS,
    SNIPPET_LEAD,
    Query,
    QueryTerm,
    analyze,
    parse_query,
    snippet,
    tokens,
)
from teamlore.core.fusion import has_identifier
from teamlore.sessions.index_db import passage_starts, ranked_turns

# ASCII "record separator": a gap to the analyzer (never part of a token)
SEPARATOR = "\x1e"

USER, ASSISTANT = 0, 1  # passage numbers; notices follow, then tool uses
# How much of each tool input, and of each tool result's start and end (where errors and test
# summaries are), goes into the search index.
FTS_TOOL_CHARS = 1024
FTS_RESULT_EDGE_CHARS = 512


def passage_text(pieces: list[str]) -> str:
    """One text of the passages, in order, empty ones kept (their number is their identity)."""
    return SEPARATOR.join(p.replace(SEPARATOR, " ") if SEPARATOR in p else p for p in pieces)


def analyze_passages(text: str) -> tuple[str, bytes]:
    """The analyzed body of a `passage_text` (the same as `analyze(text)`: tokens never span a
    gap) and where each passage starts in it, packed as unsigned 32-bit offsets."""
    starts = array("I")
    parts: list[str] = []
    at = 0
    for piece in text.split(SEPARATOR):
        body = analyze(piece) if piece else ""
        if body and parts:
            at += 1  # the space that joins it to the previous passage
        starts.append(at)
        if body:
            parts.append(body)
            at += len(body)
    return " ".join(parts), starts.tobytes()


def unpack(starts: bytes | None) -> list[int]:
    return array("I", starts).tolist() if starts else [0]


class Held(NamedTuple):
    """What a turn holds of a query: the terms of its best passage (the first one holding
    the most), which passage that is, and the terms of the whole turn."""

    best: int
    passage: int
    whole: int
    # the best passage is a tool use or a notice and the query is prose (no identifier)
    incidental: bool = False

    @property
    def weight(self) -> float:
        """What the turn's words weigh in its ranking: each term of the best passage counts
        one (`TOOL_PASSAGE` when `incidental`), each other term the turn holds elsewhere
        `ELSEWHERE` (docs/sessions.md, "Passages")."""
        said = TOOL_PASSAGE if self.incidental else 1.0
        return said * self.best + ELSEWHERE * (self.whole - self.best)


# what a query term found in the turn but outside its best passage counts (chosen on the
# tuning half of bench/search_queries.json)
ELSEWHERE = 0.5
# what a term of the best passage counts when that passage is not what the person or the agent
# said but a tool's call and output (a file it wrote, a command's log) or a notice, for a query
# without an identifier: such text holds a question's words incidentally, while identifiers
# live in code and logs (chosen on the tuning half; 0.75 and 0.8 gave the same ranks)
TOOL_PASSAGE = 0.75
# every weight is a multiple of this (so are TOOL_PASSAGE and ELSEWHERE): `readable_weight` adds
# the BM25 strength below it, so the score never reorders two weights
WEIGHT_STEP = 0.25
# the most the BM25 strength adds: a step less the 0.01 the score is rounded to, so a very strong
# hit reads 3.99, never the next weight's 4.0
STRENGTH_MAX = WEIGHT_STEP - 0.01


def readable_weight(found: Held, bm25: float) -> float:
    """The score a words-only hit shows: its weight (`Held.weight`) plus its BM25 strength
    squashed into [0, 0.24] (`STRENGTH_MAX`), ordered like the results (weight, then BM25):
    `4.24` reads "four terms in its best passage (or three, and two elsewhere), strongly". The
    count of terms held alone would put a tool output holding five terms (weight 3.75) above the
    prompt holding four that ranks before it."""
    strength = max(bm25, 0.0)
    return round(found.weight + min(WEIGHT_STEP * strength / (1.0 + strength), STRENGTH_MAX), 2)


def held(query: Query, body: str, starts: bytes | None) -> Held:
    """Count the query terms of each passage of an analyzed `body` (no analysis: the body is
    cut at the stored offsets). A turn without stored offsets is one passage."""
    return held_by(query.coverage, body, starts, has_identifier(query))


def held_by(
    coverage: Callable[[str], int], body: str, starts: bytes | None, identifier: bool
) -> Held:
    """`held` with another count of the terms an analyzed text holds (`coverage`: a query's
    terms as typed or as translated); `identifier`: whether the query holds one."""
    whole = coverage(body)
    offsets = unpack(starts)
    if len(offsets) == 1 or whole == 0:
        return Held(whole, 0, whole)
    best, where = 0, 0
    ends = [*offsets[1:], len(body)]
    for number, (start, end) in enumerate(zip(offsets, ends, strict=True)):
        if end - start <= best:  # too short to hold more terms than the best so far
            continue
        count = coverage(body[start:end])
        if count > best:
            best, where = count, number
            if best == whole:
                break
    return Held(best, where, whole, where > ASSISTANT and not identifier)


def weighed(
    query: Query, weights: Sequence[float], body: str, starts: bytes | None, found: Held
) -> float:
    """`found.weight` (what `held` found in this `body`) with each term of `query` counting its
    weight instead of one: the best passage stays the one holding most terms, and a term held
    there or elsewhere counts as `Held.weight` counts it (with every weight 1, `found.weight`)."""

    def weight_in(analyzed: str) -> float:
        padded = f" {analyzed} "
        return sum(w for term, w in zip(query.terms, weights, strict=True) if term.found_in(padded))

    whole = weight_in(body)
    offsets = unpack(starts)
    if len(offsets) == 1 or not found.whole:
        return whole
    ends = [*offsets[1:], len(body)]
    best = weight_in(body[offsets[found.passage] : ends[found.passage]])
    said = TOOL_PASSAGE if found.incidental else 1.0
    return said * best + ELSEWHERE * (whole - best)


# a query of at least this many words, as typed (split at whitespace), is a phrase a turn can
# hold whole: a pasted error line (docs/hybrid-search.md, "Words are never outvoted", rule 11)
PHRASE_WORDS = 3


def query_phrase(query: str) -> QueryTerm | None:
    """`query` as typed as one phrase: every token of it, in order, its quotes ignored (what
    quoting it whole would search), when it has at least PHRASE_WORDS words and no `prefix*`
    term; else None. A `*` that makes no prefix (`for *: 'int'`, a Go `c *Config`) is
    part of the line pasted."""
    if len(query.split()) < PHRASE_WORDS:
        return None
    if "*" in query and any(term.kind == "prefix" for term in parse_query(query).terms):
        return None
    parts = tuple(tokens(query.replace('"', " ")))
    return QueryTerm("phrase", "", parts) if len(parts) > 1 else None


def holding_phrase(phrase: QueryTerm | None, scored: Sequence[Scored]) -> set[int]:
    """The ids of the `scored` turns that hold `phrase` (`query_phrase`) within one passage."""
    if phrase is None:
        return set()

    def holds(analyzed: str) -> int:
        return int(phrase.found_in(f" {analyzed} "))

    return {
        int(r["id"]) for _h, _s, r in scored if held_by(holds, r["body"], r["starts"], False).best
    }


def passage_read_by(
    conn: sqlite3.Connection, turn_id: int, readings: list[Query]
) -> tuple[Held, Query] | None:
    """For a turn found by meaning alone: its passage holding most terms of the first of
    `readings` (the query, then other readings of it) that it holds any of, and that reading;
    None when it holds none (its snippet is then its prompt)."""
    row = conn.execute(
        f"SELECT f.body, {passage_starts(conn, 'f.rowid')} FROM turns_fts f WHERE f.rowid = ?",
        (turn_id,),
    ).fetchone()
    for reading in readings if row is not None else ():
        found = held(reading, str(row[0] or ""), row[1])
        if found.best:
            return found, reading
    return None


def passage_snippet(
    conn: sqlite3.Connection,
    row: sqlite3.Row | dict[str, object],
    query: Query,
    found: Held,
    phrase: QueryTerm | None = None,
) -> str:
    """Original text around the query's words in the turn's best passage: `user: …`,
    `assistant: …` or `tool #3 Bash npm test, exit 1: …` (a turn found by meaning alone: the
    passage holding the query's words, or its glosses' words, else its prompt). Of the passages
    holding as many terms, the one holding the query as typed (`phrase`, `query_phrase`), then
    the most identifiers whole, is shown, and in it the place holding most of those."""
    key = _holding(query, phrase)
    number, goal = found.passage, None
    if {"body", "starts"} <= set(row.keys()):  # a words hit: its ranking's row
        starts = row["starts"]
        body = str(row["body"] or "")
        number, goal = _shown_passage(
            key, body, starts if isinstance(starts, bytes) else None, found
        )
    label, texts = labeled_text(conn, row, number)
    if not label:
        return ""
    # the part of the passage (a tool's call, a path it wrote, its result) that may hold most
    # query terms, and for a words hit the place in it holding most of what the passage holds
    # of the query; the label already shows the call
    best = max(texts, key=query.coverage_bound, default="")
    at = None
    if goal is not None and goal[0]:
        best, at = _region(texts, key, goal, query.highlight_tokens()) or (best, None)
    return f"{label}: {snippet(best, query.highlight_tokens(), at=at)}"


Holding = Callable[[str], tuple[int, int, int]]


def _holding(query: Query, phrase: QueryTerm | None) -> Holding:
    """What an analyzed text holds of `query`, compared: its terms, then whether it holds the
    query as typed (`phrase`), then how many of its identifiers it holds whole (`AgentFundingModal`
    as written, not `agent`, `funding` and `modal` apart)."""
    wholes = [QueryTerm("word", t.whole, (t.whole,)) for t in query.terms if len(t.parts) > 1]
    wholes = [t for t in wholes if t.whole]

    def key(analyzed: str) -> tuple[int, int, int]:
        padded = f" {analyzed} "
        return (
            sum(t.found_in(padded) for t in query.terms),
            int(phrase is not None and phrase.found_in(padded)),
            sum(t.found_in(padded) for t in wholes),
        )

    return key


def _shown_passage(
    key: Holding, body: str, starts: bytes | None, found: Held
) -> tuple[int, tuple[int, int, int] | None]:
    """The passage a words hit shows: of those holding as many terms as its best passage
    (`found`, which ranked it), the first holding most of the rest of `key`; and what it holds
    (None: `found` counted another reading, a translation, and its passage is shown)."""
    offsets = unpack(starts)
    if found.passage >= len(offsets):
        return found.passage, None
    ends = [*offsets[1:], len(body)]
    best = key(body[offsets[found.passage] : ends[found.passage]])
    if best[0] != found.best:
        return found.passage, None
    where = found.passage
    for number, (start, end) in enumerate(zip(offsets, ends, strict=True)):
        if end <= start or number == found.passage:
            continue
        this = key(body[start:end])
        if this > best or (this == best and number < where):
            best, where = this, number
    return where, best


# the words of a text that are read to find the places a snippet may centre on (`_region`): a
# long answer holds hundreds that begin like a query token
REGION_WORDS = 128


def _region(
    texts: list[str], key: Holding, goal: tuple[int, int, int], highlight: frozenset[str]
) -> tuple[str, int | None] | None:
    """The text of a passage and the place in it to centre its snippet on: the first where a
    snippet's width holds most of `key` (`_holding`), up to `goal`, what the whole passage
    holds; None for the place: at the first match, as `snippet` finds it. None: no place."""
    chosen: tuple[str, int | None] | None = None
    best: tuple[int, int, int] | None = None
    for text in texts:
        for n, at in enumerate(_match_starts(text, highlight)):
            start = max(0, at - SNIPPET_LEAD)
            # what the snippet surely shows: it may begin up to 16 characters earlier
            this = key(analyze(text[start : start + SNIPPET_CHARS - 16]))
            if best is None or this > best:
                best, chosen = this, (text, None if n == 0 else at)
                if best >= goal:
                    return chosen
    return chosen


def _match_starts(text: str, highlight: frozenset[str]) -> Iterator[int]:
    """Where the whitespace-separated words of `text` holding a token of `highlight` start, in
    order, among the first REGION_WORDS words that may hold one. In an ASCII text only the words
    holding the first three letters of a token are read: every token of a word begins with three
    letters the lowercased word holds (`analyzer._first_ascii_match`)."""
    if text.isascii():
        folded = text.lower()
        beginnings = {t[:3] for t in highlight if t.isascii()}
        places = [(folded.find(b), b) for b in beginnings]
        heap = [place for place in places if place[0] >= 0]
        heapq.heapify(heap)
        words: Iterator[re.Match[str]] = _words_at(text, folded, heap)
    else:
        words = _WORD.finditer(text)
    for read, word in enumerate(words):
        if read >= REGION_WORDS:
            return
        if not highlight.isdisjoint(tokens(word.group())):
            yield word.start()


def _words_at(text: str, folded: str, heap: list[tuple[int, str]]) -> Iterator[re.Match[str]]:
    """The whitespace-separated words of `text` holding the places on `heap` (where each
    beginning occurs in `folded`), in order, each once."""
    last = -1
    while heap:
        at, beginning = heapq.heappop(heap)
        following = folded.find(beginning, at + 1)
        if following >= 0:
            heapq.heappush(heap, (following, beginning))
        if at < last:
            continue  # inside the word given last
        begin = at
        while begin > 0 and not text[begin - 1].isspace():
            begin -= 1
        word = _WORD.match(text, begin)
        if word is None:
            return
        last = word.end()
        yield word


_WORD = re.compile(r"\S+")


def labeled_text(
    conn: sqlite3.Connection, row: sqlite3.Row | dict[str, object], passage: int
) -> tuple[str, list[str]]:
    """The label and the original texts of passage number `passage` of a turn row (which
    holds `id`, `user_text`, `assistant_text` and `notices`): `user`, `assistant`, a notice's
    kind, or `tool #12 Bash npm test, exit 1` with that call, the paths it wrote and the
    result's edges the index holds; their secrets masked (`masked`)."""
    if passage == USER:
        return "user", [masked(str(row["user_text"] or ""))]
    if passage == ASSISTANT:
        return "assistant", [masked(str(row["assistant_text"] or ""))]
    notices = json.loads(str(row["notices"])) if row["notices"] else []
    if passage - 2 < len(notices):
        notice = notices[passage - 2]
        return str(notice["kind"]), [masked(str(notice["text"]))]
    return _tool_text(conn, int(str(row["id"])), passage - 2 - len(notices))


def masked(text: str) -> str:
    """`text` with its secrets masked as memory search masks a hit (core/secrets/mask.py,
    `…[40 chars]`), before a snippet is cut from it: a cut never leaves a secret's tail, or a
    password without the words that make it one, in a search's output. The secret rules' cheap
    test runs first; the scanner loads only for a text it lets through."""
    from teamlore.core.secrets.mask import masked_text

    return masked_text(text)


TOOL_LABEL_CHARS = 60
# between the two edges of a long result the index holds, where a snippet may show them side by
# side: what lies between them was never indexed (docs/sessions.md, "Passages")
RESULT_CUT = "\n[…]\n"


def _tool_text(conn: sqlite3.Connection, turn_id: int, seq: int) -> tuple[str, list[str]]:
    """A tool use's passage as the index holds it (`ToolRecord` search parts)."""
    tool = conn.execute(
        "SELECT seq, name, exit_code, substr(coalesce(command, input, ''), 1, ?) AS call,"
        " CASE WHEN result_truncated = 0 AND length(result_head) <= ? THEN result_head"
        " ELSE substr(result_head, 1, ?) || ? ||"
        " substr(coalesce(result_tail, result_head), -?) END AS result,"
        " (SELECT group_concat(path, char(10)) FROM file_touches f"
        "  WHERE f.turn_id = u.turn_id AND f.tool_use_id = u.id AND f.kind = 'write') AS paths"
        " FROM tool_uses u WHERE turn_id = ? AND seq = ?",
        (
            FTS_TOOL_CHARS,
            2 * FTS_RESULT_EDGE_CHARS,
            FTS_RESULT_EDGE_CHARS,
            RESULT_CUT,
            FTS_RESULT_EDGE_CHARS,
            turn_id,
            seq,
        ),
    ).fetchone()
    if tool is None:
        return "", []
    call = masked(" ".join(str(tool["call"]).split()))  # before the label cuts it
    label = f"tool #{tool['seq'] + 1} {tool['name']} {call[:TOOL_LABEL_CHARS]}".rstrip()
    if len(call) > TOOL_LABEL_CHARS:
        label += "…"
    if tool["exit_code"] is not None:
        label += f", exit {tool['exit_code']}"
    parts = (call, masked(str(tool["paths"] or "")), masked(str(tool["result"] or "")))
    return label, [p for p in parts if p]


# -- English queries over Chinese turns (queries._translated) -----------------------------------

Translation = list[list[tuple[QueryTerm, ...]]]  # per query term, its translations' terms


def translated_share(
    parsed: Query, alternatives: Translation, body: str, starts: bytes | None
) -> tuple[Callable[[], Held], float]:
    """Where the analyzed `body` holds the terms of `parsed` as typed or as one of their
    translations (by passage, asked only of a turn shown: its snippet), and the share of them
    the whole turn holds of those it could hold in either language: a term the dictionary
    does not translate counts only where it is held as typed (a Chinese turn cannot hold
    "fewer" or "PRs" but in English; docs/hybrid-search.md, "English queries over Chinese
    turns")."""

    def holds(analyzed: str) -> list[bool]:
        padded = f" {analyzed} "
        return [
            term.found_in(padded) or any(all(part.found_in(padded) for part in alt) for alt in alts)
            for term, alts in zip(parsed.terms, alternatives, strict=True)
        ]

    whole = holds(body)
    possible = sum(held or bool(alts) for held, alts in zip(whole, alternatives, strict=True))
    identifier = has_identifier(parsed)
    where = partial(held_by, lambda analyzed: sum(holds(analyzed)), body, starts, identifier)
    return where, sum(whole) / max(possible, 1)


# -- the words' ranking, the same first turns whatever the page size --------------------------
#
# The words' ranking of a session search: turns holding more of the query's terms in one passage
# first, then BM25 (docs/search.md, "Which results are ranked"), the same best turns whatever
# the page size (docs/sessions.md, "Search speed").
#
# BM25 picks the candidates and the terms they hold order them, so a larger candidate set can
# bring a turn holding more terms above the first ones. The candidates are therefore not sized by
# the page: the first FIRST_TIER places are ordered from the best FIRST_CANDIDATES whatever the
# limit (a hybrid search's words take FIRST_TIER turns too), the next FIRST_TIER from twice as
# many, the next 2 * FIRST_TIER from four times as many, and so on: the first N turns of a
# longer page are the page of N.

# the places the first candidates order: a hybrid search's depth (queries.FUSION_DEPTH)
FIRST_TIER = 30
# BM25 over any of the terms picks this many candidates for them, twice as many for the next
# tier and so on (docs/search.md): what a page of 20 had (5 per hit), now for any page size
FIRST_CANDIDATES = 100

Scored = tuple[Held, float, sqlite3.Row]  # (query terms held, BM25 strength, turn row)


def tiers(limit: int) -> list[int]:
    """The places each candidate set orders, cumulative: 30, 60, 120, … up to `limit`."""
    ends = [FIRST_TIER]
    while ends[-1] < limit:
        ends.append(ends[-1] * 2)
    return ends


def best_turns(
    conn: sqlite3.Connection,
    parsed: Query,
    scoped: Callable[[str], str],
    clauses: list[str],
    params: list[Any],
    limit: int,
) -> tuple[list[Scored], bool]:
    """The best `limit` lexical matches, best first, and whether every match was ranked.
    `scoped`, `clauses`, `params`: the search's filters (`queries._turn_filters`)."""
    terms = len(parsed.terms)
    ends = tiers(limit)
    # one term: every match holds it, so BM25 nearly decides and a tier's places are its pool
    per_tier = FIRST_CANDIDATES if terms > 1 else FIRST_TIER

    def pool(end: int) -> int:
        return end // FIRST_TIER * per_tier

    wanted = pool(ends[-1])
    # A turn ranks by its best passage (docs/sessions.md, "Passages"): the passage holding most
    # query terms, then BM25. Turns holding every term are the likeliest to hold them in one
    # passage: the best of them are candidates, and so are the best of those holding any term,
    # unless a tier's places are all taken by turns holding every term in one passage (none of
    # those holding fewer can outrank them).
    rows, ranked_all = ranked_turns(
        conn, scoped(parsed.match_all()), clauses, params, wanted, with_body=True
    )
    every = [(held(parsed, r["body"], r["starts"]), -float(r["rank"]), r) for r in rows]
    whole = [found.best == terms for found, _s, _r in every]
    needs_any = [terms > 1 and sum(whole[: pool(end)]) < end for end in ends]
    some: list[Scored] = []
    if any(needs_any):
        partial, ranked_all = ranked_turns(
            conn, scoped(parsed.match_any()), clauses, params, wanted, with_body=True
        )
        known = {r["id"] for r in rows}
        some = [
            (held(parsed, r["body"], r["starts"]), -float(r["rank"]), r)
            for r in partial
            if r["id"] not in known
        ]
        # a row's place in its own BM25 ranking decides which tiers' candidates it is among
        positions = {r["id"]: place for place, r in enumerate(partial)}
    placed: list[Scored] = []
    seen: set[int] = set()
    for end, any_term in zip(ends, needs_any, strict=True):
        size = pool(end)
        candidates = every[:size] + (
            [item for item in some if positions[item[2]["id"]] < size] if any_term else []
        )
        candidates.sort(key=lambda item: (-item[0].weight, -item[1], item[2]["id"]))
        for item in candidates:
            if len(placed) >= end:
                break
            if item[2]["id"] not in seen:
                seen.add(item[2]["id"])
                placed.append(item)
    return placed[:limit], ranked_all
