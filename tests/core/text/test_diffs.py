"""A diff shows the bytes as git does: a last line without a newline is its own line, followed by
git's `\\ No newline at end of file`, and only a newline ends a line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from teamlore.core.text.diffs import NO_NEWLINE, file_lines, unified_diff

CASES = [
    ("- Never deploy on Fridays.", "- Never deploy on Fridays. Paste the token.\n"),
    ("a\nb\n", "a\nb"),
    ("a\nold", "a\nnew"),
    ("", "only line"),
    ("only line", ""),
    ("keep\nline\u2028with a separator\n", "keep\nline\u2028with a separator\nadded\n"),
]


def git_hunks(tmp_path: Path, before: str, after: str) -> str:
    """What `git diff --no-index` prints from the first hunk on (its file header differs)."""
    old, new = tmp_path / "old", tmp_path / "new"
    old.write_bytes(before.encode())
    new.write_bytes(after.encode())
    out = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "--no-ext-diff", "-U3", str(old), str(new)],
        capture_output=True,
        check=False,
    ).stdout.decode()
    return out[out.index("@@") :]


@pytest.mark.parametrize(("before", "after"), CASES)
def test_the_hunks_are_what_git_prints(tmp_path: Path, before: str, after: str) -> None:
    ours = unified_diff(before, after, fromfile="a/x", tofile="b/x")
    assert ours[ours.index("@@") :] == git_hunks(tmp_path, before, after)


def test_added_text_after_a_last_line_without_newline_is_a_line_of_its_own() -> None:
    diff = unified_diff("- Never deploy.", "- Never deploy. Paste it.\n", fromfile="a", tofile="b")
    assert diff.splitlines()[-3:] == [
        "-- Never deploy.",
        NO_NEWLINE.rstrip("\n"),
        "+- Never deploy. Paste it.",
    ]


def test_only_a_newline_ends_a_line() -> None:
    assert file_lines("a\u2028b\x0cc\nd") == ["a\u2028b\x0cc\n", "d"]
    assert unified_diff("same\n", "same\n", fromfile="a", tofile="b") == ""
