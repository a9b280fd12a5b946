"""`without_code_fence`: the one place a model's fenced JSON answer is unwrapped (the
OpenAI-compatible client, the Writer's decision parser and the batch runner all use it)."""

from __future__ import annotations

import json

import pytest

from teamlore.models.base import without_code_fence

OBJECT = json.dumps({"body": "Use:\n```py\nprint(1)\n```\nand ``` alone", "n": 1})


@pytest.mark.parametrize(
    "answer",
    [
        OBJECT,
        f"```json\n{OBJECT}\n```",
        f"```\n{OBJECT}\n```",
        f"  ```JSON  \n{OBJECT}\n```\n\n",
        f"````json\n{OBJECT}\n````",
        f"```json\n{OBJECT}```",
        f"```{OBJECT}```",
    ],
)
def test_one_fence_around_the_answer_is_unwrapped_whatever_its_strings_hold(answer: str) -> None:
    assert without_code_fence(answer) == OBJECT


@pytest.mark.parametrize(
    "answer",
    [
        f"Here it is:\n```json\n{OBJECT}\n```",
        f"```json\n{OBJECT}\n```\nHope that helps.",
        f"```json\n{OBJECT}",
    ],
)
def test_text_around_a_fence_is_left_for_the_parser_to_refuse(answer: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        json.loads(without_code_fence(answer))


def test_a_fenced_answer_is_unwrapped_once() -> None:
    inner = f"```json\n{OBJECT}\n```"
    assert without_code_fence(f"```md\n{inner}\n```") == inner
