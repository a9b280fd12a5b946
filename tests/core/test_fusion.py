"""The one fusion of lexical and vector rankings (docs/hybrid-search.md, "Fusion")."""

from __future__ import annotations

from teamlore.core.fusion import RRF_K, fuse


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
    vector_only = fuse([], ["p", "q"])
    assert [f.score for f in vector_only] == [1.0, round((RRF_K + 1) / (RRF_K + 2), 4)]


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
    best = 2 / (RRF_K + 1)
    assert fused[0].score == round((1 / (RRF_K + 2) + 1 / (RRF_K + 1)) / best, 4)
    # first in all three rankings with every term held is still 1.0
    assert fuse([("a", 1.0)], ["a"], headline=["a"])[0].score == 1.0
    # an empty headline ranking ran (it still counts in the best score); None means it did not
    assert fuse([], ["a"], headline=[])[0].score == 0.5
    assert fuse([], ["a"])[0].score == 1.0
