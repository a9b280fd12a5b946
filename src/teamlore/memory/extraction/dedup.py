"""Dedup recall `recall-rrf@1`: what the team already knows that a draft might repeat.

Per draft (docs/extraction.md "stage: drafts, dedup, adjudication"):
1. the query is the draft's text (content, then statements; first 1,024 characters) through the
   shared analyzer: its first 64 distinct terms. Per side, the 12 most selective of them are
   OR-ed (fewest documents containing the term in that side's FTS table first, ties by term;
   terms in no document, or in more than half of them (and more than 20), are left out) —
   the "more like this" selection: rare shared terms are what near-duplicates have in common,
   and ubiquitous terms ("the", "run") cost the most to score and decide nothing;
2. approved side: the owner's approved L1 entries (`kind = 'entry'`, `status = 'approved'`) in
   `approved_fts`, `ORDER BY bm25, entry_id`, top 3×k;
3. candidate side: the owner's live entry candidates (`draft` or `quarantined`) in
   `candidate_fts` except the draft itself — other drafts of the same batch and other chunks'
   candidates stay visible — `ORDER BY bm25, candidate_id`, top 3×k;
4. fusion: reciprocal rank fusion, score = Σ 1/(60 + rank) over the lists an item appears in,
   ties broken by (sourceKind, id); top k (5) with final ranks 1..k.

`recall-hybrid-rrf@2` (docs/hybrid-search.md) adds two embedding rankings per draft when every
draft has a stored vector (`candidate_vectors`, written when it was staged) of one space and
every approved entry of the owner has one of its current content in that space (an entry a pull
brought in before its vector was synced would be missed by meaning): the owner's approved
entries (`approved_vectors`) and the other live entry candidates with a vector in that space,
each by cosine similarity to the draft's vector, top 3×k at cosine ≥ 0.1. The four lists are
fused as memory search fuses its two (`core.fusion`, docs/hybrid-search.md "Fusion"): a vector
hit adds `VECTOR_WEIGHT / (RRF_K + rank)`, a BM25 hit adds
`LEXICAL_WEIGHT · share² / (RRF_K + rank)`, where `share` is the part of the draft's query terms
the hit's indexed text holds. A draft that says the same thing in other words is then recalled
although it shares no selective term, and entries that share two incidental words of a long
draft do not push it out (`recall-hybrid-rrf@1` fused all four lists unweighted at k = 60, so
any entry in both a BM25 and an embedding list outranked the nearest embedding alone). The
recall reads stored vectors only, so the rerun at submit time gives the same result set on the
same database (the submit syncs the vectors first with the embedder configured now,
`ops.memory.vectors.adjudication_vectors`, so an entry pulled since counts); without vectors
(lexical search asked for, embeddings off or unavailable, an approved entry not embedded yet)
it is `recall-rrf@1` exactly.

The corpora's raw BM25 scores and similarities are never compared. The result carries both
projections' provenance, the recall query digest, the result-set digest over every draft's
ordered hits `{draftRef, rank, sourceKind, id, revision, contentDigest, state}` and the pool.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, cast

import numpy as np
import orjson

from teamlore.contracts import digests
from teamlore.contracts._base import Owner as ContractOwner
from teamlore.core import db, errors
from teamlore.core.analyzer import ANALYZER_VERSION, fts_query
from teamlore.core.fusion import LEXICAL_WEIGHT, VECTOR_WEIGHT
from teamlore.core.fusion import RRF_K as FUSION_K
from teamlore.core.text.excerpts import EXCERPT_CELLS, excerpt
from teamlore.memory.store.search import MIN_SIMILARITY
from teamlore.memory.store.state_db import RECALL_ALGORITHM_VERSION
from teamlore.memory.store.vectors import (
    ApprovedVectors,
    best,
    embed_in_batches,
    from_blobs,
    load_approved,
)
from teamlore.models.embeddings import Embedder

RECALL_HYBRID_VERSION = "recall-hybrid-rrf@2"

SourceKind = Literal["approved", "candidate"]

DEFAULT_K = 5
FETCH_FACTOR = 3
RRF_K = 60
MAX_QUERY_CHARS = 1024
MAX_QUERY_TERMS = 64
SELECTED_TERMS = 12
MAX_DF_SHARE = 0.5
MIN_DF_CEILING = 20  # small corpora: every term that occurs is usable
SUMMARY_CELLS = EXCERPT_CELLS  # the contract's summary holds 240 characters
MAX_DRAFTS = 64


@dataclass(frozen=True, slots=True)
class DraftQuery:
    draft_ref: str  # how the adjudication names the draft (its candidate id)
    candidate_id: str
    text: str


@dataclass(frozen=True, slots=True)
class PoolItem:
    source_kind: SourceKind
    id: str
    revision: int
    content_digest: str
    state: str  # approved entry status, or candidate status
    summary: str

    def to_json(self) -> dict[str, Any]:
        return {
            "sourceKind": self.source_kind,
            "id": self.id,
            "revision": self.revision,
            "contentDigest": self.content_digest,
            "state": self.state,
            "summary": self.summary,
        }


@dataclass(frozen=True, slots=True)
class RecallHit:
    rank: int
    source_kind: SourceKind
    id: str


@dataclass(frozen=True, slots=True)
class RecallSet:
    draft_ref: str
    ordered: tuple[RecallHit, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "draftRef": self.draft_ref,
            "ordered": [
                {"rank": h.rank, "sourceKind": h.source_kind, "id": h.id} for h in self.ordered
            ],
        }


@dataclass(frozen=True, slots=True)
class ProjectionProvenance:
    generation: int
    analyzer_version: str
    coverage: str  # complete | partial (approved side); candidate side is always complete

    def to_json(self) -> dict[str, Any]:
        return {"generation": self.generation, "analyzerVersion": self.analyzer_version}


@dataclass(frozen=True, slots=True)
class RecallResult:
    algorithm: str  # recall-rrf@1 (lexical) | recall-hybrid-rrf@2 (lexical + vectors)
    k: int
    recall_sets: tuple[RecallSet, ...]
    pool: tuple[PoolItem, ...]  # union of every hit, sorted by (sourceKind, id)
    approved_projection: ProjectionProvenance
    candidate_projection: ProjectionProvenance
    recall_query_digest: str
    result_set_digest: str

    def pool_item(self, source_kind: SourceKind, item_id: str) -> PoolItem | None:
        for item in self.pool:
            if item.source_kind == source_kind and item.id == item_id:
                return item
        return None

    def pool_item_revisions(self) -> list[dict[str, Any]]:
        return [
            {"sourceKind": p.source_kind, "id": p.id, "revision": p.revision} for p in self.pool
        ]


class _OwnerKeys(NamedTuple):
    repository_key: str
    worktree_key: str


def query_text(text: str) -> str:
    return text[:MAX_QUERY_CHARS]


def query_terms(text: str) -> list[str]:
    """The draft's first 64 distinct analyzed terms (analyzer `fts_query`, mode "any")."""
    expr = fts_query(query_text(text), mode="any")
    if not expr:
        return []
    return [term[1:-1].replace('""', '"') for term in expr.split(" OR ")][:MAX_QUERY_TERMS]


class _LexicalScore:
    """What a BM25 hit at `rank` adds to its fused score: `1 / (60 + rank)` in `recall-rrf@1`;
    in `recall-hybrid-rrf@2` the lexical term of `core.fusion`, weighted by the square of the
    share of the draft's query terms the hit's indexed text holds."""

    def __init__(self, terms: Sequence[str], *, hybrid: bool) -> None:
        self.terms = terms
        self.hybrid = hybrid

    def __call__(self, rank: int, analyzed: str) -> float:
        if not self.hybrid:
            return 1.0 / (RRF_K + rank)
        padded = f" {analyzed} "
        share = sum(f" {term} " in padded for term in self.terms) / max(len(self.terms), 1)
        return LEXICAL_WEIGHT * share**2 / (FUSION_K + rank)


class _Side:
    """One FTS table's document frequencies (fts5vocab, a temp table: no schema change)."""

    def __init__(self, conn: sqlite3.Connection, table: str) -> None:
        self.conn = conn
        self.vocab = f"temp.teamlore_{table}_vocab"
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {self.vocab} USING fts5vocab(main, {table}, 'row')"
        )
        self.documents = int(conn.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0])
        self._df: dict[str, int] = {}

    def df(self, term: str) -> int:
        if term not in self._df:
            row = self.conn.execute(
                f"SELECT doc FROM {self.vocab} WHERE term = ?", (term,)
            ).fetchone()
            self._df[term] = 0 if row is None else int(row[0])
        return self._df[term]

    def match(self, terms: Sequence[str]) -> str:
        """The MATCH string of the most selective terms on this side ('' when none qualifies)."""
        ceiling = max(self.documents * MAX_DF_SHARE, MIN_DF_CEILING)
        usable = [t for t in terms if 0 < self.df(t) <= ceiling]
        chosen = sorted(usable, key=lambda t: (self.df(t), t))[:SELECTED_TERMS]
        return " OR ".join('"' + t.replace('"', '""') + '"' for t in chosen)


def recall_rrf(
    conn: sqlite3.Connection,
    *,
    repository_key: str,
    worktree_key: str,
    drafts: Sequence[DraftQuery],
    k: int = DEFAULT_K,
) -> RecallResult:
    """Run `recall-rrf@1` for every draft, or `recall-hybrid-rrf@2` when every draft has a
    vector of one space (read-only; call inside a transaction for a snapshot)."""
    if len(drafts) > MAX_DRAFTS:
        raise ValueError(f"at most {MAX_DRAFTS} drafts per recall")
    owner = (repository_key, worktree_key)
    fetch = FETCH_FACTOR * k
    items: dict[tuple[SourceKind, str], PoolItem] = {}
    sets: list[RecallSet] = []
    approved, candidate = _Side(conn, "approved_fts"), _Side(conn, "candidate_fts")
    vectors = _DraftVectors.load(conn, owner, drafts)
    algorithm = RECALL_ALGORITHM_VERSION if vectors is None else RECALL_HYBRID_VERSION
    for draft in drafts:
        terms = query_terms(draft.text)
        lexical = _LexicalScore(terms, hybrid=vectors is not None)
        scores: dict[tuple[SourceKind, str], float] = {}
        if vectors is not None:
            for hits in vectors.rankings(conn, draft.candidate_id, fetch):
                for rank, item in enumerate(hits, start=1):
                    key_: tuple[SourceKind, str] = (item.source_kind, item.id)
                    items.setdefault(key_, item)
                    scores[key_] = scores.get(key_, 0.0) + VECTOR_WEIGHT / (FUSION_K + rank)
        approved_match, candidate_match = approved.match(terms), candidate.match(terms)
        if approved_match:
            for rank, (item, text) in enumerate(
                _approved_hits(conn, owner, approved_match, fetch), start=1
            ):
                key: tuple[SourceKind, str] = ("approved", item.id)
                items.setdefault(key, item)
                scores[key] = scores.get(key, 0.0) + lexical(rank, text)
        if candidate_match:
            for rank, (item, text) in enumerate(
                _candidate_hits(conn, owner, candidate_match, fetch, draft.candidate_id), start=1
            ):
                key = ("candidate", item.id)
                items.setdefault(key, item)
                scores[key] = scores.get(key, 0.0) + lexical(rank, text)
        fused = sorted(scores, key=lambda key: (-scores[key], key[0], key[1]))[:k]
        sets.append(
            RecallSet(
                draft.draft_ref,
                tuple(RecallHit(rank, kind, ident) for rank, (kind, ident) in enumerate(fused, 1)),
            )
        )
    used = {(h.source_kind, h.id) for s in sets for h in s.ordered}
    pool = tuple(items[key] for key in sorted(used))
    return RecallResult(
        algorithm=algorithm,
        k=k,
        recall_sets=tuple(sets),
        pool=pool,
        approved_projection=_approved_provenance(conn, owner),
        candidate_projection=_candidate_provenance(conn, owner),
        recall_query_digest=recall_query_digest(owner, drafts, k, algorithm),
        result_set_digest=result_set_digest(sets, items),
    )


def recall_query_digest(
    owner: tuple[str, str],
    drafts: Sequence[DraftQuery],
    k: int,
    algorithm: str = RECALL_ALGORITHM_VERSION,
) -> str:
    return digests.recall_query_digest(
        k=k,
        # any object with repository_key/worktree_key: teamlore keys are not all hex64
        owner=cast(ContractOwner, _OwnerKeys(owner[0], owner[1])),
        drafts=[
            {
                "draftRef": d.draft_ref,
                "candidateId": d.candidate_id,
                "queryText": query_text(d.text),
            }
            for d in drafts
        ],
        algorithm=algorithm,
    )


def result_set_digest(
    sets: Sequence[RecallSet], items: dict[tuple[SourceKind, str], PoolItem]
) -> str:
    """Every draft's ordered hits with each hit's revision, content digest and state."""
    used = {(h.source_kind, h.id) for s in sets for h in s.ordered}
    return digests.recall_result_set_digest(
        [s.to_json() for s in sets], [items[key].to_json() for key in sorted(used)]
    )


_APPROVED_ITEM = "e.entry_id, e.revision, e.content_digest, e.status, e.body_text, e.title"
_CANDIDATE_ITEM = (
    "c.candidate_id, c.revision, c.content_digest, c.status, "
    "json_extract(c.payload_json, '$.content')"
)
_LIVE_ENTRY_CANDIDATES = (
    "c.repository_key = ? AND c.worktree_key = ? "
    "AND c.candidate_kind = 'entry' AND c.status IN ('draft', 'quarantined')"
)


def _approved_item(row: Sequence[Any]) -> PoolItem:
    return PoolItem("approved", row[0], int(row[1]), row[2], row[3], _summary(row[4] or row[5]))


def _candidate_item(row: Sequence[Any]) -> PoolItem:
    return PoolItem("candidate", row[0], int(row[1]), row[2], row[3], _summary(row[4] or ""))


def _approved_hits(
    conn: sqlite3.Connection, owner: tuple[str, str], match: str, limit: int
) -> list[tuple[PoolItem, str]]:
    """BM25 hits, best first, each with its analyzed indexed text."""
    rows = conn.execute(
        f"SELECT {_APPROVED_ITEM}, approved_fts.searchable_text "
        "FROM approved_fts JOIN approved_entries AS e ON e.id = approved_fts.rowid "
        "WHERE approved_fts MATCH ? AND e.repository_key = ? AND e.worktree_key = ? "
        "AND e.kind = 'entry' AND e.status = 'approved' "
        "ORDER BY bm25(approved_fts), e.entry_id LIMIT ?",
        (match, *owner, limit),
    ).fetchall()
    return [(_approved_item(row), str(row[-1])) for row in rows]


def _candidate_hits(
    conn: sqlite3.Connection, owner: tuple[str, str], match: str, limit: int, own_id: str
) -> list[tuple[PoolItem, str]]:
    """BM25 hits, best first, each with its analyzed indexed text."""
    rows = conn.execute(
        f"SELECT {_CANDIDATE_ITEM}, candidate_fts.searchable_text "
        "FROM candidate_fts JOIN candidates AS c ON c.rowid = candidate_fts.rowid "
        f"WHERE candidate_fts MATCH ? AND {_LIVE_ENTRY_CANDIDATES} AND c.candidate_id <> ? "
        "ORDER BY bm25(candidate_fts), c.candidate_id LIMIT ?",
        (match, *owner, own_id, limit),
    ).fetchall()
    return [(_candidate_item(row), str(row[-1])) for row in rows]


# --------------------------------------------------------------------------------------------
# the embedding side (recall-hybrid-rrf@2)


class _DraftVectors:
    """The drafts' stored vectors (one space), and the approved and the live candidates' vectors
    in that space (read once for all the drafts)."""

    def __init__(
        self,
        approved: ApprovedVectors,
        drafts: dict[str, np.ndarray],
        candidates: list[Any],
    ) -> None:
        self.approved = approved
        self.drafts = drafts
        self.candidate_ids = [row[0] for row in candidates]
        self.candidate_matrix = from_blobs([row[1] for row in candidates])

    @classmethod
    def load(
        cls, conn: sqlite3.Connection, owner: tuple[str, str], drafts: Sequence[DraftQuery]
    ) -> _DraftVectors | None:
        """None unless every draft has a current vector and all are of one space."""
        if not drafts:
            return None
        marks = ", ".join("?" * len(drafts))
        rows = conn.execute(
            "SELECT v.candidate_id, v.space, v.vector FROM candidate_vectors AS v "
            "JOIN candidates AS c ON c.candidate_id = v.candidate_id "
            f"WHERE v.content_digest = c.content_digest AND v.candidate_id IN ({marks})",
            [d.candidate_id for d in drafts],
        ).fetchall()
        spaces = {row[1] for row in rows}
        if len(rows) != len({d.candidate_id for d in drafts}) or len(spaces) != 1:
            return None
        space = spaces.pop()
        if _approved_without_vector(conn, owner, space):
            return None
        candidates = conn.execute(
            "SELECT v.candidate_id, v.vector FROM candidate_vectors AS v "
            "JOIN candidates AS c ON c.candidate_id = v.candidate_id "
            f"WHERE {_LIVE_ENTRY_CANDIDATES} AND v.space = ? "
            "AND v.content_digest = c.content_digest ORDER BY v.candidate_id",
            (*owner, space),
        ).fetchall()
        vectors = dict(zip([r[0] for r in rows], from_blobs([r[2] for r in rows]), strict=True))
        return cls(load_approved(conn, owner, space), vectors, candidates)

    def rankings(
        self, conn: sqlite3.Connection, own_id: str, limit: int
    ) -> tuple[list[PoolItem], list[PoolItem]]:
        """The approved and the candidate embedding rankings of one draft."""
        query = self.drafts[own_id]
        approved = self.approved.rank(
            query.tolist(),
            limit=limit,
            min_similarity=MIN_SIMILARITY,
            entries_only=True,
            include_deprecated=False,
        )
        others = np.asarray(
            [i for i, cid in enumerate(self.candidate_ids) if cid != own_id], dtype=np.int64
        )
        scores = self.candidate_matrix[others] @ query if len(others) else np.zeros(0)
        similar = best(others.tolist(), scores.tolist(), limit, MIN_SIMILARITY)
        return (
            _items_by_id(conn, "approved", [i for i, _ in approved]),
            _items_by_id(conn, "candidate", [self.candidate_ids[i] for i, _ in similar]),
        )


def _approved_without_vector(conn: sqlite3.Connection, owner: tuple[str, str], space: str) -> bool:
    """Whether an approved entry of the owner has no vector of its current content in `space`
    (one a `git pull` or an edit brought in since the vectors were synced): the embedding
    ranking would not see it, so the recall is lexical (`recall-rrf@1`) rather than blind to it
    (the submit's rerun then differs from a hybrid task's: ADJUDICATION_STALE)."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM approved_entries AS e LEFT JOIN approved_vectors AS v "
        "ON v.repository_key = e.repository_key AND v.worktree_key = e.worktree_key "
        "AND v.kind = e.kind AND v.entry_id = e.entry_id AND v.content_digest = e.content_digest "
        "AND v.space = ? WHERE e.repository_key = ? AND e.worktree_key = ? AND e.kind = 'entry' "
        "AND e.status = 'approved' AND v.entry_id IS NULL)",
        (space, *owner),
    ).fetchone()
    return bool(row[0])


def _items_by_id(conn: sqlite3.Connection, kind: SourceKind, keys: Sequence[Any]) -> list[PoolItem]:
    """Pool items for approved rows (by approved_entries.id) or candidates (by id), in order."""
    if not keys:
        return []
    marks = ", ".join("?" * len(keys))
    if kind == "approved":
        rows = conn.execute(
            f"SELECT e.id, {_APPROVED_ITEM} FROM approved_entries AS e WHERE e.id IN ({marks})",
            list(keys),
        ).fetchall()
        found = {row[0]: _approved_item(row[1:]) for row in rows}
    else:
        rows = conn.execute(
            f"SELECT {_CANDIDATE_ITEM} FROM candidates AS c WHERE c.candidate_id IN ({marks})",
            list(keys),
        ).fetchall()
        found = {row[0]: _candidate_item(row) for row in rows}
    return [found[key] for key in keys]


def embed_candidates(
    conn: sqlite3.Connection, candidate_ids: Sequence[str], embedder: Embedder
) -> int:
    """Store the vectors of these entry candidates (their draft text) in the embedder's space,
    in the caller's transaction. Raises what the embedder raises."""
    marks = ", ".join("?" * len(candidate_ids))
    rows = conn.execute(
        "SELECT candidate_id, content_digest, payload_json FROM candidates "
        f"WHERE candidate_kind = 'entry' AND candidate_id IN ({marks}) ORDER BY candidate_id",
        list(candidate_ids),
    ).fetchall()
    blobs = embed_in_batches(embedder, [draft_text(orjson.loads(row[2])) for row in rows])
    _store_candidate_vectors(conn, rows, blobs, embedder.space.key)
    return len(rows)


def sync_candidate_vectors(
    conn: sqlite3.Connection, *, repository_key: str, worktree_key: str, embedder: Embedder
) -> int:
    """Embed the owner's live entry candidates that have no current vector in the embedder's
    space (an edited or merged candidate, or a change of model). Embeds outside a transaction;
    writes only candidates whose content is still the embedded one. Raises what the embedder
    raises (nothing is written then)."""
    space = embedder.space.key
    rows = conn.execute(
        "SELECT c.candidate_id, c.content_digest, c.payload_json FROM candidates AS c "
        "LEFT JOIN candidate_vectors AS v ON v.candidate_id = c.candidate_id "
        "AND v.content_digest = c.content_digest AND v.space = ? "
        f"WHERE {_LIVE_ENTRY_CANDIDATES} AND v.candidate_id IS NULL ORDER BY c.candidate_id",
        (space, repository_key, worktree_key),
    ).fetchall()
    if not rows:
        return 0
    blobs = embed_in_batches(embedder, [draft_text(orjson.loads(row[2])) for row in rows])
    with db.write_tx(conn):
        _store_candidate_vectors(conn, rows, blobs, space)
    return len(rows)


def _store_candidate_vectors(
    conn: sqlite3.Connection, rows: Sequence[Any], blobs: Sequence[bytes], space: str
) -> None:
    conn.executemany(
        "INSERT INTO candidate_vectors (candidate_id, content_digest, space, vector) "
        "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM candidates "
        "WHERE candidate_id = ? AND content_digest = ?) "
        "ON CONFLICT (candidate_id) DO UPDATE SET content_digest = excluded.content_digest, "
        "space = excluded.space, vector = excluded.vector",
        (
            (row[0], row[1], space, blob, row[0], row[1])
            for row, blob in zip(rows, blobs, strict=True)
        ),
    )


def try_embed_candidates(
    conn: sqlite3.Connection, candidate_ids: Sequence[str], embedder: Embedder | None
) -> None:
    """`embed_candidates`, or nothing when there is no embedder or it fails (recall is then
    lexical: `recall-rrf@1`)."""
    if embedder is None or not candidate_ids:
        return
    try:
        embed_candidates(conn, candidate_ids, embedder)
    except errors.TeamloreError:
        return


def _summary(text: str) -> str:
    """A pool item's summary: its text's start on one line, at most 240 cells (so at most the
    240 characters a summary holds), cut between words and marked `…` (core/text/excerpts.py)."""
    return excerpt(text, SUMMARY_CELLS)


def _approved_provenance(conn: sqlite3.Connection, owner: tuple[str, str]) -> ProjectionProvenance:
    row = conn.execute(
        "SELECT generation, analyzer_version, coverage FROM approved_projection "
        "WHERE repository_key = ? AND worktree_key = ?",
        owner,
    ).fetchone()
    if row is None:
        return ProjectionProvenance(0, ANALYZER_VERSION, "partial")
    return ProjectionProvenance(int(row[0]), row[1], row[2])


def _candidate_provenance(conn: sqlite3.Connection, owner: tuple[str, str]) -> ProjectionProvenance:
    row = conn.execute(
        "SELECT generation, analyzer_version FROM candidate_projection "
        "WHERE repository_key = ? AND worktree_key = ?",
        owner,
    ).fetchone()
    if row is None:
        return ProjectionProvenance(0, ANALYZER_VERSION, "complete")
    return ProjectionProvenance(int(row[0]), row[1], "complete")


def candidate_searchable_text(payload: dict[str, Any]) -> str:
    """What a candidate is recalled by: the same text a draft queries with."""
    return draft_text(payload)


def draft_text(payload: dict[str, Any]) -> str:
    """Content, then each statement's text (the query of a draft, the document of a candidate)."""
    parts: list[str] = [str(payload.get("content") or "")]
    for statement in payload.get("statements") or []:
        if isinstance(statement, dict) and statement.get("text"):
            parts.append(str(statement["text"]))
    return "\n".join(p for p in parts if p)
