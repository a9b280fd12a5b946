"""recall-hybrid-rrf@2: dedup recall that also ranks by embedding (docs/hybrid-search.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_adjudication import decide, result, submit
from test_staging import OWNER, World, draft

from teamlore.core.analyzer import analyze, parse_query
from teamlore.memory.extraction import dedup
from teamlore.memory.extraction.adjudication_tasks import run_recall
from teamlore.memory.extraction.drafts import load_drafts
from teamlore.memory.store.state_db import open_state_db
from teamlore.memory.store.vectors import sync_approved_vectors
from teamlore.models.embeddings import bundled_embedder

KNOWN = "Run the database migrations before deploying a release to production."
PARAPHRASE = "Apply schema changes prior to shipping."  # no word in common with KNOWN


def world_with_known_entry(home: Path, *, embed: bool) -> World:
    world = World(open_state_db(home))
    world.approve("deploy-migrations", KNOWN, title="migrations before deploy")
    for filler in ("office coffee machine needs descaling", "button styles come from the kit"):
        world.approve(filler.split()[0] + "-note", filler.capitalize() + ".")
    if embed:
        sync_approved_vectors(
            world.conn,
            repository_key=OWNER.repository_key,
            worktree_key=OWNER.worktree_key,
            embedder=bundled_embedder(),
        )
    return world


def recalled(staged: dict[str, Any], draft_number: int = 0) -> list[str]:
    return [h["id"] for h in staged["adjudicationTask"]["recallSets"][draft_number]["ordered"]]


def test_the_paraphrase_shares_no_term_with_the_known_entry() -> None:
    indexed = f" {analyze('deploy migrations migrations before deploy ' + KNOWN)} "
    assert not [t for t in parse_query(PARAPHRASE).terms if t.found_in(indexed)]


def test_hybrid_recall_catches_a_paraphrased_duplicate_that_lexical_recall_misses(
    tmp_path: Path,
) -> None:
    lexical = world_with_known_entry(tmp_path / "lexical", embed=False)
    task_id, ev = lexical.task("paraphrase")
    staged = lexical.stage(task_id, [draft(PARAPHRASE, [ev[0]])])
    assert "deploy-migrations" not in recalled(staged)
    assert staged["adjudicationTask"]["binding"]["recallAlgorithmVersion"] == "recall-rrf@1"

    hybrid = world_with_known_entry(tmp_path / "hybrid", embed=True)
    task_id, ev = hybrid.task("paraphrase")
    staged = hybrid.stage(task_id, [draft(PARAPHRASE, [ev[0]])], embedder=bundled_embedder())
    assert recalled(staged)[0] == "deploy-migrations"
    binding = staged["adjudicationTask"]["binding"]
    assert binding["recallAlgorithmVersion"] == "recall-hybrid-rrf@2"
    pool = {p["id"]: p for p in staged["adjudicationTask"]["pool"]}
    assert pool["deploy-migrations"]["sourceKind"] == "approved"


def test_drafts_of_one_batch_recall_each_others_paraphrase(home: Path) -> None:
    world = World(open_state_db(home))
    task_id, ev = world.task("pair")
    staged = world.stage(
        task_id,
        [draft(KNOWN, [ev[0]]), draft(PARAPHRASE, [ev[1]])],
        embedder=bundled_embedder(),
    )
    assert recalled(staged, 0) == [f"{task_id}-c2"]
    assert recalled(staged, 1) == [f"{task_id}-c1"]


def test_the_submit_reruns_the_same_hybrid_recall_and_applies_the_decision(home: Path) -> None:
    world = world_with_known_entry(home, embed=True)
    task_id, ev = world.task("submit")
    staged = world.stage(task_id, [draft(PARAPHRASE, [ev[0]])], embedder=bundled_embedder())
    drafts = load_drafts(world.conn, task_id)
    rerun = run_recall(world.conn, OWNER, drafts)
    assert rerun.algorithm == "recall-hybrid-rrf@2"
    assert rerun.result_set_digest == staged["adjudicationTask"]["binding"]["resultSetDigest"]

    decision = decide(f"{task_id}-c1", "skip", ["deploy-migrations"])
    outcome = submit(world, result(staged, [decision]))
    assert outcome["status"] == "staged"
    assert outcome["candidates"][0]["candidateStatus"] == "discarded"
    assert outcome["recallComparison"]["recallAlgorithmVersion"] == "recall-hybrid-rrf@2"


def test_a_draft_without_a_vector_makes_the_recall_lexical(home: Path) -> None:
    world = world_with_known_entry(home, embed=True)
    task_id, ev = world.task("partial")
    world.stage(task_id, [draft(PARAPHRASE, [ev[0]])], embedder=bundled_embedder())
    world.conn.execute("DELETE FROM candidate_vectors")
    drafts = load_drafts(world.conn, task_id)
    assert run_recall(world.conn, OWNER, drafts).algorithm == "recall-rrf@1"
    embedded = dedup.sync_candidate_vectors(
        world.conn,
        repository_key=OWNER.repository_key,
        worktree_key=OWNER.worktree_key,
        embedder=bundled_embedder(),
    )
    assert embedded == 1
    assert run_recall(world.conn, OWNER, drafts).algorithm == "recall-hybrid-rrf@2"


@pytest.mark.parametrize("space", ["bundled:other-model", None])
def test_vectors_of_another_space_are_never_compared(home: Path, space: str | None) -> None:
    world = world_with_known_entry(home, embed=True)
    task_id, ev = world.task("space")
    world.stage(task_id, [draft(PARAPHRASE, [ev[0]])], embedder=bundled_embedder())
    if space is not None:  # the approved side was re-embedded by another model
        world.conn.execute("UPDATE approved_vectors SET space = ?", (space,))
        world.conn.execute("UPDATE approved_vector_packs SET space = ?", (space,))
    drafts = load_drafts(world.conn, task_id)
    recall = run_recall(world.conn, OWNER, drafts)
    ids = [h.id for h in recall.recall_sets[0].ordered]
    assert ("deploy-migrations" in ids) == (space is None)
