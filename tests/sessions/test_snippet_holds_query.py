"""A hit found by words shows the passage, and the place in it, holding the query's words
(docs/hybrid-search.md: the snippet is the passage that matched, with the tool number), over
every fixture session, indexed and embedded as `teamlore sync` does."""

from __future__ import annotations

import pytest
from test_pasted_errors import Index, file_of, index

from teamlore.sessions import queries

__all__ = ["index"]  # the fixture: the fixtures synced and embedded once, as test_pasted_errors


def _first(index: Index, query: str, hybrid: bool) -> dict:
    conn, embedder = index
    return queries.search_turns(conn, query, embedder=embedder if hybrid else None).hits[0]


@pytest.mark.parametrize("hybrid", [True, False], ids=["hybrid", "words"])
def test_a_pasted_error_line_shows_the_line(index: Index, hybrid: bool) -> None:
    """rtchess's turn 53 ran a script that failed with a traceback ending in this NameError.
    The turn ranked first, but its snippet was the traceback's top (`…permitted Traceback (most
    recent call last): File ".../export_development_history.py", line 228…`): the first word
    holding a query token was the path's `export`, a part of `write_exported_from_events`."""
    query = "NameError: name 'write_exported_from_events' is not defined"
    first = _first(index, query, hybrid)
    assert (file_of(index[0], first["sessionKey"]), first["turn"]) == ("rtchess-0.60.1.jsonl", 53)
    assert first["snippet"].startswith("tool #5 shell_command python3 export_development_history")
    assert query in first["snippet"]


@pytest.mark.parametrize("hybrid", [True, False], ids=["hybrid", "words"])
def test_an_identifier_shows_where_it_is_written(index: Index, hybrid: bool) -> None:
    """codex-session-viewer's turn 35 says `VITE_LOG_SERVER_URL=http://127.0.0.1:4317/log`
    past its start; the snippet was its opening lines, centred on `logs` (a part of the
    identifier), which do not hold it."""
    hits = queries.search_turns(
        index[0], "VITE_LOG_SERVER_URL", embedder=index[1] if hybrid else None
    ).hits
    assert [hit["turn"] for hit in hits[:2]] == [35, 43]
    for hit in hits[:2]:
        assert "VITE_LOG_SERVER_URL" in hit["snippet"]


@pytest.mark.parametrize("hybrid", [True, False], ids=["hybrid", "words"])
def test_an_identifier_shows_the_tool_call_holding_it_whole(index: Index, hybrid: bool) -> None:
    """gildore-arena's turn 5: its assistant text holds `agent`, `funding` and `modal` apart,
    tool #17 (an `rg` over the components) holds `AgentFundingModal`. Both hold the one term;
    the snippet was the assistant's, which does not hold the name."""
    first = _first(index, "AgentFundingModal", hybrid)
    assert (file_of(index[0], first["sessionKey"]), first["turn"]) == (
        "gildore-arena-0.130.0.jsonl",
        5,
    )
    assert first["snippet"].startswith("tool #17 exec_command rg -n")
    assert "AgentFundingModal" in first["snippet"]
