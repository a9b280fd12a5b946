"""Sessions map to the registered worktree that contains their recorded cwd, or — for sessions
recorded on another machine or OS — by the repository the provider recorded, by path aliases,
and by the WSL forms of Windows paths (docs/sessions.md)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from pydantic import ValidationError

from teamlore.repo.binding import register_repository
from teamlore.repo.commits import scan_commits
from teamlore.repo.path_settings import PathSettings
from teamlore.repo.worktrees import _wsl_targets, map_sessions, worktree_roots


def _foreign(conn: sqlite3.Connection, cwd: str | None, remote: str | None = None, commit=None):
    """A session recorded elsewhere: its cwd, and the repository Codex recorded."""
    cursor = conn.execute(
        "INSERT INTO sessions (session_key, provider, provider_session_id, cwd, git_remote,"
        " git_commit) VALUES (?, 'codex', ?, ?, ?, ?)",
        (f"f{cwd}{remote}{commit}", f"p{cwd}{remote}{commit}", cwd, remote, commit),
    )
    return cursor.lastrowid


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

    assert map_sessions(conn).mapped == 4

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


def test_windows_and_relative_cwds_never_match_by_path_alone(
    repo, conn: sqlite3.Connection, home: Path, rows
) -> None:
    repo.commit("first")
    register_repository(conn, repo.root, home)
    windows = rows.session("C:\\Users\\dev" + str(repo.root).replace("/", "\\"))
    relative = rows.session(str(repo.root).lstrip("/"))
    assert map_sessions(conn).mapped == 0
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
    assert map_sessions(conn).mapped == 0
    assert _key(conn, session) is None


def test_a_windows_session_maps_by_the_repository_codex_recorded(
    repo, conn: sqlite3.Connection, home: Path
) -> None:
    repo.commit("first")
    repo.git("remote", "add", "origin", "https://github.com/Me/Proj.git")
    identity = register_repository(conn, repo.root, home)
    scp_form = _foreign(conn, "C:\\Users\\me\\src\\Proj", "git@github.com:me/proj")
    ssh_form = _foreign(conn, "/Users/me/proj", "ssh://git@github.com:22/me/proj.git/")
    other = _foreign(conn, "C:\\Users\\me\\src\\Proj", "git@github.com:me/another")
    no_git = _foreign(conn, "C:\\Users\\me\\src\\Proj")
    result = map_sessions(conn)
    assert (result.mapped, result.unmapped) == (2, 2)
    assert result.by == {"cwd": 0, "gitRemote": 2, "pathAlias": 0}
    assert _key(conn, scp_form) == _key(conn, ssh_form) == identity.worktree_key
    assert _key(conn, other) is None and _key(conn, no_git) is None


def test_the_recorded_commit_tells_two_clones_of_one_remote_apart(
    repo, make_repo, conn: sqlite3.Connection, home: Path, tmp_path: Path
) -> None:
    shared = repo.commit("shared history")
    fork = make_repo(tmp_path / "fork")
    only_in_fork = fork.commit("the fork's own work")
    clones = []
    for clone in (repo, fork):
        clone.git("remote", "add", "origin", "git@github.com:team/proj.git")
        identity = register_repository(conn, clone.root, home)
        scan_commits(conn, identity)
        clones.append(identity)
    in_fork = _foreign(conn, "D:\\work\\somewhere", "https://github.com/team/proj", only_in_fork)
    in_main = _foreign(conn, "D:\\work\\somewhere", "https://github.com/team/proj", shared)
    unknown = _foreign(conn, "D:\\work\\elsewhere", "https://github.com/team/proj", "f" * 40)
    by_name = _foreign(conn, "D:\\work\\fork", "https://github.com/team/proj", "f" * 40)
    map_sessions(conn)
    assert _key(conn, in_fork) == clones[1].worktree_key
    assert _key(conn, in_main) == clones[0].worktree_key
    assert _key(conn, unknown) is None  # two candidates, nothing to choose by
    assert _key(conn, by_name) == clones[1].worktree_key  # the folder's name decides


def test_path_aliases_map_windows_and_other_machine_prefixes(
    repo, conn: sqlite3.Connection, home: Path
) -> None:
    repo.commit("first", {"pkg/a.py": "a"})
    identity = register_repository(conn, repo.root, home)
    parent, name = str(repo.root.parent), repo.root.name
    aliases = PathSettings.model_validate(
        {"aliases": {"c:/Users/Me/Src": parent, "/Users/me/code": parent}}
    ).aliases
    windows = _foreign(conn, f"C:\\Users\\me\\src\\{name}\\pkg")
    mac = _foreign(conn, f"/Users/me/code/{name}")
    mac_other_case = _foreign(conn, f"/users/me/code/{name}")  # POSIX paths compare exactly
    result = map_sessions(conn, aliases=aliases)
    assert _key(conn, windows) == _key(conn, mac) == identity.worktree_key
    assert _key(conn, mac_other_case) is None
    assert result.by["pathAlias"] == 2
    assert map_sessions(conn).mapped == 0  # without the aliases, nothing maps


def test_a_wsl_share_path_recorded_on_windows_maps_to_the_linux_folder(
    repo, conn: sqlite3.Connection, home: Path
) -> None:
    repo.commit("first")
    identity = register_repository(conn, repo.root, home)
    inside = str(repo.root).replace("/", "\\")
    share = _foreign(conn, f"\\\\wsl$\\Ubuntu{inside}\\src")
    localhost = _foreign(conn, f"\\\\wsl.localhost\\Ubuntu-22.04{inside}")
    map_sessions(conn)
    assert _key(conn, share) == _key(conn, localhost) == identity.worktree_key


def test_windows_drives_translate_to_their_wsl_mount_points() -> None:
    assert list(_wsl_targets("C:\\Users\\me\\src")) == ["/mnt/c/Users/me/src"]
    assert list(_wsl_targets("d:/work")) == ["/mnt/d/work"]
    assert list(_wsl_targets("/home/me")) == []


def test_a_local_folder_outside_every_worktree_stays_unmapped_even_with_a_matching_remote(
    repo, conn: sqlite3.Connection, home: Path, tmp_path: Path
) -> None:
    repo.commit("first")
    repo.git("remote", "add", "origin", "https://github.com/me/proj")
    register_repository(conn, repo.root, home)
    unregistered_clone = tmp_path / "second-clone"
    unregistered_clone.mkdir()
    session = _foreign(conn, str(unregistered_clone), "https://github.com/me/proj")
    map_sessions(conn)
    assert _key(conn, session) is None


def test_path_aliases_must_point_at_absolute_local_paths() -> None:
    with pytest.raises(ValidationError, match="not an absolute path here"):
        PathSettings.model_validate({"aliases": {"C:\\src": "relative/src"}})
    with pytest.raises(ValidationError):
        PathSettings.model_validate({"aliases": {"C:\\src": 3}})
    assert PathSettings.model_validate({"aliases": {"C:\\src": "~/src"}}).aliases


def test_sessions_sharing_a_folder_resolve_it_on_disk_once(
    repo, conn: sqlite3.Connection, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a no-op resync maps every session again: a realpath per session (each with its own
    # commit) was a third of it (bench/bench_sync.py, no-op resync)
    repo.commit("first", {"a.txt": "a"})
    identity = register_repository(conn, repo.root, home)
    sessions = [_foreign(conn, str(repo.root / "src"), None, f"c{n}") for n in range(5)]
    elsewhere = [_foreign(conn, "/nowhere/proj", "git@host:o/r.git", f"c{n}") for n in range(5)]
    resolved: list[str] = []
    real = os.path.realpath

    def counted(path: str, *args: object, **kwargs: object) -> str:
        resolved.append(str(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os.path, "realpath", counted)
    assert map_sessions(conn).mapped == 5
    assert [_key(conn, s) for s in sessions] == [identity.worktree_key] * 5
    assert [_key(conn, s) for s in elsewhere] == [None] * 5
    assert sorted(resolved) == sorted({str(repo.root / "src"), "/nowhere/proj"})


def test_the_roots_of_a_worktree_are_its_root_and_the_aliases_that_map_to_it(
    tmp_path: Path, home: Path
) -> None:
    """`[paths] aliases` naming the worktree or a folder above it give the prefix recorded text
    spells it with; an alias of a sibling folder is no root of it."""
    tmp_path = tmp_path.resolve()  # a worktree root is a real path
    root = tmp_path / "src" / "shop"
    root.mkdir(parents=True)
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "config.toml").write_text(
        "[paths.aliases]\n"
        f"'C:\\Users\\YAROSLAV\\RAVE-ERA' = '{root}'\n"
        f"'/Users/soph/Work' = '{tmp_path / 'src'}'\n"
        f"'D:\\elsewhere' = '{tmp_path / 'other'}'\n",
        encoding="utf-8",
    )
    assert worktree_roots(root, home) == (
        str(root),
        "C:\\Users\\YAROSLAV\\RAVE-ERA",
        "/Users/soph/Work/shop",
    )
    (home / "config.toml").write_text("", encoding="utf-8")
    assert worktree_roots(root, home) == (str(root),)
