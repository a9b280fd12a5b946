"""A file saved with CRLF keeps CRLF; a file with LF or with both kinds is left as LF. A text
holds an unresolved git merge when git's three markers start lines, in git's order."""

from __future__ import annotations

import pytest

from teamlore.core.text.files import all_crlf, conflict_start, with_line_ends_of


@pytest.mark.parametrize(
    ("text", "crlf"),
    [("a\r\nb\r\n", True), ("a\r\nb", True), ("a\nb\n", False), ("a\r\nb\n", False), ("", False)],
)
def test_only_a_file_whose_every_line_ends_in_crlf_is_crlf(text: str, crlf: bool) -> None:
    assert all_crlf(text) is crlf


def test_added_lines_take_the_files_line_ends_and_its_own_bytes_stay() -> None:
    original = "x = 1\r\n\r\n[a]\r\ny = '\r'\r\n"
    edited = original + "\n[b]\nz = 2\n"
    assert with_line_ends_of(original, edited) == original + "\r\n[b]\r\nz = 2\r\n"
    assert with_line_ends_of("x = 1\n", "x = 1\n[b]\n") == "x = 1\n[b]\n"
    mixed = "x = 1\r\ny = 2\n"
    assert with_line_ends_of(mixed, mixed + "[b]\n") == mixed + "[b]\n"


def test_a_conflict_starts_at_its_first_ours_marker() -> None:
    text = "kept\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> topic\n"
    assert conflict_start(text) == len("kept\n")
    diff3 = "<<<<<<< ours\na\n||||||| base\nb\n=======\nc\n>>>>>>>\n"  # labels are optional
    assert conflict_start(diff3) == 0
    assert conflict_start(text.replace("\n", "\r\n")) == len("kept\r\n")  # a Windows file


@pytest.mark.parametrize(
    "text",
    [
        "Title\n=======\n",  # a setext heading's underline alone
        ">>>>>>> b\n=======\n<<<<<<< a\n",  # not in the order git writes them
        "<<<<<<<< eight\n=======\n>>>>>>>> eight\n",  # markers are exactly seven characters
        "    <<<<<<< HEAD\n    =======\n    >>>>>>> topic\n",  # an indented quote of them
        "Git stops at `<<<<<<< HEAD`, `=======` and `>>>>>>> topic` lines.\n",
        "<<<<<<< HEAD\nno end yet\n",
    ],
)
def test_text_that_only_resembles_a_conflict_holds_none(text: str) -> None:
    assert conflict_start(text) is None
