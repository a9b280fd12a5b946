"""Team-memory search: BM25 over the analyzed approved projection, snippets from original text."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import entry_file, shared_fixtures
from teamlore.core import errors
from teamlore.core.analyzer import SNIPPET_CHARS
from teamlore.memory.store import search as search_module
from teamlore.memory.store.layout import init_tree
from teamlore.memory.store.projection import sync_approved_projection
from teamlore.memory.store.search import SearchResult, search_memory
from teamlore.memory.store.state_db import open_state_db

REPO = "a1" * 12
WORKTREE = "b2" * 12


LONG_BODY = (
    "Background first. " * 30
    + "The nightly job must call Flush_Queue() before the snapshot is taken. "
    + "Trailing notes. " * 30
)

TREE = {
    "entries/session-cookie.md": entry_file(
        "session-cookie", "Do not refactor the session middleware; mobile clients need its cookie."
    ),
    "entries/cookie-cookie.md": entry_file(
        "cookie-cookie", "Cookie cookie cookie: the cookie jar is shared by every session cookie."
    ),
    "entries/nightly-flush.md": entry_file("nightly-flush", LONG_BODY),
    "entries/auth-chinese.md": entry_file(
        "auth-chinese", "别重构旧鉴权模块的会话中间件，移动端客户端仍依赖其非标准行为。"
    ),
    "entries/parser.md": entry_file("parser", "Call parse_line on every record of the JSONL file."),
    "entries/old-cookie.md": entry_file(
        "old-cookie", "Cookie cookie cookie cookie cookie cookie.", status="deprecated"
    ),
    "scenes/releases.md": (
        "-----META-START-----\ncreated: 2026-08-21\nupdated: 2026-08-21\n"
        'summary: "Release verification"\nheat: 1\n-----META-END-----\n'
        "## Releases\n- Run the smoke suite before tagging a release."
    ),
    "doctrine.md": "# Doctrine\n\n- Never tag a release without the smoke suite.\n",
    "skills/release-checks/SKILL.md": (
        '---\nname: "release-checks"\ndescription: "Check a release before publishing."\n---\n'
        "Build the wheel, install it in a clean venv, run the smoke suite.\n"
    ),
}


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    root = tmp_path / "worktree"
    root.mkdir()
    init_tree(root)
    for relative, text in TREE.items():
        path = root / ".threadshare/memory" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    connection = open_state_db(tmp_path / "home")
    result = sync_approved_projection(
        connection, repository_key=REPO, worktree_key=WORKTREE, worktree_root=root
    )
    assert result.coverage == "complete", result.diagnostics
    yield connection
    connection.close()


def search(conn: sqlite3.Connection, query: str, **options: object) -> SearchResult:
    return search_memory(
        conn,
        repository_key=REPO,
        worktree_key=WORKTREE,
        query=query,
        **options,  # type: ignore[arg-type]
    )


def ids(result: SearchResult) -> list[str]:
    return [hit.id for hit in result.results]


def test_results_carry_the_projection_generation_and_coverage(conn: sqlite3.Connection) -> None:
    result = search(conn, "mobile middleware")
    assert (result.generation, result.coverage) == (1, "complete")
    hit = result.results[0]
    assert (hit.id, hit.type, hit.entry_type, hit.status, hit.path) == (
        "session-cookie",
        "entry",
        "work_method",
        "approved",
        ".threadshare/memory/entries/session-cookie.md",
    )
    assert hit.score > 0


def test_results_carry_the_seeds_items_with_rank_entry_id_and_revision(
    conn: sqlite3.Connection,
) -> None:
    """The seed's search result `items[{rank, entryId, revision, ...}]`, beside ours."""
    wire = search(conn, "cookie").to_json()
    assert [(i["rank"], i["entryId"]) for i in wire["items"]] == [
        (1, "cookie-cookie"),
        (2, "session-cookie"),
    ]
    row = conn.execute(
        "SELECT revision, content_digest, body_text FROM approved_entries WHERE entry_id = ?",
        ("session-cookie",),
    ).fetchone()
    second = wire["items"][1]
    assert (second["revision"], second["contentDigest"]) == (row[0], row[1])
    assert second["status"] == "approved" and second["summary"] == row[2][:240]
    assert "summary" not in wire["results"][1]


def test_bm25_ranks_the_denser_match_first(conn: sqlite3.Connection) -> None:
    result = search(conn, "cookie")
    assert ids(result) == ["cookie-cookie", "session-cookie"]
    assert result.results[0].score > result.results[1].score


def test_one_term_matches_in_a_small_memory_get_scores_that_tell_them_apart(
    tmp_path: Path,
) -> None:
    # four entries, three share the word: BM25's IDF is about zero here (SQLite floors it at
    # 1e-6), which used to print "score 1.00" for every hit
    root = tmp_path / "small"
    root.mkdir()
    init_tree(root)
    bodies = {
        "dense": "The release job failed on the export test; release notes; release again.",
        "short": "The release job deploys.",
        "long": "The release job failed on the export test and deploys through CI nightly.",
        "other": "Unrelated deploy notes.",
    }
    for name, body in bodies.items():
        (root / f".threadshare/memory/entries/{name}.md").write_text(entry_file(name, body))
    connection = open_state_db(tmp_path / "home")
    sync_approved_projection(
        connection, repository_key=REPO, worktree_key=WORKTREE, worktree_root=root
    )
    found = search(connection, "release")
    scores = [hit.score for hit in found.results]
    assert ids(found)[0] == "dense" and scores[0] == 1.99  # one term, the strongest match
    assert len(set(scores)) == len(scores) and scores == sorted(scores, reverse=True)
    assert all(1 <= s < 2 for s in scores)
    two = search(connection, "release notes")
    assert [hit.score for hit in two.results][:2] == [2.99, 1.99]  # per number of terms held
    assert ids(two)[0] == "dense"
    connection.close()


def test_documents_holding_more_query_terms_rank_first(conn: sqlite3.Connection) -> None:
    # any term matches; the one document holding all three comes first even though another
    # says "cookie" more often
    found = search(conn, "session cookie mobile")
    assert ids(found) == ["session-cookie", "cookie-cookie"]
    assert int(found.results[0].score) == 3 and int(found.results[1].score) == 2
    assert set(ids(search(conn, "mobile wheel"))) == {"session-cookie", "release-checks"}


def test_stopwords_stemming_and_phrases_apply_to_memory_search(conn: sqlite3.Connection) -> None:
    assert ids(search(conn, "how do the sessions cookies work on mobile"))[0] == "session-cookie"
    assert ids(search(conn, '"session middleware"')) == ["session-cookie"]
    assert ids(search(conn, "middle*")) == ["session-cookie"]


def test_short_chinese_queries_find_chinese_entries(conn: sqlite3.Connection) -> None:
    assert ids(search(conn, "鉴权")) == ["auth-chinese"]
    assert ids(search(conn, "鉴")) == ["auth-chinese"]
    # and only it: the English entry holding "middleware", the query's gloss, is left to the
    # vector path (docs/hybrid-search.md, "Words are never outvoted")
    assert ids(search(conn, "中间件")) == ["auth-chinese"]


def test_identifiers_meet_in_any_spelling(conn: sqlite3.Connection) -> None:
    for query in ("parse_line", "parseLine", "parse line", "PARSE-LINE"):
        assert ids(search(conn, query)) == ["parser"], query


def test_scenes_doctrine_and_skills_are_searchable_with_their_type(
    conn: sqlite3.Connection,
) -> None:
    result = search(conn, "smoke suite")
    assert {(hit.id, hit.type) for hit in result.results} == {
        ("releases", "scene"),
        ("doctrine", "doctrine"),
        ("release-checks", "skill"),
    }
    assert all(hit.entry_type is None for hit in result.results)


def test_the_snippet_is_original_text_around_the_first_match(conn: sqlite3.Connection) -> None:
    hit = search(conn, "flush queue").results[0]
    assert hit.id == "nightly-flush"
    assert "Flush_Queue()" in hit.snippet  # the original spelling, not analyzer tokens
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet) <= SNIPPET_CHARS + 2


def test_a_chinese_snippet_centres_on_the_matching_characters(conn: sqlite3.Connection) -> None:
    hit = search(conn, "客户端").results[0]
    assert "客户端" in hit.snippet
    assert "\n" not in hit.snippet


def test_deprecated_entries_are_left_out_unless_asked_and_then_rank_last(
    conn: sqlite3.Connection,
) -> None:
    assert "old-cookie" not in ids(search(conn, "cookie"))
    with_deprecated = search(conn, "cookie", include_deprecated=True)
    # the deprecated entry is the densest match, yet it comes after every approved one
    assert ids(with_deprecated) == ["cookie-cookie", "session-cookie", "old-cookie"]
    assert with_deprecated.results[-1].status == "deprecated"


@pytest.fixture
def shared_index(
    conn: sqlite3.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> sqlite3.Connection:
    """The same tree projected for another worktree too, and a BM25 window of 2 candidates."""
    monkeypatch.setattr(search_module, "MAX_CANDIDATES", 2)
    sync_approved_projection(
        conn, repository_key=REPO, worktree_key="c3" * 12, worktree_root=tmp_path / "worktree"
    )
    return conn


def test_the_candidate_window_holds_this_owners_approved_best(
    shared_index: sqlite3.Connection,
) -> None:
    # BM25 picks a window of candidates from the index shared by every owner: documents of
    # another worktree, or deprecated ones, that rank higher must not crowd this owner's out
    conn = shared_index
    assert ids(search(conn, "cookie")) == ["cookie-cookie", "session-cookie"]
    with_deprecated = search(conn, "cookie", include_deprecated=True)
    assert ids(with_deprecated) == ["cookie-cookie", "session-cookie"]


def test_deprecated_documents_among_the_best_cost_no_second_bm25_pass(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the densest "cookie" document is deprecated: the window (2) is asked for one more
    # document up front, instead of a second BM25 pass over every match
    monkeypatch.setattr(search_module, "MAX_CANDIDATES", 2)
    passes: list[str] = []
    conn.set_trace_callback(lambda sql: passes.append(sql) if "bm25(" in sql else None)
    found = search(conn, "cookie")
    conn.set_trace_callback(None)
    assert ids(found) == ["cookie-cookie", "session-cookie"]
    assert len(passes) == 1


def test_terms_held_order_the_window_when_another_owner_shares_the_index(
    shared_index: sqlite3.Connection,
) -> None:
    # the window then comes from the owner-filtered query; a document holding both words still
    # comes before a denser match of one of them
    found = search(shared_index, "mobile cookie")
    assert ids(found) == ["session-cookie", "cookie-cookie"]
    assert [int(hit.score) for hit in found.results] == [2, 1]  # terms held


def projected_entries(tmp_path: Path, files: dict[str, str]) -> sqlite3.Connection:
    """A worktree holding these entry files (entry id → file text), projected into a new state
    DB."""
    root = tmp_path / "large"
    root.mkdir()
    init_tree(root)
    for name, text in files.items():
        (root / f".threadshare/memory/entries/{name}.md").write_text(text)
    connection = open_state_db(tmp_path / "home")
    sync_approved_projection(
        connection, repository_key=REPO, worktree_key=WORKTREE, worktree_root=root
    )
    return connection


def test_a_word_most_documents_hold_brings_no_candidates_past_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "session" is in 6 of 7 documents, more than the window (3) holds: BM25 gives it no weight
    # (IDF floored at 1e-6), so documents holding only it no longer fill the window; documents
    # the weighted word brings still count it as held
    monkeypatch.setattr(search_module, "MAX_CANDIDATES", 3)
    bodies = {
        "flush-session": "Flush the queue before the session ends.",
        "flush-only": "Flush flush flush the queue.",
        "session-dense": "Session session session session.",
        "session-a": "The session cookie is shared.",
        "session-b": "A session token expires.",
        "session-c": "Every session is logged.",
    }
    files = {name: entry_file(name, body) for name, body in bodies.items()}
    files["retired"] = entry_file("retired", "The zebra session.", status="deprecated")
    connection = projected_entries(tmp_path, files)
    found = search(connection, "session flush")
    assert ids(found) == ["flush-session", "flush-only"]
    assert [int(hit.score) for hit in found.results] == [2, 1]  # "session" still counts as held
    # a query whose only weighted word is found nowhere, or of such words only: as before
    assert ids(search(connection, "session zyxwvut"))[0] == "session-dense"
    assert ids(search(connection, "session"))[0] == "session-dense"
    # ... or found only in files the search leaves out (here a deprecated one): as before
    assert ids(search(connection, "session zebra"))[0] == "session-dense"
    connection.close()


def test_a_query_of_words_most_documents_hold_takes_the_documents_holding_all_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "alpha" (7 of 10 documents) and "beta" (6 of 10) both match more documents than the
    # window (3) holds and half of them: with 4 documents holding both, the window is their best
    # by BM25, not a short "alpha alpha alpha alpha" that holds one
    monkeypatch.setattr(search_module, "MAX_CANDIDATES", 3)
    bodies = {
        "dense-alpha": "Alpha alpha alpha alpha.",
        "both-1": "Alpha and beta meet here in a longer sentence about other things entirely.",
        "both-2": "Beta then alpha, again in a long sentence with many more words in it.",
        "both-3": "Alpha beta.",
        "both-4": "Some alpha words, some beta words, and a few more words besides those.",
        "alpha-1": "Alpha stands alone in this one.",
        "alpha-2": "Alpha again, alone.",
        "beta-1": "Beta by itself.",
        "beta-2": "Only beta here.",
        "neither": "Nothing relevant here.",
    }
    connection = projected_entries(
        tmp_path, {name: entry_file(name, body) for name, body in bodies.items()}
    )
    found = search(connection, "alpha beta")
    assert len(found.results) == 3 and ids(found)[0] == "both-3"
    assert {int(hit.score) for hit in found.results} == {2}  # every hit holds both words
    monkeypatch.setattr(search_module, "MAX_CANDIDATES", 5)  # fewer than 5 hold both: any word
    assert "dense-alpha" in ids(search(connection, "alpha beta"))
    connection.close()


def test_the_limit_bounds_the_results(conn: sqlite3.Connection) -> None:
    assert ids(search(conn, "cookie", limit=1)) == ["cookie-cookie"]


@pytest.mark.parametrize("query", ["", "   ", "!!! ???", "--"])
def test_a_query_without_searchable_terms_is_refused(conn: sqlite3.Connection, query: str) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        search(conn, query)
    assert caught.value.code == "QUERY_EMPTY"


def test_a_query_of_words_too_long_to_search_says_so(conn: sqlite3.Connection) -> None:
    """A word the index leaves out (over 64 characters: base64, a minified blob) is named as
    too long, not as "no searchable terms" (a 300-character word said so)."""
    word = "a" * 300
    with pytest.raises(errors.TeamloreError) as caught:
        search(conn, word)
    assert caught.value.code == "QUERY_EMPTY"
    assert caught.value.message.endswith("' is too long to search (over 64 characters)")
    with pytest.raises(errors.TeamloreError) as caught:
        search(conn, f"?? {'b' * 70}")
    assert caught.value.message == (
        f"'?? {'b' * 70}' has no searchable terms: '{'b' * 70}' is too long to search"
        " (over 64 characters)"
    )
    with pytest.raises(errors.TeamloreError) as caught:
        search(conn, "")
    assert caught.value.message == "the query is empty"


def test_the_result_says_how_many_documents_the_memory_holds(conn: sqlite3.Connection) -> None:
    """No results from a memory holding documents is "try other words", from an empty one
    "promote some" (`memory search`'s text view): the result tells the two apart."""
    held = conn.execute(
        "SELECT count(*) FROM approved_entries WHERE repository_key = ? AND worktree_key = ?",
        (REPO, WORKTREE),
    ).fetchone()[0]
    found = search(conn, "xyzzyplugh")
    assert found.results == [] and found.documents == held > 0
    assert found.to_json()["documents"] == held
    never_synced = search_memory(conn, repository_key=REPO, worktree_key="d4" * 12, query="x")
    assert never_synced.documents == 0


@pytest.mark.parametrize("options", [{"limit": 0}, {"limit": 101}])
def test_limits_outside_the_range_are_refused(
    conn: sqlite3.Connection, options: dict[str, object]
) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        search(conn, "cookie", **options)
    assert caught.value.code == "INVALID_ARGUMENT"


def test_an_overlong_query_is_refused(conn: sqlite3.Connection) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        search(conn, "cookie " * 200)
    assert caught.value.code == "INVALID_ARGUMENT"


def test_quotes_and_fts_syntax_in_a_query_are_plain_text(conn: sqlite3.Connection) -> None:
    assert ids(search(conn, 'cookie" OR NEAR(x) *')) == ["cookie-cookie", "session-cookie"]


def test_a_worktree_never_synced_reports_generation_zero_and_partial(
    conn: sqlite3.Connection,
) -> None:
    result = search_memory(
        conn, repository_key=REPO, worktree_key="d4" * 12, query="cookie", limit=5
    )
    assert (result.generation, result.coverage, result.results) == (0, "partial", [])


def test_a_projection_from_another_analyzer_is_reported_partial(
    conn: sqlite3.Connection,
) -> None:
    conn.execute("UPDATE approved_projection SET analyzer_version = 'teamlore-analyzer@0'")
    assert search(conn, "cookie").coverage == "partial"


def test_the_result_on_the_wire_is_camel_case_and_keeps_the_hits_summary_in_the_items(
    conn: sqlite3.Connection,
) -> None:
    """The result is a plain dataclass (no pydantic on a search's read path); its wire form is
    the tool's response as it always was."""
    wire = search(conn, "cookie").to_json()
    assert list(wire) == [
        "generation",
        "coverage",
        "paths",
        "vector",
        "results",
        "items",
        "documents",
    ]
    assert list(wire["vector"]) == ["ran", "space", "documents", "reason", "code"]
    assert list(wire["results"][0]) == [
        "id",
        "type",
        "entryType",
        "status",
        "score",
        "snippet",
        "path",
        "matchedBy",
        "revision",
        "contentDigest",
    ]
    assert list(wire["items"][0]) == [
        "rank",
        "entryId",
        "revision",
        "contentDigest",
        "status",
        "summary",
    ]


# -- words are never outvoted (docs/hybrid-search.md, "Words are never outvoted") --------------
# Over the real reference tree (17 entries, 6 in Chinese) with the bundled English-only model:
# each case below was measured failing without its rule (the rank it fell to is noted).


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[sqlite3.Connection, Any]]:
    from teamlore.memory.store.vectors import sync_approved_vectors
    from teamlore.models.embeddings import bundled_embedder

    tmp = tmp_path_factory.mktemp("reference")
    shutil.copytree(shared_fixtures("threadshare-memory"), tmp / "worktree/.threadshare/memory")
    connection = open_state_db(tmp / "home")
    sync_approved_projection(
        connection, repository_key=REPO, worktree_key=WORKTREE, worktree_root=tmp / "worktree"
    )
    embedder = bundled_embedder()
    sync_approved_vectors(connection, repository_key=REPO, worktree_key=WORKTREE, embedder=embedder)
    yield connection, embedder
    connection.close()


def hybrid(reference: tuple[sqlite3.Connection, Any], query: str, **kwargs: Any) -> SearchResult:
    conn, embedder = reference
    return search_memory(
        conn, repository_key=REPO, worktree_key=WORKTREE, query=query, embedder=embedder, **kwargs
    )


SMOKE = "smoke-canonical-hash-deltaid-fixture"
INGESTION = "insights-engine-ingestion-session-facts-session-facts-sqlite"
WIRE = "wire-rust-serde-usageorderby-lastusedat-last-used-ready-disp"
PLATFORMS = "0-7-x-macos-linux-insights-engine-windows-core-cli-windows-e"


def test_a_short_chinese_query_keeps_the_entry_its_words_find(
    reference: tuple[sqlite3.Connection, Any],
) -> None:
    # 静态摘要 ("static digest") is written in one Chinese entry; without the rule seven English
    # entries near the query's glosses came first and it fell to rank 6
    for query, answer in {"静态摘要": SMOKE, "回调": INGESTION, "反序列化": WIRE}.items():
        found = ids(hybrid(reference, query))
        assert found[0] == answer, query


def test_an_identifier_keeps_the_entry_its_words_find(
    reference: tuple[sqlite3.Connection, Any],
) -> None:
    # without the rule: ranks 8, 10 and 8
    for query, answer in {
        "UsageOrderBy::LastUsedAt": WIRE,
        "core-only": PLATFORMS,
        "COMMIT_SESSION ABORT staging": INGESTION,
    }.items():
        assert ids(hybrid(reference, query))[0] == answer, query


def test_a_document_the_model_cannot_read_gets_no_vector_vote(
    reference: tuple[sqlite3.Connection, Any],
) -> None:
    # the Chinese entry holds the English words "Rust serde wire panic" among its Chinese ones;
    # its vector is the mean of noise and those words, and used to rank first by meaning
    assert hybrid(reference, "Rust serde wire panic", mode="meaning").results == []
    found = hybrid(reference, "Rust serde wire panic")
    assert found.results[0].id == WIRE and found.results[0].matched_by == ["lexical"]


def test_a_spaceless_chinese_question_is_searched_as_its_words(
    reference: tuple[sqlite3.Connection, Any],
) -> None:
    # "why do the docs say downgraded while the pipeline still builds": as one run every bigram
    # was required (no entry holds 降级了流 …) and the glosses' English terms found two English
    # entries instead; cut into words (文档 降级 流水线 构建), the entry holding them answers
    found = hybrid(reference, "为什么文档降级了流水线还在构建", mode="lexical")
    assert ids(found) == ["staging-root-optional-dependencies-consumer-smoke-workflow-w"]


def test_a_question_typed_in_traditional_characters_finds_the_simplified_entry(
    reference: tuple[sqlite3.Connection, Any],
) -> None:
    # the question above in the other script: its words matched no entry before
    found = hybrid(reference, "為什麼文檔降級了流水線還在構建", mode="lexical")
    assert ids(found) == ["staging-root-optional-dependencies-consumer-smoke-workflow-w"]


def test_a_fused_page_is_the_first_of_every_document_ordered_as_shown() -> None:
    # the page orders only the documents that can reach it; it must equal ordering all of them
    # by status (deprecated last), shown score (rounded: different raw scores may show the
    # same one), kind and entry id
    from teamlore.core.fusion import fused_scores
    from teamlore.memory.store.order_keys import OrderRow

    ids = list(range(1, 41))
    rows = {
        i: OrderRow(i, "entry" if i % 3 else "scene", f"e-{(i * 7) % 41:02d}", status)
        for i in ids
        for status in ["deprecated" if i % 5 == 0 else "approved"]
    }
    # shares 1.0, 0.99995 and 0.9999 give raw scores that round alike at four places
    lexical = [(i, (1.0, 0.99995, 0.9999, 0.5)[i % 4]) for i in ids[:30]]
    fused = fused_scores(lexical, ids[20:], lexical_ranks=[1] * 30)
    for limit in (1, 5, 10, 33, 40):
        every = sorted(
            fused.raw,
            key=lambda i: (
                rows[i].status == "deprecated",
                -fused.score(i),
                rows[i].kind,
                rows[i].entry_id,
            ),
        )
        assert search_module._page(fused, rows, limit) == every[:limit]


def test_a_secret_in_a_hand_edited_entry_is_masked_in_the_snippet_and_summary(
    tmp_path: Path,
) -> None:
    """`memory lint` blocks the token and masks it; `memory search` printed it whole, into a
    terminal, a CI log or an agent's context."""
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789AB"
    body = f"The invoice export needs token {token} at deploy time."
    conn = projected_entries(tmp_path, {"invoice-token": entry_file("invoice-token", body)})
    [hit] = search(conn, "invoice export").results
    assert token not in hit.snippet and token not in hit.summary
    assert "…[" in hit.snippet and "invoice export" in hit.snippet.lower()
