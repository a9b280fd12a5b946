from __future__ import annotations

import sqlite3

from hypothesis import given
from hypothesis import strategies as st

from teamlore.core.analyzer import analyze, fts_query, tokens


def test_identifiers_are_split_and_kept_whole() -> None:
    assert tokens("parseLine") == ["parseline", "parse", "line"]
    assert tokens("snake_case_name") == ["snakecasename", "snake", "case", "name"]
    assert tokens("src/core/db.py")[:2] == ["srccoredbpy", "src"]
    assert tokens("HTTPServer") == ["httpserver", "http", "server"]


def test_nfkc_and_case_folding() -> None:
    assert tokens("ＡＢＣ École") == ["abc", "école"]


def test_cjk_runs_become_unigrams_and_bigrams() -> None:
    assert tokens("数据库") == ["数", "据", "库", "数据", "据库"]
    assert tokens("修复 bug") == ["修", "复", "修复", "bug"]


def test_long_noise_tokens_are_dropped() -> None:
    assert tokens("x" * 400) == []


def _index(docs: list[str]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE f USING fts5(body, tokenize='unicode61 remove_diacritics 0')"
    )
    conn.executemany(
        "INSERT INTO f(rowid, body) VALUES (?, ?)", [(i, analyze(d)) for i, d in enumerate(docs, 1)]
    )
    return conn


def _hits(conn: sqlite3.Connection, query: str, mode: str = "all") -> list[int]:
    match = fts_query(query, mode=mode)
    return [
        r[0] for r in conn.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY rank", (match,))
    ]


def test_chinese_queries_of_one_and_two_characters_match() -> None:
    conn = _index(["修复了数据库连接池泄漏", "release failed on CI", "数据迁移脚本"])
    assert _hits(conn, "库") == [1]
    assert sorted(_hits(conn, "数据")) == [1, 3]
    assert _hits(conn, "连接池") == [1]
    assert _hits(conn, "迁移数据") == []  # all bigrams must occur


def test_identifier_query_meets_split_and_joined_forms() -> None:
    conn = _index(["call parse_line here", "the parseLine helper", "parse the next line"])
    assert sorted(_hits(conn, "parse_line")) == [1, 2, 3]
    assert _hits(conn, "parseline") == [1, 2]


def test_any_mode_ranks_overlap() -> None:
    conn = _index(["alpha beta gamma", "alpha", "delta"])
    assert _hits(conn, "alpha beta", mode="any")[0] == 1


def test_query_with_no_terms_is_empty() -> None:
    assert fts_query("  ,.;  ") == ""


@given(st.text(max_size=200))
def test_every_query_is_valid_fts5(text: str) -> None:
    conn = _index(["anything"])
    match = fts_query(text)
    if match:
        conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (match,)).fetchall()
    for mode in ("any",):
        m = fts_query(text, mode=mode)
        if m:
            conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (m,)).fetchall()


@given(st.text(max_size=80), st.text(max_size=80))
def test_lines_are_analyzed_independently(first: str, second: str) -> None:
    assert tokens(first + "\n" + second) == tokens(first) + tokens(second)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=120))
def test_ascii_fast_path_matches_the_general_path(text: str) -> None:
    # the same ASCII text seen through the non-ASCII path (a trailing non-ASCII line break
    # character forces it) must give the same tokens
    assert tokens(text.replace("\n", " ") + " é") == [*tokens(text.replace("\n", " ")), "é"]
