"""`ignored_by_git`: which files teamlore writes git would leave out of every commit, and by
which rule; the tracked and the let-back-in are not ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import commit_all, git
from teamlore.repo.ignored import ignored_by_git

ENTRY = ".threadshare/memory/entries/a.md"
SKILL = ".claude/skills/release/SKILL.md"


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q")
    return root


def test_nothing_ignored_gives_nothing(repo: Path) -> None:
    assert ignored_by_git(repo, [ENTRY, SKILL, "CLAUDE.md"]) == []
    assert ignored_by_git(repo, []) == []


def test_each_rule_with_the_files_it_ignores_in_the_order_given(repo: Path) -> None:
    (repo / ".gitignore").write_text("node_modules/\n.claude/\n")
    (repo / ".git" / "info" / "exclude").write_text("*.bak\n.threadshare\n")
    found = ignored_by_git(repo, [SKILL, "CLAUDE.md", ENTRY, ".claude/skills/x/SKILL.md"])
    assert found == [
        {"rule": ".gitignore:2 .claude/", "paths": [SKILL, ".claude/skills/x/SKILL.md"]},
        {"rule": ".git/info/exclude:2 .threadshare", "paths": [ENTRY]},
    ]


def test_a_tracked_file_and_a_file_let_back_in_are_not_ignored(repo: Path) -> None:
    (repo / ".gitignore").write_text(".threadshare/memory/*\n!.threadshare/memory/entries/\n")
    (repo / "CLAUDE.md").write_text("# shop\n")
    git(repo, "add", "CLAUDE.md")
    (repo / ".gitignore").write_text(
        ".threadshare/memory/*\n!.threadshare/memory/entries/\nCLAUDE.md\n"
    )
    found = ignored_by_git(repo, ["CLAUDE.md", ENTRY, ".threadshare/memory/index.json"])
    assert found == [
        {"rule": ".gitignore:1 .threadshare/memory/*", "paths": [".threadshare/memory/index.json"]}
    ]


def test_the_global_excludes_file_is_named_from_home(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("# mine\n.claude/\n")
    monkeypatch.setenv("HOME", str(home))
    git(repo, "config", "core.excludesFile", str(home / ".config" / "git" / "ignore"))
    assert ignored_by_git(repo, [SKILL]) == [
        {"rule": "~/.config/git/ignore:2 .claude/", "paths": [SKILL]}
    ]


def test_names_git_would_quote_come_back_as_given(repo: Path) -> None:
    (repo / ".gitignore").write_text("*.md\n")
    names = [".threadshare/memory/entries/发布 失败.md", ".threadshare/memory/entries/tab\tx.md"]
    assert ignored_by_git(repo, names) == [{"rule": ".gitignore:1 *.md", "paths": names}]


def test_outside_a_repository_it_cannot_tell_and_says_nothing(tmp_path: Path) -> None:
    assert ignored_by_git(tmp_path, [ENTRY]) == []


def test_a_committed_gitignore_counts_like_any_other(repo: Path) -> None:
    (repo / ".gitignore").write_text(".threadshare/\n")
    commit_all(repo, "ignore")
    assert ignored_by_git(repo, [ENTRY]) == [
        {"rule": ".gitignore:1 .threadshare/", "paths": [ENTRY]}
    ]
