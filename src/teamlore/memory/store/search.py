"""Team-memory search: BM25 over the approved projection of one worktree.

The query goes through the same analyzer as the indexed text (`parse_query`): documents holding
any of its terms match; those holding more of the terms come first, then BM25 decides, exactly as
in turn search (docs/search.md). Snippets are cut from the original text around the first
matching term, never from the analyzed tokens.

Deprecated entries are excluded by default: a superseded claim is not what an agent should act
on. `include_deprecated=True` returns them too, always ranked after every approved document, with
their `status` so the caller can tell.

The response carries the projection's generation and coverage; a projection built with another
analyzer version (or never built) reports `partial`, since its index may not answer faithfully.
"""

from __future__ import annotations

import sqlite3
from typing import Literal

from pydantic import BaseModel

from teamlore.core import errors
from teamlore.core.analyzer import ANALYZER_VERSION, parse_query, relative_score, snippet
from teamlore.core.strict import WIRE
from teamlore.memory.store.layout import MEMORY_ROOT
from teamlore.memory.store.projection import Coverage, Kind

MAX_QUERY_CHARS = 1024
MAX_LIMIT = 100


class SearchHit(BaseModel):
    model_config = WIRE

    id: str
    type: Kind  # entry | scene | doctrine | skill
    entry_type: str | None  # work_fact | work_task | work_method | work_artifact, entries only
    status: Literal["approved", "deprecated"]
    score: float  # higher is better: query terms held + BM25 relative to the best, in [0, 1)
    snippet: str
    path: str  # repository-relative


class SearchResult(BaseModel):
    model_config = WIRE

    generation: int
    coverage: Coverage
    results: list[SearchHit]


def search_memory(
    conn: sqlite3.Connection,
    *,
    repository_key: str,
    worktree_key: str,
    query: str,
    limit: int = 10,
    include_deprecated: bool = False,
) -> SearchResult:
    if not 1 <= limit <= MAX_LIMIT:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, f"limit must be between 1 and {MAX_LIMIT}", limit=limit
        )
    if len(query) > MAX_QUERY_CHARS:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, f"the query is longer than {MAX_QUERY_CHARS} characters"
        )
    parsed = parse_query(query)
    if not parsed.terms:
        raise errors.TeamloreError(errors.QUERY_EMPTY)
    generation, coverage = _projection_state(conn, repository_key, worktree_key)
    rows = _run(conn, repository_key, worktree_key, parsed.match_any(), include_deprecated)
    ranked = sorted(
        ((parsed.coverage(row["searchable_text"]), -float(row["rank"]), row) for row in rows),
        key=lambda item: (
            item[2]["status"] == "deprecated",
            -item[0],
            -item[1],
            item[2]["kind"],
            item[2]["entry_id"],
        ),
    )[:limit]
    highlight = parsed.highlight_tokens()
    best: dict[int, float] = {}  # per number of terms held
    for covered, strength, _ in ranked:
        best[covered] = max(best.get(covered, 0.0), strength)
    results = [
        SearchHit(
            id=row["entry_id"],
            type=row["kind"],
            entry_type=row["entry_type"],
            status=row["status"],
            score=relative_score(covered, strength, best[covered]),
            snippet=snippet(row["body_text"] or row["title"], highlight),
            path=f"{MEMORY_ROOT}/{row['path']}",
        )
        for covered, strength, row in ranked
    ]
    return SearchResult(generation=generation, coverage=coverage, results=results)


# BM25 over any term picks at most this many documents before they are ordered by how many terms
# they hold (a team's memory is hundreds of documents, not millions)
MAX_CANDIDATES = 1000


def _projection_state(
    conn: sqlite3.Connection, repository_key: str, worktree_key: str
) -> tuple[int, Coverage]:
    row = conn.execute(
        "SELECT generation, coverage, analyzer_version FROM approved_projection "
        "WHERE repository_key = ? AND worktree_key = ?",
        (repository_key, worktree_key),
    ).fetchone()
    if row is None:
        return 0, "partial"
    coverage: Coverage = row[1] if row[2] == ANALYZER_VERSION else "partial"
    return int(row[0]), coverage


def _run(
    conn: sqlite3.Connection,
    repository_key: str,
    worktree_key: str,
    match: str,
    include_deprecated: bool,
) -> list[sqlite3.Row]:
    status_filter = "" if include_deprecated else " AND e.status = 'approved'"
    return conn.execute(
        "SELECT e.kind, e.entry_id, e.entry_type, e.status, e.path, e.title, e.body_text, "
        "approved_fts.searchable_text, bm25(approved_fts) AS rank "
        "FROM approved_fts JOIN approved_entries AS e ON e.id = approved_fts.rowid "
        "WHERE approved_fts MATCH ? AND e.repository_key = ? AND e.worktree_key = ?"
        f"{status_filter} ORDER BY e.status = 'deprecated', rank, e.kind, e.entry_id LIMIT ?",
        (match, repository_key, worktree_key, MAX_CANDIDATES),
    ).fetchall()
