"""The turn text's MATCH expression: what the scope column means for matching and BM25."""

from __future__ import annotations

from pathlib import Path

from test_indexer import MiniAdapter, session_file

from teamlore.core.analyzer import parse_query
from teamlore.sessions.index_db import body_match, open_index, scope_match
from teamlore.sessions.indexer import Indexer, Source


class OtherAdapter(MiniAdapter):
    provider = "other"


def test_an_expression_that_cannot_meet_a_scope_token_needs_no_column_filter() -> None:
    for query in ("merge renamed", "parse_line", "数据库", '"exit code"', "deploy*", "workflow*"):
        match = parse_query(query).match_all()
        assert body_match(match) == f"({match})", query


def test_an_expression_that_may_meet_a_scope_token_keeps_to_the_turn_text() -> None:
    for query in ("providermini", "worktreeab12cd34", "prov*", "w*", "Provider_Claude"):
        match = parse_query(query).match_all()
        assert body_match(match) == f"body : ({match})", query
    assert body_match("deploy") == "body : (deploy)"  # not an analyzer expression: kept safe


def test_without_the_column_filter_the_same_turns_match_with_the_same_bm25(
    home: Path, tmp_path: Path
) -> None:
    texts = [
        "deploy failed: parse_line raised on the staging database",
        "merge the renamed files, then deploy again",
        "parse line by line; the deploy of 数据库 migrations",
        "unrelated chatter about lunch",
    ]
    session_file(tmp_path / "s" / "a.jsonl", *({"t": "user", "text": t} for t in texts))
    conn = open_index(home)
    Indexer(conn, {"mini": MiniAdapter()}, home=home).sync([Source("mini", tmp_path / "s")])
    ranked = (
        "SELECT rowid, bm25(turns_fts, 1.0, 0.0) FROM turns_fts WHERE turns_fts MATCH ?"
        " ORDER BY rowid"
    )
    for query in ("deploy", "parse_line", "merge renamed deploy", "数据库", "deploy*"):
        for match in (parse_query(query).match_all(), parse_query(query).match_any()):
            assert body_match(match) == f"({match})"
            bare = conn.execute(ranked, (body_match(match),)).fetchall()
            assert bare and bare == conn.execute(ranked, (f"body : ({match})",)).fetchall()


def test_a_scope_anded_to_an_expression_of_alternatives_filters_all_of_them(
    home: Path, tmp_path: Path
) -> None:
    # without its parentheses `"deploy" OR "rollback" AND scope : …` would be
    # `"deploy" OR ("rollback" AND scope : …)`: every provider's deploy turns
    session_file(tmp_path / "m" / "a.jsonl", {"t": "user", "text": "deploy the service"})
    session_file(tmp_path / "o" / "b.jsonl", {"t": "user", "text": "deploy and rollback"})
    conn = open_index(home)
    adapters = {"mini": MiniAdapter(), "other": OtherAdapter()}
    Indexer(conn, adapters, home=home).sync(
        [Source("mini", tmp_path / "m"), Source("other", tmp_path / "o")]
    )
    match = body_match(parse_query("deploy rollback").match_any())
    scoped = f"{match} AND {scope_match(provider='other')}"
    rows = conn.execute("SELECT rowid FROM turns_fts WHERE turns_fts MATCH ?", (scoped,))
    assert len(rows.fetchall()) == 1
