"""A file saved with CRLF keeps CRLF; a file with LF or with both kinds is left as LF."""

from __future__ import annotations

import pytest

from teamlore.core.line_ends import all_crlf, with_line_ends_of


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
