"""Turn search ranks in the FTS table first; filters never hide a match that exists."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_indexer import MiniAdapter, session_file

from teamlore.sessions import queries
from teamlore.sessions.index_db import open_index
from teamlore.sessions.indexer import Indexer, Source


class OtherAdapter(MiniAdapter):
    provider = "other"


def test_a_filter_falls_back_to_every_match_when_the_best_ones_are_filtered_out(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mini, other = tmp_path / "mini", tmp_path / "other"
    for i in range(5):  # five strong matches from one provider
        session_file(mini / f"m{i}.jsonl", {"t": "user", "text": "deploy deploy deploy rollback"})
    session_file(other / "o.jsonl", {"t": "user", "text": "a deploy note among much other text"})
    indexer = Indexer(open_index(home), {"mini": MiniAdapter(), "other": OtherAdapter()}, home=home)
    indexer.sync([Source("mini", mini), Source("other", other)])
    monkeypatch.setattr(queries, "FILTER_OVERFETCH", 1)
    everything = queries.search_turns(indexer.conn, "deploy", limit=2)
    assert [h["provider"] for h in everything] == ["mini", "mini"]
    filtered = queries.search_turns(indexer.conn, "deploy", provider="other", limit=2)
    assert [h["provider"] for h in filtered] == ["other"]


def test_results_are_ordered_by_score(home: Path, tmp_path: Path) -> None:
    src = tmp_path / "s"
    session_file(
        src / "a.jsonl",
        {"t": "user", "text": "flaky"},
        {"t": "user", "text": "flaky flaky test export flaky"},
    )
    indexer = Indexer(open_index(home), {"mini": MiniAdapter()}, home=home)
    indexer.sync([Source("mini", src)])
    hits = queries.search_turns(indexer.conn, "flaky")
    assert [h["turn"] for h in hits] == [2, 1]
    assert hits[0]["score"] > hits[1]["score"] > 0


def test_beyond_the_rank_window_the_newest_matches_are_ranked_and_the_result_says_so(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "s"
    turns = (
        {"t": "user", "text": f"deploy step {i}", "at": f"2026-01-0{i}T00:00:00.000Z"}
        for i in range(1, 7)
    )
    session_file(src / "a.jsonl", *turns)
    indexer = Indexer(open_index(home), {"mini": MiniAdapter()}, home=home)
    indexer.sync([Source("mini", src)])
    assert queries.search_turns_ranked(indexer.conn, "deploy").ranked_all
    monkeypatch.setattr(queries, "RANK_WINDOW", 2)
    for provider in (None, "mini"):  # the provider filter is inside the index: same window
        found = queries.search_turns_ranked(indexer.conn, "deploy", provider=provider)
        assert not found.ranked_all
        assert sorted(h["turn"] for h in found.hits) == [5, 6]
    # a time filter the window would leave short falls back to ranking every match
    since = queries.search_turns_ranked(indexer.conn, "deploy", since="2026-01-01T00:00:00.000Z")
    assert len(since.hits) == 6 and since.ranked_all


def test_scope_tokens_are_never_matched_as_text(home: Path, tmp_path: Path) -> None:
    src = tmp_path / "s"
    session_file(src / "a.jsonl", {"t": "user", "text": "release notes"})
    indexer = Indexer(open_index(home), {"mini": MiniAdapter()}, home=home)
    indexer.sync([Source("mini", src)])
    assert queries.search_turns(indexer.conn, "providermini") == []  # the scope token
    assert [h["turn"] for h in queries.search_turns(indexer.conn, "notes", provider="mini")] == [1]
    assert queries.search_turns(indexer.conn, "notes", provider="other") == []
