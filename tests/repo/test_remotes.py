"""Remote URLs compare by what they name: host and path, not scheme, user, port or `.git`."""

from __future__ import annotations

import pytest

from teamlore.repo.remotes import remote_key, worktree_remote_keys


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/Me/Proj.git",
        "https://github.com/me/proj",
        "https://ci-bot:token@github.com/me/proj.git/",
        "http://github.com//me/proj",
        "git@github.com:me/proj.git",
        "github.com:me/proj",
        "ssh://git@github.com:22/me/proj.git",
        "git+ssh://github.com/me/proj/",
        "git://github.com/me/proj",
    ],
)
def test_every_spelling_of_one_repository_has_one_key(url: str) -> None:
    assert remote_key(url) == "github.com/me/proj"


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("/srv/git/proj.git", "file:/srv/git/proj"),
        ("file:///srv/git/proj", "file:/srv/git/proj"),
        ("https://gitlab.example.com:8443/group/sub/proj.git", "gitlab.example.com/group/sub/proj"),
        ("redacted://url/454be97b1a", "url/454be97b1a"),  # a sanitized fixture: still comparable
    ],
)
def test_local_and_nested_remotes(url: str, key: str) -> None:
    assert remote_key(url) == key


@pytest.mark.parametrize(
    "url", [None, "", "  ", "proj", "C:\\repos\\proj", "https://github.com/", "a b:c/d"]
)
def test_what_names_no_repository_has_no_key(url: str | None) -> None:
    assert remote_key(url) is None


def test_a_worktree_reports_the_keys_of_all_its_remotes(repo) -> None:
    repo.commit("first")
    assert worktree_remote_keys(repo.root) == frozenset()
    repo.git("remote", "add", "origin", "git@github.com:Me/Proj.git")
    repo.git("remote", "add", "upstream", "https://gitlab.com/team/proj")
    repo.git("remote", "set-url", "--push", "origin", "ssh://git@github.com/me/mirror.git")
    assert worktree_remote_keys(repo.root) == {
        "github.com/me/proj",
        "gitlab.com/team/proj",
        "github.com/me/mirror",
    }


def test_a_folder_git_cannot_read_has_no_remotes(tmp_path) -> None:
    assert worktree_remote_keys(tmp_path / "gone") == frozenset()
    assert worktree_remote_keys(tmp_path) == frozenset()
