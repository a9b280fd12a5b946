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

from collections.abc import Collection, Hashable, Sequence
from typing import TYPE_CHECKING, Generic, Literal, NamedTuple, TypedDict, TypeVar, Unpack

from teamlore.core.shapes.records import Record

if TYPE_CHECKING:
    from teamlore.core.analyzer import Query

Key = TypeVar("Key", bound=Hashable)
# how a key was found: its words as typed, only their translations (session search), meaning
Path = Literal["lexical", "translation", "vector"]

RRF_K = 20
LEXICAL_WEIGHT = 1.0
VECTOR_WEIGHT = 1.0
# memory search's one meaning ranking (memory/store/meaning.py: whole text and headline, each
# model's similarities standardized and summed) weighs what the two rankings it replaced did
MEANING_WEIGHT = 2 * VECTOR_WEIGHT
# A short or identifier-like query (`words_decide`): the documents the words rank this high
# stay within the first KEPT_PLACES whatever the vectors say (docs/hybrid-search.md, "Words are
# never outvoted"): two terms or an identifier are precise, and a vector ranking that disagrees
# is noise there (a short Chinese term, an identifier the model reads as its pieces).
KEPT_WORD_RANKS = 3
KEPT_PLACES = 5
SHORT_QUERY_TERMS = 2
# Any other query: the words' first place stays within the first KEPT_PLACES when it holds at
# least this share of the query's terms (docs/hybrid-search.md, "Words are never outvoted",
# rule 8): a turn holding most of a described problem's words is not lost to vector neighbours.
KEPT_FIRST_SHARE = 0.5
# The translation ranking's first place stays there too when it alone holds at least this share
# of the query's terms as translated (rule 9): the words' rule for a question asked in the
# other language, where the literal words find nothing (chosen on the tuning half and probes)
KEPT_TRANSLATION_SHARE = 0.75
# and their lexical ranking weighs this much (chosen on the tuning half, docs/hybrid-search.md);
# so does the lexical ranking of a query the vector path reads only as its glosses (`fuse`)
DECIDING_LEXICAL_WEIGHT = 3.0
# the words of an English query read as their Chinese translations, or of a Chinese query as
# their English glosses (`fuse`'s `translation`): less than the words as typed, so a literal
# match ranks above a translation (docs/hybrid-search.md, "English queries over Chinese turns",
# "Chinese queries over English turns"; chosen on the tuning half)
TRANSLATION_WEIGHT = 0.5

# why a search ran words alone, in the words every search result uses (`vector.reason`)
LEXICAL_ASKED = "lexical search only was asked for"
EMBEDDINGS_OFF = '[embeddings] backend = "off" in config.toml'


class Fused(NamedTuple, Generic[Key]):
    key: Key
    score: float  # 1.0 = first in both rankings, every query term held
    matched_by: tuple[Path, ...]


def words_decide(*queries: Query) -> bool:
    """Whether the words' top ranks are kept (`fuse`'s `keep_words`): one of `queries` (a query
    as typed and as searched, its Chinese runs cut into words) has at most SHORT_QUERY_TERMS
    search terms, none a Chinese run longer than SHORT_CHINESE_CHARS (`反序列化` is short as
    typed, three terms as searched), or holds an identifier (a term of several parts:
    `parse_line`, `UsageOrderBy`, `COMMIT_SESSION`, or with digits)."""
    return any(_is_short(query) or has_identifier(query) for query in queries)


SHORT_CHINESE_CHARS = 4


def _is_short(query: Query) -> bool:
    return len(query.terms) <= SHORT_QUERY_TERMS and all(
        term.whole or len(term.parts) < SHORT_CHINESE_CHARS for term in query.terms
    )


def has_identifier(query: Query) -> bool:
    """Whether a term of `query` is an identifier: several parts (`parse_line`, `UsageOrderBy`,
    `COMMIT_SESSION`) or a digit."""
    return any(
        term.kind != "phrase" and term.whole and (len(term.parts) > 1 or _has_digit(term.whole))
        for term in query.terms
    )


def _has_digit(text: str) -> bool:
    return any(ch.isdigit() for ch in text)


class FusionOptions(TypedDict, Generic[Key], total=False):
    """`fused_scores`' keyword arguments, which `fuse` passes on."""

    keep_words: bool
    vector_weight: float
    translated: bool
    unread: Collection[Key]
    translation: Sequence[tuple[Key, float]]
    literal: Collection[Key]
    phrase: Collection[Key]


def fuse(
    lexical: Sequence[tuple[Key, float]],
    vector: Sequence[Key],
    lexical_ranks: Sequence[int] | None = None,
    headline: Sequence[Key] | None = None,
    **options: Unpack[FusionOptions[Key]],
) -> list[Fused[Key]]:
    """Every key of any ranking, best fused score first (`fused_scores`, whose arguments these
    are; ties keep the lexical order, then the vector order, then the headline order)."""
    fused = fused_scores(lexical, vector, lexical_ranks, headline, **options)
    raw = fused.raw
    order = sorted(raw, key=lambda key: -raw[key])  # stable: lexical order, then vector
    return [Fused(key, fused.score(key), fused.matched_by(key)) for key in order]


class FusedScores(Record, Generic[Key], frozen=True):
    """`fused_scores`' answer: every key's unscaled score, in the order the rankings first
    name them (lexical, then vector, then headline), and what scales them. A caller that shows
    a page asks `score` and `matched_by` of the page's keys only (memory search: ~200 keys
    fused, 10 shown)."""

    raw: dict[Key, float]
    # the unscaled score of first in every ranking, every query term held, or the first key's
    # when it scored higher (`_scale`)
    best: float
    lexical: frozenset[Key]  # the keys the lexical ranking holds (the words as typed)
    vector: frozenset[Key]  # the keys an embedding ranking holds
    translated: frozenset[Key] = frozenset()  # held by the translation ranking alone

    def score(self, key: Key) -> float:
        """`key`'s fused score: 1.0 = first in every ranking, every query term held."""
        return round(self.raw[key] / self.best, 4)

    def matched_by(self, key: Key) -> tuple[Path, ...]:
        words: tuple[Path, ...] = (
            ("lexical",)
            if key in self.lexical
            else ("translation",)
            if key in self.translated
            else ()
        )
        return (*words, "vector") if key in self.vector or not words else words


def fused_scores(
    lexical: Sequence[tuple[Key, float]],
    vector: Sequence[Key],
    lexical_ranks: Sequence[int] | None = None,
    headline: Sequence[Key] | None = None,
    *,
    keep_words: bool = False,
    vector_weight: float = VECTOR_WEIGHT,
    translated: bool = False,
    unread: Collection[Key] = frozenset(),
    translation: Sequence[tuple[Key, float]] = (),
    literal: Collection[Key] = frozenset(),
    phrase: Collection[Key] = frozenset(),
) -> FusedScores[Key]:
    """`lexical`: (key, share of the query's terms held, 0..1), best first; `vector`: keys,
    best first; `headline`: keys by their headline's similarity, best first (None: no
    headline ranking ran). When `lexical` is a selection from a longer ranking,
    `lexical_ranks` gives each key's rank in that ranking.
    `vector_weight`: the weight of `vector` (MEANING_WEIGHT for memory's meaning ranking).
    `keep_words` (a short or identifier-like query, `words_decide`): the keys of the lexical
    ranks 1..KEPT_WORD_RANKS end within the first KEPT_PLACES, in their fused order. Without
    it, the lexical first ends there when it holds at least KEPT_FIRST_SHARE of the terms and
    the query was not `translated`.
    `translated` (the vector path read the query only through a translation, its English
    glosses): the lexical ranking weighs DECIDING_LEXICAL_WEIGHT too, so a literal match ranks
    above a translation (docs/hybrid-search.md, "Words are never outvoted").
    `unread`: keys no embedding ranking can read (`Embedder.reads`); the words are their only
    judge, so their lexical part is scaled to the full weight of every ranking
    (docs/hybrid-search.md, "Words are never outvoted", rule 6).
    `translation`: (key, share of the query's terms held as typed or as a translation, 0..1),
    best first: the words ranking of a query's translations (an English query's Chinese
    words, a Chinese query's English glosses), weighing
    TRANSLATION_WEIGHT, plus every embedding ranking's weight for an `unread` key as the
    words do: at least LEXICAL_WEIGHT - TRANSLATION_WEIGHT less than the words as typed
    (docs/hybrid-search.md, "English queries over Chinese turns"). A key in both gets both
    votes, so it can score above first everywhere: the scores are then shares of the query's
    first, not of `best` (`_scale`), and none passes 1.0 (rule 10). Its first key ends within
    the first KEPT_PLACES when it alone holds at least KEPT_TRANSLATION_SHARE of the terms.
    When `keep_words` and the lexical ranking found nothing, the translation decides instead:
    it weighs DECIDING_LEXICAL_WEIGHT times as much and its first KEPT_WORD_RANKS keys are
    kept.
    `literal`: keys of `lexical` that hold the whole query as typed (every search term, in
    their best passage where the caller ranks passages); each ends above every key found by
    meaning alone (`_literal_above_meaning`).
    `phrase`: keys of `lexical` that hold the whole query as typed as one phrase, its words in
    order (a pasted error line); each scores at least what first in every ranking scores at
    its lexical rank (`_phrase_as_first`)."""
    scores: dict[Key, float] = {}
    ranks = lexical_ranks if lexical_ranks is not None else range(1, len(lexical) + 1)
    weight = DECIDING_LEXICAL_WEIGHT if keep_words or translated else LEXICAL_WEIGHT
    # both paths ran (else there is nothing to fuse), even when one found nothing: a hit the
    # words missed never scores 1.0, the score of first everywhere with every term held
    votes = vector_weight + (0.0 if headline is None else VECTOR_WEIGHT)
    for rank, (key, share) in zip(ranks, lexical, strict=True):
        judged = weight + votes if key in unread else weight
        scores[key] = judged * min(max(share, 0.0), 1.0) ** 2 / (RRF_K + rank)
    # a short query whose words as typed found nothing: its translated words decide (rule 3)
    decide = keep_words and not lexical
    translation_weight = TRANSLATION_WEIGHT * (DECIDING_LEXICAL_WEIGHT if decide else 1.0)
    for rank, (key, share) in enumerate(translation, start=1):
        judged = translation_weight + votes if key in unread else translation_weight
        vote = judged * min(max(share, 0.0), 1.0) ** 2 / (RRF_K + rank)
        scores[key] = scores.get(key, 0.0) + vote
    for rank, key in enumerate(vector, start=1):
        scores[key] = scores.get(key, 0.0) + vector_weight / (RRF_K + rank)
    for rank, key in enumerate(headline or (), start=1):
        scores[key] = scores.get(key, 0.0) + VECTOR_WEIGHT / (RRF_K + rank)
    best = _best(weight, votes)
    if phrase:
        _phrase_as_first(scores, lexical, ranks, phrase, best)
    typed = frozenset(key for key, _ in lexical)
    by_translation = frozenset(key for key, _ in translation) - typed
    if literal:
        meaning_only = scores.keys() - typed - by_translation
        _literal_above_meaning(
            scores, [key for key, _ in lexical if key in literal], meaning_only, best
        )
    kept = _kept_by_words(lexical, ranks, keep_words, translated)
    kept += [key for key in _kept_by_translation(translation, decide) if key not in kept]
    if kept:
        _keep_in_first_places(scores, kept, best)
    vectors = frozenset((*vector, *(headline or ())))
    return FusedScores(scores, _scale(scores, best), typed, vectors, by_translation)


def _phrase_as_first(
    scores: dict[Key, float],
    lexical: Sequence[tuple[Key, float]],
    ranks: Sequence[int],
    phrase: Collection[Key],
    best: float,
) -> None:
    """Give each `phrase` key at least the score of first in every ranking, every term held,
    at its lexical rank (docs/hybrid-search.md, "Words are never outvoted", rule 11): its words
    stand for every ranking, as an unread key's do (rule 6), and count whole, wherever in the
    turn they are. A pasted error line lives in a tool's output, which no model embeds and
    whose words count TOOL_PASSAGE; turns near in meaning that hold some of its words used to
    outrank the one turn that holds it."""
    for rank, (key, _share) in zip(ranks, lexical, strict=True):
        if key in phrase:
            scores[key] = max(scores[key], best * (RRF_K + 1) / (RRF_K + rank))


def _scale(scores: dict[Key, float], best: float) -> float:
    """What the scores are shares of: `best`, unless a key scored higher, then that key's score
    (docs/hybrid-search.md, "Fusion", rule 10: no score passes 1.0). Only a key found both as
    typed and by a translation does: it gets both words votes, and one no model reads rule 6's
    weight in each (measured in round 13: giving it once cost first places)."""
    return max(best, max(scores.values(), default=best))


def _kept_by_words(
    lexical: Sequence[tuple[Key, float]], ranks: Sequence[int], keep_words: bool, translated: bool
) -> list[Key]:
    """The keys the words keep within the first KEPT_PLACES (rules 3 and 8 of "Words are never
    outvoted"): the lexical ranks 1..KEPT_WORD_RANKS of a query whose words decide, else the
    lexical first if it holds at least KEPT_FIRST_SHARE of the query's terms, unless the
    vector path read the query only as a translation (rule 4 weighs those words instead)."""
    if keep_words:
        return [
            key for rank, (key, _) in zip(ranks, lexical, strict=True) if rank <= KEPT_WORD_RANKS
        ]
    if translated or not lexical or ranks[0] != 1:
        return []
    return [lexical[0][0]] if lexical[0][1] >= KEPT_FIRST_SHARE else []


def _kept_by_translation(
    translation: Sequence[tuple[Key, float]], decide: bool = False
) -> list[Key]:
    """The translation ranking's first key, kept within the first KEPT_PLACES (rule 9 of
    "Words are never outvoted") when it holds at least KEPT_TRANSLATION_SHARE of the query's
    terms and no other key holds as many: a tie at the top is a large turn holding every
    translation somewhere as often as it is the answer. `decide` (a short query whose words
    as typed found nothing, rule 3): its first KEPT_WORD_RANKS keys, as the words' would be."""
    if decide:
        return [key for key, _ in translation[:KEPT_WORD_RANKS]]
    if not translation or translation[0][1] < KEPT_TRANSLATION_SHARE:
        return []
    if len(translation) > 1 and translation[1][1] >= translation[0][1]:
        return []
    return [translation[0][0]]


def _keep_in_first_places(scores: dict[Key, float], kept: Sequence[Key], best: float) -> None:
    """Raise the scores of `kept` keys just enough that they rank within the first KEPT_PLACES:
    a kept key not above the best other key that must give way (the others keep the places
    the kept keys leave) gets a score just above it, never above `best` (1.0 once scaled) or
    the best other key's score if that is higher; kept keys keep their order."""
    others = sorted((score for key, score in scores.items() if key not in kept), reverse=True)
    room = KEPT_PLACES - len(kept)
    if len(others) <= room:
        return  # fewer keys than places: every kept key is within them already
    floor = others[room]
    # visible after `fuse` rounds to 4 places of the best score, unless the keys above the
    # floor (rule 10's, thousands of them) leave less room below `best`, the top of the range
    step = min(best * 1e-3, (max(best, others[0]) - floor) / len(kept))
    for place, key in enumerate(sorted(kept, key=lambda k: -scores[k])):
        lifted = floor + step * (len(kept) - place)
        scores[key] = max(scores[key], lifted)


def _literal_above_meaning(
    scores: dict[Key, float], literal: Sequence[Key], meaning_only: Collection[Key], best: float
) -> None:
    """Raise the `literal` keys (in lexical order) that a key found by meaning alone outranks
    just above the best of those (docs/hybrid-search.md, "Words are never outvoted", rule 10):
    a person who typed the words expects what holds all of them before what is only near in
    meaning. The literal keys keep their order; one already above the meaning-only keys is
    moved only as far as keeping that order needs. No key ends above `best` (1.0 once scaled)
    or the highest literal score, however many keys there are (`_order_step`)."""
    if not literal or not meaning_only:
        return
    floor = max(scores[key] for key in meaning_only)
    lift = best * 1e-3  # visible after `fuse` rounds to 4 places of the best score
    lowest_first = sorted(enumerate(literal), key=lambda item: (scores[item[1]], -item[0]))
    raised = [floor + lift if scores[key] <= floor else scores[key] for _, key in lowest_first]
    ceiling = max(best, raised[-1])
    step = _order_step(raised, ceiling, best * 1e-4)  # 1e-4: the order visible after rounding
    below = float("-inf")
    for (_, key), score in zip(lowest_first, raised, strict=True):
        scores[key] = below = min(max(score, below + step), ceiling)


def _order_step(raised: Sequence[float], ceiling: float, wanted: float) -> float:
    """The step between consecutive literal keys (`raised`: their scores, lowest first, each
    to end at least a step above the one before): `wanted`, unless that many steps would
    carry the highest past `ceiling`; then the largest step that keeps it within (thousands
    of keys share the room between the meaning-only keys and `best`)."""
    step = wanted
    last = len(raised) - 1
    for place, score in enumerate(raised[:-1]):
        step = min(step, (ceiling - score) / (last - place))
    return max(step, 0.0)


def _best(lexical_weight: float, vector_weights: float) -> float:
    """The highest unscaled score: first in every ranking, every query term held."""
    return (lexical_weight + vector_weights) / (RRF_K + 1)


def words_only_ceiling(
    rank: int, *, vector_weight: float = VECTOR_WEIGHT, keep_words: bool = False
) -> float:
    """The highest score `fuse` can give a key found only by the lexical ranking, at `rank` or
    further down (every query term held), beside embedding rankings weighing `vector_weight`
    in all."""
    weight = DECIDING_LEXICAL_WEIGHT if keep_words else LEXICAL_WEIGHT
    return round(weight / (RRF_K + rank) / _best(weight, vector_weight), 4)
