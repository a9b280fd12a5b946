"""A memory tree in the middle of a `git merge` (docs/memory.md, "Merge conflicts").

Two teammates change the same entry, or both assemble CLAUDE.md after promoting different
entries; `git merge` stops with both sides in the file. A memory file holding git's conflict
markers is not read as one document: lint names it (blocking), search leaves it out (coverage
partial) and assemble refuses until the merge is resolved. A conflict inside the managed block
of CLAUDE.md is resolved by assembling again: the block is generated from the merged tree.
"""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from support import commit_all, git, git_run, shared_fixtures, teamlore_cli

ENTRY = (
    ".threadshare/memory/entries/threadshare-s-memory-extraction-prompts-should-protect-again.md"
)
CONFLICT_MARKERS = ("<<<<<<<", "=======", ">>>>>>>")


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    """A git repository whose first commit holds the reference memory tree."""
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    memory = root / ".threadshare" / "memory"
    shutil.copytree(
        shared_fixtures("threadshare-memory"), memory, ignore=shutil.ignore_patterns("SOURCE.md")
    )
    for path in [memory, *memory.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    commit_all(root, "memory")
    return root


def append_to(path: Path, words: str) -> None:
    path.write_text(path.read_text().rstrip("\n") + f" {words}\n")


def conflicting_edits(repo: Path) -> None:
    """Both sides add a sentence to the same entry; the merge stops with both in the file."""
    git(repo, "checkout", "-q", "-b", "theirs")
    append_to(repo / ENTRY, "Their side adds this.")
    commit_all(repo, "theirs")
    git(repo, "checkout", "-q", "main")
    append_to(repo / ENTRY, "Our side adds that.")
    commit_all(repo, "ours")
    assert git_run(repo, "merge", "-q", "theirs").returncode != 0
    assert all(marker in (repo / ENTRY).read_text() for marker in CONFLICT_MARKERS)


def run_json(repo: Path, *args: str) -> tuple[int, dict[str, object]]:
    done = teamlore_cli(*args, "--format", "json", cwd=repo)
    payload: dict[str, object] = json.loads(done.stdout)
    return done.returncode, payload


def test_lint_names_the_line_an_unresolved_merge_starts_on(repo: Path) -> None:
    conflicting_edits(repo)
    done = teamlore_cli("memory", "lint", cwd=repo)
    assert done.returncode == 1
    start = (repo / ENTRY).read_text().split("\n").index("<<<<<<< HEAD") + 1
    assert f"{ENTRY}:{start} format.merge-conflict an unresolved git merge conflict" in done.stdout


def test_search_and_status_leave_the_conflicted_entry_out_until_it_is_resolved(
    repo: Path,
) -> None:
    _, before = run_json(repo, "memory", "status")
    conflicting_edits(repo)
    code, found = run_json(repo, "memory", "search", "Their side adds this")
    assert code == 0 and found["coverage"] == "partial"
    assert ENTRY not in json.dumps(found)
    _, during = run_json(repo, "memory", "status")
    assert during["entries"]["approved"] == before["entries"]["approved"] - 1  # type: ignore[index]

    git(repo, "checkout", "--theirs", ENTRY)
    git(repo, "add", ENTRY)
    code, found = run_json(repo, "memory", "search", "Their side adds this")
    assert found["coverage"] == "complete"
    assert found["results"][0]["path"] == ENTRY  # type: ignore[index]


def test_assemble_refuses_during_an_unresolved_merge_and_writes_nothing(repo: Path) -> None:
    conflicting_edits(repo)
    code, refusal = run_json(repo, "memory", "assemble", "--provider", "claude")
    assert code == 1
    assert refusal["error"]["code"] == "MEMORY_FILE_INVALID"  # type: ignore[index]
    assert "unresolved git merge conflict" in refusal["error"]["message"]  # type: ignore[index]
    assert not (repo / "CLAUDE.md").exists()


def test_assembling_again_resolves_a_conflict_inside_the_managed_block(repo: Path) -> None:
    """Each side promoted (here: removed) a different entry and assembled; the count in the
    block conflicts. Assembling on the merged tree writes the block the merge should hold."""
    entries = sorted((repo / ".threadshare/memory/entries").glob("*.md"))
    (repo / "CLAUDE.md").write_text("# Shop\n\nRun the tests before you push.\n")
    run_json(repo, "memory", "assemble", "--provider", "claude")
    commit_all(repo, "assembled")
    git(repo, "checkout", "-q", "-b", "theirs")
    entries[0].unlink()
    run_json(repo, "memory", "assemble", "--provider", "claude")
    commit_all(repo, "theirs")
    git(repo, "checkout", "-q", "main")
    entries[0].unlink()
    entries[1].unlink()
    run_json(repo, "memory", "assemble", "--provider", "claude")
    commit_all(repo, "ours")
    assert git_run(repo, "merge", "-q", "theirs").returncode != 0
    assert "<<<<<<< HEAD" in (repo / "CLAUDE.md").read_text()

    code, _ = run_json(repo, "memory", "assemble", "--provider", "claude")
    assert code == 0
    text = (repo / "CLAUDE.md").read_text()
    assert not any(marker in text for marker in CONFLICT_MARKERS)
    assert text.startswith("# Shop\n\nRun the tests before you push.\n")
    assert f"The team has {len(entries) - 2} approved memory entries" in text
