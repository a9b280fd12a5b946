"""A pasted error line finds the turn whose tool output holds it, first (docs/hybrid-search.md,
"Words are never outvoted", rule 11), over every fixture session, indexed and embedded as
`teamlore sync` does."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import shared_fixtures
from teamlore.core.analyzer import searchable_query, tokens
from teamlore.models.embeddings import Embedder, bundled_embedder
from teamlore.sessions import queries
from teamlore.sessions.index_db import open_index
from teamlore.sessions.indexer import Indexer, Source
from teamlore.sessions.passages import holding_phrase, query_phrase
from teamlore.sessions.providers import get_adapter
from teamlore.sessions.turn_vectors import embed_pending_turns

Index = tuple[sqlite3.Connection, Embedder]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    fixtures = shared_fixtures("sessions")
    state = tmp_path_factory.mktemp("state")
    sources = [Source(p, fixtures / p) for p in ("claude", "codex", "pi")]
    adapters = {source.provider: get_adapter(source.provider) for source in sources}
    indexer = Indexer(open_index(state), adapters, home=state)
    indexer.sync(sources)
    embedder = bundled_embedder()
    embed_pending_turns(indexer.conn, embedder)
    try:
        yield indexer.conn, embedder
    finally:
        indexer.conn.close()


def file_of(conn: sqlite3.Connection, session_key: str) -> str:
    """The file name of the session's transcript."""
    row = conn.execute(
        "SELECT f.path FROM source_files f JOIN sessions s ON s.id = f.session_id"
        " WHERE s.session_key = ?",
        (session_key,),
    ).fetchone()
    return Path(str(row[0])).name


def test_a_pasted_error_line_finds_the_turn_holding_it_first(index: Index) -> None:
    """fundwise's turn 3 ran `node --version && pnpm --version`, which failed with "This
    project is configured to use yarn because …". Pasted as typed, the search put a gildore
    turn ("…map the current structure, entry points, and any project docs…") and a vite patch
    of the legacy session first, both holding some of its words and near it in meaning; the
    turn holding the line came third (0.65, 0.53, 0.46)."""
    conn, embedder = index
    query = "This project is configured to use yarn"
    hits = queries.search_turns(conn, query, embedder=embedder).hits
    first = hits[0]
    assert (file_of(conn, first["sessionKey"]), first["turn"]) == ("fundwise-2.1.121.jsonl", 3)
    assert first["score"] == 1.0 and first["matchedBy"] == ["lexical"]
    assert "This project is configured to use yarn" in first["snippet"]
    assert all(hit["score"] < 0.7 for hit in hits[1:])


def test_a_pasted_error_line_beyond_the_words_first_place_is_first(index: Index) -> None:
    """pi's turn 10 ran biome, which said "Some errors were emitted while applying fixes.".
    Words alone put it 4th (turns holding four of its words in what was said outrank a tool
    output), hybrid search 5th, under four turns the vectors place near."""
    conn, embedder = index
    query = "Some errors were emitted while applying fixes."
    first = queries.search_turns(conn, query, embedder=embedder).hits[0]
    assert (file_of(conn, first["sessionKey"]), first["turn"]) == (
        "pi-mono-before-compaction.jsonl",
        10,
    )
    assert first["score"] == round(21 / 24, 4)  # first everywhere, at lexical rank 4


def test_the_quoted_line_no_longer_ties_a_turn_found_by_meaning_alone(index: Index) -> None:
    conn, embedder = index
    quoted = '"This project is configured to use yarn"'
    first, second, *_ = queries.search_turns(conn, quoted, embedder=embedder).hits
    assert (first["score"], first["matchedBy"]) == (1.0, ["lexical"])
    assert (second["score"], second["matchedBy"]) == (0.5, ["vector"])


def test_the_phrase_is_the_query_as_typed_in_order(index: Index) -> None:
    assert query_phrase("use yarn") is None  # two words: rule 3 lets such words decide
    assert query_phrase("configure* to use yarn") is None
    phrase = query_phrase('"This project is" configured to use yarn')
    assert phrase is not None and phrase.parts == tuple(
        tokens("This project is configured to use yarn")
    )
    conn, _embedder = index
    parsed = searchable_query("yarn configured project use")
    scored, _ranked_all = queries._lexical(conn, parsed, (None, None, None, None), 30)
    held = holding_phrase(query_phrase("This project is configured to use yarn"), scored)
    assert len(held) == 1  # the one turn holding the words in that order
    reordered = holding_phrase(query_phrase("yarn configured project use"), scored)
    assert reordered == set()  # the same words in another order are not the phrase


def test_a_pasted_line_with_a_star_that_makes_no_prefix_is_a_phrase(index: Index) -> None:
    """Any `*` in the query turned the rule off, though only a `prefix*` term should: a pasted
    Go signature (`func (c *Config) Validate() error`, fixture session entire-cli) scored 0.501
    against 0.500 for a turn found by meaning alone, the tie rule 11 ends; a Python error
    (`for *: 'int'`) or a shell's glob (`'*.log'`) got no phrase either."""
    assert query_phrase("unsupported operand type(s) for *: 'int' and 'NoneType'") is not None
    assert query_phrase("ls: cannot access '*.log': No such file") is not None
    assert query_phrase("configure* to use yarn") is None  # a prefix term still has none
    conn, embedder = index
    first, second, *_ = queries.search_turns(
        conn, "func (c *Config) Validate() error", embedder=embedder
    ).hits
    assert (file_of(conn, first["sessionKey"]), first["turn"]) == ("entire-cli-2.0.64.jsonl", 2)
    assert (first["score"], first["matchedBy"]) == (1.0, ["lexical"])
    assert second["score"] <= 0.5
