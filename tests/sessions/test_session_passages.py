"""What a turn's passages hold of a query, and what that weighs."""

from __future__ import annotations

from teamlore.core.analyzer import parse_query
from teamlore.sessions.passages import (
    ELSEWHERE,
    analyze_passages,
    held,
    passage_text,
    weighed,
)

QUERY = parse_query("deploy script timeout")
# the assistant's passage holds two terms; the user's holds the third
BODY, STARTS = analyze_passages(
    passage_text(["the timeout again", "the deploy script now retries"])
)


def test_weights_of_one_weigh_as_the_terms_are_counted() -> None:
    found = held(QUERY, BODY, STARTS)
    assert (found.best, found.whole) == (2, 3)
    assert weighed(QUERY, [1.0, 1.0, 1.0], BODY, STARTS, found) == found.weight == 2 + ELSEWHERE


def test_a_term_weighs_its_weight_in_the_best_passage_and_less_elsewhere() -> None:
    # the best passage stays the one holding most terms; `timeout` is held elsewhere
    found = held(QUERY, BODY, STARTS)
    weights = [0.5, 0.5, 2.0]
    assert weighed(QUERY, weights, BODY, STARTS, found) == 0.5 + 0.5 + ELSEWHERE * 2.0


def test_a_turn_holding_none_of_the_terms_weighs_nothing() -> None:
    body, starts = analyze_passages(passage_text(["write the release notes", ""]))
    found = held(QUERY, body, starts)
    assert weighed(QUERY, [1.0, 1.0, 1.0], body, starts, found) == 0.0
