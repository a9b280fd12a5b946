"""`without_block`: an instructions file with the managed block taken out, for an uninstall
that lost its copy of the file from before install (docs/agents.md): the inverse of the splice
that appended the block, every byte of the person's own text kept."""

from __future__ import annotations

import pytest

from teamlore.memory.assemble import BEGIN_MARKER, END_MARKER, splice, without_block

BLOCK = f"{BEGIN_MARKER}\n\n## Team memory\n\n_No approved team doctrine yet._\n\n{END_MARKER}"


@pytest.mark.parametrize(
    "ours",
    ["", "# Our project\n", "# Our project\n\nRun make test.\n", "# Ours\r\n\r\nRun it.\r\n"],
    ids=["empty", "one-line", "paragraphs", "crlf"],
)
def test_a_block_assemble_appended_comes_out_leaving_the_file_as_it_was(ours: str) -> None:
    crlf = "\r\n" in ours
    lf = ours.replace("\r\n", "\n")
    assembled = splice(lf, BLOCK, file_name="CLAUDE.md")
    if crlf:
        assembled = assembled.replace("\n", "\r\n")
    assert without_block(assembled.encode()) == ours.encode()


def test_a_block_between_the_persons_paragraphs_goes_with_its_line() -> None:
    text = f"# Ours\n\n{BLOCK}\n\n## Our own section\n"
    assert without_block(text.encode()) == b"# Ours\n\n\n## Our own section\n"


@pytest.mark.parametrize(
    "text",
    ["# Ours\n", f"# Ours\n{BEGIN_MARKER}\n", f"{END_MARKER}\n{BLOCK}\n"],
    ids=["no-block", "no-end", "stray-end"],
)
def test_a_file_without_one_intact_block_is_not_touched(text: str) -> None:
    assert without_block(text.encode()) is None
