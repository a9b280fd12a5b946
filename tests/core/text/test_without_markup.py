"""`without_markup`: a memory text as words for a one-line summary or snippet (the Memory list,
memory search): headings end in a colon, list marks go, a fenced block's lines stay as written
(a diff's `-`/`+`, a script's `# comment`), and a `>` or a `#hashtag` is a word."""

from __future__ import annotations

import pytest

from teamlore.core.text.excerpts import without_markup


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "### Core principles\n- Make release inputs deterministic.\n\n### Rules\n- Check.",
            "Core principles: Make release inputs deterministic. Rules: Check.",
        ),
        ("## 发布流程\n1. 先跑测试", "发布流程: 先跑测试"),
        (
            "### Deploy\n```sh\n# build first\nmake build\n```\n```diff\n- old = 1\n+ new = 2\n```",
            "Deploy: # build first make build - old = 1 + new = 2",
        ),
        ("#hashtag line", "#hashtag line"),
        ("> 5 ms regression after the upgrade", "> 5 ms regression after the upgrade"),
        ("Release tags need a v prefix.", "Release tags need a v prefix."),
    ],
)
def test_a_memory_text_as_words(text: str, words: str) -> None:
    assert without_markup(text) == words
