"""Secrets masked out of a task before it leaves for a model (docs/runner.md "What is sent").

Recall already masks the transcript it builds (memory/extraction/recall.py `path_cleaner`: the
agent-native path and the batch runner get the same text). What a runner sends goes through
`masked_task` as well, so that no byte of a plan holds a secret the lint would block — a draft
an agent staged with a token in it reaches an adjudication's task, for one. Ids, digests and
bindings hold no secret shape and come through unchanged, so an answer still cites the task's
evidence and echoes its binding.
"""

from __future__ import annotations

from pathlib import Path
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


def masked_by_recall(
    index_conn: Any, identity: Any, task: dict[str, Any], session_key: str, home: Path | None
) -> int:
    """How many secrets recall masked in the transcript of the extraction `task` (of the session
    `session_key`): its turns cleaned again as recall cleans them (`path_cleaner`), counting the
    secrets each text held. What the transcript itself held in the masked form (a person pasting
    earlier `memory lint` output, `…[40 chars]`) is no secret masked."""
    from teamlore.core.secrets import masked_text, sanitize_text
    from teamlore.core.secrets.mask import masks_in
    from teamlore.memory.extraction.recall import chunk_input
    from teamlore.memory.extraction.selection import load_turns
    from teamlore.repo.worktrees import worktree_roots

    turns = task["chunk"]["turnRange"]
    wanted = set(task["binding"]["turnRevisions"])
    indexes = list(range(int(turns["start"]), int(turns["end"]) + 1))
    hits = 0
    roots = worktree_roots(identity.worktree_root, home)

    def clean(text: str) -> str:
        nonlocal hits
        masked = masked_text(text)
        hits += masks_in(masked) - masks_in(text)
        return sanitize_text(masked, worktree_root=roots)

    for turn in load_turns(index_conn, identity, session_key, indexes):
        if turn.revision in wanted:
            chunk_input(turn, clean)
    return min(hits, masks_in(task["chunk"]["transcript"]))  # a cut payload may drop some
