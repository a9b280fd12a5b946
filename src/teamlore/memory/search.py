"""Team-memory search: BM25 over the approved projection of one worktree.

The query goes through the same analyzer as the indexed text (`fts_query`): first every term
group must match (mode "all"); when that finds nothing, any term may match (mode "any"), still
ranked by BM25. Snippets are cut from the original text around the first matching term, never
from the analyzed tokens.

Deprecated entries are excluded by default: a superseded claim is not what an agent should act
on. `include_deprecated=True` returns them too, always ranked after every approved document, with
their `status` so the caller can tell.

The response carries the projection's generation and coverage; a projection built with another
analyzer version (or never built) reports `partial`, since its index may not answer faithfully.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from teamlore.core import errors
from teamlore.core.analyzer import ANALYZER_VERSION, fts_query, query_groups, tokens
from teamlore.memory.layout import MEMORY_ROOT
from teamlore.memory.projection import Coverage, Kind

MAX_QUERY_CHARS = 1024
MAX_LIMIT = 100
SNIPPET_CHARS = 160
_SNIPPET_LEAD = 48  # characters shown before the matching term

_WORD = re.compile(r"\w+(?:[-./]\w+)*")
_CJK_CHAR = re.compile(
    r"[\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
)


class SearchHit(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)

    id: str
    type: Kind  # entry | scene | doctrine | skill
    entry_type: str | None  # work_fact | work_task | work_method | work_artifact, entries only
    status: Literal["approved", "deprecated"]
    score: float  # higher is better (negated FTS5 bm25)
    snippet: str
    path: str  # repository-relative


class SearchResult(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)

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
    match_all = fts_query(query, mode="all")
    if not match_all:
        raise errors.TeamloreError(errors.QUERY_EMPTY)
    generation, coverage = _projection_state(conn, repository_key, worktree_key)
    rows = _run(conn, repository_key, worktree_key, match_all, limit, include_deprecated)
    if not rows:
        match_any = fts_query(query, mode="any")
        rows = _run(conn, repository_key, worktree_key, match_any, limit, include_deprecated)
    terms = _query_terms(query)
    results = [
        SearchHit(
            id=row["entry_id"],
            type=row["kind"],
            entry_type=row["entry_type"],
            status=row["status"],
            score=round(-float(row["rank"]), 6),
            snippet=snippet(row["body_text"] or row["title"], terms),
            path=f"{MEMORY_ROOT}/{row['path']}",
        )
        for row in rows
    ]
    return SearchResult(generation=generation, coverage=coverage, results=results)


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
    limit: int,
    include_deprecated: bool,
) -> list[sqlite3.Row]:
    status_filter = "" if include_deprecated else " AND e.status = 'approved'"
    return conn.execute(
        "SELECT e.kind, e.entry_id, e.entry_type, e.status, e.path, e.title, e.body_text, "
        "bm25(approved_fts) AS rank "
        "FROM approved_fts JOIN approved_entries AS e ON e.id = approved_fts.rowid "
        "WHERE approved_fts MATCH ? AND e.repository_key = ? AND e.worktree_key = ?"
        f"{status_filter} ORDER BY e.status = 'deprecated', rank, e.kind, e.entry_id LIMIT ?",
        (match, repository_key, worktree_key, limit),
    ).fetchall()


def _query_terms(query: str) -> frozenset[str]:
    terms: set[str] = set()
    for group in query_groups(query):
        if group.whole:
            terms.add(group.whole)
        terms.update(group.parts)
    return frozenset(terms)


def _first_match(text: str, terms: frozenset[str]) -> int | None:
    cjk_terms = [t for t in terms if _CJK_CHAR.search(t)]
    for match in _WORD.finditer(text):
        word = match.group()
        if terms.isdisjoint(tokens(word)):
            continue
        folded = word.casefold()
        offsets = [i for i in (folded.find(t) for t in cjk_terms) if i >= 0]
        # casefolding keeps CJK offsets; for other words the match starts at the word
        return match.start() + (min(offsets) if offsets and len(folded) == len(word) else 0)
    return None


def snippet(text: str, terms: frozenset[str]) -> str:
    """About SNIPPET_CHARS characters of `text` around the first term that matched."""
    position = _first_match(text, terms)
    start = 0 if position is None else max(0, position - _SNIPPET_LEAD)
    if start > 0:
        # begin on a word boundary when one is near
        space = text.rfind(" ", max(0, start - 16), start)
        start = space + 1 if space >= 0 else start
    end = min(len(text), start + SNIPPET_CHARS)
    excerpt = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + excerpt + ("…" if end < len(text) else "")
