"""ADJUDICATION_STALE's `reason` says what changed under the task: a rerun of the recall that
gives the same result set ranked by another algorithm than the task's (a hybrid task rerun by
words alone when an approved entry has no vector yet, dedup.py) is not a result-set digest
mismatch, whose two digests in `details` would then be equal. Real state DB; the task is made
hybrid by its stored binding (the rerun, without vectors, is lexical)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from test_adjudication import decide, result, submit, two_drafts
from test_staging import World, refused

from teamlore.memory.extraction.dedup import RECALL_HYBRID_VERSION
from teamlore.memory.store.state_db import open_state_db


@pytest.fixture()
def world(home: Path) -> World:
    return World(open_state_db(home))


def test_the_same_set_ranked_by_another_algorithm_is_named_as_such(world: World) -> None:
    staged, a, b = two_drafts(world)
    task: dict[str, Any] = staged["adjudicationTask"]
    assert task["binding"]["recallAlgorithmVersion"] != RECALL_HYBRID_VERSION
    task["binding"]["recallAlgorithmVersion"] = RECALL_HYBRID_VERSION  # issued hybrid
    world.conn.execute(
        "UPDATE tasks SET binding_json = ? WHERE task_id = ?",
        (orjson.dumps(task["binding"], option=orjson.OPT_SORT_KEYS).decode(), task["taskId"]),
    )

    error = refused(submit, world, result(staged, [decide(a, "store"), decide(b, "store")]))

    assert error.code == "ADJUDICATION_STALE"
    details = error.details
    assert details["expectedResultSetDigest"] == details["actualResultSetDigest"]
    assert details["reason"] == "recall-algorithm-changed", details
    assert "recall-algorithm-changed" in error.message
