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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from teamlore.memory.store.vectors import widened_blocks

Cosines = NDArray[np.float32]
# which models cannot read which of the given documents: per model, the ids it cannot read
Unread = Callable[[list[int]], Sequence[set[int]]]

# the documents whose reading is checked: the best CANDIDATES_PER_PLACE × limit by the score
# every model gives (a model's vote is taken back only where it cannot read the document)
CANDIDATES_PER_PLACE = 2


def model_cosines(
    values: NDArray[np.int8], scales: NDArray[np.float32], queries: Sequence[NDArray[np.float32]]
) -> list[Cosines]:
    """Each model's cosine of every stored row (int8 `values` with their `scales`) with its
    unit-length query row `queries[i]`; the rows hold the models' dimensions in that order.
    One product per block of rows (`vectors.widened_blocks`) with the queries side by side, each
    in its model's dimensions and zero elsewhere: what one cosine of the whole row costs."""
    columns = np.zeros((values.shape[1], len(queries)), dtype=np.float32)
    start = 0
    for column, query in enumerate(queries):
        columns[start : start + len(query), column] = query
        start += len(query)
    columns *= np.float32(math.sqrt(len(queries)))
    out = np.empty((len(values), len(queries)), dtype=np.float32)
    for first, rows in widened_blocks(values):
        np.matmul(rows, columns, out=out[first : first + len(rows)])
    out *= (scales / np.float32(127))[:, None]
    return [out[:, column] for column in range(len(queries))]


def standardized(scores: Cosines) -> Cosines:
    """(score − mean) / standard deviation; all 0 when the scores do not differ."""
    if not len(scores):
        return scores
    centred = scores - scores.mean(dtype=np.float64).astype(np.float32)
    spread = float(centred.std(dtype=np.float64))
    return centred / np.float32(spread) if spread > 0 else np.zeros_like(scores)


def meaning_ranking(
    ids: NDArray[np.int64],
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
    votes = np.stack([standardized(cos) for field in fields for cos in field])  # (f·m, docs)
    near = np.stack([cos for field in fields for cos in field])
    score = votes.sum(axis=0)
    members = np.flatnonzero(near.max(axis=0) >= min_similarity)
    depth = CANDIDATES_PER_PLACE * limit
    if members.size > depth:
        members = members[np.argpartition(-score[members], depth - 1)[:depth]]
    candidates = ids[members]
    blind = unread(candidates.tolist())
    # (f·m, candidates): whether that row's model reads each candidate; rows go field by field
    reads = np.array([[doc not in cannot for doc in candidates.tolist()] for cannot in blind])
    reads = np.tile(reads.reshape(len(blind), len(candidates)), (len(fields), 1))
    taken = np.where(reads, votes[:, members], 0.0).sum(axis=0)
    reached = np.where(reads, near[:, members], -np.inf).max(axis=0, initial=-np.inf)
    keep = reached >= min_similarity
    chosen, scores = candidates[keep], taken[keep]
    order = np.lexsort((chosen, -scores))[:limit]  # best first, ties by id
    return list(zip(chosen[order].tolist(), scores[order].tolist(), strict=True))
