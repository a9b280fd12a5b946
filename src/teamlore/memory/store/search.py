"""Team-memory search: BM25 over the approved projection of one worktree, fused with an
embedding ranking (docs/hybrid-search.md).

The query goes through the same analyzer as the indexed text (`parse_query`): documents holding
any of its terms match; those holding more of the terms come first, then BM25 decides, exactly as
in turn search (docs/search.md). Snippets are cut from the original text around the first
matching term, never from the analyzed tokens.

With an embedder (mode `hybrid`, the default of `teamlore memory search`), the query is embedded
too and the owner's stored vectors (memory/store/vectors.py) are ranked by meaning
(memory/store/meaning.py): each model's cosines of each document's whole text and of its
headline alone (`projection.headline`: its title, else its body's first sentence — field
weighting: the headline states what the document is about, undiluted by its details and
metadata), standardized and summed. That ranking and the words' are fused by weighted
reciprocal rank (`core.fusion.fuse`, shared with session search). The result says which paths ran
(`paths`) and, when the vector path did not, why (`vector.reason`); each hit says which paths
found it (`matchedBy`: a headline match is a `vector` match). An embedder that fails at query
time leaves the lexical path alone, never an error.

Deprecated entries are excluded by default: a superseded claim is not what an agent should act
on. `include_deprecated=True` returns them too, always ranked after every approved document, with
their `status` so the caller can tell.

The response carries the projection's generation and coverage; a projection built with another
analyzer version (or never built) reports `partial`, since its index may not answer faithfully.
Beside our `results` it carries the seed's `items` (`{rank, entryId, revision, contentDigest,
status, summary}`, the same hits in the same order; docs/seed-conformance.md).
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections.abc import Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

from teamlore.core import errors
from teamlore.core.analyzer import (
    ANALYZER_VERSION,
    Query,
    parse_query,
    query_without_terms,
    relative_score,
    snippet,
)
from teamlore.core.fusion import (
    MEANING_WEIGHT,
    FusedScores,
    fused_scores,
    words_decide,
    words_only_ceiling,
)
from teamlore.core.fusion import Path as MatchPath
from teamlore.memory.store.layout import MEMORY_ROOT
from teamlore.memory.store.order_keys import ORDER_KEYS, Kept, OrderRow, Stamp
from teamlore.memory.store.tree_reader import Coverage, Kind
from teamlore.models.glosses import has_chinese, segmented

if TYPE_CHECKING:
    from teamlore.memory.store.vectors import ApprovedVectors
    from teamlore.models.embeddings import Embedder

MAX_QUERY_CHARS = 1024
MAX_LIMIT = 100

# `vector`: the whole-text ranking alone; `meaning`: the vector path alone (whole text and
# headline); both for benchmarks (bench/bench_hybrid_quality.py)
SearchMode = Literal["hybrid", "lexical", "vector", "meaning"]
SearchPath = Literal["lexical", "vector"]
Status = Literal["approved", "deprecated"]

# Fusion: core.fusion (docs/hybrid-search.md). The vector ranking offers its best VECTOR_DEPTH
# documents at cosine >= MIN_SIMILARITY (below that a static model's neighbours are unrelated
# text). Tuned on bench/bench_hybrid_quality.py.
VECTOR_DEPTH = 100
MIN_SIMILARITY = 0.1


# The result types are plain dataclasses: `memory search` is a short process, and building
# pydantic models would cost it more than its search (docs/architecture.md, "A short CLI
# process"). `to_json` gives the wire form: camelCase names, as the MCP tool has always answered.


class SearchHit(NamedTuple):
    id: str
    type: Kind  # entry | scene | doctrine | skill
    entry_type: str | None  # work_fact | work_task | work_method | work_artifact, entries only
    status: Status
    # higher is better. lexical: query terms held + BM25 strength in [0, 1); hybrid and vector:
    # the fused reciprocal-rank score as a share of the best possible one, in (0, 1]
    score: float
    snippet: str
    path: str  # repository-relative
    matched_by: list[MatchPath]
    revision: int
    content_digest: str
    summary: str = ""  # the seed's item summary (the body's first 240 chars); not on the wire

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "entryType": self.entry_type,
            "status": self.status,
            "score": self.score,
            "snippet": self.snippet,
            "path": self.path,
            "matchedBy": list(self.matched_by),
            "revision": self.revision,
            "contentDigest": self.content_digest,
        }


class SeedItem(NamedTuple):
    """One hit as the seed's search result names it."""

    rank: int
    entry_id: str
    revision: int
    content_digest: str
    status: Status
    summary: str

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "entryId": self.entry_id,
            "revision": self.revision,
            "contentDigest": self.content_digest,
            "status": self.status,
            "summary": self.summary,
        }


class VectorPath(NamedTuple):
    """Whether the embedding ranking ran, in which space, and if not, why."""

    ran: bool
    space: str | None = None
    documents: int = 0  # documents with a vector in `space`
    reason: str | None = None  # why it did not run
    code: str | None = None  # the error code, when a failure stopped it

    def to_json(self, *, exclude_none: bool = False) -> dict[str, Any]:
        wire = {
            "ran": self.ran,
            "space": self.space,
            "documents": self.documents,
            "reason": self.reason,
            "code": self.code,
        }
        return {k: v for k, v in wire.items() if v is not None} if exclude_none else wire


class SearchResult(NamedTuple):
    generation: int
    coverage: Coverage
    paths: list[SearchPath]
    vector: VectorPath
    results: list[SearchHit]
    items: list[SeedItem]
    # the documents of the owner's projection (deprecated ones too): no results from a memory
    # holding none says "promote some", from one holding some "try other words"
    documents: int = 0

    def to_json(self) -> dict[str, Any]:
        """The wire form (the `threadshare-memory-search@v1` response)."""
        return {
            "generation": self.generation,
            "coverage": self.coverage,
            "paths": list(self.paths),
            "vector": self.vector.to_json(),
            "results": [hit.to_json() for hit in self.results],
            "items": [item.to_json() for item in self.items],
            "documents": self.documents,
        }


NO_EMBEDDER = VectorPath(ran=False, reason="no embedding model was given")


def search_memory(
    conn: sqlite3.Connection,
    *,
    repository_key: str,
    worktree_key: str,
    query: str,
    limit: int = 10,
    include_deprecated: bool = False,
    embedder: Embedder | None = None,
    mode: SearchMode = "hybrid",
    skipped: VectorPath = NO_EMBEDDER,
) -> SearchResult:
    """Search the owner's approved projection. Without `embedder` (or with mode `lexical`) only
    BM25 runs and `skipped` says why; modes `vector` and `meaning` rank by embedding alone
    (benchmarks)."""
    by_words = mode in ("hybrid", "lexical")
    if not 1 <= limit <= MAX_LIMIT:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, f"limit must be between 1 and {MAX_LIMIT}", limit=limit
        )
    if len(query) > MAX_QUERY_CHARS:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, f"the query is longer than {MAX_QUERY_CHARS} characters"
        )
    typed = parse_query(query)
    parsed = segmented(typed)
    if not parsed.terms and by_words:
        raise query_without_terms(query)
    generation, coverage, stamp, documents = _projection_state(conn, repository_key, worktree_key)
    owner = (repository_key, worktree_key)
    keys = None if stamp is None else ORDER_KEYS.get(conn, stamp)
    vector_path, meaning = (
        _vector_ranking(conn, owner, query, embedder, include_deprecated, mode != "vector")
        if embedder is not None and mode != "lexical"
        else (skipped, [])
    )
    if not by_words and not vector_path.ran:
        raise errors.TeamloreError(
            errors.EMBEDDINGS_UNAVAILABLE, vector_path.reason or "no embedding model"
        )
    lexical = (
        _lexical(
            conn, owner, parsed, include_deprecated, limit if not vector_path.ran else None, keys
        )
        if by_words
        else []
    )
    paths: list[SearchPath] = ["lexical"] if by_words else []
    if vector_path.ran:
        paths.append("vector")
    if vector_path.ran:
        # a Chinese query: its literal matches decide too (docs/hybrid-search.md, "Words are
        # never outvoted", rule 5): the static model reads no Chinese document, so the meaning
        # ranking leans to English ones
        keep_words = words_decide(typed, parsed) or has_chinese(query)
        results = _fused(conn, parsed, lexical, meaning, limit, keep_words, keys)
    else:
        results = _lexical_hits(conn, parsed, lexical)
    return SearchResult(
        generation=generation,
        coverage=coverage,
        paths=paths,
        vector=vector_path,
        results=results,
        items=seed_items(results),
        documents=documents,
    )


def seed_items(results: list[SearchHit]) -> list[SeedItem]:
    return [
        SeedItem(
            rank=rank,
            entry_id=hit.id,
            revision=hit.revision,
            content_digest=hit.content_digest,
            status=hit.status,
            summary=hit.summary,
        )
        for rank, hit in enumerate(results, start=1)
    ]


def _lexical(
    conn: sqlite3.Connection,
    owner: tuple[str, str],
    parsed: Query,
    include_deprecated: bool,
    limit: int | None,
    keys: Kept | None = None,
) -> list[tuple[int, float, OrderRow]]:
    """(terms held, BM25 strength, slim row) best first: the lexical ranking (all of it, or
    `limit`). Rows carry only the ordering columns; `_full_rows` fetches what a hit shows.
    `keys`: the owner's order keys when this process keeps them (memory/store/order_keys.py);
    with them, the index's postings when it keeps those too (memory/store/postings.py: the
    same ranks, computed without FTS5's per-row `bm25()`)."""
    if keys is not None:  # a process's second search of this projection: numpy may load
        from teamlore.memory.store.postings import POSTINGS, OwnerSearch, Unsupported

        postings = POSTINGS.get(conn)
        if postings is not None:
            try:
                return _ranked(OwnerSearch(postings, keys), parsed, include_deprecated, limit)
            except Unsupported:
                pass  # FTS5 answers this query
    return _ranked(_FtsSearch(conn, owner, keys), parsed, include_deprecated, limit)


class _Index(Protocol):
    """What the lexical ranking asks of the index: FTS5 (`_FtsSearch`) or the postings this
    process keeps (`postings.OwnerSearch`), with the same answers. `run`: the owner's best
    `window` rows in `_run`'s order and their BM25 strengths (higher is better); `held`: how
    many of the query's terms each of `ids` holds (1 each for a one-term query)."""

    def found(self, parsed: Query) -> list[int]: ...
    def documents(self) -> int: ...
    def holding(self, every: Query) -> int: ...
    def run(
        self, terms: Query, every: bool, include_deprecated: bool, window: int
    ) -> tuple[list[OrderRow], list[float]]: ...
    def held(self, ids: list[int]) -> list[int]: ...


def _ranked(
    index: _Index, parsed: Query, include_deprecated: bool, limit: int | None
) -> list[tuple[int, float, OrderRow]]:
    counts = index.found(parsed)
    terms, every = _candidates(index, parsed, counts)
    rows, strengths = index.run(terms, every, include_deprecated, MAX_CANDIDATES)
    if not rows and (terms, every) != (parsed, False):  # the weighted terms are in other files
        rows, strengths = index.run(parsed, False, include_deprecated, MAX_CANDIDATES)
    ranked = list(zip(index.held([row.id for row in rows]), strengths, rows, strict=True))
    # the rows come in BM25 order (deprecated last); a stable sort by terms held keeps it
    # within each count (docs/search.md; a reversed sort is stable too)
    if rows and rows[-1].status == "deprecated":
        ranked.sort(key=lambda item: (item[2].status == "deprecated", -item[0]))
    else:
        ranked.sort(key=itemgetter(0), reverse=True)
    return ranked if limit is None else ranked[:limit]


class _FtsSearch:
    """FTS5 answers (`_Index`)."""

    def __init__(self, conn: sqlite3.Connection, owner: tuple[str, str], keys: Kept | None):
        self._conn, self._owner, self._keys = conn, owner, keys
        self._matches: list[list[int]] = []

    def found(self, parsed: Query) -> list[int]:
        self._matches = _term_matches(self._conn, parsed)
        return [len(found) for found in self._matches]

    def documents(self) -> int:
        (documents,) = self._conn.execute("SELECT count(*) FROM approved_entries").fetchone()
        return int(documents)

    def holding(self, every: Query) -> int:
        (holding,) = self._conn.execute(
            "SELECT count(*) FROM approved_fts WHERE approved_fts MATCH ?", (every.match_all(),)
        ).fetchone()
        return int(holding)

    def run(
        self, terms: Query, every: bool, include_deprecated: bool, window: int
    ) -> tuple[list[OrderRow], list[float]]:
        match = terms.match_all() if every else terms.match_any()
        rows = _run(self._conn, self._owner, match, include_deprecated, window, self._keys)
        return rows, [-row.rank for row in rows]

    def held(self, ids: list[int]) -> list[int]:
        held = _terms_held(self._matches, ids)
        return [held.get(i, 1) for i in ids]


def _term_matches(conn: sqlite3.Connection, parsed: Query) -> list[list[int]]:
    """The rowids each query term matches, asked of the FTS index one term at a time (the same
    MATCH that finds the candidates), each as one JSON array: no Python step per matching row.
    Nothing (an empty list) for a one-term query: it needs neither terms held nor
    `_candidates`' choice."""
    if len(parsed.terms) < 2:
        return []
    return [
        json.loads(
            conn.execute(
                "SELECT json_group_array(rowid) FROM approved_fts WHERE approved_fts MATCH ?",
                (term.expr(),),
            ).fetchone()[0]
        )
        for term in parsed.terms
    ]


def _terms_held(matches: list[list[int]], ids: list[int]) -> dict[int, int]:
    """How many query terms each candidate holds (nothing for a one-term query)."""
    if not matches:
        return {}
    held = dict.fromkeys(ids, 0)
    for found in matches:
        for rowid in held.keys() & found:
            held[rowid] += 1
    return held


# A term that alone matches more documents than the window holds, and at least half of all
# documents, has no BM25 weight: FTS5 floors its IDF, log((N - n + 0.5) / (n + 0.5)) <= 0, at
# 1e-6. It brings no candidates and stays out of BM25 when the query has other terms; it still
# counts as held. (Before, such a term filled the window places the other terms left with
# documents holding only such words, chosen by that 1e-6 weight.) A query of such terms only
# takes the documents holding all of them when a window's worth do. docs/memory.md
def _candidates(index: _Index, parsed: Query, counts: list[int]) -> tuple[Query, bool]:
    """The terms that find the candidates, and whether a candidate holds every one of them
    (else any): any term BM25 weighs that is found (a query without one:
    `_holding_every_term`). `counts`: how many documents each term matches ([] for one term)."""
    crowded = [i for i, found in enumerate(counts) if found > MAX_CANDIDATES]
    if not crowded:
        return parsed, False
    documents = index.documents()
    unweighted = {i for i in crowded if 2 * counts[i] >= documents}
    weighted = [i for i, found in enumerate(counts) if found and i not in unweighted]
    if not weighted:
        return _holding_every_term(index, parsed, counts)
    return Query(tuple(parsed.terms[i] for i in weighted)), False


def _holding_every_term(index: _Index, parsed: Query, counts: list[int]) -> tuple[Query, bool]:
    """For a query of unweighted terms only: the documents holding every term found, when at
    least a window's worth do; else any term's. The ranking puts the documents holding the most
    terms first, so the old window's best of them by BM25 stay the ranking's top, in order."""
    found = Query(tuple(t for t, hits in zip(parsed.terms, counts, strict=True) if hits))
    if len(found.terms) < 2:
        return parsed, False
    return (found, True) if index.holding(found) >= MAX_CANDIDATES else (parsed, False)


def _hit(row: sqlite3.Row, score: float, parsed: Query, by: list[MatchPath]) -> SearchHit:
    from teamlore.core.secrets.mask import masked_text

    # a secret the lint blocks, in a file edited by hand or pulled, is never printed whole: a
    # search's output ends up in terminals, CI logs and an agent's context (docs/search.md)
    text = masked_text(row["body_text"] or row["title"])
    if row["kind"] in ("doctrine", "scene"):  # headings and lists: a snippet reads as words
        from teamlore.core.text.excerpts import without_markup  # not for an entry's hit

        text = without_markup(text)
    return SearchHit(
        id=row["entry_id"],
        type=row["kind"],
        entry_type=row["entry_type"],
        status=row["status"],
        score=score,
        snippet=snippet(text, parsed.highlight_tokens()),
        path=f"{MEMORY_ROOT}/{row['path']}",
        matched_by=by,
        revision=row["revision"],
        content_digest=row["content_digest"],
        summary=text[:SUMMARY_CHARS],
    )


def _lexical_hits(
    conn: sqlite3.Connection, parsed: Query, ranked: list[tuple[int, float, OrderRow]]
) -> list[SearchHit]:
    best: dict[int, float] = {}  # per number of terms held
    for covered, strength, _ in ranked:
        best[covered] = max(best.get(covered, 0.0), strength)
    full = _full_rows(conn, [row.id for _, _, row in ranked])
    return [
        _hit(full[row.id], relative_score(covered, strength, best[covered]), parsed, ["lexical"])
        for covered, strength, row in ranked
    ]


def _vector_ranking(
    conn: sqlite3.Connection,
    owner: tuple[str, str],
    query: str,
    embedder: Embedder,
    include_deprecated: bool,
    by_headline: bool,
) -> tuple[VectorPath, list[tuple[int, float]]]:
    """Whether the vector path ran, and the documents by meaning (`memory.store.meaning`): by
    their whole text and headline, or (`by_headline` false) by their whole text alone."""
    space = embedder.space.key
    if not _has_vectors(conn, owner, space):  # nothing to rank: no model loads
        return VectorPath(ran=False, space=space, reason=NO_VECTORS), []
    from teamlore.models.embeddings import query_row
    from teamlore.models.multilingual import model_parts

    models = model_parts(embedder)
    try:
        queries = [query_row(model, query) for model in models]
    except errors.TeamloreError as exc:
        return VectorPath(ran=False, space=space, reason=exc.message, code=exc.code), []
    from teamlore.memory.store.meaning import rank_rows
    from teamlore.memory.store.vectors import load_approved

    stored = load_approved(conn, owner, space)
    if stored.count == 0:
        return VectorPath(ran=False, space=space, reason=NO_VECTORS), []
    ran = VectorPath(ran=True, space=space, documents=stored.count)
    if stored.whole.dimensions != sum(len(q) for q in queries):
        return ran, []  # stored by a model with another length: never compared
    ranking = rank_rows(
        stored.ids,
        stored.whole,
        stored.headline if by_headline else None,
        queries,
        stored.kept(include_deprecated=include_deprecated),
        limit=VECTOR_DEPTH,
        min_similarity=MIN_SIMILARITY,
        unread=lambda ids: _unread(stored, models, ids),
    )
    return ran, ranking


NO_VECTORS = "no document has a vector yet"


def _has_vectors(conn: sqlite3.Connection, owner: tuple[str, str], space: str) -> bool:
    """Whether any of the owner's documents has a vector in `space` (one indexed row)."""
    return (
        conn.execute(
            "SELECT 1 FROM approved_vectors WHERE repository_key = ? AND worktree_key = ? "
            "AND space = ? LIMIT 1",
            (*owner, space),
        ).fetchone()
        is not None
    )


def _unread(stored: ApprovedVectors, models: Sequence[Embedder], ids: list[int]) -> list[set[int]]:
    """Per model, the documents among `ids` in a language it has no word vectors for: their
    vectors are noise to it, so it gives them no vote at all (docs/hybrid-search.md, "Words are
    never outvoted"); the other model and the words still find them. Whether a model reads a
    text depends only on whether the text holds Chinese (`Embedder.reads`), which the pack
    stores per document: no text is read."""
    if all(model.reads_every_text for model in models):
        return [set() for _ in models]
    chinese = stored.holding_chinese(ids)
    return [set() if model.reads(CHINESE_TEXT) else chinese for model in models]


CHINESE_TEXT = "中文"  # stands for every text holding Chinese (`Embedder.reads`)


def _fused(
    conn: sqlite3.Connection,
    parsed: Query,
    lexical: list[tuple[int, float, OrderRow]],
    meaning: list[tuple[int, float]],
    limit: int,
    keep_words: bool,
    keys: Kept | None = None,
) -> list[SearchHit]:
    """The page of the fused rankings; `keep_words`: `core.fusion.words_decide`; `keys`: as
    `_lexical`'s."""
    near = [i for i, _ in meaning]
    ranks, shown = _fusable(lexical, set(near))
    fused, order = _fused_page(conn, parsed, ranks, shown, near, limit, keep_words, keys)
    ceiling = words_only_ceiling(
        FUSED_LEXICAL_DEPTH, vector_weight=MEANING_WEIGHT, keep_words=keep_words
    )
    if len(shown) < len(lexical) and (len(order) < limit or fused.score(order[-1]) <= ceiling):
        # a document left out on words alone could tie or reach the page: fuse all of it
        ranks = list(range(1, len(lexical) + 1))
        fused, order = _fused_page(conn, parsed, ranks, lexical, near, limit, keep_words, keys)
    full = _full_rows(conn, order)
    return [_hit(full[i], fused.score(i), parsed, list(fused.matched_by(i))) for i in order]


def _fused_page(
    conn: sqlite3.Connection,
    parsed: Query,
    ranks: list[int],
    lexical: list[tuple[int, float, OrderRow]],
    near: list[int],
    limit: int,
    keep_words: bool,
    keys: Kept | None,
) -> tuple[FusedScores[int], list[int]]:
    """The fused scores, and the ids of the page in order. `near`: the meaning ranking."""
    terms = max(len(parsed.terms), 1)
    lexical_shares = [(row.id, held / terms) for held, _, row in lexical]
    fused = fused_scores(
        lexical_shares,
        near,
        lexical_ranks=ranks,
        keep_words=keep_words,
        vector_weight=MEANING_WEIGHT,
        # docs/hybrid-search.md, "Words are never outvoted", rule 10
        literal={row.id for held, _, row in lexical if held >= terms},
    )
    rows = {row.id: row for _, _, row in lexical}
    rows.update(_order_rows(conn, [row_id for row_id in fused.raw if row_id not in rows], keys))
    return fused, _page(fused, rows, limit)


def _page(fused: FusedScores[int], rows: dict[int, OrderRow], limit: int) -> list[int]:
    """The ids of the page: approved documents before deprecated ones, then by fused score,
    kind and entry id. Only the keys whose score reaches the `limit`-th best of their status
    are ordered (rounding the score to 4 places keeps that order, never reverses it)."""
    raw = fused.raw
    page: list[int] = []
    for deprecated in (False, True):
        ids = [i for i in raw if (rows[i].status == "deprecated") is deprecated]
        if len(ids) > limit - len(page):
            floor = fused.score(heapq.nlargest(limit - len(page), ids, key=raw.__getitem__)[-1])
            lowest = (floor - 1e-4) * fused.best  # under every raw score shown as `floor`
            ids = [i for i in ids if raw[i] >= lowest and fused.score(i) >= floor]
        ids.sort(key=lambda i: (-fused.score(i), rows[i].kind, rows[i].entry_id))
        page += ids[: limit - len(page)]
        if len(page) >= limit:
            break
    return page


# Fusion takes the lexical ranking to this depth, and below it only the documents a vector
# ranking found too (with their true ranks): a document further down on words alone scores below
# every vector-ranked one (RRF rank > VECTOR_DEPTH, core/fusion.py) and every one ranked before
# it. When the page's last score does not clear that ceiling, all of the ranking is fused.
FUSED_LEXICAL_DEPTH = max(VECTOR_DEPTH, MAX_LIMIT)


def _fusable(
    lexical: list[tuple[int, float, OrderRow]], near: set[int]
) -> tuple[list[int], list[tuple[int, float, OrderRow]]]:
    """The lexical ranking as fusion needs it: its first FUSED_LEXICAL_DEPTH documents and,
    further down, only those the vector ranking found too, each with its rank. With deprecated
    documents (ranked after every approved one whatever their score) all of it."""
    if not lexical or lexical[-1][2].status == "deprecated":
        return list(range(1, len(lexical) + 1)), lexical
    kept = [
        (rank, item)
        for rank, item in enumerate(lexical, start=1)
        if rank <= FUSED_LEXICAL_DEPTH or item[2].id in near
    ]
    return [rank for rank, _ in kept], [item for _, item in kept]


_ORDER_COLUMNS = "e.id, e.kind, e.entry_id, e.status"
_COLUMNS = (
    f"{_ORDER_COLUMNS}, e.entry_type, e.path, e.title, e.body_text, e.revision, e.content_digest"
)
SUMMARY_CHARS = 240


def _order_rows(conn: sqlite3.Connection, ids: list[int], keys: Kept | None) -> dict[int, OrderRow]:
    """The order keys of `ids`: from `keys` when kept, else (or for a document projected since)
    asked."""
    found = {} if keys is None else {i: keys.rows[i] for i in ids if i in keys.rows}
    if len(found) < len(ids):
        rows = conn.execute(
            f"SELECT {_ORDER_COLUMNS} FROM approved_entries AS e "
            "WHERE e.id IN (SELECT value FROM json_each(?))",
            (json.dumps([i for i in ids if i not in found]),),
        )
        found.update((row[0], OrderRow(*row)) for row in rows)
    return found


def _full_rows(conn: sqlite3.Connection, ids: list[int]) -> dict[int, sqlite3.Row]:
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM approved_entries AS e WHERE e.id IN ({marks})", ids
    ).fetchall()
    return {row["id"]: row for row in rows}


# BM25 over any term picks at most this many documents before they are ordered by how many terms
# they hold (a team's memory is hundreds of documents, not millions)
MAX_CANDIDATES = 1000


def _projection_state(
    conn: sqlite3.Connection, repository_key: str, worktree_key: str
) -> tuple[int, Coverage, Stamp | None, int]:
    """The owner's projection generation and coverage, what names its rows in this process's
    order keys (memory/store/order_keys.py: None when never projected), and how many documents
    it holds."""
    row = conn.execute(
        "SELECT generation, coverage, analyzer_version, (SELECT value FROM memory_state_meta "
        "WHERE key = 'memory_state_uuid'), entry_count FROM approved_projection "
        "WHERE repository_key = ? AND worktree_key = ?",
        (repository_key, worktree_key),
    ).fetchone()
    if row is None:
        return 0, "partial", None, 0
    coverage: Coverage = row[1] if row[2] == ANALYZER_VERSION else "partial"
    stamp = (row[3], repository_key, worktree_key, int(row[0]))
    return int(row[0]), coverage, stamp, int(row[4])


def _run(
    conn: sqlite3.Connection,
    owner: tuple[str, str],
    match: str,
    include_deprecated: bool,
    window: int,
    keys: Kept | None,
) -> list[OrderRow]:
    """This owner's `window` best matching documents by BM25, ordering columns only. The FTS
    index is asked alone for its best (no join per match): `window` of them plus as many as it
    holds documents of other owners or deprecated ones (left out, or ranked after every approved
    one), so one BM25 pass finds this owner's best `window` approved documents. When those are
    more than `window`, or the counts changed meanwhile, the filtered query over every match
    runs instead (also one BM25 pass, but a join per match). With the owner's `keys` kept by
    this process, the same two queries ask the index alone and the keys stand for the join."""
    if keys is not None:
        kept = _run_on_keys(conn, owner, match, include_deprecated, window, keys)
        if kept is not None:
            return kept
    repository_key, worktree_key = owner
    status_filter = "" if include_deprecated else " AND e.status = 'approved'"
    order = "ORDER BY e.status = 'deprecated', rank, e.kind, e.entry_id"
    prefix = window + _skipped(conn, repository_key, worktree_key)
    if prefix <= 2 * window:  # else most of the index is skipped: the filtered query at once
        rows = conn.execute(
            "WITH best AS (SELECT rowid AS id, bm25(approved_fts) AS rank FROM approved_fts "
            "WHERE approved_fts MATCH ? ORDER BY rank LIMIT ?) "
            f"SELECT {_ORDER_COLUMNS}, best.rank AS rank, (SELECT count(*) FROM best) AS found "
            "FROM best JOIN approved_entries AS e ON e.id = best.id "
            f"WHERE e.repository_key = ? AND e.worktree_key = ?{status_filter} {order}",
            (match, prefix, repository_key, worktree_key),
        ).fetchall()
        every_match = bool(rows) and rows[0]["found"] < prefix
        if every_match or (len(rows) >= window and rows[window - 1]["status"] == "approved"):
            return [OrderRow(*row[:5]) for row in rows[:window]]
    rows = conn.execute(
        f"SELECT {_ORDER_COLUMNS}, bm25(approved_fts) AS rank "
        "FROM approved_fts JOIN approved_entries AS e ON e.id = approved_fts.rowid "
        "WHERE approved_fts MATCH ? AND e.repository_key = ? AND e.worktree_key = ?"
        f"{status_filter} {order} LIMIT ?",
        (match, repository_key, worktree_key, window),
    ).fetchall()
    return [OrderRow(*row) for row in rows]


def _run_on_keys(
    conn: sqlite3.Connection,
    owner: tuple[str, str],
    match: str,
    include_deprecated: bool,
    window: int,
    keys: Kept,
) -> list[OrderRow] | None:
    """`_run`'s answer with the owner's kept `keys` in place of the join (the same BM25 pass,
    the same order), or None when the projection changed meanwhile (then `_run` joins)."""
    prefix = window + _skipped(conn, *owner)
    query = "SELECT rowid, bm25(approved_fts) AS rank FROM approved_fts WHERE approved_fts MATCH ?"
    rows = []
    if prefix <= 2 * window:
        best = conn.execute(f"{query} ORDER BY rank LIMIT ?", (match, prefix)).fetchall()
        rows = _owned(best, keys, include_deprecated)
        every_match = bool(rows) and len(best) < prefix
        if not (every_match or (len(rows) >= window and rows[window - 1].status == "approved")):
            rows = []
    if not rows:
        rows = _owned(conn.execute(query, (match,)).fetchall(), keys, include_deprecated)
    now = conn.execute(
        "SELECT generation FROM approved_projection WHERE repository_key = ? AND worktree_key = ?",
        owner,
    ).fetchone()
    return rows[:window] if now is not None and now[0] == keys.generation else None


def _owned(found: list[tuple[int, float]], keys: Kept, include_deprecated: bool) -> list[OrderRow]:
    """The (rowid, BM25 rank) rows of the index that are the owner's documents (approved ones
    only unless `include_deprecated`), in `_run`'s order."""
    approved: list[OrderRow] = []
    deprecated: list[OrderRow] = []
    for i, rank in found:
        row = keys.rows.get(i)
        if row is not None:
            _, kind, entry_id, status, _ = row
            same = approved if status == "approved" else deprecated
            same.append(OrderRow(i, kind, entry_id, status, rank))
    approved.sort(key=_BY_RANK)
    if not include_deprecated:
        return approved
    deprecated.sort(key=_BY_RANK)
    return approved + deprecated


_BY_RANK = itemgetter(4, 1, 2)  # OrderRow's rank, kind, entry id: `_run`'s order within a status


def _skipped(conn: sqlite3.Connection, repository_key: str, worktree_key: str) -> int:
    """How many documents of the index are not this owner's approved ones: other owners' and
    this owner's deprecated documents (0 when the owner was never projected)."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM approved_entries) - p.entry_count + ("
        "SELECT count(*) FROM approved_entries AS e WHERE e.repository_key = p.repository_key "
        "AND e.worktree_key = p.worktree_key AND e.status = 'deprecated') "
        "FROM approved_projection AS p WHERE p.repository_key = ? AND p.worktree_key = ?",
        (repository_key, worktree_key),
    ).fetchone()
    return 0 if row is None else max(int(row[0]), 0)
