"""Hybrid ranking: reciprocal-rank fusion of a lexical and a vector ranking, the one fusion of
memory search and session search (docs/hybrid-search.md, "Fusion").

    score(d) = LEXICAL_WEIGHT * share(d)**2 / (RRF_K + lexical rank of d)
             + VECTOR_WEIGHT / (RRF_K + vector rank of d)
             + VECTOR_WEIGHT / (RRF_K + headline rank of d)      (memory search only)

over the rankings `d` appears in, where `share` is the share of the query's search terms `d`
holds: a document holding one word of a twelve-word description is weak lexical evidence, one
holding every word is strong. The headline ranking (the query's embedding against each
document's headline embedded alone, docs/hybrid-search.md "Fusion") is a second ranking of the
vector path with the vector weight: every embedding ranking counts the same. Scores are scaled
so that first in every ranking with every term held is 1.0. Ties keep the lexical order, then
the vector order, then the headline order. The constants were chosen on
bench/bench_hybrid_quality.py (k = 60 flattens a memory of tens of documents; unweighted lexical
hits let entries that share words with the query push the answer down).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

Key = TypeVar("Key", bound=Hashable)
Path = Literal["lexical", "vector"]

RRF_K = 20
LEXICAL_WEIGHT = 1.0
VECTOR_WEIGHT = 1.0

# why a search ran words alone, in the words every search result uses (`vector.reason`)
LEXICAL_ASKED = "lexical search only was asked for"
EMBEDDINGS_OFF = '[embeddings] backend = "off" in config.toml'


@dataclass(frozen=True, slots=True)
class Fused(Generic[Key]):
    key: Key
    score: float  # 1.0 = first in both rankings, every query term held
    matched_by: tuple[Path, ...]


def fuse(
    lexical: Sequence[tuple[Key, float]],
    vector: Sequence[Key],
    lexical_ranks: Sequence[int] | None = None,
    headline: Sequence[Key] | None = None,
) -> list[Fused[Key]]:
    """`lexical`: (key, share of the query's terms held, 0..1), best first; `vector`: keys,
    best first; `headline`: keys by their headline's similarity, best first (None: no
    headline ranking ran). Every key of any ranking, best fused score first. When `lexical` is
    a selection from a longer ranking, `lexical_ranks` gives each key's rank in that ranking."""
    scores: dict[Key, float] = {}
    found: dict[Key, list[Path]] = {}
    ranks = lexical_ranks if lexical_ranks is not None else range(1, len(lexical) + 1)
    for rank, (key, share) in zip(ranks, lexical, strict=True):
        scores[key] = LEXICAL_WEIGHT * min(max(share, 0.0), 1.0) ** 2 / (RRF_K + rank)
        found[key] = ["lexical"]
    for rank, key in enumerate(vector, start=1):
        scores[key] = scores.get(key, 0.0) + VECTOR_WEIGHT / (RRF_K + rank)
        found.setdefault(key, []).append("vector")
    for rank, key in enumerate(headline or (), start=1):
        scores[key] = scores.get(key, 0.0) + VECTOR_WEIGHT / (RRF_K + rank)
        if "vector" not in found.setdefault(key, []):
            found[key].append("vector")
    # the vector path ran (else there is nothing to fuse), even when it found nothing near
    best = _best(bool(lexical), vector_rankings=1 if headline is None else 2)
    order = sorted(scores, key=lambda key: -scores[key])  # stable: lexical order, then vector
    return [Fused(key, round(scores[key] / best, 4), tuple(found[key])) for key in order]


def _best(lexical: bool, vector_rankings: int) -> float:
    """The highest unscaled score: first in every ranking, every query term held."""
    return ((LEXICAL_WEIGHT if lexical else 0.0) + VECTOR_WEIGHT * vector_rankings) / (RRF_K + 1)


def words_only_ceiling(rank: int, vector_rankings: int = 1) -> float:
    """The highest score `fuse` can give a key found only by the lexical ranking, at `rank` or
    further down (every query term held), beside `vector_rankings` embedding rankings."""
    return round(LEXICAL_WEIGHT / (RRF_K + rank) / _best(True, vector_rankings), 4)
