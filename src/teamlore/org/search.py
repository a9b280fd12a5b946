"""`org search`: memory search's ranking over every repository of the org index (docs/org.md).

The rules are memory search's (docs/hybrid-search.md), over the store's documents: the query
goes through the same analyzer (with the same Chinese glosses); documents holding more of its
terms come first, then the engine's strength (BM25 in SQLite, `ts_rank_cd` in PostgreSQL); the
meaning ranking (each model's similarities of whole text and headline standardized and summed,
memory/store/meaning.py) ranks the same documents; the two are fused by `core.fusion.fuse`.
Deprecated entries are left out. Every hit names its repository and its path inside it.

Vectors are decoded once per process and index generation (`VectorCache`): a long-running
`org serve` scans one int8 matrix per ranking, like memory search's packs.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, PlainSerializer

from teamlore.core import errors
from teamlore.core.analyzer import (
    Query,
    parse_query,
    query_without_terms,
    relative_score,
    snippet,
)
from teamlore.core.fusion import MEANING_WEIGHT, fuse, words_decide
from teamlore.core.fusion import Path as MatchPath
from teamlore.core.shapes.strict import WIRE
from teamlore.memory.store.meaning import rank_rows
from teamlore.memory.store.search import (
    MAX_CANDIDATES,
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    MIN_SIMILARITY,
    VECTOR_DEPTH,
    VectorPath,
)
from teamlore.models.embeddings import Embedder, query_row
from teamlore.models.glosses import has_chinese, segmented
from teamlore.models.multilingual import model_parts, part_widths
from teamlore.models.vector_math import Int8Rows
from teamlore.org.store import LexicalHit, OrgStore, SearchFilter, StoredHit

SearchPath = Literal["lexical", "vector"]


class OrgHit(BaseModel):
    model_config = WIRE

    id: str
    kind: str  # entry | scene | doctrine | skill
    entry_type: str | None
    status: Literal["approved", "deprecated"]
    repository: str
    path: str  # inside the repository
    score: float
    snippet: str
    matched_by: list[MatchPath]


# memory search's `VectorPath` is a NamedTuple (cheap to define on a short command's path), which
# pydantic would write as an array: on the wire it is the object memory search writes
WireVectorPath = Annotated[
    VectorPath, PlainSerializer(lambda path: path.to_json(), return_type=dict[str, Any])
]


class OrgSearchResult(BaseModel):
    model_config = WIRE

    generation: int
    paths: list[SearchPath]
    vector: WireVectorPath
    results: list[OrgHit]


def check_limits(query: str, limit: int) -> None:
    if not 1 <= limit <= MAX_LIMIT:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, f"limit must be between 1 and {MAX_LIMIT}", limit=limit
        )
    if len(query) > MAX_QUERY_CHARS:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, f"the query is longer than {MAX_QUERY_CHARS} characters"
        )


def search_org(
    store: OrgStore,
    query: str,
    *,
    limit: int = 10,
    where: SearchFilter = SearchFilter(),
    embedder: Embedder | None = None,
    skipped: VectorPath,
) -> OrgSearchResult:
    check_limits(query, limit)
    # the words as memory search reads them (docs/hybrid-search.md): a spaceless Chinese run cut
    # into its words, and no English glosses (a translation never outvotes a literal match)
    typed = parse_query(query)
    parsed = segmented(typed)
    if not parsed.terms:  # blank, or only words too long to search: as memory search says it
        raise query_without_terms(query)
    stamp = store.stamp()
    generation = stamp[1]
    lexical = sorted(
        store.lexical(parsed, where, MAX_CANDIDATES), key=lambda h: (-h.held, -h.strength)
    )
    vector_path, near = (
        _vector_rankings(store, stamp, query, embedder, where)
        if embedder is not None
        else (skipped, [])
    )
    paths: list[SearchPath] = ["lexical", "vector"] if vector_path.ran else ["lexical"]
    if vector_path.ran:
        terms = max(len(parsed.terms), 1)
        shares = [(h.doc, h.held / terms) for h in lexical]
        # rule 5 as in memory search: a short, identifier-like or Chinese query keeps the words'
        # first ranks in the first places
        keep_words = words_decide(typed, parsed) or has_chinese(query)
        fused = fuse(shares, near, vector_weight=MEANING_WEIGHT, keep_words=keep_words)
        page = fused[:limit]
        rows = store.hits([f.key for f in page])
        results = [
            _hit(rows[f.key], f.score, parsed, list(f.matched_by)) for f in page if f.key in rows
        ]
    else:
        results = _lexical_hits(store, parsed, lexical[:limit])
    return OrgSearchResult(generation=generation, paths=paths, vector=vector_path, results=results)


def _lexical_hits(store: OrgStore, parsed: Query, ranked: list[LexicalHit]) -> list[OrgHit]:
    best_strength: dict[int, float] = {}
    for hit in ranked:
        best_strength[hit.held] = max(best_strength.get(hit.held, 0.0), hit.strength)
    rows = store.hits([h.doc for h in ranked])
    return [
        _hit(
            rows[h.doc],
            relative_score(h.held, h.strength, best_strength[h.held]),
            parsed,
            ["lexical"],
        )
        for h in ranked
        if h.doc in rows
    ]


def _hit(row: StoredHit, score: float, parsed: Query, by: list[MatchPath]) -> OrgHit:
    return OrgHit(
        id=row.doc_id,
        kind=row.kind,
        entry_type=row.entry_type,
        status="deprecated" if row.status == "deprecated" else "approved",
        repository=row.repository,
        path=row.path,
        score=score,
        snippet=snippet(row.body or row.title, parsed.highlight_tokens()),
        matched_by=by,
    )


# --------------------------------------------------------------------------------------------
# vectors


@dataclass(frozen=True, slots=True)
class DecodedVectors:
    docs: array[int]
    whole: Int8Rows
    headline: Int8Rows  # scale 0: no headline vector
    repositories: list[str]
    kinds: list[str]
    approved: list[bool]
    approved_rows: list[int]  # the rows of approved documents, in order

    def keep(self, where: SearchFilter) -> list[int] | None:
        """The rows `where` lets through, in order; None for every row (then nothing is copied).
        Without a repository or kind filter no row is looked at here (the approved rows are
        kept from the decoding)."""
        if not where.repositories and not where.kinds:
            every = where.include_deprecated or len(self.approved_rows) == len(self.docs)
            return None if every else self.approved_rows
        repositories, kinds = set(where.repositories), set(where.kinds)
        return [
            row
            for row, (repository, kind, approved) in enumerate(
                zip(self.repositories, self.kinds, self.approved, strict=True)
            )
            if (not repositories or repository in repositories)
            and (not kinds or kind in kinds)
            and (where.include_deprecated or approved)
        ]

    def meaning(
        self,
        queries: Sequence[Sequence[float]],
        keep: list[int] | None,
        unread: Callable[[list[int]], Sequence[set[int]]],
    ) -> list[int]:
        """The documents of `keep` (None: all) by meaning, as memory search ranks them
        (`memory.store.meaning`): each model's cosines of whole text and headline standardized
        and summed; a document without a headline vector stands for itself by its whole text."""
        if len(self.docs) == 0 or self.whole.dimensions != sum(len(q) for q in queries):
            return []
        ranked = rank_rows(
            self.docs,
            self.whole,
            self.headline,
            queries,
            keep,
            limit=VECTOR_DEPTH,
            min_similarity=MIN_SIMILARITY,
            unread=unread,
        )
        return [doc for doc, _ in ranked]


class VectorCache:
    """The decoded vectors of the last (index id, generation, space) asked for, per process: a
    key names one state of one index, so a cached entry is never stale."""

    def __init__(self) -> None:
        self._key: tuple[str, int, str] | None = None
        self._value: DecodedVectors | None = None
        self._lock = threading.Lock()

    def get(
        self, store: OrgStore, stamp: tuple[str, int], space: str, widths: tuple[int, ...] = ()
    ) -> DecodedVectors:
        """`space`'s vectors, their columns in blocks of `widths` (`decode`)."""
        key = (*stamp, space)
        with self._lock:
            if self._key == key and self._value is not None:
                return self._value
        decoded = decode(store, space, widths)
        with self._lock:
            self._key, self._value = key, decoded
        return decoded


VECTORS = VectorCache()


def decode(store: OrgStore, space: str, widths: tuple[int, ...] = ()) -> DecodedVectors:
    """The index's vectors of `space`; a paired model's in one block of columns per model
    (`multilingual.part_widths`), as memory's pack keeps them."""
    stored = store.vectors(space)
    whole = Int8Rows.from_blobs(stored.vectors, widths=widths)
    return DecodedVectors(
        array("q", stored.docs),
        whole,
        Int8Rows.from_blobs(stored.headline_vectors, whole.dimensions, widths),
        [f[0] for f in stored.flags],
        [f[1] for f in stored.flags],
        [f[2] == "approved" for f in stored.flags],
        [row for row, f in enumerate(stored.flags) if f[2] == "approved"],
    )


def _vector_rankings(
    store: OrgStore, stamp: tuple[str, int], query: str, embedder: Embedder, where: SearchFilter
) -> tuple[VectorPath, list[int]]:
    space = embedder.space.key
    models = model_parts(embedder)
    try:
        queries = [query_row(model, query) for model in models]
    except errors.TeamloreError as exc:
        return VectorPath(ran=False, space=space, reason=exc.message, code=exc.code), []
    vectors = VECTORS.get(store, stamp, space, part_widths(embedder))
    if len(vectors.docs) == 0:
        return VectorPath(ran=False, space=space, reason="no document has a vector yet"), []
    ranked = vectors.meaning(
        queries, vectors.keep(where), lambda docs: _unread(store, models, docs)
    )
    return VectorPath(ran=True, space=space, documents=len(vectors.docs)), ranked


def _unread(store: OrgStore, models: Sequence[Embedder], docs: list[int]) -> list[set[int]]:
    """Per model, the documents among `docs` it cannot read (memory search's rule)."""
    if all(model.reads_every_text for model in models):
        return [set() for _ in models]
    texts = [(doc, f"{hit.title}\n{hit.body}") for doc, hit in store.hits(docs).items()]
    return [{doc for doc, text in texts if not model.reads(text)} for model in models]
