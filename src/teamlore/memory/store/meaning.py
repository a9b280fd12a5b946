"""Memory search's meaning ranking: every document ranked once by the standardized similarities
of each model and field (docs/hybrid-search.md, "The meaning ranking").

For each model of memory's embedder (the two of a paired model, else the one) and each field
(the whole text, the headline) the query's cosines with the searched documents are
standardized — z = (cosine − mean) / standard deviation over those documents — and a document's
score is the sum of its z's. The models' cosines live on different scales (the static model's
cosines of unrelated English texts are high and close together, the multilingual model's low
and spread), so a mean of raw cosines let the model with the wider spread decide; standardized,
each model and each field has one equal voice. A model that cannot read a document
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

from teamlore.memory.store.vectors import cosines

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
    unit-length query row `queries[i]`; the rows hold the models' dimensions in that order."""
    out: list[Cosines] = []
    start = 0
    lift = np.float32(math.sqrt(len(queries)))
    for query in queries:
        stop = start + len(query)
        out.append(cosines(values[:, start:stop], scales, query) * lift)
        start = stop
    return out


def standardized(scores: Cosines) -> NDArray[np.float64]:
    """(score − mean) / standard deviation; all 0 when the scores do not differ."""
    centred = scores.astype(np.float64) - float(scores.mean()) if len(scores) else np.zeros(0)
    spread = float(centred.std()) if len(scores) else 0.0
    return centred / spread if spread > 0 else np.zeros(len(scores))


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
    votes = [[standardized(cos) for cos in field] for field in fields]
    score = np.sum([z for field in votes for z in field], axis=0)
    reach = np.max([cos for field in fields for cos in field], axis=0)
    members = np.flatnonzero(reach >= min_similarity)
    depth = CANDIDATES_PER_PLACE * limit
    if members.size > depth:
        members = members[np.argpartition(-score[members], depth - 1)[:depth]]
    candidates = [int(ids[i]) for i in members]
    blind = unread(candidates)
    ranked: list[tuple[int, float]] = []
    for row, doc in zip(members.tolist(), candidates, strict=True):
        readers = [m for m, cannot in enumerate(blind) if doc not in cannot]
        if not readers or max(float(cos[m][row]) for cos in fields for m in readers) < (
            min_similarity
        ):
            continue
        total = float(score[row]) - sum(
            float(field[m][row]) for field in votes for m in range(len(blind)) if m not in readers
        )
        ranked.append((doc, total))
    ranked.sort(key=lambda item: (-item[1], item[0]))
    return ranked[:limit]
