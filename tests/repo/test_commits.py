"""The commit scan: what it stores, when it does no work, and that it never writes the repo."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from teamlore.core import errors
from teamlore.repo.binding import register_repository, resolve_repository
from teamlore.repo.commits import parse_log, scan_commits, utc_iso


def _commits(conn: sqlite3.Connection) -> dict[str, sqlite3.Row]:
    return {r["hash"]: r for r in conn.execute("SELECT * FROM commits")}


def _files(conn: sqlite3.Connection, hash_: str) -> dict[str, str]:
    rows = conn.execute("SELECT path, change FROM commit_files WHERE hash = ?", (hash_,))
    return {r["path"]: r["change"] for r in rows}


def test_scan_stores_commits_with_parents_times_subject_and_changed_paths(
    repo, conn: sqlite3.Connection, home: Path
) -> None:
    first = repo.commit(
        "add files", {"a.txt": "a\n" * 20, "src/b.py": "b"}, at="2025-03-01T10:00:00+02:00"
    )
    (repo.root / "docs").mkdir()
    repo.git("mv", "a.txt", "docs/a.txt")
    repo.write("src/b.py", "changed")
    second = repo.commit("move a, edit b", at="2025-03-01T11:00:00Z")
    identity = register_repository(conn, repo.root, home)

    result = scan_commits(conn, identity)

    assert result.changed and result.commits_read == 2 and result.commits_inserted == 2
    assert not result.truncated
    stored = _commits(conn)
    assert stored[first]["parents"] == ""
    assert stored[second]["parents"] == first
    assert stored[first]["author_time"] == "2025-03-01T08:00:00Z"
    assert stored[second]["committer_time"] == "2025-03-01T11:00:00Z"
    assert stored[second]["subject"] == "move a, edit b"
    assert _files(conn, first) == {"a.txt": "A", "src/b.py": "A"}
    assert _files(conn, second) == {"docs/a.txt": "R", "a.txt": "R-from", "src/b.py": "M"}


def test_unchanged_refs_mean_no_work(repo, conn: sqlite3.Connection, home: Path) -> None:
    repo.commit("first", {"a.txt": "a"})
    identity = register_repository(conn, repo.root, home)
    first = scan_commits(conn, identity)
    again = scan_commits(conn, identity)
    assert first.changed
    assert not again.changed and again.commits_read == 0
    assert again.ref_digest == first.ref_digest


def test_a_new_commit_is_the_only_commit_read_by_the_next_scan(
    repo, conn: sqlite3.Connection, home: Path
) -> None:
    for i in range(5):
        repo.commit(f"c{i}", {f"f{i}.txt": str(i)}, at=f"2025-03-01T10:0{i}:00Z")
    identity = register_repository(conn, repo.root, home)
    assert scan_commits(conn, identity).commits_inserted == 5
    new = repo.commit("new", {"new.txt": "n"}, at="2025-03-01T11:00:00Z")

    result = scan_commits(conn, identity)

    assert result.changed
    assert (result.commits_read, result.commits_inserted, result.files_inserted) == (1, 1, 1)
    assert new in _commits(conn)


def test_history_of_every_branch_and_detached_worktree_head_is_scanned_but_not_the_stash(
    repo, conn: sqlite3.Connection, home: Path, tmp_path: Path
) -> None:
    base = repo.commit("base", {"a.txt": "a"})
    side = repo.worktree_add(tmp_path / "side", "side")
    on_branch = side.commit("on side branch", {"side.txt": "s"})
    side.git("checkout", "-q", "--detach")
    detached = side.commit("detached work", {"detached.txt": "d"})
    repo.write("a.txt", "dirty")
    repo.git("stash", "-q")
    identity = register_repository(conn, repo.root, home)

    scan_commits(conn, identity)

    stored = _commits(conn)
    assert {base, on_branch, detached} <= set(stored)
    assert not any(row["subject"].startswith(("WIP on", "index on")) for row in stored.values())


def test_merge_commits_are_stored_without_changed_paths(
    repo, conn: sqlite3.Connection, home: Path
) -> None:
    repo.commit("base", {"a.txt": "a"})
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit("topic", {"t.txt": "t"})
    repo.git("checkout", "-q", "main")
    repo.commit("main", {"m.txt": "m"})
    repo.git("merge", "-q", "--no-ff", "topic", "-m", "merge topic", at="2025-03-01T12:00:00Z")
    merge = repo.git("rev-parse", "HEAD")
    identity = register_repository(conn, repo.root, home)

    scan_commits(conn, identity)

    assert len(_commits(conn)[merge]["parents"].split()) == 2
    assert _files(conn, merge) == {}


def test_max_commits_bounds_the_walk_and_says_so(
    repo, conn: sqlite3.Connection, home: Path
) -> None:
    hashes = [
        repo.commit(f"c{i}", {"f.txt": str(i)}, at=f"2025-03-01T10:0{i}:00Z") for i in range(6)
    ]
    identity = register_repository(conn, repo.root, home)

    limited = scan_commits(conn, identity, max_commits=4)
    assert limited.truncated and limited.commits_inserted == 4
    assert set(_commits(conn)) == set(hashes[2:])  # newest first

    full = scan_commits(conn, identity, full=True)
    assert full.commits_inserted == 2 and not full.truncated
    assert set(_commits(conn)) == set(hashes)


def test_exactly_max_commits_is_not_truncated(repo, conn: sqlite3.Connection, home: Path) -> None:
    for i in range(3):
        repo.commit(f"c{i}", {"f.txt": str(i)})
    identity = register_repository(conn, repo.root, home)
    assert not scan_commits(conn, identity, max_commits=3).truncated


def test_an_empty_repository_scans_to_nothing(repo, conn: sqlite3.Connection, home: Path) -> None:
    identity = register_repository(conn, repo.root, home)
    result = scan_commits(conn, identity)
    assert result.commits_read == 0 and not result.truncated


def test_scanning_an_unregistered_worktree_is_refused(
    repo, conn: sqlite3.Connection, home: Path
) -> None:
    repo.commit("first")
    with pytest.raises(errors.TeamloreError) as caught:
        scan_commits(conn, resolve_repository(repo.root, home=home))
    assert caught.value.code == errors.REPOSITORY_NOT_REGISTERED.code


def test_one_scan_serves_every_registered_worktree_of_the_repository(
    repo, conn: sqlite3.Connection, home: Path, tmp_path: Path
) -> None:
    repo.commit("first", {"a.txt": "a"})
    feature = repo.worktree_add(tmp_path / "feature", "feature")
    main_id = register_repository(conn, repo.root, home)
    feature_id = register_repository(conn, feature.root, home)
    assert scan_commits(conn, main_id).changed
    assert not scan_commits(conn, feature_id).changed


def _tree_snapshot(git_dir: Path) -> dict[str, tuple[int, int]]:
    snapshot = {}
    for dirpath, _, filenames in os.walk(git_dir):
        for name in filenames:
            path = Path(dirpath) / name
            stat = path.stat()
            snapshot[str(path.relative_to(git_dir))] = (stat.st_mtime_ns, stat.st_size)
    return snapshot


def _porcelain(root: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return subprocess.run(
        ["git", "status", "--porcelain"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_the_scan_never_writes_to_the_repository(
    repo, conn: sqlite3.Connection, home: Path, tmp_path: Path
) -> None:
    repo.commit("first", {"a.txt": "a", "bin.dat": "x"})
    repo.commit("second", {"a.txt": "b", "bin.dat": "y"})
    markers = tmp_path / "markers"
    markers.mkdir()
    for name in ("fsmonitor", "textconv", "extdiff"):
        script = tmp_path / f"{name}.sh"
        script.write_text(f'#!/bin/sh\ntouch {markers / name}\ncat "$1" 2>/dev/null\n')
        script.chmod(0o755)
    repo.git("config", "core.fsmonitor", str(tmp_path / "fsmonitor.sh"))
    repo.git("config", "diff.marker.textconv", str(tmp_path / "textconv.sh"))
    repo.git("config", "diff.external", str(tmp_path / "extdiff.sh"))
    (repo.root / ".git" / "info" / "attributes").write_text("*.dat diff=marker\n")
    repo.write("a.txt", "uncommitted edit")  # a dirty worktree that a refresh would touch
    identity = register_repository(conn, repo.root, home)
    git_dir = repo.root / ".git"
    before = _tree_snapshot(git_dir)
    index_before = (git_dir / "index").read_bytes()

    first = scan_commits(conn, identity)
    second = scan_commits(conn, identity, full=True)

    assert first.commits_inserted == 2 and second.changed
    assert _tree_snapshot(git_dir) == before
    assert (git_dir / "index").read_bytes() == index_before
    assert not list(git_dir.rglob("*.lock"))
    assert list(markers.iterdir()) == []
    assert _porcelain(repo.root) == " M a.txt\n"


def test_parse_log_skips_garbage_and_keeps_subjects_with_separators() -> None:
    hash_ = "a" * 40
    out = (
        b"\x1e" + hash_.encode() + b"\x1f\x1f2025-01-01T00:00:00Z\x1f2025-01-01T00:00:00Z\x1f"
        b"subject with \x1e and \x1f inside\x00\nM\x00x.txt\x00"
    )
    (commit,) = list(parse_log(out))
    assert commit.subject == "subject with \x1e and \x1f inside"
    assert commit.files == [("x.txt", "M")]


def test_utc_iso_normalizes_offsets() -> None:
    assert utc_iso("2025-01-01T01:00:00+01:00") == "2025-01-01T00:00:00Z"
    assert utc_iso("not a date") is None
