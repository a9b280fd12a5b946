"""Rule 10 of "Words are never outvoted" (docs/hybrid-search.md) for any number of keys: the
keys holding the whole query are lifted above every key found by meaning alone, in their
lexical order, and their scores stay within the documented range (1.0 = first in every
ranking, every query term held) however many there are. Callers pass at most a thousand; the
contract is `fused_scores`' own."""

from __future__ import annotations

from itertools import pairwise

from teamlore.core.fusion import fuse, fused_scores

NEIGHBOURS = ["v1", "v2", "v3"]  # found by meaning alone, first in the vector ranking


def literal_keys(count: int) -> list[str]:
    return [f"w{n:05d}" for n in range(1, count + 1)]


def test_twenty_thousand_literal_keys_stay_within_the_range_in_their_lexical_order() -> None:
    """Each lifted key used to sit a fixed 1e-4 of the best score above the next: 20,000 of
    them climbed to 2.50. They now share the room between the meaning-only keys and 1.0."""
    keys = literal_keys(20_000)
    lexical = [(key, 1.0) for key in keys]
    fused = fuse(lexical, NEIGHBOURS, literal=set(keys))
    assert [f.key for f in fused] == [*keys, *NEIGHBOURS]
    scores = [f.score for f in fused]
    assert max(scores) <= 1.0 and scores == sorted(scores, reverse=True)
    raw = fused_scores(lexical, NEIGHBOURS, literal=set(keys))
    lifted = [raw.raw[key] for key in keys]
    assert all(a > b for a, b in pairwise(lifted))  # the order is kept
    assert lifted[0] <= raw.best and lifted[-1] > raw.raw["v1"]


def test_a_literal_key_first_everywhere_stays_first_at_1_above_the_lifted_ones() -> None:
    keys = literal_keys(20_000)
    lexical = [(key, 1.0) for key in keys]
    fused = fuse(lexical, [keys[0], *NEIGHBOURS], literal=set(keys))
    assert [f.key for f in fused] == [*keys, *NEIGHBOURS]
    assert fused[0].score == 1.0 and max(f.score for f in fused) == 1.0
    raw = fused_scores(lexical, [keys[0], *NEIGHBOURS], literal=set(keys))
    assert raw.raw[keys[0]] == raw.best > raw.raw[keys[1]]  # the rest below it, by a hair


def test_a_few_literal_keys_keep_the_visible_step_between_them() -> None:
    """Where the room allows (every caller's case), each lifted key sits 1e-4 of the best score
    above the next, as before: the order shows in the rounded scores."""
    keys = literal_keys(50)  # holding 0.45 of the terms by weight: the words' first is not kept
    fused = fuse([(key, 0.45) for key in keys], NEIGHBOURS, literal=set(keys))
    scores = [f.score for f in fused[: len(keys)]]
    assert scores[-1] == 0.501  # just above v1's 0.5
    assert [round(a - b, 4) for a, b in pairwise(scores)] == [1e-4] * 49
