"""Repository binding: worktree root and common dir identity, registration, ownership."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from teamlore.core import errors, keys
from teamlore.core.paths import display_path
from teamlore.repo.binding import (
    find_owner,
    is_within,
    list_repositories,
    normalize_posix,
    register_repository,
    resolve_repository,
    worktree_problem,
)


def test_a_subdirectory_resolves_to_the_real_worktree_root(repo, home: Path) -> None:
    repo.commit("first", {"src/pkg/a.py": "x"})
    identity = resolve_repository(repo.root / "src" / "pkg", home=home)
    assert identity.worktree_root == repo.root.resolve()
    assert identity.git_common_dir == (repo.root / ".git").resolve()


def test_a_file_path_resolves_like_its_directory(repo, home: Path) -> None:
    repo.commit("first", {"src/a.py": "x"})
    by_file = resolve_repository(repo.root / "src" / "a.py", home=home)
    assert by_file == resolve_repository(repo.root, home=home)


def test_symlinked_path_resolves_to_the_real_root(repo, home: Path, tmp_path: Path) -> None:
    repo.commit("first", {"a.py": "x"})
    link = tmp_path / "link"
    link.symlink_to(repo.root)
    identity = resolve_repository(link, home=home)
    assert identity.worktree_root == repo.root.resolve()
    assert identity == resolve_repository(repo.root, home=home)


def test_worktrees_share_the_repository_key_but_not_the_worktree_key(
    repo, home: Path, tmp_path: Path
) -> None:
    repo.commit("first", {"a.py": "x"})
    feature = repo.worktree_add(tmp_path / "feature", "feature")
    main_id = resolve_repository(repo.root, home=home)
    feature_id = resolve_repository(feature.root, home=home)
    assert main_id.repository_key == feature_id.repository_key
    assert main_id.worktree_key != feature_id.worktree_key
    assert feature_id.worktree_root == feature.root.resolve()
    assert feature_id.git_common_dir == main_id.git_common_dir


def test_keys_are_keyed_ids_not_paths(repo, home: Path) -> None:
    repo.commit("first")
    identity = resolve_repository(repo.root, home=home)
    assert str(repo.root) not in identity.repository_key
    assert len(identity.repository_key) == keys.KEY_HEX_CHARS == 64
    assert len(identity.worktree_key) == keys.KEY_HEX_CHARS


def test_a_directory_outside_any_repository_is_refused(tmp_path: Path, home: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(errors.TeamloreError) as caught:
        resolve_repository(plain, home=home)
    assert caught.value.code == errors.NOT_A_GIT_REPOSITORY.code


def test_a_missing_path_is_refused_as_missing(tmp_path: Path, home: Path) -> None:
    """issue 26: `--repository ~/missing` said NOT_A_GIT_REPOSITORY: the path does not exist."""
    with pytest.raises(errors.TeamloreError) as caught:
        resolve_repository(tmp_path / "missing", home=home)
    assert caught.value.code == errors.PATH_NOT_FOUND.code
    # the path as given (`-r /nonexistent` said only `nonexistent does not exist`)
    missing = display_path(tmp_path / "missing")
    assert caught.value.message == f"{missing} does not exist; give the folder of a git repository"


def test_a_bare_repository_is_refused(make_repo, tmp_path: Path, home: Path) -> None:
    bare = make_repo(tmp_path / "bare.git", bare=True)
    with pytest.raises(errors.TeamloreError) as caught:
        resolve_repository(bare.root, home=home)
    assert caught.value.code == errors.BARE_REPOSITORY.code


def test_the_git_directory_itself_is_not_a_worktree(repo, home: Path) -> None:
    repo.commit("first")
    with pytest.raises(errors.TeamloreError) as caught:
        resolve_repository(repo.root / ".git", home=home)
    assert caught.value.code == errors.NOT_A_GIT_REPOSITORY.code


def test_a_worktree_resolves_with_one_git_process(
    repo, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short command (`memory search`) resolves its owner on every start: one `git
    rev-parse` answers every question in a worktree; only a refusal asks again to say why."""
    repo.commit("first")
    real_git = shutil.which("git")
    assert real_git is not None
    calls = tmp_path / "calls"
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real_git} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    resolve_repository(repo.root, home=home)
    assert len(calls.read_text().splitlines()) == 1


def test_registration_is_idempotent(repo, conn: sqlite3.Connection, home: Path) -> None:
    repo.commit("first")
    first = register_repository(conn, repo.root, home)
    before = conn.execute("SELECT * FROM repositories").fetchall()
    second = register_repository(conn, repo.root / ".", home)
    after = conn.execute("SELECT * FROM repositories").fetchall()
    assert first == second
    assert [tuple(r) for r in before] == [tuple(r) for r in after]
    assert len(after) == 1


def test_each_worktree_is_registered_once(
    repo, conn: sqlite3.Connection, home: Path, tmp_path: Path
) -> None:
    repo.commit("first")
    feature = repo.worktree_add(tmp_path / "feature", "feature")
    register_repository(conn, repo.root, home)
    register_repository(conn, feature.root, home)
    register_repository(conn, feature.root, home)
    listed = list_repositories(conn)
    assert sorted(r.worktree_root for r in listed) == sorted(
        [repo.root.resolve(), feature.root.resolve()]
    )
    assert len({r.repository_key for r in listed}) == 1


def test_find_owner_prefers_the_deepest_worktree(
    repo, conn: sqlite3.Connection, home: Path
) -> None:
    repo.commit("first", {".gitignore": ".worktrees/\n"})
    nested = repo.worktree_add(repo.root / ".worktrees" / "fix", "fix")
    outer = register_repository(conn, repo.root, home)
    inner = register_repository(conn, nested.root, home)
    assert find_owner(conn, nested.root / "src" / "new.py") == inner
    assert find_owner(conn, repo.root / "docs") == outer
    assert find_owner(conn, repo.root.parent) is None


def test_find_owner_compares_whole_path_components(
    repo, conn: sqlite3.Connection, home: Path, tmp_path: Path
) -> None:
    repo.commit("first")
    register_repository(conn, repo.root, home)
    sibling = tmp_path / (repo.root.name + "-other")
    assert find_owner(conn, sibling) is None


@pytest.mark.parametrize(
    "recorded",
    ["C:\\Users\\dev\\project", "c:/Users/dev/project", "\\\\server\\share\\x", "relative/dir", ""],
)
def test_paths_that_cannot_be_posix_absolute_do_not_normalize(recorded: str) -> None:
    assert normalize_posix(recorded) is None


def test_is_within_is_component_wise() -> None:
    assert is_within("/a/b", "/a/b")
    assert is_within("/a/b/c", "/a/b")
    assert is_within("/a/b/c", "/a/b/")
    assert not is_within("/a/bc", "/a/b")
    assert is_within("/anything", "/")


def test_a_registered_worktree_another_user_now_owns_is_untrusted_not_gone(
    repo, home: Path, hand_to_another_user: Callable[[Path], None]
) -> None:
    """`sync` said "the folder is no longer a git worktree (`teamlore repo forget PATH` drops
    it)": the advice would have dropped a repository git only needs to be told to trust."""
    repo.commit("first", {"a.txt": "a"})
    identity = resolve_repository(repo.root, home=home)
    hand_to_another_user(repo.root)
    assert worktree_problem(identity, home) == "untrusted"
