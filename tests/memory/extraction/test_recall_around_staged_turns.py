"""recall after some of a session's chunks were staged and others were not (a runner plan that
failed, or was interrupted, while the plans after it ran): the turns left are chunked on each
side of the staged ones, so every task recall issues can still be staged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recall_world import WINDOW, CodexSession, make_repo, sync

import teamlore.ops.memory.recall  # noqa: F401  (registers memory.recall)
from support import memory_init
from teamlore.memory.extraction.recall import load_task_source
from teamlore.memory.store.state_db import open_state_db
from teamlore.ops.registry import REGISTRY, OpContext
from teamlore.repo.binding import resolve_repository
from teamlore.sessions.index_db import open_index


def recall(repo: Path, home: Path) -> dict[str, Any]:
    memory_init(repo, home)  # recall refuses a worktree without a team memory tree
    return REGISTRY.get("memory.recall").run(OpContext(cwd=repo, home=home), WINDOW)


def test_turns_left_on_both_sides_of_a_staged_chunk_are_never_chunked_across_it(
    tmp_path: Path, home: Path
) -> None:
    repo = make_repo(tmp_path / "shop")
    session = CodexSession("s1", repo)
    session.turn("why does the release fail", "The tag check is wrong.")
    session.turn("the whole build log: " + "y" * 40_870, "Read it.")  # a chunk of its own
    session.turn("fix the tag check", "Fixed it.")
    session.turn("run the release tests", "They pass.")
    session.write(tmp_path / "codex")
    sync(home, tmp_path / "codex", repo)
    first = recall(repo, home)
    ranges = [t["chunk"]["turnRange"] for t in first["sources"]]
    assert len(ranges) == 3, ranges  # [first turn], [the log], [the last two]
    staged = first["sources"][1]
    state = open_state_db(home)
    try:  # what stage does to a chunk once its drafts are in; the other two failed to run
        state.execute(
            "UPDATE chunks SET status = 'drafted' WHERE chunk_ref ="
            " (SELECT chunk_ref FROM tasks WHERE task_id = ?)",
            (staged["taskId"],),
        )
    finally:
        state.close()

    again = recall(repo, home)

    assert [t["taskId"] for t in again["sources"]] == [
        first["sources"][0]["taskId"],
        first["sources"][2]["taskId"],
    ]
    index, state = open_index(home), open_state_db(home)
    try:
        owner = resolve_repository(repo, home=home)
        for task in again["sources"]:
            source = load_task_source(index, state, owner, task["taskId"], home=home)
            assert not source.stale, (task["chunk"]["turnRange"], source.stale_reasons)
    finally:
        index.close()
        state.close()
