"""Vectors of the approved projection and hybrid (lexical + embedding) memory search."""

from __future__ import annotations

import builtins
import io
import sqlite3
from array import array
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from models.scripted_server import Scripted, ScriptedServer, embeddings_responder
from support import entry_file
from teamlore.core import db, errors
from teamlore.core.analyzer import analyze, parse_query
from teamlore.memory.store import search as search_module
from teamlore.memory.store.layout import init_tree
from teamlore.memory.store.projection import sync_approved_projection
from teamlore.memory.store.projection_rows import headline
from teamlore.memory.store.search import SearchResult, VectorPath, search_memory
from teamlore.memory.store.state_db import MIGRATIONS, open_state_db, state_db_path
from teamlore.memory.store.vectors import (
    PACKS,
    from_blobs,
    load_approved,
    sync_approved_vectors,
    to_blobs,
)
from teamlore.models.embeddings import (
    EndpointEmbedder,
    bundled_embedder,
    normalize_rows,
)
from teamlore.models.openai_compat import OpenAICompatClient

REPO = "a1" * 12
WORKTREE = "b2" * 12


TREE = {
    "deploy-migrations": "Run the database migrations before deploying a release to production.",
    "office-coffee": "The office coffee machine needs descaling every month.",
    "button-styles": "Use the shared button styles from the design system, not inline colors.",
    "nightly-backup": "The nightly backup job copies the uploads bucket to cold storage.",
}
PARAPHRASE = "apply schema changes prior to shipping"  # no word in common with deploy-migrations


class Worktree:
    def __init__(self, root: Path, conn: sqlite3.Connection) -> None:
        self.root, self.conn = root, conn

    def write(self, entry_id: str, body: str) -> None:
        (self.root / f".threadshare/memory/entries/{entry_id}.md").write_text(
            entry_file(entry_id, body)
        )

    def project(self) -> None:
        sync_approved_projection(
            self.conn, repository_key=REPO, worktree_key=WORKTREE, worktree_root=self.root
        )

    def embed(self, embedder: object = None) -> tuple[int, int]:
        done = sync_approved_vectors(
            self.conn,
            repository_key=REPO,
            worktree_key=WORKTREE,
            embedder=embedder or bundled_embedder(),  # type: ignore[arg-type]
        )
        return done.embedded, done.total

    def search(self, query: str, **options: object) -> SearchResult:
        return search_memory(
            self.conn,
            repository_key=REPO,
            worktree_key=WORKTREE,
            query=query,
            **options,  # type: ignore[arg-type]
        )


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[Worktree]:
    root = tmp_path / "worktree"
    root.mkdir()
    init_tree(root)
    conn = open_state_db(tmp_path / "home")
    worktree = Worktree(root, conn)
    for entry_id, body in TREE.items():
        worktree.write(entry_id, body)
    worktree.project()
    yield worktree
    conn.close()


def test_the_paraphrase_shares_no_search_term_with_its_answer() -> None:
    indexed = f" {analyze('deploy migrations ' + TREE['deploy-migrations'])} "
    assert not [t for t in parse_query(PARAPHRASE).terms if t.found_in(indexed)]


def test_every_document_is_embedded_once_and_rebuilds_keep_unchanged_vectors(
    tree: Worktree,
) -> None:
    assert tree.embed() == (4, 4)
    assert tree.embed() == (0, 4)
    tree.write("office-coffee", "The office coffee machine is descaled by facilities now.")
    tree.write("release-notes", "Every release gets a changelog entry.")
    tree.project()  # a rebuild: new row ids for every document
    assert tree.embed() == (2, 5)
    (tree.root / ".threadshare/memory/entries/nightly-backup.md").unlink()
    tree.project()
    assert tree.embed() == (0, 4)
    assert tree.conn.execute("SELECT count(*) FROM approved_vectors").fetchone()[0] == 4


def test_vectors_are_quantized_blobs_tagged_with_their_space(tree: Worktree) -> None:
    tree.embed()
    rows = tree.conn.execute("SELECT space, vector FROM approved_vectors").fetchall()
    assert {row[0] for row in rows} == {bundled_embedder().space.key}
    assert {len(row[1]) for row in rows} == {4 + 256}  # float32 scale + int8 per dimension
    rng = np.random.default_rng(7)
    vectors = normalize_rows(rng.standard_normal((50, 256)))
    restored = from_blobs(to_blobs(vectors))
    assert float(np.abs(restored - vectors).max()) < 0.002
    assert float(np.abs((restored * vectors).sum(axis=1) - 1.0).max()) < 2e-3


def test_a_search_reads_the_pack_or_the_rows_with_the_same_ranking(tree: Worktree) -> None:
    tree.embed()
    query = bundled_embedder().embed([PARAPHRASE])[0]

    def ranking() -> list[tuple[int, float]]:
        stored = load_approved(tree.conn, (REPO, WORKTREE), bundled_embedder().space.key)
        return stored.rank(query, limit=10, min_similarity=-1.0)

    from_pack = ranking()
    packs = tree.conn.execute("SELECT generation, dimensions FROM approved_vector_packs").fetchall()
    assert [tuple(p) for p in packs] == [(1, 256)]
    tree.conn.execute("DELETE FROM approved_vector_packs")
    assert ranking() == from_pack and len(from_pack) == 4


def test_hybrid_search_finds_a_paraphrase_that_lexical_search_misses(tree: Worktree) -> None:
    tree.embed()
    lexical = tree.search(PARAPHRASE)
    assert "deploy-migrations" not in [h.id for h in lexical.results]
    assert lexical.paths == ["lexical"] and not lexical.vector.ran

    hybrid = tree.search(PARAPHRASE, embedder=bundled_embedder())
    assert hybrid.paths == ["lexical", "vector"]
    assert hybrid.vector.ran and hybrid.vector.documents == 4
    assert hybrid.vector.space == bundled_embedder().space.key
    first = hybrid.results[0]
    assert (first.id, first.matched_by) == ("deploy-migrations", ["vector"])
    assert 0 < first.score <= 1


def test_a_document_found_both_ways_outranks_one_found_one_way(tree: Worktree) -> None:
    tree.embed()
    result = tree.search("database migrations for a release", embedder=bundled_embedder())
    assert result.results[0].id == "deploy-migrations"
    assert result.results[0].matched_by == ["lexical", "vector"]
    scores = [h.score for h in result.results]
    assert scores == sorted(scores, reverse=True)


def test_vector_mode_ranks_by_embedding_alone_and_needs_an_embedder(tree: Worktree) -> None:
    tree.embed()
    result = tree.search(PARAPHRASE, embedder=bundled_embedder(), mode="vector")
    assert result.paths == ["vector"] and result.results[0].id == "deploy-migrations"
    assert all(h.matched_by == ["vector"] for h in result.results)
    with pytest.raises(errors.TeamloreError) as info:
        tree.search(PARAPHRASE, mode="vector")
    assert info.value.code == "EMBEDDINGS_UNAVAILABLE"


def test_lexical_mode_and_a_missing_embedder_say_why_the_vector_path_did_not_run(
    tree: Worktree,
) -> None:
    tree.embed()
    asked = VectorPath(ran=False, reason="lexical search only was asked for")
    result = tree.search("coffee", embedder=bundled_embedder(), mode="lexical", skipped=asked)
    assert result.paths == ["lexical"] and result.vector == asked
    assert [h.id for h in result.results] == ["office-coffee"]


def test_no_vectors_yet_means_lexical_alone(tree: Worktree) -> None:
    result = tree.search("coffee", embedder=bundled_embedder())
    assert result.paths == ["lexical"]
    assert result.vector.reason == "no document has a vector yet"


def letters(text: str) -> list[float]:
    lower = text.lower()
    return [float(lower.count(c)) + 0.5 for c in "aeiou"]


def test_a_new_model_replaces_every_vector_and_spaces_never_mix(tree: Worktree) -> None:
    tree.embed()
    with ScriptedServer() as server:
        server.respond_with(embeddings_responder(letters))
        client = OpenAICompatClient(base_url=server.base_url, model="letters", api_key="k")
        endpoint = EndpointEmbedder(client)
        assert tree.embed(endpoint) == (4, 4)
        spaces = {r[0] for r in tree.conn.execute("SELECT space FROM approved_vectors")}
        assert spaces == {"endpoint:letters"}
        hybrid = tree.search("coffee machine", embedder=endpoint)
        assert hybrid.paths == ["lexical", "vector"] and hybrid.vector.space == "endpoint:letters"

    # the bundled model's space has no vector left: nothing of the other space is compared
    assert (
        load_approved(tree.conn, (REPO, WORKTREE), bundled_embedder().space.key).rank(
            bundled_embedder().embed(["coffee"])[0], limit=10, min_similarity=-1.0
        )
        == []
    )
    assert tree.search("coffee", embedder=bundled_embedder()).paths == ["lexical"]


def test_an_embedder_failing_at_query_time_leaves_lexical_search_working(tree: Worktree) -> None:
    with ScriptedServer() as server:
        server.respond_with(embeddings_responder(letters))
        client = OpenAICompatClient(
            base_url=server.base_url, model="letters", api_key="k", sleep=lambda _s: None
        )
        endpoint = EndpointEmbedder(client)
        tree.embed(endpoint)
        server.respond_with(lambda _request: Scripted.error(503))
        result = tree.search("coffee", embedder=endpoint)
    assert result.paths == ["lexical"] and [h.id for h in result.results] == ["office-coffee"]
    assert result.vector.code == "MODEL_UNAVAILABLE" and not result.vector.ran


def texts_asked(conn: sqlite3.Connection) -> list[str]:
    """Every statement of `conn` from now that reads documents' text for the vector rankings
    (whether the model reads them)."""
    seen: list[str] = []
    conn.set_trace_callback(
        lambda sql: seen.append(sql) if "e.id, e.title, e.body_text" in sql else None
    )
    return seen


def test_no_search_reads_a_documents_text_to_ask_whether_the_model_reads_it(
    tree: Worktree,
) -> None:
    # the static model cannot read Chinese: the pack says which documents hold it, so its
    # rankings read no text (they read every found document's text before); a model that reads
    # every language (memory's pair, an endpoint) has nothing to ask at all
    tree.write("release-freeze", "发布前一周冻结代码。只修阻断问题。")
    tree.project()
    tree.embed()
    asked = texts_asked(tree.conn)
    found = tree.search("冻结代码 release freeze", embedder=bundled_embedder())
    assert found.vector.ran and not bundled_embedder().reads_every_text
    assert "vector" not in next(h for h in found.results if h.id == "release-freeze").matched_by
    assert asked == []
    with ScriptedServer() as server:
        server.respond_with(embeddings_responder(letters))
        client = OpenAICompatClient(base_url=server.base_url, model="letters", api_key="k")
        endpoint = EndpointEmbedder(client)
        tree.embed(endpoint)
        result = tree.search("coffee machine", embedder=endpoint)
    assert result.vector.ran and endpoint.reads_every_text
    assert asked == []


def test_the_pack_flags_the_documents_holding_chinese(tree: Worktree) -> None:
    tree.write("release-freeze", "发布前一周冻结代码。只修阻断问题。")
    tree.project()
    tree.embed()
    ids, flags = tree.conn.execute("SELECT ids, flags FROM approved_vector_packs").fetchone()
    (chinese,) = tree.conn.execute(
        "SELECT id FROM approved_entries WHERE entry_id = 'release-freeze'"
    ).fetchone()
    holding = {i for i, flag in zip(array("q", ids), flags, strict=True) if flag & 4}
    assert holding == {chinese}


def test_a_failed_embedding_sync_writes_nothing(tree: Worktree) -> None:
    with ScriptedServer() as server:
        server.enqueue(Scripted.error(401, "invalid_api_key"))
        client = OpenAICompatClient(base_url=server.base_url, model="m", api_key="k")
        with pytest.raises(errors.TeamloreError) as info:
            tree.embed(EndpointEmbedder(client))
    assert info.value.code == "MODEL_AUTH_FAILED"
    assert tree.conn.execute("SELECT count(*) FROM approved_vectors").fetchone()[0] == 0


def test_deprecated_entries_stay_out_of_the_vector_ranking_unless_asked(tree: Worktree) -> None:
    (tree.root / ".threadshare/memory/entries/old-migrations.md").write_text(
        entry_file("old-migrations", "Migrate the database after deploying.", status="deprecated")
    )
    tree.project()
    tree.embed()
    default = tree.search(PARAPHRASE, embedder=bundled_embedder())
    assert "old-migrations" not in [h.id for h in default.results]
    everything = tree.search(PARAPHRASE, embedder=bundled_embedder(), include_deprecated=True)
    assert everything.results[-1].id == "old-migrations"


def test_fusion_takes_the_words_ranking_as_deep_as_the_page_needs(
    tree: Worktree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # fusion reads the lexical ranking only to a depth (and below it the documents the vector
    # ranking found too); when a document left out could reach the page, it fuses all of it
    for n in range(6):
        tree.write(f"release-{n}", f"Release note {n}: " + "release " * n + "the uploads.")
    tree.project()
    tree.embed()

    def page() -> list[tuple[str, float, list[str]]]:
        result = tree.search("release uploads", embedder=bundled_embedder(), limit=10)
        return [(h.id, h.score, list(h.matched_by)) for h in result.results]

    monkeypatch.setattr(search_module, "MIN_SIMILARITY", 1.1)  # the vector path finds nothing
    whole = page()
    assert len(whole) > 6 and all(by == ["lexical"] for _, _, by in whole)
    monkeypatch.setattr(search_module, "FUSED_LEXICAL_DEPTH", 1)
    assert page() == whole


def test_a_headline_is_the_title_else_the_first_sentence() -> None:
    assert headline("Threadshare memory pipeline", "## Team memory design\n- Mine…") == (
        "Threadshare memory pipeline"
    )
    assert headline("", " Run the migrations first. Then deploy.\nMore. ") == (
        "Run the migrations first."
    )
    assert headline("", "迁移要先跑。然后再部署。") == "迁移要先跑。"
    assert headline("", "no full stop") == "no full stop"
    # a list number or an abbreviation before the first word does not end the sentence
    assert headline("", "1. Run the tests. 2. Tag the release.") == "1. Run the tests."
    assert headline("", "e.g. a cold sync. Then more.") == "e.g. a cold sync."
    assert headline("", "2) 3.") == "2) 3."
    assert headline("  ", "") == ""


def test_every_document_also_has_a_vector_of_its_headline(tree: Worktree) -> None:
    tree.write("deploy-migrations", "Migrations run before a deploy. Rollbacks are manual.")
    tree.project()
    tree.embed()
    embedder = bundled_embedder()
    (blob,) = tree.conn.execute(
        "SELECT headline_vector FROM approved_vectors WHERE entry_id = 'deploy-migrations'"
    ).fetchone()
    alone = embedder.embed(["Migrations run before a deploy."])[0]
    assert float(from_blobs([blob])[0] @ alone) > 0.998  # the first sentence, embedded alone
    query = embedder.embed([PARAPHRASE])[0]

    def ranking() -> list[tuple[int, float]]:
        stored = load_approved(tree.conn, (REPO, WORKTREE), embedder.space.key)
        return stored.rank(query, limit=10, min_similarity=-1.0, by_headline=True)

    from_pack = ranking()
    tree.conn.execute("DELETE FROM approved_vector_packs")
    assert ranking() == from_pack and len(from_pack) == 4


def test_a_document_without_a_headline_is_left_out_of_the_headline_ranking(
    tree: Worktree,
) -> None:
    tree.embed()
    tree.conn.execute("UPDATE approved_vectors SET headline_vector = NULL")
    tree.conn.execute("DELETE FROM approved_vector_packs")
    stored = load_approved(tree.conn, (REPO, WORKTREE), bundled_embedder().space.key)
    query = bundled_embedder().embed([PARAPHRASE])[0]
    assert stored.rank(query, limit=10, min_similarity=-1.0, by_headline=True) == []
    assert len(stored.rank(query, limit=10, min_similarity=-1.0)) == 4


def test_search_never_reads_the_benchmark_query_files(
    tree: Worktree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The retrieval is tuned on bench/hybrid_queries.json, never built from it: no vocabulary,
    constant or list of the search path may come from a query file (docs/hybrid-search.md)."""
    opened: list[str] = []
    real_open = builtins.open

    def watched_open(file: object, *args: object, **kwargs: object) -> object:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(builtins, "open", watched_open)
    monkeypatch.setattr(io, "open", watched_open)
    tuning = Path(__file__).parents[3] / "bench" / "hybrid_queries.json"
    assert tuning.read_bytes() and opened == [str(tuning)]  # the guard sees such a read
    opened.clear()
    tree.embed()
    for mode in ("hybrid", "lexical", "vector"):
        tree.search(PARAPHRASE, embedder=bundled_embedder(), mode=mode)
    tree.search("迁移", embedder=bundled_embedder())
    assert not [name for name in opened if "hybrid_queries" in name]


def test_a_headline_the_model_cannot_read_stands_for_its_document(tree: Worktree) -> None:
    # the bundled model has no word vectors for Chinese: the entry is ranked by its whole text
    tree.write("release-freeze", "发布前一周冻结代码。只修阻断问题。")
    tree.project()
    tree.embed()
    vector, headline_vector = tree.conn.execute(
        "SELECT vector, headline_vector FROM approved_vectors WHERE entry_id = 'release-freeze'"
    ).fetchone()
    assert headline_vector == vector
    assert not bundled_embedder().reads("发布前一周冻结代码。")
    assert bundled_embedder().reads("Freeze the code a week before a release.")


def opened_after_migrating(
    home: Path, schema: int, sql: str, params: tuple[str, ...]
) -> sqlite3.Connection:
    """The state DB under `home`, written at `schema` with one row (`sql`), then opened at the
    current schema (every later migration applied)."""
    old = db.connect(state_db_path(home), MIGRATIONS[:schema])
    old.execute(sql, params)
    old.close()
    return open_state_db(home)


def test_vectors_made_before_headlines_are_dropped_and_embedded_again(tmp_path: Path) -> None:
    root = tmp_path / "worktree"
    root.mkdir()
    init_tree(root)
    conn = opened_after_migrating(  # schema 6: no headline vectors
        tmp_path / "home",
        6,
        "INSERT INTO approved_vectors (repository_key, worktree_key, kind, entry_id, "
        "content_digest, space, vector) VALUES (?, ?, 'entry', 'x', ?, 's', x'0000803f01')",
        (REPO, WORKTREE, "0" * 64),
    )
    try:
        assert conn.execute("SELECT count(*) FROM approved_vectors").fetchone()[0] == 0
        tree = Worktree(root, conn)
        tree.write("deploy-migrations", TREE["deploy-migrations"])
        tree.project()
        assert tree.embed() == (1, 1)
        (headline_vector,) = conn.execute("SELECT headline_vector FROM approved_vectors").fetchone()
        assert len(headline_vector) == 4 + 256
    finally:
        conn.close()


def test_vectors_made_with_the_first_headline_rule_are_dropped_and_embedded_again(
    tmp_path: Path,
) -> None:
    # schema 9's headline of "1. Run…" was "1.": the migration drops the derived vectors
    conn = opened_after_migrating(
        tmp_path / "home",
        9,
        "INSERT INTO approved_vectors (repository_key, worktree_key, kind, entry_id, "
        "content_digest, space, vector, headline_vector) "
        "VALUES (?, ?, 'entry', 'x', ?, 's', x'0000803f01', x'0000803f01')",
        (REPO, WORKTREE, "0" * 64),
    )
    try:
        assert db.schema_version(conn) == len(MIGRATIONS)
        assert conn.execute("SELECT count(*) FROM approved_vectors").fetchone()[0] == 0
    finally:
        conn.close()


# --------------------------------------------------------------------------------------------
# the decoded pack kept by a long-lived process (docs/hybrid-search.md "Cost")


def pack_reads(conn: sqlite3.Connection) -> list[str]:
    """Every statement of `conn` that reads the pack's matrices or the vector rows, from now."""
    seen: list[str] = []
    conn.set_trace_callback(
        lambda sql: (
            seen.append(sql)
            if "headline_vectors FROM approved_vector_packs" in sql
            or "JOIN approved_vectors" in sql
            else None
        )
    )
    return seen


def test_a_second_search_does_not_read_the_unchanged_pack_again(tree: Worktree) -> None:
    tree.embed()
    PACKS.clear()
    reads = pack_reads(tree.conn)
    first = tree.search(PARAPHRASE, embedder=bundled_embedder())
    assert len(reads) == 1
    second = tree.search(PARAPHRASE, embedder=bundled_embedder())
    assert len(reads) == 1  # only the pack's generation and token were asked
    assert second == first


def test_a_pack_rewritten_by_another_connection_is_seen_by_the_next_search(
    tree: Worktree, tmp_path: Path
) -> None:
    tree.embed()
    PACKS.clear()
    tree.search(PARAPHRASE, embedder=bundled_embedder())
    reads = pack_reads(tree.conn)
    other = open_state_db(tmp_path / "home")
    writer = Worktree(tree.root, other)
    writer.write("release-notes", "Every release gets a changelog entry.")
    writer.project()
    writer.embed()
    other.close()
    found = tree.search("changelog", embedder=bundled_embedder(), mode="vector")
    assert len(reads) == 1
    assert found.results[0].id == "release-notes"


def test_a_pack_rewritten_at_the_same_generation_is_read_again(tree: Worktree) -> None:
    tree.embed()
    PACKS.clear()
    tree.search(PARAPHRASE, embedder=bundled_embedder())
    tree.conn.execute("DELETE FROM approved_vector_packs")
    tree.embed()  # a new pack of the same projection generation and space
    reads = pack_reads(tree.conn)
    tree.search(PARAPHRASE, embedder=bundled_embedder())
    assert len(reads) == 1


def test_another_state_db_is_never_served_the_first_ones_pack(tmp_path: Path) -> None:
    bodies = {"one": "The lighthouse keeper logs the tides.", "two": TREE["office-coffee"]}
    trees = {}
    for name, body in bodies.items():
        root = tmp_path / name / "worktree"
        root.mkdir(parents=True)
        init_tree(root)
        worktree = Worktree(root, open_state_db(tmp_path / name / "home"))
        worktree.write("the-entry", body)  # same owner, id, generation and space in both
        worktree.project()
        worktree.embed()
        trees[name] = worktree

    query = bundled_embedder().embed(["coffee machine"])[0]

    def score(name: str) -> float:  # the cosine of its one document
        stored = load_approved(trees[name].conn, (REPO, WORKTREE), bundled_embedder().space.key)
        return stored.rank(query, limit=1, min_similarity=-1.0)[0][1]

    PACKS.clear()
    alone = {name: score(name) for name in trees}  # each decoded with nothing kept before
    PACKS.clear()
    for _ in range(2):  # both kept in turn
        assert {name: score(name) for name in trees} == alone
    assert alone["one"] != alone["two"]
    for worktree in trees.values():
        worktree.conn.close()


def test_results_are_the_same_with_and_without_the_kept_pack(tree: Worktree) -> None:
    tree.embed()
    queries = [PARAPHRASE, "coffee", "backup storage", "button colors"]
    PACKS.clear()
    kept = [tree.search(query, embedder=bundled_embedder()) for query in queries]
    fresh = []
    for query in queries:
        PACKS.clear()
        fresh.append(tree.search(query, embedder=bundled_embedder()))
    assert kept == fresh


def test_threads_searching_at_once_share_the_kept_pack(tree: Worktree, tmp_path: Path) -> None:
    tree.embed()
    PACKS.clear()
    expected = tree.search(PARAPHRASE, embedder=bundled_embedder())

    def search_a_few() -> list[SearchResult]:
        own = Worktree(tree.root, open_state_db(tmp_path / "home"))
        try:
            return [own.search(PARAPHRASE, embedder=bundled_embedder()) for _ in range(5)]
        finally:
            own.conn.close()

    PACKS.clear()
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = [
            result for results in pool.map(lambda _: search_a_few(), range(4)) for result in results
        ]
    assert found == [expected] * 20


# a pack row as schemas 11 to 13 wrote it (a token, no column blocks)
PACK_WITH_TOKEN = (
    "INSERT INTO approved_vector_packs (repository_key, worktree_key, space, generation, "
    "token, dimensions, ids, flags, scales, vectors, headline_scales, headline_vectors) "
    "VALUES (?, ?, 's', 1, 7, 0, x'', x'', x'', x'', x'', x'')"
)


def tree_whose_pack_a_migration_dropped(tmp_path: Path, schema: int, pack: str) -> Worktree:
    """A worktree over a state DB written at `schema` with one `pack` row, then migrated: the
    migrations after it dropped the pack (the next sync writes it again)."""
    root = tmp_path / "worktree"
    root.mkdir()
    init_tree(root)
    conn = opened_after_migrating(tmp_path / "home", schema, pack, (REPO, WORKTREE))
    assert conn.execute("SELECT count(*) FROM approved_vector_packs").fetchone()[0] == 0
    return Worktree(root, conn)


def test_packs_made_before_the_chinese_flag_are_dropped_and_written_again(
    tmp_path: Path,
) -> None:
    # schema 12's flags did not say which documents hold Chinese: read as "none", a Chinese
    # document would get the static model's noise vote
    tree = tree_whose_pack_a_migration_dropped(tmp_path, 12, PACK_WITH_TOKEN)
    try:
        tree.write("release-freeze", "发布前一周冻结代码。只修阻断问题。")
        tree.project()
        tree.embed()
        (flags,) = tree.conn.execute("SELECT flags FROM approved_vector_packs").fetchone()
        assert flags == bytes([1 | 4])
    finally:
        tree.conn.close()


def test_packs_made_before_tokens_are_dropped_and_written_again(tmp_path: Path) -> None:
    tree = tree_whose_pack_a_migration_dropped(  # schema 10: packs without a token
        tmp_path,
        10,
        "INSERT INTO approved_vector_packs (repository_key, worktree_key, space, generation, "
        "dimensions, ids, flags, scales, vectors) VALUES (?, ?, 's', 1, 0, x'', x'', x'', x'')",
    )
    try:
        tree.write("deploy-migrations", TREE["deploy-migrations"])
        tree.project()
        tree.embed()
        PACKS.clear()
        reads = pack_reads(tree.conn)
        assert tree.search(PARAPHRASE, embedder=bundled_embedder(), mode="vector").results
        assert len(reads) == 1 and "approved_vector_packs" in reads[0]  # the pack, not the rows
    finally:
        tree.conn.close()


def test_packs_made_before_column_blocks_are_dropped_and_written_again(tmp_path: Path) -> None:
    # schema 13's matrices held whole rows one after the other; read as blocks they would be
    # other numbers
    tree = tree_whose_pack_a_migration_dropped(tmp_path, 13, PACK_WITH_TOKEN)
    try:
        tree.write("deploy-migrations", TREE["deploy-migrations"])
        tree.project()
        tree.embed()
        (blocks,) = tree.conn.execute("SELECT blocks FROM approved_vector_packs").fetchone()
        assert blocks == ""  # one model: one block
    finally:
        tree.conn.close()
