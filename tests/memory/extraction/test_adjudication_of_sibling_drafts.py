"""Two drafts of one batch that say the same thing: each one's recall set offers the other (a
draft's recall leaves out only itself, docs/extraction.md, so duplicates across the chunks of
one batch are not missed), and what the set offers is a skip target, never an update or merge
target (a draft of this batch is not memory yet). The task, the refusal and its `next` say so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_adjudication import decide, result, status_of, submit
from test_staging import World, changed_tables, draft, dump, refused

from teamlore.memory.store.state_db import open_state_db


@pytest.fixture()
def world(home: Path) -> World:
    return World(open_state_db(home))


def recall_set(staged: dict[str, Any], ref: str) -> list[tuple[str, str]]:
    sets = {s["draftRef"]: s["ordered"] for s in staged["adjudicationTask"]["recallSets"]}
    return [(hit["sourceKind"], hit["id"]) for hit in sets[ref]]


def test_a_sibling_a_recall_set_offers_is_skipped_to_not_merged_into(world: World) -> None:
    task_id, ev = world.task("siblings")
    staged = world.stage(
        task_id,
        [
            draft("Run the database migrations before starting the API server.", [ev[0]]),
            draft("Start the API server only after the database migrations ran.", [ev[1]]),
        ],
    )
    c1, c2 = f"{task_id}-c1", f"{task_id}-c2"
    assert recall_set(staged, c1)[0] == ("candidate", c2)
    assert recall_set(staged, c2)[0] == ("candidate", c1)
    assert "skip" in staged["next"] and "draft of this batch" in staged["next"]

    before = dump(world.conn)
    merge = result(staged, [decide(c1, "merge", [c2], content="both"), decide(c2, "store")])
    error = refused(submit, world, merge)
    assert error.code == "ADJUDICATION_INVALID"
    assert error.details["reason"] == "mutation-targets-draft"
    assert changed_tables(before, dump(world.conn)) == {"submission_conflicts"}
    # what to do instead names the decision that is allowed, not "targets from its recall set"
    step = error.to_json()["next"]
    assert f"skip {c1} to {c2}" in step and "recall" not in step, step

    accepted = submit(world, result(staged, [decide(c1, "skip", [c2]), decide(c2, "store")]))
    assert [c["candidateStatus"] for c in accepted["candidates"]] == ["discarded", "quarantined"]
    assert status_of(world, c2)[0] == "quarantined"
