"""Secrets masked out of a task before it leaves for a model (docs/runner.md "What is sent").

Recall already masks the transcript it builds (memory/extraction/recall.py `path_cleaner`: the
agent-native path and the batch runner get the same text). What a runner sends goes through
`masked_task` as well, so that no byte of a plan holds a secret the lint would block — a draft
an agent staged with a token in it reaches an adjudication's task, for one. Ids, digests and
bindings hold no secret shape and come through unchanged, so an answer still cites the task's
evidence and echoes its binding.
"""

from __future__ import annotations

from typing import Any


def masked_task(task: dict[str, Any]) -> dict[str, Any]:
    """`task` with the secrets of every string masked (core/secrets/mask.py); `task` itself is
    left as it is."""
    from teamlore.core.secrets.mask import masked_text

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return masked_text(value)
        if isinstance(value, dict):
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    masked: dict[str, Any] = walk(task)
    return masked
