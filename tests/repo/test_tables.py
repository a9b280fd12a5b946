"""`repo.tables` owns the repository tables: registration, the commit scan's rows, delivery edges,
and forgetting a worktree (the repository's history goes with its last worktree)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from teamlore.core import db
from teamlore.repo import tables
from teamlore.repo.binding import list_repositories, register_repository
from teamlore.repo.commits import scan_commits
from teamlore.repo.delivery import build_delivery_edges
from teamlore.repo.worktrees import map_sessions


def _delivered(repo, conn: sqlite3.Connection, home: Path, rows) -> tuple[str, int]:
    """A repository with one commit and one session turn that committed it (a direct edge)."""
    commit = repo.commit("add a", {"a.py": "a"}, at="2025-03-01T09:05:00Z")
    identity = register_repository(conn, repo.root, home)
    session = rows.session(str(repo.root))
    turn = rows.turn(session, 1)
    rows.observed(turn, commit, from_commit_command=True)
    map_sessions(conn)
    scan_commits(conn, identity)
    build_delivery_edges(conn, identity.repository_key)
    return identity.repository_key, turn


def test_registered_worktrees_are_listed_by_root(repo, conn, home: Path, tmp_path: Path) -> None:
    repo.commit("first")
    other = repo.worktree_add(tmp_path / "a-feature", "feature")
    register_repository(conn, repo.root, home)
    register_repository(conn, other.root, home)
    listed = tables.list_worktrees(conn)
    assert [row.worktree_root for row in listed] == sorted([str(repo.root), str(other.root)])
    assert len({row.repository_key for row in listed}) == 1
    assert [str(i.worktree_root) for i in list_repositories(conn)] == [
        row.worktree_root for row in listed
    ]


def test_turn_edges_and_counts_come_from_the_stored_rows(repo, conn, home: Path, rows) -> None:
    repository_key, turn = _delivered(repo, conn, home, rows)
    (edge,) = tables.turn_edges(conn, turn)
    assert tables.turn_edges(conn, turn, repository_key=repository_key) == [edge]
    assert edge.strength == "direct"
    assert edge.reasons == ("full-hash-in-commit-output",)
    assert tables.turn_edges(conn, turn, repository_key="elsewhere") == []
    assert tables.table_counts(conn) == {"repositories": 1, "commits": 1, "deliveryEdges": 1}


def test_forgetting_the_last_worktree_drops_its_history_but_keeps_the_sessions(
    repo, conn, home: Path, rows
) -> None:
    repository_key, _ = _delivered(repo, conn, home, rows)
    (worktree,) = tables.list_worktrees(conn)
    with db.write_tx(conn):
        assert tables.forget_worktree(conn, worktree.worktree_key) is True
        assert tables.forget_worktree(conn, worktree.worktree_key) is False
    assert tables.table_counts(conn) == {"repositories": 0, "commits": 0, "deliveryEdges": 0}
    assert tables.commit_paths(conn, repository_key, "0" * 40) == []
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM turns").fetchone()[0] == 1


def test_forgetting_one_of_two_worktrees_keeps_the_shared_history(
    repo, conn, home: Path, rows, tmp_path: Path
) -> None:
    _delivered(repo, conn, home, rows)
    other = repo.worktree_add(tmp_path / "feature", "feature")
    second = register_repository(conn, other.root, home)
    with db.write_tx(conn):
        tables.forget_worktree(conn, second.worktree_key)
    assert tables.table_counts(conn) == {"repositories": 1, "commits": 1, "deliveryEdges": 1}
