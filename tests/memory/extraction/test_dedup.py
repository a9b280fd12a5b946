"""recall-rrf@1: fusion order, tie-breaks, self-exclusion, digests."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_staging import OWNER, World, draft

from teamlore.core.analyzer import ANALYZER_VERSION
from teamlore.memory.extraction import dedup
from teamlore.memory.extraction.drafts import reanalyze_candidates
from teamlore.memory.store.state_db import open_state_db


@pytest.fixture()
def world(home: Path) -> World:
    return World(open_state_db(home))


def recall(world: World, *drafts: dedup.DraftQuery, k: int = 5) -> dedup.RecallResult:
    return dedup.recall_rrf(
        world.conn,
        repository_key=OWNER.repository_key,
        worktree_key=OWNER.worktree_key,
        drafts=list(drafts),
        k=k,
    )


def q(ref: str, text: str) -> dedup.DraftQuery:
    return dedup.DraftQuery(ref, ref, text)


def test_equal_ranks_interleave_sides_with_the_source_kind_tie_break(world: World) -> None:
    text = "vacuum the state database weekly"
    world.approve("entry-a", text)
    world.approve("entry-b", text + " " + text)  # same terms, lower bm25 rank on its side
    task_id, ev = world.task("pool")
    world.stage(task_id, [draft(text, [ev[0]])])
    result = recall(world, q("probe", text))
    ordered = [(h.source_kind, h.id) for h in result.recall_sets[0].ordered]
    # rank 1 of both lists first (approved < candidate), then rank 2 of the approved list
    assert ordered[1] == ("candidate", f"{task_id}-c1")
    assert ordered[0][0] == "approved" and ordered[2][0] == "approved"


def test_a_draft_never_recalls_itself_but_sees_the_other_drafts(world: World) -> None:
    task_id, ev = world.task("self")
    staged = world.stage(
        task_id,
        [draft("pin the node version in ci", [ev[0]]), draft("pin node version for ci", [ev[1]])],
    )
    sets = staged["adjudicationTask"]["recallSets"]
    assert [h["id"] for h in sets[0]["ordered"]] == [f"{task_id}-c2"]
    assert [h["id"] for h in sets[1]["ordered"]] == [f"{task_id}-c1"]


def test_top_k_and_the_pool_is_the_sorted_union(world: World) -> None:
    for i in range(8):
        world.approve(f"entry-{i}", f"retry the flaky upload step {'again ' * i}")
    result = recall(world, q("d1", "retry the flaky upload"), q("d2", "flaky upload step"))
    assert all(len(s.ordered) == 5 for s in result.recall_sets)
    keys = [(p.source_kind, p.id) for p in result.pool]
    assert keys == sorted(keys)
    assert set(keys) == {(h.source_kind, h.id) for s in result.recall_sets for h in s.ordered}


def test_digests_are_stable_and_see_revision_changes(world: World) -> None:
    world.approve("entry-x", "rebase before merging long branches")
    first = recall(world, q("d", "rebase long branches"))
    assert recall(world, q("d", "rebase long branches")) == first
    world.conn.execute("UPDATE approved_entries SET revision = revision + 1")
    changed = recall(world, q("d", "rebase long branches"))
    assert changed.recall_query_digest == first.recall_query_digest
    assert changed.result_set_digest != first.result_set_digest


def test_queries_without_terms_recall_nothing(world: World) -> None:
    world.approve("entry-y", "anything")
    assert recall(world, q("d", "!!! ???")).recall_sets[0].ordered == ()


def test_other_owners_and_deprecated_entries_are_not_recalled(world: World) -> None:
    world.approve("entry-z", "squash fixup commits before review")
    world.conn.execute("UPDATE approved_entries SET status = 'deprecated'")
    assert recall(world, q("d", "squash fixup commits")).recall_sets[0].ordered == ()
    other = dedup.recall_rrf(
        world.conn,
        repository_key="f" * 64,
        worktree_key=OWNER.worktree_key,
        drafts=[q("d", "squash fixup commits")],
    )
    assert other.recall_sets[0].ordered == ()


def test_candidates_analyzed_by_an_older_analyzer_are_re_analyzed(world: World) -> None:
    # dedup recall tokenizes drafts with the current analyzer; candidate documents written by an
    # older one (here: no stemming) would never meet them until re-analyzed
    task_id, ev = world.task("old")
    world.stage(task_id, [draft("the exports failed on retries", [ev[0]])])
    candidate = f"{task_id}-c1"
    conn = world.conn
    conn.execute(
        "UPDATE candidate_fts SET searchable_text = 'the exports failed on retries' WHERE rowid = "
        "(SELECT rowid FROM candidates WHERE candidate_id = ?)",
        (candidate,),
    )
    conn.execute("UPDATE candidate_projection SET analyzer_version = 'teamlore-analyzer@1'")
    generation = conn.execute("SELECT generation FROM candidate_projection").fetchone()[0]
    probe = q("probe", "export failing retry")
    assert recall(world, probe).recall_sets[0].ordered == ()  # old tokens: no match

    assert reanalyze_candidates(conn, OWNER) == 1
    row = conn.execute("SELECT generation, analyzer_version FROM candidate_projection").fetchone()
    assert tuple(row) == (generation + 1, ANALYZER_VERSION)
    assert [h.id for h in recall(world, probe).recall_sets[0].ordered] == [candidate]
    assert reanalyze_candidates(conn, OWNER) == 0  # current: nothing to do
    assert conn.execute("SELECT generation FROM candidate_projection").fetchone()[0] == row[0]
