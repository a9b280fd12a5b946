"""Sessions map to the registered worktree that contains their recorded cwd."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from teamlore.repo.binding import register_repository
from teamlore.repo.worktrees import map_sessions


def _key(conn: sqlite3.Connection, session_id: int) -> str | None:
    row = conn.execute("SELECT worktree_key FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return row["worktree_key"]  # type: ignore[no-any-return]


def test_sessions_map_by_root_subdirectory_and_deepest_worktree(
    repo, conn: sqlite3.Connection, home: Path, rows, tmp_path: Path
) -> None:
    repo.commit("first", {".gitignore": ".worktrees/\n", "src/pkg/a.py": "a"})
    nested = repo.worktree_add(repo.root / ".worktrees" / "fix", "fix")
    feature = repo.worktree_add(tmp_path / "feature", "feature")
    main_id = register_repository(conn, repo.root, home)
    nested_id = register_repository(conn, nested.root, home)
    feature_id = register_repository(conn, feature.root, home)
    at_root = rows.session(str(repo.root))
    in_subdir = rows.session(str(repo.root / "src" / "pkg"))
    in_nested = rows.session(str(nested.root / "src"))
    in_feature = rows.session(str(feature.root))
    elsewhere = rows.session(str(tmp_path))
    sibling = rows.session(str(repo.root) + "-copy")
    no_cwd = rows.session(None)

    assert map_sessions(conn) == 4

    assert _key(conn, at_root) == main_id.worktree_key
    assert _key(conn, in_subdir) == main_id.worktree_key
    assert _key(conn, in_nested) == nested_id.worktree_key
    assert _key(conn, in_feature) == feature_id.worktree_key
    assert _key(conn, elsewhere) is None
    assert _key(conn, sibling) is None
    assert _key(conn, no_cwd) is None


def test_a_cwd_that_no_longer_exists_maps_by_its_path(
    repo, conn: sqlite3.Connection, home: Path, rows
) -> None:
    repo.commit("first", {"tmp/scratch/x.txt": "x"})
    identity = register_repository(conn, repo.root, home)
    gone = repo.root / "tmp" / "scratch"
    session = rows.session(str(gone / "deeper"))
    shutil.rmtree(repo.root / "tmp")
    map_sessions(conn)
    assert _key(conn, session) == identity.worktree_key


def test_a_cwd_through_a_symlink_maps_to_the_real_worktree(
    repo, conn: sqlite3.Connection, home: Path, rows, tmp_path: Path
) -> None:
    repo.commit("first", {"src/a.py": "a"})
    identity = register_repository(conn, repo.root, home)
    link = tmp_path / "shortcut"
    link.symlink_to(repo.root / "src")
    session = rows.session(str(link))
    map_sessions(conn)
    assert _key(conn, session) == identity.worktree_key


def test_windows_and_relative_cwds_never_match(
    repo, conn: sqlite3.Connection, home: Path, rows
) -> None:
    repo.commit("first")
    register_repository(conn, repo.root, home)
    windows = rows.session("C:\\Users\\dev" + str(repo.root).replace("/", "\\"))
    relative = rows.session(str(repo.root).lstrip("/"))
    assert map_sessions(conn) == 0
    assert _key(conn, windows) is None
    assert _key(conn, relative) is None


def test_mapping_follows_registration_changes(
    repo, conn: sqlite3.Connection, home: Path, rows
) -> None:
    repo.commit("first")
    identity = register_repository(conn, repo.root, home)
    session = rows.session(str(repo.root))
    map_sessions(conn)
    assert _key(conn, session) == identity.worktree_key
    conn.execute("DELETE FROM repositories")
    assert map_sessions(conn) == 0
    assert _key(conn, session) is None
