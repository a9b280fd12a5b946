"""Every transform of transcript text is linear.

Tool results are any file an agent read, so the cleaners meet hostile text. Two kinds of proof,
no clock: (1) the linear scanners give exactly what the lazy-regex definitions give, on texts
drawn from the tags' own fragments (hypothesis); (2) payloads of the shapes that made the old
regexes quadratic (many openers without closers, endless escape runs) go through every cleaner
at a size where a quadratic scan would take minutes (300 KB took 22 s before the fix) and a
linear one takes milliseconds. `bench/bench_adversarial.py` prints the 10 MiB figures.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from teamlore.sessions.providers import apply_patch, claude, codex_records
from teamlore.sessions.providers.common import (
    strip_system_reminders,
    strip_tagged_blocks,
    strip_tagged_families,
)

_REMINDER_REGEX = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_IDE_REGEX = re.compile(r"<(ide_[a-z_]+)>.*?</\1>", re.DOTALL)
_CWD_REGEX = re.compile(r"<cwd>(.*?)</cwd>", re.S)

FRAGMENTS = st.lists(
    st.sampled_from(
        [
            "<system-reminder>",
            "</system-reminder>",
            "<ide_opened_file>",
            "</ide_opened_file>",
            "<ide_selection>",
            "</ide_selection>",
            "<ide_a>",
            "</ide_a>",
            "<ide_>",
            "<cwd>",
            "</cwd>",
            "<",
            ">",
            "/",
            "x",
            " ",
            "\n",
            "ide_",
            "system-reminder",
        ]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=300)
@given(FRAGMENTS)
def test_tag_block_scanners_equal_their_regex_definitions(text: str) -> None:
    assert strip_tagged_blocks(text, "system-reminder") == _REMINDER_REGEX.sub("", text)
    assert strip_tagged_families(text, "ide_") == _IDE_REGEX.sub("", text)
    match = _CWD_REGEX.search(text)
    assert codex_records._tag_content(text, "cwd") == (match.group(1) if match else None)


SIZE = 300_000
ADVERSARIAL = {
    "reminder openers": "<system-reminder>x" * (SIZE // 18),
    "ide openers": "<ide_opened_file>x" * (SIZE // 18),
    "ide names": "".join(f"<ide_{chr(97 + i % 26)}{'_' * (i % 9)}>" for i in range(SIZE // 12)),
    "cwd openers": "<environment_context>" + "<cwd>x" * (SIZE // 6),
    "begin-patch lines": "*** Begin Patch\n*** Add File: a\n+x\n" * (SIZE // 34),
    "escaped quotes": '"' + '\\"*** Begin Patch' * (SIZE // 17),
    "unclosed literals": '"*** Begin Patch\\n' * (SIZE // 17),
}


@pytest.mark.parametrize("payload", sorted(ADVERSARIAL))
def test_cleaners_finish_on_adversarial_payloads(payload: str) -> None:
    text = ADVERSARIAL[payload]
    assert strip_system_reminders(text) is not None
    assert claude._strip_ide(text) is not None
    codex_records._tag_content(text, "cwd")
    patches = apply_patch.find_patches(text)
    codex_records._code_mode("tools.apply_patch(" + text[:SIZE] + ")")
    if payload == "begin-patch lines":
        # every envelope is parsed once: one patch per Begin line, each with its own file
        assert len(patches) == SIZE // 34
        assert all(p.paths_written() == ["a"] for p in patches)


def test_a_begin_line_inside_an_unterminated_patch_starts_a_new_envelope() -> None:
    text = "*** Begin Patch\n*** Add File: a.py\n+x\n"
    text += "*** Begin Patch\n*** Add File: b.py\n+y\n*** End Patch\n"
    assert [p.paths_written() for p in apply_patch.find_patches(text)] == [["a.py"], ["b.py"]]


def test_quoted_patches_are_still_found_in_code_mode_cells() -> None:
    cell = (
        'const r = await tools.apply_patch({"input":"*** Begin Patch\\n*** Update File: src/app.ts'
        '\\n@@\\n-a\\n+b\\n*** End Patch\\n"}); text(r)'
    )
    assert apply_patch.paths_written_in(cell) == ["src/app.ts"]
