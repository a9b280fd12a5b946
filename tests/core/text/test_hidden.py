"""What the text view escapes and `memory lint` refuses: characters a reader does not see as
they are (docs/cli-output.md, "Text output never lies")."""

from __future__ import annotations

import pytest

from teamlore.core.text.hidden import shown


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("deploy.sh\u200b", "deploy.sh\\u200b"),  # zero-width space
        ("DEPLOY_ENV\U000e0069\U000e0067", "DEPLOY_ENV\\U000e0069\\U000e0067"),  # tags: "ig"
        ("a\u061cb", "a\\u061cb"),  # the Arabic letter mark reorders like the other bidi marks
        ("one\u2028two", "one\\u2028two"),  # a line separator that is no newline
        ("word\u2060joiner", "word\\u2060joiner"),
        ("soft\u00adhyphen", "soft\\xadhyphen"),
        ("\ufeffbom", "\\ufeffbom"),
        ("a\u200db", "a\\u200db"),  # a joiner between letters joins nothing visible
        ("ok\ufe0f", "ok\\ufe0f"),  # a selector after ASCII selects nothing
        ("NUL\x00 ESC\x1b[8m", "NUL\\x00 ESC\\x1b[8m"),
    ],
)
def test_a_character_that_hides_or_restyles_text_is_shown_as_an_escape(
    text: str, expected: str
) -> None:
    assert shown(text) == expected


def test_a_run_of_variation_selectors_after_an_emoji_is_shown_past_the_first() -> None:
    """One selector picks an emoji's presentation; a run of them can carry hidden bytes."""
    assert shown("😀\ufe00\ufe01\ufe02") == "😀\ufe00\\ufe01\\ufe02"


@pytest.mark.parametrize(
    "text",
    ["⚠️ careful", "👩‍💻 at work", "🏳️‍🌈", "tab\tand\nnewline", "数据库 café", "[id] `x`"],
)
def test_emoji_sequences_tabs_newlines_and_other_scripts_are_left_as_they_are(
    text: str,
) -> None:
    assert shown(text) == text
