"""A key holding the whole query as one phrase is judged as first in every ranking at its
lexical rank (docs/hybrid-search.md, "Words are never outvoted", rule 11)."""

from __future__ import annotations

from teamlore.core.fusion import RRF_K, fuse


def test_a_key_holding_the_query_as_a_phrase_outranks_near_keys_holding_fewer_words() -> None:
    """The shape of a pasted error line: "e" holds every word of the query in a tool's output
    (a tool passage's terms count 0.75, so its share is 0.75) and is found by the words alone
    (no model embeds tool output); "a" and "b" hold some of the words and the vectors place
    them near. Rule 10 only lifts "e" above meaning-only keys, and rule 8 keeps it within the
    first five: it stayed third."""
    lexical = [("e", 0.75), ("a", 0.6), ("b", 0.5)]
    vector = ["a", "b", "v1", "v2"]
    before = fuse(lexical, vector, literal={"e"})
    assert [f.key for f in before][:3] == ["a", "b", "e"]
    fused = fuse(lexical, vector, literal={"e"}, phrase={"e"})
    assert [(f.key, f.score, f.matched_by) for f in fused][:1] == [("e", 1.0, ("lexical",))]
    assert [f.key for f in fused][1:] == [f.key for f in before if f.key != "e"]
    assert [f.score for f in fused][1:] == [f.score for f in before if f.key != "e"]


def test_a_phrase_key_scores_what_first_everywhere_scores_at_its_lexical_rank() -> None:
    lexical = [("a", 1.0), ("b", 1.0), ("c", 0.9), ("p", 0.5)]
    fused = {f.key: f.score for f in fuse(lexical, ["a", "v"], phrase={"p"})}
    assert fused["p"] == round((RRF_K + 1) / (RRF_K + 4), 4)
    # already scoring more (first by the words and by meaning): its score stays; none passes 1
    assert fuse([("p", 1.0)], ["p"], phrase={"p"})[0].score == 1.0
    assert fuse([("p", 1.0)], ["p"], phrase={"p"}, unread={"p"})[0].score == 1.0
    # a query whose words decide weighs them three times: first everywhere is 1.0 still, and
    # second by words holding every term (3/22 of the best 4/21) stays below it
    decided = fuse([("p", 0.4), ("q", 1.0)], ["v"], keep_words=True, phrase={"p"})
    second = round(3 / (RRF_K + 2) / (4 / (RRF_K + 1)), 4)
    assert [(f.key, f.score) for f in decided][:2] == [("p", 1.0), ("q", second)]


def test_a_quoted_phrase_no_longer_ties_the_first_neighbour_in_meaning() -> None:
    """`"This project is configured to use yarn"` is one search term: the one turn holding it
    was first by words alone at 1/21, the first meaning-only turn at 1/21 too; rule 10 lifted
    the turn to 0.501 against 0.5, a tie to the eye."""
    neighbours = ["v1", "v2"]
    tied = fuse([("w", 1.0)], neighbours, literal={"w"})
    assert [(f.key, f.score) for f in tied][:2] == [("w", 0.501), ("v1", 0.5)]
    fused = fuse([("w", 1.0)], neighbours, literal={"w"}, phrase={"w"})
    assert [(f.key, f.score) for f in fused][:2] == [("w", 1.0), ("v1", 0.5)]
