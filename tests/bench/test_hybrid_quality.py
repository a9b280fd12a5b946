"""The hard-query benchmark is only honest if its hard queries really share no search term with
their answers: the check uses the project's analyzer, catches a violation, and refuses to
measure; the shipped query set passes it."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from support import shared_fixtures

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_hybrid_quality as bench


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tree = shared_fixtures("threadshare-memory")
    conn = bench.project_tree(tree, tmp_path_factory.mktemp("home"))
    try:
        return bench.indexed_texts(conn)
    finally:
        conn.close()


def test_the_shipped_hard_queries_share_no_search_term_with_their_answers(
    texts: dict[str, str],
) -> None:
    queries = bench.load_queries(bench.DEFAULT_QUERIES)
    assert {q.kind for q in queries} == set(bench.KINDS)
    assert all(q.answer in texts for q in queries)
    assert bench.overlaps(queries, texts) == []


def test_every_near_miss_shares_terms_with_its_distractor_instead(texts: dict[str, str]) -> None:
    near_misses = [q for q in bench.load_queries(bench.DEFAULT_QUERIES) if q.kind == "near-miss"]
    assert near_misses
    for q in near_misses:
        assert q.distractor in texts and q.distractor != q.answer
        assert bench.shared_terms(q.query, texts[q.distractor]), q.query


def test_shared_terms_are_found_through_stemming_identifier_splits_and_chinese_bigrams(
    texts: dict[str, str],
) -> None:
    promotion = texts["threadshare-memory-promotion-should-be-based-on-a-promotionp"]
    assert bench.shared_terms("the hashes of blobs", promotion) == ("hash", "blob")
    assert bench.shared_terms("which PromotionPlan?", promotion) == ("promotionplan",)
    smoke = texts["smoke-canonical-hash-deltaid-fixture"]
    assert bench.shared_terms("发布包", smoke) == ("发布 布包",)
    assert bench.shared_terms("发送邮件", smoke) == ()
    assert bench.shared_terms("the of and", smoke) == ()


def test_a_query_that_shares_a_word_with_its_answer_is_reported_and_the_run_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = shared_fixtures("threadshare-memory")
    answer = "threadshare-memory-promotion-should-be-based-on-a-promotionp"
    queries = tmp_path / "queries.json"
    queries.write_bytes(
        orjson.dumps(
            {"queries": [{"kind": "paraphrase", "answer": answer, "query": "sign-off drifting"}]}
        )
    )
    assert bench.main(["--tree", str(tree), "--queries", str(queries)]) == 1
    out = capsys.readouterr().out
    assert "1 violations" in out and "SHARES drift" in out and "refusing to measure" in out


def test_the_lexical_column_finds_every_keyword_query_first_and_no_hard_query(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = shared_fixtures("threadshare-memory")
    assert bench.main(["--tree", str(tree)]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines() if line}
    assert rows["keyword"][2:7] == ["1.00", "/", "1.00", "/", "1.00"]
    assert rows["paraphrase"][2:7] == ["0.00", "/", "0.00", "/", "0.00"]
