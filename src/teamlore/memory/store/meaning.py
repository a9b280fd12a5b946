"""Memory search's meaning ranking: every document ranked once by the standardized similarities
of each model and field (docs/hybrid-search.md, "The meaning ranking").

For each model of memory's embedder (the two of a paired model, else the one) and each field
(the whole text, the headline) the query's cosines with the searched documents are
standardized — z = (cosine − mean) / standard deviation over those documents — and a document's
score is the sum of its z's. The two models' cosines spread differently, and differently for
each query, so a mean of raw cosines let whichever spread wider on that query decide;
standardized, each model and each field has one equal voice. A model that cannot read a document
(`Embedder.reads`) gives it z = 0, the average: no vote for it or against it ("Words are never
outvoted", rule 2). A document is ranked when a model that reads it finds its whole text or its
headline at cosine ≥ the floor.

A paired model's stored row holds its models' unit rows one after the other, scaled by
1/sqrt(n) (`PairedEmbedder`): within one model's dimensions, the product with that model's unit
query row times sqrt(n) is that model's cosine, so one stored vector serves every model.

The arithmetic runs without numpy (models/vector_math.py): a fresh `memory search` process need
not import it.
"""

from __future__ import annotations

import heapq
import itertools
from array import array
from collections.abc import Callable, Sequence
from typing import TypeAlias

from teamlore.models.vector_math import (
    Int8Rows,
    QueryRows,
    at_least,
    picked,
    standardized,
    weighted_sum,
)

Cosines: TypeAlias = "array[float]"  # one cosine per document (`Int8Rows.cosines`)
# which models cannot read which of the given documents: per model, the ids it cannot read
Unread = Callable[[list[int]], Sequence[set[int]]]

# the documents whose reading is checked: the best CANDIDATES_PER_PLACE × limit by the score
# every model gives (a model's vote is taken back only where it cannot read the document)
CANDIDATES_PER_PLACE = 2


def model_cosines(rows: Int8Rows, queries: QueryRows) -> list[Cosines]:
    """Each model's cosine of every stored row with its unit-length query row; the rows hold
    the models' dimensions in the queries' order (`Int8Rows.cosines`)."""
    return rows.cosines(queries)


def rank_rows(
    ids: array[int],
    whole: Int8Rows,
    headline: Int8Rows | None,
    queries: Sequence[Sequence[float]],
    keep: Sequence[int] | None,
    *,
    limit: int,
    min_similarity: float,
    unread: Unread,
) -> list[tuple[int, float]]:
    """`meaning_ranking` of stored rows: each model's cosines of the whole texts and (given) of
    the headlines, where a document without a headline vector stands for itself by its whole
    text; every row is scanned, then only the rows `keep` (None: all) are ranked."""
    parts = QueryRows.of(queries, whole.dimensions)
    cosines = model_cosines(whole, parts)
    fields = [cosines]
    if headline is not None:
        fields.append(own_or_whole(model_cosines(headline, parts), cosines, headline))
    if keep is not None:  # copies only when a document is left out
        fields = [[picked(cos, keep) for cos in field] for field in fields]
        ids = picked(ids, keep)
    return meaning_ranking(ids, fields, limit=limit, min_similarity=min_similarity, unread=unread)


def own_or_whole(lines: list[Cosines], whole: list[Cosines], headline: Int8Rows) -> list[Cosines]:
    """Headline cosines, where a document without a headline vector (scale 0) stands for itself
    by its whole text's."""
    if 0.0 not in headline.scales:
        return lines
    own = headline.scales
    return [
        array("d", [h if s else w for h, w, s in zip(line, cos, own, strict=True)])
        for line, cos in zip(lines, whole, strict=True)
    ]


def meaning_ranking(
    ids: Sequence[int],
    fields: Sequence[Sequence[Cosines]],
    *,
    limit: int,
    min_similarity: float,
    unread: Unread,
) -> list[tuple[int, float]]:
    """(id, score) of the best `limit` documents by the sum of their standardized cosines,
    best first, ties by id. `fields[f][m]`: model m's cosines of field f (whole text,
    headline) for each of `ids`."""
    if not len(ids):
        return []
    votes = [standardized(cos) for field in fields for cos in field]  # field by field
    near = [cos for field in fields for cos in field]
    score = votes[0]
    for vote in votes[1:]:
        score = weighted_sum(score, vote, 1.0, 1.0)
    members = _best_reached(score, near, min_similarity, CANDIDATES_PER_PLACE * limit)
    candidates = [int(ids[i]) for i in members]
    blind = unread(candidates)
    models = len(blind)
    chosen: list[tuple[float, int]] = []
    for member, doc in zip(members, candidates, strict=True):
        # the (field, model) voices whose model reads the document; they go field by field
        voices = [v for v in range(len(votes)) if doc not in blind[v % models]]
        if voices and max(near[v][member] for v in voices) >= min_similarity:
            chosen.append((-sum(votes[v][member] for v in voices), doc))
    chosen.sort()
    return [(doc, -negative) for negative, doc in chosen[:limit]]


def _best_reached(
    score: Cosines, near: Sequence[Cosines], min_similarity: float, depth: int
) -> list[int]:
    """The `depth` best-scored positions (ties: the earlier, so the lower id) among those that
    some model finds at cosine ≥ the floor by some field. Which are reached is one byte per
    document (`at_least`), or-ed over the fields and models as integers; the depth-th best
    score among them is the cut, and the positions at or above it are found the same way: no
    Python loop over the documents."""
    count = len(score)
    reached = 0
    for cos in near:
        reached |= int.from_bytes(at_least(cos, min_similarity), "little")
    best = heapq.nlargest(depth, itertools.compress(score, reached.to_bytes(count, "little")))
    if not best:
        return []
    above = int.from_bytes(at_least(score, best[-1]), "little") & reached
    found = list(itertools.compress(range(count), above.to_bytes(count, "little")))
    if len(found) < len(best):  # a -0.0 at a cut of 0 (`at_least`): take every member's score
        members = itertools.compress(range(count), reached.to_bytes(count, "little"))
        return heapq.nlargest(depth, members, key=score.__getitem__)
    found.sort(key=lambda i: -score[i])  # stable: ties keep the earlier position first
    return found[:depth]
