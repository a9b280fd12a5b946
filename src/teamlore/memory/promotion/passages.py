"""The passage of a cited turn that best supports a statement (docs/memory.md, "Evidence a
reviewer sees").

A turn is cut into passages: windows of the person's text, of the agent's text, and of each
tool call (its name and main argument, then windows of its output). The statement is the query;
the passages are ranked the way every search here ranks (docs/hybrid-search.md): BM25 over the
analyzed text (`core.analyzer`, an in-memory FTS5 table) with the share of the statement's
terms each passage holds, fused by `core.fusion.fuse` with the bundled embedding model's
similarity when it reads the statement's language. No scoring of its own.

The best passage is the excerpt a reviewer sees, with where it is: `turn N` and, for a tool
call, `tool #M` as `teamlore sessions show` numbers them. A statement about one call (a
command-exit typed fact) is matched against that call's passages only.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teamlore.core.analyzer import analyze, fts_query, parse_query
from teamlore.core.fusion import fuse
from teamlore.core.secrets.mask import masked_text
from teamlore.core.text.excerpts import PATH_SEPARATORS, excerpt

# a passage is at most this many characters: short enough to read as an excerpt
PASSAGE_CHARS = 480
# a tool header's command or input is at most this many cells, cut where excerpts are
TOOL_DETAIL_CELLS = 160
# a passage less similar than this (cosine) is not "near" the statement (the bundled model's
# floor of sessions search, sessions/queries.py MIN_SIMILARITY)
MIN_SIMILARITY = 0.2
# each ranking contributes this many passages to the fusion
FUSION_DEPTH = 30


# A review is read again and again (the review page reloads a candidate on each decision, the
# queue every candidate): the work it repeats is kept — a turn's passages (masking its secrets is
# most of the cost), their vectors and a statement's, and how the words of a statement rank a
# turn's passages. Each result is keyed by a digest of everything it is computed from (never by
# those texts themselves: a key holding a turn's text kept it alive), so a kept result is what
# computing it again gives; each cache holds at most CACHED results and at most its budget of
# bytes of them (least recently used dropped first; a result bigger than the whole budget is not
# kept), so a long-running `teamlore ui` holds a few megabytes however big the turns it reviewed.
CACHED = 512
PASSAGES_BUDGET = 8 * 1024 * 1024
VECTORS_BUDGET = 8 * 1024 * 1024
RANKINGS_BUDGET = 1024 * 1024


class _Kept:
    """Results by key, least recently used dropped first, within `CACHED` of them and `budget`
    bytes (each result weighed by `weigh`)."""

    def __init__(self, budget: int, weigh: Callable[[Any], int]) -> None:
        self.budget = budget
        self.weigh = weigh
        self.held = 0
        self._results: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            found = self._results.get(key)
            if found is None:
                return None
            self._results.move_to_end(key)
            return found[0]

    def keep(self, key: Hashable, value: Any) -> Any:
        weight = self.weigh(value)
        if weight > self.budget:
            return value
        with self._lock:
            previous = self._results.pop(key, None)
            if previous is not None:
                self.held -= previous[1]
            self._results[key] = (value, weight)
            self.held += weight
            while len(self._results) > CACHED or self.held > self.budget:
                self.held -= self._results.popitem(last=False)[1][1]
        return value

    def clear(self) -> None:
        with self._lock:
            self._results.clear()
            self.held = 0


def _passages_weight(passages: list[Passage]) -> int:
    return sys.getsizeof(passages) + sum(
        sys.getsizeof(p) + sys.getsizeof(p.text) + sys.getsizeof(p.header) for p in passages
    )


def _ranking_weight(ranking: list[tuple[int, float]]) -> int:
    return sys.getsizeof(ranking) + len(ranking) * (sys.getsizeof((0, 0.0)) + 56)


def _array_weight(array: Any) -> int:
    """An array's bytes: `sys.getsizeof` counts the data of an array that owns it, a view's
    data is its base's (counted once either way)."""
    if getattr(array, "base", None) is None:
        return sys.getsizeof(array)
    return sys.getsizeof(array) + int(getattr(array, "nbytes", 0))


_PASSAGES = _Kept(PASSAGES_BUDGET, _passages_weight)
_EMBEDDED = _Kept(VECTORS_BUDGET, _array_weight)
_QUERIES = _Kept(RANKINGS_BUDGET, _array_weight)
_LEXICAL = _Kept(RANKINGS_BUDGET, _ranking_weight)


def clear_caches() -> None:
    """Forget every kept result (tests; a result is recomputed the next time it is asked)."""
    for cache in (_PASSAGES, _EMBEDDED, _QUERIES, _LEXICAL):
        cache.clear()


def _digest(*parts: str | int | None) -> bytes:
    """blake2b of `parts`, each tagged with its type and length so no two lists share one."""
    hashed = hashlib.blake2b(digest_size=32)
    for part in parts:
        if part is None:
            hashed.update(b"n;")
        elif isinstance(part, int):
            hashed.update(b"i%d;" % part)
        else:
            data = part.encode("utf-8", "surrogatepass")
            hashed.update(b"s%d:" % len(data))
            hashed.update(data)
    return hashed.digest()


@dataclass(frozen=True, slots=True)
class Passage:
    """One window of a turn: `part` is user | assistant | tool; `tool` the call's number in
    `teamlore sessions show` (1-based), for a tool passage."""

    part: str
    text: str
    tool: int | None = None
    header: str = ""  # a tool call's name and main argument, shown above its output window

    def shown(self) -> str:
        return f"{self.header}\n{self.text}".strip() if self.header else self.text


@dataclass(frozen=True, slots=True)
class Support:
    passage: Passage
    matched_by: tuple[str, ...]  # lexical / vector; () when nothing matched (the turn's opening)


def windows(text: str, limit: int = PASSAGE_CHARS) -> list[str]:
    """`text` as consecutive windows of whole lines (a line longer than `limit`: cut at
    spaces), each at most `limit` characters; blank lines separate windows early."""
    out: list[str] = []
    current: list[str] = []
    size = 0
    for line in _short_lines(text, limit):
        if current and (size + len(line) + 1 > limit or not line.strip()):
            out.append("\n".join(current).strip("\n"))
            current, size = [], 0
        if line.strip():
            current.append(line)
            size += len(line) + 1
    if current:
        out.append("\n".join(current).strip("\n"))
    return [w for w in out if w.strip()]


# where a line too long for a window is cut, in this order: at a space, after a path separator
# (`src/app/` + `…api/route.ts`), else on a character; a cut that is not at a space is marked
# `…` on both sides, so a path broken in two never reads as two names
CUT_MARK = "…"


def _short_lines(text: str, limit: int) -> list[str]:
    lines: list[str] = []
    for line in text.splitlines():
        while len(line) > limit:
            cut = line.rfind(" ", 0, limit)
            if cut > limit // 2:
                lines.append(line[:cut])
                line = line[cut:].lstrip()
                continue
            room = limit - len(CUT_MARK)
            cut = max(line.rfind(s, 0, room) for s in PATH_SEPARATORS) + 1
            cut = cut if cut > limit // 2 else room
            lines.append(line[:cut] + CUT_MARK)
            line = CUT_MARK + line[cut:]
        lines.append(line)
    return lines


def tool_header(tool: Any) -> str:
    """`#M name main-argument (status, exit N)` for a selection.ToolRow (its secrets masked
    before it is cut, so no piece of one is left)."""
    detail = excerpt(masked_text(tool.command or tool.input or ""), TOOL_DETAIL_CELLS)
    exit_code = "" if tool.exit_code is None else f", exit {tool.exit_code}"
    return f"#{tool.seq + 1} {tool.name} {detail} ({tool.status}{exit_code})".replace("  ", " ")


def turn_passages(turn: Any) -> list[Passage]:
    """Every passage of a selection.SelectedTurn, in the order of the turn. Each text has its
    secrets masked (core/secrets/mask.py) before it is cut into windows: a passage is the
    excerpt a reviewer sees, and a window's edge must not leave a piece of a token unmasked."""
    fields: list[str | int | None] = [turn.user_text, turn.assistant_text, len(turn.tools)]
    for t in turn.tools:
        fields += [t.seq, t.name, t.command, t.input, t.status, t.exit_code]
        fields += [t.result_head, t.result_tail]
    key = _digest(*fields)
    kept = _PASSAGES.get(key)
    if kept is None:
        kept = _PASSAGES.keep(key, _turn_passages(turn))
    return list(kept)


def _turn_passages(turn: Any) -> list[Passage]:
    passages = [Passage("user", w) for w in windows(masked_text(turn.user_text))]
    passages += [Passage("assistant", w) for w in windows(masked_text(turn.assistant_text))]
    for tool in turn.tools:
        header = tool_header(tool)
        output = "\n".join(p for p in (tool.result_head, tool.result_tail) if p)
        parts = windows(masked_text(output)) or [""]
        passages += [Passage("tool", w, tool=tool.seq + 1, header=header) for w in parts]
    return passages


def _lexical(statement: str, passages: Sequence[Passage]) -> list[tuple[int, float]]:
    """(passage index, share of the statement's terms held), best BM25 first."""
    key = _digest(statement, len(passages), *(p.shown() for p in passages))
    kept = _LEXICAL.get(key)
    if kept is None:
        kept = _LEXICAL.keep(key, _ranked(statement, passages))
    return list(kept)


def _ranked(statement: str, passages: Sequence[Passage]) -> list[tuple[int, float]]:
    match = fts_query(statement, mode="any")
    query = parse_query(statement)
    if not match or not query.terms:
        return []
    analyzed = [analyze(p.shown()) for p in passages]
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE passages USING fts5(body)")
        conn.executemany(
            "INSERT INTO passages(rowid, body) VALUES (?, ?)",
            ((i + 1, body) for i, body in enumerate(analyzed)),
        )
        rows = conn.execute(
            "SELECT rowid FROM passages WHERE passages MATCH ? ORDER BY bm25(passages), rowid"
            " LIMIT ?",
            (match, FUSION_DEPTH),
        ).fetchall()
    finally:
        conn.close()
    terms = len(query.terms)
    return [(int(r[0]) - 1, query.coverage(analyzed[int(r[0]) - 1]) / terms) for r in rows]


def _vector(statement: str, passages: Sequence[Passage], home: Path | None) -> list[int]:
    """Passage indexes nearest the statement by meaning (the bundled model only: a passage
    of a private transcript is never sent to an endpoint for this); [] when it cannot run."""
    from teamlore.core import errors
    from teamlore.models.embeddings import BundledEmbedder, configured_embedder

    try:
        embedder = configured_embedder(home)
    except errors.TeamloreError:
        return []
    if not isinstance(embedder, BundledEmbedder) or not embedder.reads(statement):
        return []
    texts = [p.shown() for p in passages]
    space = embedder.space.key
    try:
        key = _digest(space, len(texts), *texts)
        matrix = _EMBEDDED.get(key)
        if matrix is None:  # statements citing one turn embed its passages once
            matrix = _EMBEDDED.keep(key, embedder.embed(texts))
        key = _digest(space, statement)
        query = _QUERIES.get(key)
        if query is None:
            query = _QUERIES.keep(key, embedder.embed_query(statement))
        query = query.reshape(-1)
    except errors.TeamloreError:
        return []
    similarity = matrix @ query
    order = sorted(range(len(passages)), key=lambda i: (-float(similarity[i]), i))
    return [i for i in order[:FUSION_DEPTH] if float(similarity[i]) >= MIN_SIMILARITY]


def best_support(
    statement: str, turn: Any, home: Path | None = None, *, tool: int | None = None
) -> Support | None:
    """The passage of `turn` that best supports `statement` (None: the turn is empty); with
    `tool`, of that call's passages (its header and output windows) when the turn has it."""
    passages = turn_passages(turn)
    if tool is not None:
        passages = [p for p in passages if p.tool == tool] or passages
    if not passages:
        return None
    fused = fuse(_lexical(statement, passages), _vector(statement, passages, home))
    if not fused:
        return Support(passages[0], ())
    return Support(passages[fused[0].key], fused[0].matched_by)
