"""Memory search's BM25 from postings kept per process: the very scores FTS5's `bm25()` gives,
the same hits, built only on a second search of the same index state, and never used for another
state."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import entry_file
from teamlore.core.analyzer import parse_query
from teamlore.memory.store import postings as postings_module
from teamlore.memory.store.layout import init_tree
from teamlore.memory.store.order_keys import ORDER_KEYS
from teamlore.memory.store.postings import POSTINGS, Postings, index_stamp
from teamlore.memory.store.projection import sync_approved_projection
from teamlore.memory.store.search import SearchResult, search_memory
from teamlore.memory.store.state_db import open_state_db
from teamlore.models.glosses import segmented

REPO = "a1" * 12
WORKTREE = "b2" * 12
OTHER = "c3" * 12

WORDS = [
    "cookie",
    "session",
    "middleware",
    "rotate",
    "secret",
    "deploy",
    "canary",
    "rollback",
    "queue",
    "flush",
    "mobile",
    "tenant",
    "parser",
    "record",
    "migration",
    "staging",
    "timeout",
    "release",
    "token",
    "cache",
    "index",
    "shard",
]
IDENTIFIERS = ["parse_line", "parseLine", "SessionStore", "max-retries", "v2.cache"]
# Simplified and Traditional: a Chinese word also matches as written in the other script
CHINESE = ["发布流程失败", "数据库迁移", "超时", "会话", "门禁", "發佈流程失敗", "會話", "門禁"]


def body(rng: random.Random) -> str:
    """A text of 3 to 60 words: common and rare words, identifiers, Chinese runs."""
    words: list[str] = []
    for _ in range(rng.randint(3, 60)):
        roll = rng.random()
        if roll < 0.1:
            words.append(rng.choice(IDENTIFIERS))
        elif roll < 0.2:
            words.append(rng.choice(CHINESE))
        else:  # a skewed choice: the first words are common, the last rare
            words.append(WORDS[min(int(rng.expovariate(0.25)), len(WORDS) - 1)])
    return " ".join(words) + "."


def write_tree(root: Path, rng: random.Random, count: int) -> None:
    for i in range(count):
        status = "deprecated" if i % 17 == 0 else "approved"
        name = f"entry-{i:03d}"
        (root / f".threadshare/memory/entries/{name}.md").write_text(
            entry_file(name, body(rng), status=status), encoding="utf-8"
        )


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    """150 generated entries for this worktree and 60 others for another one (one index)."""
    rng = random.Random(25)
    ORDER_KEYS.clear()
    POSTINGS.clear()
    connection = open_state_db(tmp_path / "home")
    for owner, count in ((WORKTREE, 150), (OTHER, 60)):
        root = tmp_path / owner
        root.mkdir()
        init_tree(root)
        write_tree(root, rng, count)
        sync_approved_projection(
            connection, repository_key=REPO, worktree_key=owner, worktree_root=root
        )
    yield connection
    connection.close()
    ORDER_KEYS.clear()
    POSTINGS.clear()


def queries(count: int) -> list[str]:
    """Words, pairs and sentences of them, identifiers, Chinese runs, prefixes."""
    rng = random.Random(7)
    out: list[str] = []
    for i in range(count):
        picks = rng.sample(WORDS, 3)
        out.append(
            [
                picks[0],
                " ".join(picks),
                f"how do we {picks[0]} the {picks[1]}",
                rng.choice(IDENTIFIERS),
                rng.choice(CHINESE),
                f"{picks[0][:3]}* {rng.choice(IDENTIFIERS)}",
                f"{rng.choice(CHINESE)} {picks[1]}",
            ][i % 7]
        )
    return out


def fts5_bm25(conn: sqlite3.Connection, match: str) -> dict[int, float]:
    rows = conn.execute(
        "SELECT rowid, bm25(approved_fts) FROM approved_fts WHERE approved_fts MATCH ?", (match,)
    )
    return dict(rows.fetchall())


def postings_bm25(postings: Postings, query: str, every: bool) -> dict[int, float]:
    matched, counted = postings.bm25(segmented(parse_query(query)), every)
    columns = matched.nonzero()[0]
    return dict(
        zip(
            postings.ids[columns].tolist(),
            postings.scores(columns, counted).tolist(),
            strict=True,
        )
    )


def read(conn: sqlite3.Connection) -> Postings:
    postings = POSTINGS.get(conn)
    assert postings is not None
    return postings


@pytest.mark.parametrize("every", [False, True])
def test_every_score_is_the_double_fts5_bm25_returns(conn: sqlite3.Connection, every: bool) -> None:
    # exact equality: the same formula in the same order of operations; an identifier's parts
    # count only where all of them are there, as in FTS5; a Chinese word's form in the other
    # script is one more alternative, often held by no row
    postings = read(conn)
    for query in queries(70):
        parsed = segmented(parse_query(query))
        match = parsed.match_all() if every else parsed.match_any()
        assert postings_bm25(postings, query, every) == fts5_bm25(conn, match), query


def search(
    conn: sqlite3.Connection, query: str, *, include_deprecated: bool = False
) -> SearchResult:
    return search_memory(
        conn,
        repository_key=REPO,
        worktree_key=WORKTREE,
        query=query,
        limit=10,
        include_deprecated=include_deprecated,
    )


def hits(result: SearchResult) -> list[tuple[str, float, str, str]]:
    return [(hit.id, hit.score, hit.status, hit.snippet) for hit in result.results]


@pytest.mark.parametrize("window", [1000, 5])
@pytest.mark.parametrize("include_deprecated", [False, True])
def test_searches_from_postings_give_the_hits_fts5_gives(
    conn: sqlite3.Connection,
    monkeypatch: pytest.MonkeyPatch,
    window: int,
    include_deprecated: bool,
) -> None:
    # a window of 5 makes the ranking cut its BM25 candidates (and drop crowded terms)
    from teamlore.memory.store import search as search_module

    monkeypatch.setattr(search_module, "MAX_CANDIDATES", window)
    asked = queries(42)
    by_fts5 = [hits(search(conn, q, include_deprecated=include_deprecated)) for q in asked]
    assert POSTINGS.get(conn) is not None  # read on the second search of this state
    by_postings = [hits(search(conn, q, include_deprecated=include_deprecated)) for q in asked]
    assert by_postings == by_fts5


def bm25_calls(conn: sqlite3.Connection, query: str) -> int:
    """How many statements of one search call FTS5's bm25()."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        search(conn, query)
    finally:
        conn.set_trace_callback(None)
    return sum("bm25(" in sql for sql in statements)


def test_a_one_shot_search_reads_no_postings(conn: sqlite3.Connection) -> None:
    assert bm25_calls(conn, "cookie") == 1
    assert POSTINGS._postings is None  # a fresh process's only search pays nothing for them
    assert bm25_calls(conn, "cookie") == 0  # the second search reads them
    assert bm25_calls(conn, "session cookie") == 0


def test_a_search_counts_each_phrase_in_the_postings_once(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a query's terms are counted alone (how many rows each matches), then together (BM25):
    # the second pass reuses the first's frequencies
    search(conn, "cookie")
    postings = read(conn)
    counted: list[str] = []
    frequencies = Postings._frequencies

    def counting(self: Postings, phrase: postings_module._Phrase) -> object:
        counted.append(phrase.token)
        return frequencies(self, phrase)

    monkeypatch.setattr(Postings, "_frequencies", counting)
    assert hits(search(conn, "rotate the session secret")) == hits(
        search(conn, "rotate the session secret")
    )
    assert postings is read(conn) and sorted(counted) == sorted(2 * ["rotat", "session", "secret"])


def test_a_write_to_any_owner_makes_the_next_search_read_them_again(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    search(conn, "cookie")
    search(conn, "cookie")
    old = POSTINGS.get(conn)
    assert old is not None
    # another owner's new entry changes every row's BM25 (rows, average length, counts)
    (tmp_path / OTHER / ".threadshare/memory/entries/cookie-jar.md").write_text(
        entry_file("cookie-jar", "cookie cookie cookie jar"), encoding="utf-8"
    )
    sync_approved_projection(
        conn, repository_key=REPO, worktree_key=OTHER, worktree_root=tmp_path / OTHER
    )
    assert postings_bm25(old, "cookie", False) != fts5_bm25(conn, '"cookie"')
    after = hits(search(conn, "cookie"))
    assert POSTINGS._postings is not old
    ORDER_KEYS.clear()
    POSTINGS.clear()
    assert hits(search(conn, "cookie")) == after  # a fresh process's answer: FTS5's
    assert POSTINGS._postings is None


def test_a_quoted_phrase_is_left_to_fts5(conn: sqlite3.Connection) -> None:
    search(conn, "cookie")
    search(conn, "cookie")
    assert bm25_calls(conn, '"session cookie"') == 1  # postings keep no positions


def test_a_row_split_otherwise_than_fts5_splits_it_leaves_every_search_to_fts5(
    conn: sqlite3.Connection,
) -> None:
    # the analyzer never writes an apostrophe; FTS5 would split "cookie's" in two
    conn.execute("INSERT INTO approved_fts (rowid, searchable_text) VALUES (99999, 'cookie''s')")
    assert POSTINGS.get(conn) is None
    assert postings_module.POSTINGS._stamp == index_stamp(conn)  # and it is not read again


def test_an_empty_memory_is_searched_again_in_the_same_process(tmp_path: Path) -> None:
    """A long-lived process (the MCP server, `teamlore watch`) searched a memory that holds no
    entry yet: its second search read FTS5's empty totals record and failed INTERNAL
    (IndexError). It finds nothing, as the first did."""
    ORDER_KEYS.clear()
    POSTINGS.clear()
    root = tmp_path / WORKTREE
    root.mkdir()
    init_tree(root)
    connection = open_state_db(tmp_path / "home")
    try:
        sync_approved_projection(
            connection, repository_key=REPO, worktree_key=WORKTREE, worktree_root=root
        )
        assert [hits(search(connection, "cookie")) for _ in range(3)] == [[], [], []]
    finally:
        connection.close()
        ORDER_KEYS.clear()
        POSTINGS.clear()
