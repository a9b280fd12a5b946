"""The one fusion of lexical and vector rankings (docs/hybrid-search.md, "Fusion")."""

from __future__ import annotations

from teamlore.core.analyzer import parse_query
from teamlore.core.fusion import (
    DECIDING_LEXICAL_WEIGHT,
    MEANING_WEIGHT,
    RRF_K,
    fuse,
    fused_scores,
    words_decide,
    words_only_ceiling,
)
from teamlore.models.glosses import segmented


def test_first_in_both_rankings_with_every_term_held_scores_one() -> None:
    fused = fuse([("a", 1.0), ("b", 1.0)], ["a", "c"])
    assert [(f.key, f.matched_by) for f in fused] == [
        ("a", ("lexical", "vector")),
        ("b", ("lexical",)),
        ("c", ("vector",)),
    ]
    assert fused[0].score == 1.0 and fused[1].score < 1.0


def test_a_weak_lexical_match_yields_to_a_strong_vector_neighbour() -> None:
    # "b" holds one of eight query terms: its lexical rank 1 is worth (1/8)**2 of a full match
    fused = fuse([("b", 1 / 8)], ["a", "b"])
    assert [f.key for f in fused] == ["a", "b"]
    # "b" holding every term comes first instead
    assert [f.key for f in fuse([("b", 1.0)], ["a", "b"])] == ["b", "a"]


def test_scores_follow_the_formula() -> None:
    (only,) = fuse([("x", 0.5)], [])  # the vector path ran and found nothing near
    assert only.score == round((0.5**2 / (RRF_K + 1)) / (2 / (RRF_K + 1)), 4)
    vector_only = fuse([], ["p", "q"])  # the words ran and found nothing
    assert [f.score for f in vector_only] == [0.5, round((RRF_K + 1) / (RRF_K + 2) / 2, 4)]


def test_a_hit_the_words_missed_never_scores_one() -> None:
    # 1.0 is first everywhere with every term held; a lone meaning-only hit is not that
    assert fuse([], ["a"])[0].score == 0.5
    assert fuse([], ["a"], vector_weight=2.0)[0].score == round(2 / 3, 4)
    assert fuse([("a", 1.0)], ["a"])[0].score == 1.0


def test_ties_keep_the_lexical_order_then_the_vector_order() -> None:
    fused = fuse([("m", 1.0), ("n", 1.0)], [])
    assert [f.key for f in fused] == ["m", "n"]
    assert [f.key for f in fuse([], ["z", "y"])] == ["z", "y"]
    assert fuse([], []) == []


def test_a_headline_ranking_counts_like_the_vector_ranking() -> None:
    # "b" is second by its whole text and first by its headline: it passes "a", first by text only
    fused = fuse([], ["a", "b"], headline=["b", "c"])
    assert [(f.key, f.matched_by) for f in fused] == [
        ("b", ("vector",)),
        ("a", ("vector",)),
        ("c", ("vector",)),
    ]
    best = 3 / (RRF_K + 1)  # the words' ranking ran too, and found nothing
    assert fused[0].score == round((1 / (RRF_K + 2) + 1 / (RRF_K + 1)) / best, 4)
    # first in all three rankings with every term held is still 1.0
    assert fuse([("a", 1.0)], ["a"], headline=["a"])[0].score == 1.0
    # an empty headline ranking ran (it still counts in the best score); None means it did not
    assert fuse([], ["a"], headline=[])[0].score == round(1 / 3, 4)
    assert fuse([], ["a"])[0].score == 0.5


# -- words are never outvoted (docs/hybrid-search.md, "Words are never outvoted") --------------


def test_for_a_short_query_the_words_top_three_stay_in_the_top_five() -> None:
    """Seven documents every vector ranking puts first; the words' top three (found by words
    alone, each holding half the terms: their weight alone would not lift them) stay within the
    first five, in their fused order, and scores stay ordered."""
    neighbours = [f"v{i}" for i in range(7)]
    words = [("w1", 0.5), ("w2", 0.5), ("w3", 0.5), ("w4", 0.5)]
    plain = fuse(words, neighbours, headline=neighbours)
    assert not {"w2", "w3"} & {f.key for f in plain[:5]}  # what happens without the rule
    kept = fuse(words, neighbours, headline=neighbours, keep_words=True)
    assert {"w1", "w2", "w3"} <= {f.key for f in kept[:5]}
    assert "w4" not in {f.key for f in kept[:5]}  # only the top three are kept
    scores = [f.score for f in kept]
    assert scores == sorted(scores, reverse=True)


def test_the_words_first_holding_half_of_a_long_query_stays_in_the_top_five() -> None:
    """Any query the model reads (rule 8): seven documents every vector ranking puts first push a
    document the words rank first, holding half the terms, out of the first five; the rule
    keeps it there. Only the first is kept, and only while it holds at least half the query."""
    neighbours = [f"v{i}" for i in range(7)]
    # below half, what its weight alone gives: after every neighbour
    weaker = [f.key for f in fuse([("w1", 0.45)], neighbours, headline=neighbours)]
    assert weaker.index("w1") == 7
    kept = fuse([("w1", 0.5), ("w2", 0.5)], neighbours, headline=neighbours)
    assert [f.key for f in kept].index("w1") == 4 and "w2" not in {f.key for f in kept[:5]}
    scores = [f.score for f in kept]
    assert scores == sorted(scores, reverse=True)
    # a query the vector path read only as a translation: rule 4 weighs its words instead
    translated = fuse([("w1", 0.5)], neighbours, headline=neighbours, translated=True)
    assert "w1" not in {f.key for f in translated[:5]}


def test_the_translations_first_holding_most_of_the_query_alone_stays_in_the_top_five() -> None:
    """A question asked in the other language (rule 9): the literal words find nothing, and the
    translation ranking's first holds three quarters of the terms, more than any other; seven
    documents every vector ranking puts first would push it out of the first five."""
    neighbours = [f"v{i}" for i in range(7)]
    kept = fuse([], neighbours, headline=neighbours, translation=[("t1", 0.75), ("t2", 0.5)])
    assert [f.key for f in kept].index("t1") == 4 and "t2" not in {f.key for f in kept[:5]}
    scores = [f.score for f in kept]
    assert scores == sorted(scores, reverse=True)
    # less than three quarters, or a tie at the top (a large turn holding every translation
    # somewhere): the translation's weight alone, after every neighbour
    for translation in ([("t1", 0.7)], [("t1", 0.75), ("t2", 0.75)]):
        fused = [f.key for f in fuse([], neighbours, headline=neighbours, translation=translation)]
        assert fused.index("t1") == 7, translation


def test_short_and_identifier_like_queries_let_the_words_decide() -> None:
    for query in (
        "门禁",
        "反序列化",
        "签名 门禁",
        "flaky export",
        "COMMIT_SESSION",
        "parseLine x y z",
    ):
        assert words_decide(parse_query(query)), query
    for query in ("为什么发布流程在数据库迁移后失败", "how do we ship a schema change safely"):
        assert not words_decide(parse_query(query)), query
    # a question as typed is one long Chinese run; cut into its words it is two terms
    typed = parse_query("为什么发布失败")
    assert not words_decide(typed) and words_decide(typed, segmented(typed))


def test_deciding_words_weigh_more_than_one_vector_ranking() -> None:
    # one term, found first by words; "v" is first in both vector rankings
    fused = fuse([("w", 1.0)], ["v"], headline=["v"], keep_words=True)
    assert [f.key for f in fused] == ["w", "v"]
    assert fused[0].score == 1.0 * DECIDING_LEXICAL_WEIGHT / (DECIDING_LEXICAL_WEIGHT + 2)
    assert [f.key for f in fuse([("w", 1.0)], ["v"], headline=["v"])] == ["v", "w"]


def test_a_ranking_weighing_two_counts_like_two_rankings() -> None:
    # memory's meaning ranking (MEANING_WEIGHT) stands for the whole-text and headline rankings
    once = fuse([("a", 1.0), ("b", 1.0)], ["b", "a"], vector_weight=MEANING_WEIGHT)
    twice = fuse([("a", 1.0), ("b", 1.0)], ["b", "a"], headline=["b", "a"])
    assert [(f.key, f.score) for f in once] == [(f.key, f.score) for f in twice]
    assert words_only_ceiling(5, vector_weight=MEANING_WEIGHT) == round(
        1 / 25 / ((1 + MEANING_WEIGHT) / 21), 4
    )


def test_for_a_translated_query_a_literal_match_outranks_the_translations_nearest() -> None:
    # "w" holds two of three terms; "v" is first by the meaning of the query's glosses
    fused = fuse([("w", 2 / 3)], ["v"], translated=True)
    assert [f.key for f in fused] == ["w", "v"]
    assert fused[0].score == round(
        DECIDING_LEXICAL_WEIGHT * (2 / 3) ** 2 / (DECIDING_LEXICAL_WEIGHT + 1), 4
    )
    assert [f.key for f in fuse([("w", 2 / 3)], ["v"])] == ["v", "w"]


def test_a_key_no_vector_ranking_can_read_is_judged_by_its_words_alone() -> None:
    # "zh" holds every term but the model cannot read it; "en" holds three in five and is
    # first by meaning. Without its vector vote "zh" lost to "en"; its words now stand for
    # every ranking, so first by words with every term held scores 1.0
    assert [f.key for f in fuse([("zh", 1.0), ("en", 0.6)], ["en"])] == ["en", "zh"]
    fused = fuse([("zh", 1.0), ("en", 0.6)], ["en"], unread={"zh"})
    assert (fused[0].key, fused[0].score) == ("zh", 1.0)
    assert [f.key for f in fused] == ["zh", "en"]
    # a key the words found weakly stays weak: its share is scaled, not replaced
    weak = fuse([("zh", 0.2)], ["en"], unread={"zh"})
    assert [f.key for f in weak] == ["en", "zh"]


def test_a_translation_ranks_below_the_same_match_as_typed() -> None:
    # `b` holds every term translated, `a` every term as typed: the words as typed win, for a
    # turn the model reads and for one it cannot read alike (docs/hybrid-search.md, "English
    # queries over Chinese turns")
    fused = fuse([("a", 1.0)], [], translation=[("b", 1.0)])
    assert [f.key for f in fused] == ["a", "b"]
    fused = fuse([("a", 1.0)], [], translation=[("b", 1.0)], unread={"a", "b"})
    assert [f.key for f in fused] == ["a", "b"]
    assert fused[1].matched_by == ("translation",)


def test_a_translation_is_the_only_judge_of_a_document_no_model_reads() -> None:
    # `b` (unread) holds every term translated, `a` is only near by meaning: as the words do,
    # the translation of a document no model reads weighs what the embedding rankings would
    fused = fuse([], ["a"], translation=[("b", 1.0)], unread={"b"})
    assert [f.key for f in fused] == ["b", "a"]


def test_fused_scores_are_what_fuse_orders() -> None:
    # a page asks `score` and `matched_by` of its keys only; `fuse` orders every key by them
    lexical = [("a", 1.0), ("b", 0.5), ("c", 0.25), ("d", 1.0)]
    vector, headline = ["c", "e", "a"], ["f", "b"]
    for keep_words in (False, True):
        options = {"keep_words": keep_words, "vector_weight": MEANING_WEIGHT}
        fused = fuse(lexical, vector, [1, 2, 5, 9], headline, **options)  # type: ignore[arg-type]
        scores = fused_scores(lexical, vector, [1, 2, 5, 9], headline, **options)  # type: ignore[arg-type]
        assert list(scores.raw) == ["a", "b", "c", "d", "e", "f"]  # as the rankings name them
        assert [(f.score, f.matched_by) for f in fused] == [
            (scores.score(f.key), scores.matched_by(f.key)) for f in fused
        ]
    assert scores.matched_by("b") == ("lexical", "vector")  # by its headline
    assert scores.matched_by("d") == ("lexical",) and scores.matched_by("f") == ("vector",)
    translated = fused_scores([("a", 1.0)], ["c"], translation=[("a", 1.0), ("b", 0.5), ("c", 1.0)])
    assert [translated.matched_by(key) for key in "abc"] == [
        ("lexical",),  # as typed and translated: as typed
        ("translation",),  # found by words, as translated only
        ("translation", "vector"),
    ]


def test_a_key_holding_the_whole_query_ranks_above_every_key_found_by_meaning_alone() -> None:
    """Rule 10 of "Words are never outvoted": "w2" and "w3" hold every term of the query (a
    tool output holding the exact error text counts 0.75 a term, so its share is below 1),
    yet three keys found by meaning alone outrank them on rank points. They move just above
    those, in their lexical order; a key holding part of the query and a key found by a
    translation are left where their scores put them."""
    neighbours = ["v1", "v2", "v3"]
    lexical = [("w1", 0.4), ("w2", 0.75), ("w3", 0.75)]
    translation = [("t1", 0.6)]
    before = [f.key for f in fuse(lexical, neighbours, translation=translation)]
    assert before == ["v1", "v2", "v3", "w2", "w3", "t1", "w1"]
    fused = fuse(lexical, neighbours, translation=translation, literal={"w2", "w3"})
    assert [f.key for f in fused] == ["w2", "w3", "v1", "v2", "v3", "t1", "w1"]
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)
    # a key already above every meaning-only key keeps its place and score; a tie is lifted
    ahead = fuse([("w1", 1.0)], ["w1", *neighbours], literal={"w1"})
    assert ahead == fuse([("w1", 1.0)], ["w1", *neighbours])
    tied = fuse([("w1", 1.0)], neighbours, literal={"w1"})  # 1/21 each
    assert [(f.key, f.score) for f in tied[:2]] == [("w1", 0.501), ("v1", 0.5)]


def test_a_document_no_model_reads_found_as_typed_and_translated_never_passes_one() -> None:
    # `mixed` holds half the terms as typed and every term as typed or translated; no model
    # reads it, so both words rankings stand in for its missing vector vote (rule 6, measured in
    # round 13) and it ranks above `read`, first by words and near by meaning
    fused = fuse(
        [("read", 1.0), ("mixed", 0.5)],
        ["other", "read"],
        translation=[("mixed", 1.0)],
        unread={"mixed"},
    )
    assert [f.key for f in fused][:2] == ["mixed", "read"]
    assert all(f.score <= 1.0 for f in fused)
    # first in both words rankings with every term held scores above first everywhere (1.75
    # times it unread, 1.23 read and second by meaning): the scores are then shares of the
    # first's, in the same order
    for unread, vector in (({"a"}, ["r"]), (set(), ["r", "a"])):
        top = fuse([("a", 1.0), ("r", 1.0)], vector, translation=[("a", 1.0)], unread=unread)
        assert [f.key for f in top] == ["a", "r"], unread
        assert top[0].score == 1.0 and top[1].score < 1.0, unread
    # first everywhere with every term held, as typed and translated: 1.0
    for unread in (set(), {"a"}):
        top = fuse([("a", 1.0)], [] if unread else ["a"], translation=[("a", 1.0)], unread=unread)
        assert top[0].score == 1.0, unread


def test_a_short_query_whose_words_found_nothing_is_decided_by_its_translation() -> None:
    # 钱包 when no turn holds it: the turns holding "wallet" (its gloss) come before the turns
    # the glosses' mean vector is merely near
    neighbours = [f"n{i}" for i in range(5)]
    fused = fuse([], neighbours, keep_words=True, translated=True, translation=[("w", 1.0)])
    assert fused[0].key == "w" and fused[0].matched_by == ("translation",)
