"""`format.crlf` and git's checkout (memory/line_ends.py): in a clone with `core.autocrlf=true`
every memory file had CRLF in the worktree, and lint warned of each on every `memory status`,
though git holds them with LF and a `git add` turns them back; nothing the person could do
removed the warning. A file the team would commit with CRLF keeps it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support import commit_all, entry_file, git, initialized_repository
from teamlore.ops.registry import OpContext, run_operation

ENTRY = ".threadshare/memory/entries/release-tags.md"


def crlf_rules(root: Path, home: Path) -> list[str]:
    lint: dict[str, Any] = run_operation("memory.lint", OpContext(cwd=root, home=home), {})
    status: dict[str, Any] = run_operation("memory.status", OpContext(cwd=root, home=home), {})
    said = [f["file"] for f in lint["findings"] if f["rule"] == "format.crlf"]
    assert ("format.crlf" in str(status)) == bool(said)  # status says what lint says
    return said


def test_crlf_a_checkout_wrote_is_not_a_finding(tmp_path: Path, home: Path) -> None:
    root = initialized_repository(tmp_path, home)
    (root / ENTRY).write_text(entry_file("release-tags", "Tag releases with a v prefix."))
    commit_all(root, "memory")
    git(root, "config", "core.autocrlf", "true")
    for path in (root / ".threadshare/memory").rglob("*"):
        if path.is_file():
            path.unlink()
    git(root, "checkout", "--", ".threadshare")
    assert b"\r\n" in (root / ENTRY).read_bytes()  # git's checkout wrote CRLF
    assert crlf_rules(root, home) == []


def test_crlf_the_team_would_commit_is_a_finding(tmp_path: Path, home: Path) -> None:
    root = initialized_repository(tmp_path, home)
    text = entry_file("release-tags", "Tag releases with a v prefix.")
    (root / ENTRY).write_bytes(text.replace("\n", "\r\n").encode())
    assert crlf_rules(root, home) == [ENTRY]  # not added yet: git holds nothing of it
    commit_all(root, "memory")
    assert crlf_rules(root, home) == [ENTRY]  # committed with CRLF
