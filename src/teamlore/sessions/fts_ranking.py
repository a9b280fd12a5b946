"""Ranking inside the FTS table: the best matches of a MATCH expression by BM25, with their turn
rows joined only for the best (docs/sessions.md, "Search speed"). The one ranking statement of
session search's words, its translations and a filtered search."""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

# With filters, this many times `limit` best matches are ranked before filtering; when that is
# not enough to fill `limit`, the query runs again over every match (never a silent prefix).
FILTER_OVERFETCH = 20
# BM25 over every match of a very common word is what makes a search slow (the cost grows with
# the number of matches). Beyond this many matching turns only the newest are ranked, and the
# result says so.
RANK_WINDOW = 10_000


def ranked_turns(
    conn: sqlite3.Connection,
    match: str,
    clauses: list[str],
    filter_params: list[Any],
    limit: int,
    *,
    with_body: bool = False,
    window: int | None = None,
) -> tuple[list[sqlite3.Row], bool]:
    """Rank inside the FTS table first and join turn rows only for the best hits: fetching
    and joining every match of a common word is what makes naive ranking slow. `with_body`
    adds each hit's analyzed text (to count the query terms it holds); `window`: how many of
    the newest matches are ranked (RANK_WINDOW when None).

    One pass over the matches, newest first, yields each one's BM25 (at most RANK_WINDOW + 1
    of them): that pass both finds the rank window and scores it, so the MATCH (which for an
    identifier or a phrase reads long position lists) is evaluated once, not once for the window
    and again for the ranking; the best are picked in the same statement and only they are
    joined."""
    wanted = limit if not clauses else limit * FILTER_OVERFETCH
    window = RANK_WINDOW if window is None else window
    # the best `wanted` of the window, picked in SQL (not 10,000 rows through Python)
    best = conn.execute(
        "WITH newest AS MATERIALIZED (SELECT rowid AS id, bm25(turns_fts, 1.0, 0.0) AS rank"
        " FROM turns_fts WHERE turns_fts MATCH ? ORDER BY rowid DESC LIMIT ?),"
        " recent AS (SELECT id, rank FROM newest ORDER BY id DESC LIMIT ?)"
        " SELECT id, rank, (SELECT count(*) FROM newest) AS found FROM recent"
        " ORDER BY rank, id LIMIT ?",
        (match, window + 1, window, wanted),
    ).fetchall()
    found = int(best[0][2]) if best else 0
    ranked_all = found <= window
    candidates = (
        "SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)",
        orjson.dumps([[row[0], row[1]] for row in best]).decode(),
    )
    rows = _turn_rows(conn, candidates, clauses, filter_params, limit, with_body)
    if clauses and len(rows) < limit and (len(best) < min(found, window) or not ranked_all):
        # the filter may keep turns outside the best candidates, or older than the window:
        # rank every match rather than return a short list
        every_match = (
            "SELECT rowid, bm25(turns_fts, 1.0, 0.0) FROM turns_fts WHERE turns_fts MATCH ?",
            match,
        )
        rows = _turn_rows(conn, every_match, clauses, filter_params, limit, with_body)
        ranked_all = True
    return rows, ranked_all


def _turn_rows(
    conn: sqlite3.Connection,
    candidates: tuple[str, str],
    clauses: list[str],
    filter_params: list[Any],
    limit: int,
    with_body: bool,
) -> list[sqlite3.Row]:
    """The turn rows of the `(id, bm25)` candidates (a SELECT and its one parameter) that pass
    the filters, best first."""
    select, param = candidates
    body = (
        ", (SELECT body FROM turns_fts WHERE rowid = t.id) AS body,"
        " (SELECT starts FROM turn_passages WHERE turn_id = t.id) AS starts"
        if with_body
        else ""
    )
    where = " AND ".join(["1 = 1", *clauses])
    return conn.execute(
        f"WITH ranked(id, rank) AS ({select})"
        " SELECT t.id, t.ordinal, t.user_text, t.assistant_text, t.notices, s.session_key,"
        f" s.provider, ranked.rank AS rank{body} FROM ranked JOIN turns t ON t.id = ranked.id"
        f" JOIN sessions s ON s.id = t.session_id WHERE {where}"
        " ORDER BY ranked.rank, t.id LIMIT ?",
        (param, *filter_params, limit),
    ).fetchall()
