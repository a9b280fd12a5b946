"""Memory search's BM25 computed from the FTS index's postings, kept per process
(docs/hybrid-search.md, "Speed").

FTS5's `bm25()` is called once per matching row (~1.2 µs each: a word most entries hold matches
9,000 of 10,000), which made it most of a search's time. A long-lived process (the MCP server,
the batch runner, a benchmark) therefore keeps the index's postings — for every token of
`approved_fts`, the rows holding it and how often — with each row's length, and computes the same
scores with numpy: FTS5's formula (fts5_aux.c) in its order of operations, in double precision,
so every score is the very double `bm25()` returns. Like FTS5 it counts a phrase's instances in
a row only where the branch holding the phrase matches the row (the tokens of an identifier's
parts count only when every part is there).

The postings are read on a process's second search of the same projection (with its order keys,
memory/store/order_keys.py; a one-shot `teamlore memory search` never reads them: reading every
row, ~150 ms of CPU at 10,000 entries, costs more than many searches), keyed by the state
database's random id and every owner's projection generation: each write of `approved_fts` is
one transaction that bumps its owner's generation (memory/store/projection.py), and the index's
BM25 statistics (rows, their average length, how many rows hold a token) span every owner. They
are read in one snapshot with that key. The rows' own text is split as FTS5's `unicode61`
tokenizer splits it (the analyzer's output: tokens separated by spaces); a row whose token count
differs from FTS5's own record, or a query FTS5 would read otherwise (a quoted phrase of several
tokens, a token our split may not share with the tokenizer), leaves the search to FTS5.
Memory: ~7.5 MB kept at 10,000 entries (~37 MB at the peak of reading them).
"""

from __future__ import annotations

import bisect
import math
import sqlite3
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from teamlore.memory.store.order_keys import Kept, OrderRow

if TYPE_CHECKING:
    from teamlore.core.analyzer import Query, QueryTerm

# FTS5's bm25() constants (fts5_aux.c): k1, b and the floor of a token's IDF
K1 = 1.2
B = 0.75
MIN_IDF = 1e-6

IndexStamp = tuple[object, str]  # (state DB id, every owner's projection generation)

_STAMP = (
    "SELECT (SELECT value FROM memory_state_meta WHERE key = 'memory_state_uuid'), "
    "(SELECT coalesce(group_concat(owner, ','), '') FROM (SELECT repository_key || ' ' || "
    "worktree_key || ' ' || generation AS owner FROM approved_projection ORDER BY owner))"
)


def index_stamp(conn: sqlite3.Connection) -> IndexStamp:
    """What names the index's current rows (see the module's docstring)."""
    uuid, owners = conn.execute(_STAMP).fetchone()
    return uuid, owners


def _read_as_itself(token: str) -> bool:
    """A token FTS5's `unicode61` reads as one token, unchanged: letters without case or
    diacritics (Chinese characters, kana, hangul: Unicode's `Lo`), so where the postings lack it
    no row holds it (a Chinese word's form in the other script, often absent)."""
    return all(unicodedata.category(char) == "Lo" for char in token)


class Unsupported(Exception):
    """A query this module does not score as FTS5 would: the caller asks FTS5."""


@dataclass(frozen=True, slots=True)
class _Phrase:
    """One FTS5 phrase: a token, or (`prefix`) every token starting with it."""

    token: str
    prefix: bool


@dataclass(frozen=True, slots=True)
class _Node:
    """An AND or OR of phrases and nodes, as the term's MATCH expression groups them."""

    conjunction: bool
    children: tuple[_Phrase | _Node, ...]


def _term_node(term: QueryTerm) -> _Phrase | _Node:
    """`term.expr()` as a tree (the same phrases in the same order)."""
    if term.variants:
        return _Node(False, tuple(_term_node(form) for form in term.forms()))
    if term.kind == "phrase":
        raise Unsupported  # positions are not kept
    star = term.kind == "prefix"
    last = len(term.parts) - 1
    parts = tuple(_Phrase(p, star and i == last) for i, p in enumerate(term.parts))
    conj: _Phrase | _Node = parts[0] if len(parts) == 1 else _Node(True, parts)
    if term.whole and len(parts) > 1:
        return _Node(False, (_Phrase(term.whole, star), conj))
    return conj


# one phrase's part of the score: its frequencies per column, its IDF, and where it counts
_Counted = tuple[NDArray[np.float64], float, NDArray[np.bool_] | None]
# one phrase's frequencies per column, the columns holding it, its IDF
_Found = tuple[NDArray[np.float64], NDArray[np.bool_], float]


class Postings:
    """The postings of `approved_fts` at one index stamp (`PostingsCache`)."""

    __slots__ = ("_owner", "average", "freqs", "ids", "lengths", "rows", "starts", "terms", "words")

    def __init__(
        self,
        ids: NDArray[np.int64],
        lengths: NDArray[np.float64],
        words: list[str],
        starts: NDArray[np.int64],
        columns: NDArray[np.int32],
        freqs: NDArray[np.float64],
    ) -> None:
        self.ids, self.lengths, self.words, self.starts = ids, lengths, words, starts
        self.terms, self.freqs = columns, freqs
        self.rows = len(ids)
        self.average = float(lengths.sum()) / float(self.rows) if self.rows else 0.0
        self._owner: tuple[Kept, _OwnerColumns] | None = None

    # -- matching ---------------------------------------------------------------------------

    def _frequencies(self, phrase: _Phrase) -> NDArray[np.float64]:
        """How often the phrase occurs in each row (dense, one value per column)."""
        first = bisect.bisect_left(self.words, phrase.token)
        last = first
        if phrase.prefix:
            while last < len(self.words) and self.words[last].startswith(phrase.token):
                last += 1
        elif first < len(self.words) and self.words[first] == phrase.token:
            last = first + 1
        elif not phrase.token.isascii() and not _read_as_itself(phrase.token):
            raise Unsupported  # the tokenizer might read it as other tokens than ours
        begin, end = int(self.starts[first]), int(self.starts[last])
        counts = np.bincount(
            self.terms[begin:end], weights=self.freqs[begin:end], minlength=self.rows
        )
        return counts.astype(np.float64, copy=False)

    def _evaluate(
        self,
        node: _Phrase | _Node,
        counted: list[_Counted],
        within: NDArray[np.bool_] | None,
        seen: dict[_Phrase, _Found],
    ) -> NDArray[np.bool_]:
        """Which rows match `node`; appends its phrases to `counted` in order, each with where
        FTS5 counts its instances (`within`: the rows every enclosing AND matches). `seen`:
        the phrases one search has met, with their frequencies, matches and IDF (its terms
        are evaluated alone, then together)."""
        if isinstance(node, _Phrase):
            found = seen.get(node)
            if found is None:
                found = seen[node] = self._found(node)
            counted.append((found[0], found[2], within))
            return found[1]
        start = len(counted)
        matches = [self._evaluate(child, counted, within, seen) for child in node.children]
        combine = np.logical_and if node.conjunction else np.logical_or
        matched: NDArray[np.bool_] = combine.reduce(matches)
        if node.conjunction:  # a phrase of an AND counts only where all of the AND matches
            counted[start:] = [
                (freq, idf, matched if mask is None else mask & matched)
                for freq, idf, mask in counted[start:]
            ]
        return matched

    def _found(self, phrase: _Phrase) -> _Found:
        freq = self._frequencies(phrase)
        found = freq > 0
        documents = int(np.count_nonzero(found))
        idf = math.log((self.rows - documents + 0.5) / (documents + 0.5))
        return freq, found, idf if idf > 0.0 else MIN_IDF

    def terms_found(
        self, terms: Sequence[QueryTerm], seen: dict[_Phrase, _Found] | None = None
    ) -> list[NDArray[np.bool_]]:
        """Per term, which rows match it (`Unsupported` when FTS5 must answer)."""
        seen = {} if seen is None else seen
        return [self._evaluate(_term_node(term), [], None, seen) for term in terms]

    def bm25(
        self, query: Query, every: bool, seen: dict[_Phrase, _Found] | None = None
    ) -> tuple[NDArray[np.bool_], list[_Counted]]:
        """The rows matching the terms (all of them with `every`, else any) and the phrases
        their scores sum."""
        counted: list[_Counted] = []
        top = _Node(every, tuple(_term_node(term) for term in query.terms))
        return self._evaluate(top, counted, None, {} if seen is None else seen), counted

    def scores(self, columns: NDArray[np.intp], counted: list[_Counted]) -> NDArray[np.float64]:
        """FTS5's bm25() of the rows at `columns`: the sum over phrases, in query order, of
        IDF × f·(k1 + 1) / (f + k1·(1 − b + b·|D| / avgdl)), negated (lower is better)."""
        norm = K1 * ((1 - B) + B * self.lengths[columns] / self.average)
        score = np.zeros(len(columns), dtype=np.float64)
        for freq, idf, mask in counted:
            f = freq[columns]
            if mask is not None:
                f = np.where(mask[columns], f, 0.0)
            score = score + idf * ((f * (K1 + 1.0)) / (f + norm))
        return -1.0 * score

    # -- the owner's rows ---------------------------------------------------------------------

    def owner_columns(self, keys: Kept) -> _OwnerColumns:
        """The owner's rows as columns: their status and their place in (kind, entry id)
        order (one owner at a time is kept)."""
        kept = self._owner
        if kept is not None and kept[0] is keys:
            return kept[1]
        columns = _OwnerColumns.of(self.ids, keys)
        self._owner = (keys, columns)
        return columns


APPROVED, DEPRECATED = 1, 2
_ELSEWHERE = OrderRow(0, "", "", "")  # another owner's row: never chosen (status 0)


@dataclass(frozen=True, slots=True)
class _OwnerColumns:
    status: NDArray[np.int8]  # 0: another owner's row, APPROVED or DEPRECATED
    order: NDArray[np.int64]  # the row's place in (kind, entry id) order
    rows: list[OrderRow]  # per column, the owner's order row (another owner's: a placeholder)

    @classmethod
    def of(cls, ids: NDArray[np.int64], keys: Kept) -> _OwnerColumns:
        found = [keys.rows.get(i) for i in ids.tolist()]
        status = np.fromiter(
            (0 if r is None else APPROVED if r.status == "approved" else DEPRECATED for r in found),
            dtype=np.int8,
            count=len(found),
        )
        rows = [_ELSEWHERE if r is None else r for r in found]
        placed = sorted(
            np.flatnonzero(status).tolist(), key=lambda c: (rows[c].kind, rows[c].entry_id)
        )
        order = np.zeros(len(rows), dtype=np.int64)
        order[placed] = np.arange(len(placed))
        return cls(status, order, rows)

    def best(
        self,
        matched: NDArray[np.bool_],
        postings: Postings,
        counted: list[_Counted],
        include_deprecated: bool,
        window: int,
    ) -> tuple[list[OrderRow], list[float]]:
        """The owner's `window` best matching rows, ordered as memory search's SQL orders them
        (deprecated last, then BM25, kind and entry id), and their BM25 strengths (−rank)."""
        rows: list[OrderRow] = []
        strengths: list[float] = []
        for status in (APPROVED, DEPRECATED) if include_deprecated else (APPROVED,):
            columns = np.flatnonzero(matched & (self.status == status))
            ranks = postings.scores(columns, counted)
            chosen = _first(ranks, self.order[columns], window - len(rows))
            rows += map(self.rows.__getitem__, columns[chosen].tolist())
            strengths += (-ranks[chosen]).tolist()
            if len(rows) >= window:
                break
        return rows, strengths


def _first(ranks: NDArray[np.float64], order: NDArray[np.int64], count: int) -> NDArray[np.intp]:
    """The positions of the `count` smallest (rank, order), in that order."""
    if count <= 0 or not len(ranks):
        return np.zeros(0, dtype=np.intp)
    if len(ranks) > count:  # the cut's rank, and every row at or under it (ties kept whole)
        cut = np.partition(ranks, count - 1)[count - 1]
        near = np.flatnonzero(ranks <= cut)
    else:
        near = np.arange(len(ranks))
    sorted_near = near[np.lexsort((order[near], ranks[near]))]
    return sorted_near[:count]


class OwnerSearch:
    """One search's questions to the postings for one owner: memory search's lexical ranking
    asks them of FTS5 otherwise (`search._Index`), with the same answers."""

    def __init__(self, postings: Postings, keys: Kept) -> None:
        self._postings, self._owner = postings, postings.owner_columns(keys)
        self._found: list[NDArray[np.bool_]] = []
        self._seen: dict[_Phrase, _Found] = {}  # each phrase counted once per search

    def found(self, parsed: Query) -> list[int]:
        """How many rows each term matches (nothing for a one-term query, as FTS5's side)."""
        terms = parsed.terms
        self._found = self._postings.terms_found(terms, self._seen) if len(terms) > 1 else []
        return [int(np.count_nonzero(found)) for found in self._found]

    def documents(self) -> int:
        return self._postings.rows

    def holding(self, every: Query) -> int:
        return int(np.count_nonzero(self._postings.bm25(every, True, self._seen)[0]))

    def run(
        self, terms: Query, every: bool, include_deprecated: bool, window: int
    ) -> tuple[list[OrderRow], list[float]]:
        matched, counted = self._postings.bm25(terms, every, self._seen)
        return self._owner.best(matched, self._postings, counted, include_deprecated, window)

    def held(self, ids: list[int]) -> list[int]:
        if not self._found or not ids:
            return [1] * len(ids)
        columns = np.searchsorted(self._postings.ids, np.asarray(ids, dtype=np.int64))
        held: list[int] = np.sum([found[columns] for found in self._found], axis=0).tolist()
        return held


# --------------------------------------------------------------------------------------------
# reading and keeping


def _read(conn: sqlite3.Connection, stamp: IndexStamp) -> Postings | None:
    """The postings of the index at `stamp`, read in one snapshot; None when the index moved
    on, or when our split of its rows disagrees with FTS5's count of their tokens."""
    began = not conn.in_transaction
    if began:
        conn.execute("BEGIN")
    try:
        if index_stamp(conn) != stamp:
            return None
        rows = conn.execute(
            "SELECT rowid, searchable_text FROM approved_fts ORDER BY rowid"
        ).fetchall()
        totals = conn.execute("SELECT block FROM approved_fts_data WHERE id = 1").fetchone()
    finally:
        if began:
            conn.execute("COMMIT")
    ids = np.fromiter(map(itemgetter(0), rows), dtype=np.int64, count=len(rows))
    texts = [row[1] or "" for row in rows]
    # the analyzer joins a row's tokens by single spaces: a row of n tokens holds n - 1 spaces
    lengths = np.fromiter(
        (text.count(" ") + 1 if text else 0 for text in texts), dtype=np.int64, count=len(rows)
    )
    found, words = _numbered(texts)
    # FTS5 splits a row into at least as many tokens as `str.split`, which splits it into at
    # most as many as counted: equal totals make every row's count FTS5's
    if len(found) != int(lengths.sum()) or _totals(totals) != (len(rows), len(found)):
        return None
    return _postings(ids, lengths, found, words)


# rows split at a time: the tokens of every row at once, as Python strings, held ~70 MB at
# 10,000 entries; a thousand rows' hold ~7
SPLIT_ROWS = 1000


def _numbered(texts: list[str]) -> tuple[NDArray[np.int64], list[str]]:
    """Every token of the rows in order, as its number in the sorted vocabulary, and that
    vocabulary."""
    number: dict[str, int] = {}
    parts: list[NDArray[np.int64]] = []
    for first in range(0, len(texts), SPLIT_ROWS):
        tokens = " ".join(texts[first : first + SPLIT_ROWS]).split()
        for word in set(tokens).difference(number):
            number[word] = len(number)
        parts.append(np.fromiter(map(number.__getitem__, tokens), np.int64, len(tokens)))
    words = sorted(number)
    place = np.empty(len(number), dtype=np.int64)  # first-seen number → sorted number
    place[[number[word] for word in words]] = np.arange(len(words))
    found = place[np.concatenate(parts)] if parts else np.zeros(0, dtype=np.int64)
    return found, words


def _totals(record: tuple[bytes] | None) -> tuple[int, int]:
    """FTS5's rows and tokens in all (its averages record: two varints for one column; empty
    while the table has never held a row)."""
    if record is None or not record[0]:
        return 0, 0
    rows, at = _varint(record[0], 0)
    tokens, _ = _varint(record[0], at)
    return rows, tokens


def _varint(blob: bytes, at: int) -> tuple[int, int]:
    """SQLite's varint at `at` and the offset after it."""
    value = 0
    for i in range(9):
        byte = blob[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    raise AssertionError("unreachable")


def _postings(
    ids: NDArray[np.int64], lengths: NDArray[np.int64], found: NDArray[np.int64], words: list[str]
) -> Postings:
    """Every token's rows and counts: the (token, row) pairs sorted by token (a stable sort
    keeps each token's rows in order) and counted."""
    small = np.uint16 if len(words) <= 1 << 16 else np.int64  # a radix sort for up to 65,536
    term = found.astype(small)
    column = np.repeat(np.arange(len(ids), dtype=np.int32), lengths)
    order = np.argsort(term, kind="stable")
    term, column = term[order], column[order]
    new = np.ones(len(term), dtype=bool)
    new[1:] = (term[1:] != term[:-1]) | (column[1:] != column[:-1])
    firsts = np.flatnonzero(new)
    counts = np.diff(np.append(firsts, len(term))).astype(np.float64)
    starts = np.searchsorted(term[firsts], np.arange(len(words) + 1)).astype(np.int64)
    return Postings(ids, lengths.astype(np.float64), words, starts, column[firsts], counts)


class PostingsCache:
    """The postings of the last index state this process searched (`get`). Safe across threads
    (the MCP server)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stamp: IndexStamp | None = None
        self._postings: Postings | None = None

    def get(self, conn: sqlite3.Connection) -> Postings | None:
        """The index's postings, read now unless kept for its current state; None when they
        cannot stand for FTS5 (then FTS5 answers). Memory search asks only on a process's
        second search of a projection (when it keeps its order keys, memory/store/order_keys.py),
        so a one-shot search never reads them."""
        stamp = index_stamp(conn)
        with self._lock:
            if self._stamp == stamp:
                return self._postings
        postings = _read(conn, stamp)
        with self._lock:  # kept even when None: a state our split disagrees with is not re-read
            self._stamp, self._postings = stamp, postings
        return postings

    def clear(self) -> None:
        with self._lock:
            self._stamp = None
            self._postings = None


POSTINGS = PostingsCache()
