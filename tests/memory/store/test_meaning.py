"""Memory search's meaning ranking (docs/hybrid-search.md, "The meaning ranking"): each model's
and each field's similarities standardized and summed, a model's vote only for the documents it
reads, a document ranked when a model that reads it finds it near enough."""

from __future__ import annotations

import shutil
import sqlite3
from array import array
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from support import shared_fixtures
from teamlore.memory.store.meaning import _best_reached, meaning_ranking, model_cosines, rank_rows
from teamlore.memory.store.projection import sync_approved_projection
from teamlore.memory.store.search import search_memory
from teamlore.memory.store.state_db import open_state_db
from teamlore.memory.store.vectors import (
    PACKS,
    ApprovedVectors,
    _from_rows,
    load_approved,
    sync_approved_vectors,
    to_blobs,
)
from teamlore.models.embeddings import normalize_rows
from teamlore.models.vector_math import Int8Rows, QueryRows, standardized

IDS = list(range(1, 7))


def cosines(values: object) -> array[float]:
    return array("d", np.asarray(values, dtype=np.float64).tolist())


def nobody_blind(ids: list[int]) -> list[set[int]]:
    return [set(), set()]


def ranked_ids(fields: list[list[np.ndarray]], **options: object) -> list[int]:
    kwargs: dict[str, object] = {"limit": 10, "min_similarity": -1.0, "unread": nobody_blind}
    kwargs.update(options)
    as_cosines = [[cosines(cos) for cos in field] for field in fields]
    return [doc for doc, _ in meaning_ranking(IDS, as_cosines, **kwargs)]  # type: ignore[arg-type]


def test_a_models_voice_does_not_depend_on_the_scale_of_its_cosines() -> None:
    # the two models' cosines spread differently from query to query: a mean of raw cosines
    # let whichever spread wider decide
    rng = np.random.default_rng(7)
    narrow = (0.6 + 0.02 * rng.standard_normal(len(IDS))).astype(np.float32)
    wide = (0.2 * rng.standard_normal(len(IDS))).astype(np.float32)
    ranking = ranked_ids([[narrow, wide]])
    assert ranking == ranked_ids([[narrow * 10 - 3, wide]])
    assert ranking == ranked_ids([[narrow, wide * 0.1 + 0.5]])
    raw = [IDS[i] for i in np.argsort(-(narrow + wide), kind="stable")]
    assert ranking != raw  # with these cosines the raw mean is the wide model's own order


def test_every_model_and_field_counts_the_same() -> None:
    first = np.array([0.9, 0.1, 0.1, 0.1, 0.1, 0.1], dtype=np.float32)
    second = np.array([0.1, 0.9, 0.1, 0.1, 0.1, 0.1], dtype=np.float32)
    flat = np.full(len(IDS), 0.5, dtype=np.float32)  # a model that tells nothing apart: no vote
    scores = dict(
        meaning_ranking(
            IDS,
            [[cosines(first), cosines(flat)], [cosines(second), cosines(flat)]],
            limit=10,
            min_similarity=-1.0,
            unread=nobody_blind,
        )
    )
    assert scores[1] == pytest.approx(scores[2]) and scores[1] > scores[3]
    assert list(standardized(cosines(flat))) == [0.0] * len(IDS)


def test_a_model_gives_no_vote_to_a_document_it_cannot_read() -> None:
    # document 1 is Chinese: the English-only model's cosine of it is noise and happens to be
    # its best; that vote is taken back (z = 0, the average), the other model's stays
    reads_all = np.array([0.50, 0.55, 0.20, 0.10, 0.15, 0.05], dtype=np.float32)
    english_only = np.array([0.95, 0.60, 0.40, 0.30, 0.35, 0.20], dtype=np.float32)
    assert ranked_ids([[reads_all, english_only]])[0] == 1
    ranking = meaning_ranking(
        IDS,
        [[cosines(reads_all), cosines(english_only)]],
        limit=10,
        min_similarity=-1.0,
        unread=lambda ids: [set(), {1}],
    )
    assert [doc for doc, _ in ranking][:2] == [2, 1]
    assert dict(ranking)[1] == pytest.approx(standardized(cosines(reads_all))[0])


def test_a_document_is_ranked_when_a_model_that_reads_it_finds_it_near() -> None:
    reads_all = np.array([0.30, 0.05, 0.05, 0.02, 0.01, 0.00], dtype=np.float32)
    english_only = np.array([0.02, 0.40, 0.05, 0.90, 0.01, 0.00], dtype=np.float32)
    ranking = ranked_ids(
        [[reads_all, english_only]], min_similarity=0.1, unread=lambda ids: [set(), {4}]
    )
    # 1 is near to the first model, 2 to the second; 4 only to the model that cannot read it,
    # so it is not ranked; the rest are near to neither
    assert sorted(ranking) == [1, 2]


def reference_ranking(
    ids: list[int], fields: list[list[list[float]]], limit: int, floor: float, blind: list[set[int]]
) -> list[int]:
    """The meaning ranking written plainly, document by document, as its docstring says."""
    flat = [cos for field in fields for cos in field]

    def z(values: list[float]) -> list[float]:
        mean = sum(values) / len(values)
        spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
        return [(v - mean) / spread if spread > 0 else 0.0 for v in values]

    votes = [z(cos) for cos in flat]
    score = [sum(vote[i] for vote in votes) for i in range(len(ids))]
    members = [i for i in range(len(ids)) if max(cos[i] for cos in flat) >= floor]
    members = sorted(members, key=lambda i: (-score[i], ids[i]))[: 2 * limit]
    chosen = []
    for i in members:
        voices = [v for v in range(len(flat)) if ids[i] not in blind[v % len(blind)]]
        if voices and max(flat[v][i] for v in voices) >= floor:
            chosen.append((-sum(votes[v][i] for v in voices), ids[i]))
    return [doc for _, doc in sorted(chosen)[:limit]]


@pytest.mark.parametrize("seed", range(6))
def test_the_ranking_is_the_plain_reading_of_its_rule(seed: int) -> None:
    rng = np.random.default_rng(seed)
    count, limit = 400, 10
    ids = sorted(rng.choice(10_000, size=count, replace=False).tolist())
    # 40 cosine profiles shared by 400 documents: scores tie, and the cut falls inside a tie;
    # the second model cannot read half the documents, so the candidates' depth matters
    profiles = rng.uniform(-0.2, 0.6, (40, 4))
    rows = profiles[rng.integers(0, 40, count)]
    fields = [
        [rows[:, 0].tolist(), rows[:, 1].tolist()],
        [rows[:, 2].tolist(), rows[:, 3].tolist()],
    ]
    blind = [set(), set(rng.choice(ids, size=count // 2, replace=False).tolist())]
    got = meaning_ranking(
        ids,
        [[cosines(cos) for cos in field] for field in fields],
        limit=limit,
        min_similarity=0.25,
        unread=lambda docs: blind,
    )
    assert [doc for doc, _ in got] == reference_ranking(ids, fields, limit, 0.25, blind)


def test_each_models_cosine_is_read_from_the_paired_row() -> None:
    rng = np.random.default_rng(3)
    first, second = (
        normalize_rows(rng.standard_normal((5, 12))),
        normalize_rows(rng.standard_normal((5, 4))),
    )
    rows = Int8Rows.from_blobs(to_blobs(normalize_rows(np.hstack([first, second]))))
    query_first, query_second = first[0], second[1]
    got = model_cosines(rows, QueryRows.of([query_first.tolist(), query_second.tolist()], 16))
    assert np.allclose(got[0], first @ query_first, atol=0.02)
    assert np.allclose(got[1], second @ query_second, atol=0.02)


# -- memory's paired model over the real reference tree ---------------------------------------

REPO, WORKTREE = "a1" * 12, "b2" * 12
TWO_STAGES = "threadshare-team-memory-extraction-uses-a-two-stage-pipeline"
INGESTION = "insights-engine-ingestion-session-facts-session-facts-sqlite"


@pytest.fixture(scope="module")
def reference(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[sqlite3.Connection, object]]:
    multilingual = pytest.importorskip("teamlore.models.multilingual")
    from teamlore.models.embeddings import bundled_embedder

    use = multilingual.multilingual_embedder()
    if use is None:
        pytest.skip("the multilingual model's package is not installed")
    embedder = multilingual.PairedEmbedder(use, bundled_embedder())
    tmp = tmp_path_factory.mktemp("reference")
    shutil.copytree(shared_fixtures("threadshare-memory"), tmp / "worktree/.threadshare/memory")
    conn = open_state_db(tmp / "home")
    sync_approved_projection(
        conn, repository_key=REPO, worktree_key=WORKTREE, worktree_root=tmp / "worktree"
    )
    sync_approved_vectors(conn, repository_key=REPO, worktree_key=WORKTREE, embedder=embedder)
    yield conn, embedder
    conn.close()


def paired_search(reference: tuple[sqlite3.Connection, object], query: str) -> list[str]:
    conn, embedder = reference
    found = search_memory(
        conn,
        repository_key=REPO,
        worktree_key=WORKTREE,
        query=query,
        embedder=embedder,  # type: ignore[arg-type]
    )
    return [hit.id for hit in found.results]


def test_a_chinese_question_finds_the_english_entry_that_answers_it(
    reference: tuple[sqlite3.Connection, object],
) -> None:
    # "which stage makes the dedup decision?": the multilingual model places the English entry
    # near (cosine > 0.1) while the static model, reading the query's glosses, does not; their
    # mean was under the floor in both fields, so the entry was not ranked at all
    assert paired_search(reference, "去重判断是由哪个阶段完成的？")[0] == TWO_STAGES


def test_a_chinese_questions_literal_match_stays_in_the_top_five(
    reference: tuple[sqlite3.Connection, object],
) -> None:
    # "how should a root-cause fix be done": one Chinese entry holds 根因修复; the static
    # model gives no Chinese entry a vote, so English entries came first by meaning and the
    # entry fell to rank 7 before a Chinese query let its words decide
    assert INGESTION in paired_search(reference, "根因修复应该怎么做")[:5]


def test_the_paired_pack_keeps_each_models_columns_together_and_ranks_as_the_rows_do(
    reference: tuple[sqlite3.Connection, object],
) -> None:
    # the pack's matrices in one block per model (Int8Rows.blocked): the same ranking, to the
    # last bit of every score, as the documents' rows read one after the other
    from teamlore.models.embeddings import query_row
    from teamlore.models.multilingual import model_parts

    conn, embedder = reference
    (blocks,) = conn.execute("SELECT blocks FROM approved_vector_packs").fetchone()
    assert blocks == "512,256"
    owner, space = (REPO, WORKTREE), embedder.space.key  # type: ignore[attr-defined]
    PACKS.clear()
    packed, rows = load_approved(conn, owner, space), _from_rows(conn, owner, space)
    assert packed.whole.blocks == (512, 256) and rows.whole.blocks == ()
    for query in ("去重判断是由哪个阶段完成的？", "how do we roll back a failed release", "SQLite"):
        queries = [query_row(model, query) for model in model_parts(embedder)]  # type: ignore[arg-type]
        assert ranked(packed, queries) and ranked(packed, queries) == ranked(rows, queries)


def ranked(stored: ApprovedVectors, queries: list[Sequence[float]]) -> list[tuple[int, float]]:
    """The meaning ranking of every stored document (both models read them all)."""
    return rank_rows(
        stored.ids,
        stored.whole,
        stored.headline,
        queries,
        None,
        limit=10,
        min_similarity=0.1,
        unread=lambda ids: [set(), set()],
    )


def test_a_pack_whose_blocks_do_not_fit_its_rows_is_not_read(
    reference: tuple[sqlite3.Connection, object],
) -> None:
    conn, embedder = reference
    owner, space = (REPO, WORKTREE), embedder.space.key  # type: ignore[attr-defined]
    before = paired_search(reference, "how do we roll back a failed release")
    PACKS.clear()
    conn.execute("UPDATE approved_vector_packs SET blocks = '512,200'")
    try:
        assert load_approved(conn, owner, space).whole.blocks == ()  # the rows instead
        assert paired_search(reference, "how do we roll back a failed release") == before
    finally:
        conn.execute("UPDATE approved_vector_packs SET blocks = '512,256'")
        PACKS.clear()


def test_a_negative_zero_at_the_cut_is_still_a_candidate() -> None:
    # the cut is read from the sign of score - cut, and -0.0 - 0.0 is -0.0: the candidates are
    # then taken by comparing every member's score (equal scores: the earlier position first)
    reached_by_all = [array("d", [1.0, 1.0, 1.0])]
    assert _best_reached(array("d", [-0.0, 0.0, 1.0]), reached_by_all, 0.5, 3) == [2, 0, 1]
    assert _best_reached(array("d", [0.0, -0.0, 1.0]), reached_by_all, 0.5, 2) == [2, 0]
