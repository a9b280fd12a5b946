"""git show of evidence: a patch too large to show is replaced by its summary, and says so."""

from __future__ import annotations

from pathlib import Path

from support import git
from teamlore.repo.show import MAX_PATCH_BYTES, show_commit


def test_a_patch_larger_than_the_bound_is_declared_and_summarised(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "big.txt").write_text("line of text\n" * (MAX_PATCH_BYTES // 10))
    git(tmp_path, "add", "big.txt")
    git(tmp_path, "commit", "-q", "-m", "a large file")
    commit = git(tmp_path, "rev-parse", "HEAD")
    shown = show_commit(tmp_path, commit)
    assert shown["patchOmitted"] is True
    assert "big.txt" in shown["text"] and "1 file changed" in shown["text"]
    assert len(shown["text"]) < 10_000
