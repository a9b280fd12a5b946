"""The session-search query files measure what they say only if every target names a turn the
fixture sessions hold: a file or ordinal that drifted would fail the bench at its first run, or
(a turn that still exists but moved) count hits on the wrong turn. Every shipped file is checked
against the real fixture sessions, indexed as the bench indexes them."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from support import shared_fixtures

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_search_quality as bench

QUERY_FILES = sorted(bench.BENCH_DIR.glob("search_*.json"))
KINDS = {
    "paraphrase",
    "keyword",
    "identifier",
    "multi-concept",
    "situational",
    "short-chinese",
    "chinese-question",
    "cross-lingual",
    "quoted-chinese",
    "big-turn",
    "pasted-error",
}


@pytest.fixture(scope="module")
def turns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, int], int]]:
    fixtures = shared_fixtures("sessions")
    conn: sqlite3.Connection = bench.index_fixtures(fixtures, tmp_path_factory.mktemp("state"))
    try:
        yield bench.turn_ids(conn, fixtures)
    finally:
        conn.close()


def test_the_bench_ships_the_query_files_its_readme_names() -> None:
    names = {path.name for path in QUERY_FILES}
    assert {"search_queries.json", "search_heldout14.json", "search_heldout18.json"} <= names


@pytest.mark.parametrize("path", QUERY_FILES, ids=[path.stem for path in QUERY_FILES])
def test_every_target_is_a_turn_of_the_fixture_sessions(
    path: Path, turns: dict[tuple[str, int], int]
) -> None:
    queries = orjson.loads(path.read_bytes())["queries"]
    missing = [
        (item["query"], file, ordinal)
        for item in queries
        for file, ordinals in item["targets"].items()
        for ordinal in ordinals
        if (file, ordinal) not in turns
    ]
    assert missing == []
    assert {item["kind"] for item in queries} <= KINDS
    assert all(item["targets"] and all(item["targets"].values()) for item in queries)
    texts = [item["query"] for item in queries]
    assert len(texts) == len(set(texts)), "a query appears twice"
