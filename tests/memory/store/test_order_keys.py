"""What orders memory search's hits, kept per process: a projection searched twice is ordered
from the kept keys instead of a join, with the very hits the join gives, and a new projection
is never ordered by an older one's keys."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import entry_file
from teamlore.memory.store import search as search_module
from teamlore.memory.store.layout import init_tree
from teamlore.memory.store.order_keys import ORDER_KEYS
from teamlore.memory.store.projection import sync_approved_projection
from teamlore.memory.store.search import SearchResult, search_memory
from teamlore.memory.store.state_db import open_state_db

REPO = "a1" * 12
WORKTREE = "b2" * 12
OTHER_WORKTREE = "c3" * 12


ENTRIES = {
    "session-cookie": entry_file(
        "session-cookie", "Do not refactor the session middleware; mobile clients need its cookie."
    ),
    "cookie-cookie": entry_file(
        "cookie-cookie", "Cookie cookie cookie: the cookie jar is shared by every session cookie."
    ),
    "cookie-rotation": entry_file("cookie-rotation", "Rotate the cookie secret every quarter."),
    "old-cookie": entry_file(
        "old-cookie", "Cookie cookie cookie cookie cookie cookie.", status="deprecated"
    ),
    "parser": entry_file("parser", "Call parse_line on every record of the JSONL file."),
}


def write_tree(root: Path, entries: dict[str, str]) -> None:
    for name, text in entries.items():
        (root / f".threadshare/memory/entries/{name}.md").write_text(text, encoding="utf-8")


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    root = tmp_path / "worktree"
    root.mkdir()
    init_tree(root)
    write_tree(root, ENTRIES)
    return root


@pytest.fixture
def conn(tmp_path: Path, worktree: Path) -> Iterator[sqlite3.Connection]:
    """The tree projected for this worktree and another one (one index, two owners)."""
    ORDER_KEYS.clear()
    connection = open_state_db(tmp_path / "home")
    for owner in (WORKTREE, OTHER_WORKTREE):
        sync_approved_projection(
            connection, repository_key=REPO, worktree_key=owner, worktree_root=worktree
        )
    yield connection
    connection.close()
    ORDER_KEYS.clear()


def search(conn: sqlite3.Connection, query: str, **options: bool) -> SearchResult:
    return search_memory(
        conn, repository_key=REPO, worktree_key=WORKTREE, query=query, limit=10, **options
    )


def hits(result: SearchResult) -> list[tuple[str, float, str]]:
    return [(hit.id, hit.score, hit.status) for hit in result.results]


def joins(conn: sqlite3.Connection, query: str) -> int:
    """How many statements of one search join the index to the entries' rows."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        search(conn, query)
    finally:
        conn.set_trace_callback(None)
    return sum("JOIN approved_entries" in sql for sql in statements)


def test_a_projection_searched_twice_is_then_ordered_without_a_join(
    conn: sqlite3.Connection,
) -> None:
    assert joins(conn, "cookie") == 1  # a one-shot search joins, as before
    assert joins(conn, "cookie") == 0
    assert joins(conn, "mobile cookie") == 0


@pytest.mark.parametrize("window", [1000, 2])
@pytest.mark.parametrize("include_deprecated", [False, True])
def test_kept_keys_give_the_hits_the_join_gives(
    conn: sqlite3.Connection,
    monkeypatch: pytest.MonkeyPatch,
    window: int,
    include_deprecated: bool,
) -> None:
    # a window of 2 makes another owner's documents and the deprecated one crowd the first
    # BM25 pass, so the second (every match) runs too
    monkeypatch.setattr(search_module, "MAX_CANDIDATES", window)
    queries = ["cookie", "mobile cookie", "session cookie secret", "parse_line"]
    joined = [hits(search(conn, q, include_deprecated=include_deprecated)) for q in queries]
    kept = [hits(search(conn, q, include_deprecated=include_deprecated)) for q in queries]
    assert kept == joined
    assert joins(conn, "cookie") == 0


def test_a_new_projection_is_never_ordered_by_the_old_ones_keys(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    search(conn, "cookie")
    assert "cookie-jar" not in [hit.id for hit in search(conn, "cookie").results]
    write_tree(worktree, {"cookie-jar": entry_file("cookie-jar", "The cookie jar is per tenant.")})
    (worktree / ".threadshare/memory/entries/cookie-cookie.md").unlink()
    sync_approved_projection(
        conn, repository_key=REPO, worktree_key=WORKTREE, worktree_root=worktree
    )
    found = [hit.id for hit in search(conn, "cookie").results]
    assert "cookie-jar" in found and "cookie-cookie" not in found
    again = [hit.id for hit in search(conn, "cookie").results]  # the new projection's keys
    assert again == found
