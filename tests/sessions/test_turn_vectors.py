"""Hybrid session search: every turn gets a quantized vector during `teamlore sync`, and
`sessions search` fuses the words (BM25) with the meaning (nearest vectors). Real index files,
the real bundled model (offline), the real CLI, a real scripted embeddings server for the
configured endpoint, real SIGKILLs for crash safety."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from test_indexer import MiniAdapter, session_file

from models.scripted_server import ScriptedServer, embeddings_responder
from support import run_killed_at, teamlore_cli
from teamlore.models.embeddings import bundled_embedder
from teamlore.sessions import turn_vectors
from teamlore.sessions.index_db import (
    MIGRATIONS,
    TURN_VECTOR_SESSIONS,
    index_db_path,
    open_index,
)
from teamlore.sessions.indexer import Indexer, Source
from teamlore.sessions.int8_cosines import int8_cosines
from teamlore.sessions.queries import search_turns

# what people asked and what the agent answered, one turn each
TURNS = [
    (
        "The nightly build keeps failing because the database schema migration times out",
        "Raised the lock timeout for the migration and it now completes on staging.",
    ),
    (
        "Rename the CSS classes in the header component to follow BEM",
        "Renamed header classes to header__logo and header__nav.",
    ),
    (
        "Add pagination to the invoices API endpoint",
        "The invoices endpoint now takes page and per_page parameters.",
    ),
    (
        "Write a haiku about autumn leaves",
        "Red leaves drift down / the garden sleeps in the cold / wind hums a last song",
    ),
    (
        "Why is the Docker image so big?",
        "Switched to a slim base image and a multi-stage build: 1.2 GB down to 180 MB.",
    ),
    (
        "The login page shows a blank screen on Safari",
        "A polyfill for structuredClone was missing; added it.",
    ),
]
# queries sharing no word with the turn they mean (checked below with the analyzer)
PARAPHRASES = {"container too large, how to shrink it": 5, "poem about fall foliage": 4}


def claude_session(path: Path, turns: list[tuple[str, str]], session_id: str) -> Path:
    """A Claude Code transcript (2.1 shape): one user prompt and one text answer per turn."""
    records: list[dict[str, Any]] = []
    common = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/shop"}
    for n, (prompt, answer) in enumerate(turns):
        at = f"2026-03-01T10:{n:02d}:00.000Z"
        records.append(
            {
                **common,
                "sessionId": session_id,
                "version": "2.1.112",
                "type": "user",
                "uuid": f"u-{n}",
                "timestamp": at,
                "message": {"role": "user", "content": prompt},
            }
        )
        records.append(
            {
                **common,
                "sessionId": session_id,
                "version": "2.1.112",
                "type": "assistant",
                "uuid": f"a-{n}",
                "parentUuid": f"u-{n}",
                "timestamp": at.replace(":00.000Z", ":05.000Z"),
                "message": {
                    "model": "claude-opus-4-7",
                    "id": f"msg_{n}",
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "text", "text": answer}],
                    "stop_reason": "end_turn",
                },
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


@pytest.fixture()
def claude_root(tmp_path: Path) -> Path:
    root = tmp_path / "claude"
    claude_session(
        root / "-home-dev-shop" / "0d7c1b5e-2f4a-4c3b-9e8d-7a6b5c4d3e2f.jsonl",
        TURNS,
        "0d7c1b5e-2f4a-4c3b-9e8d-7a6b5c4d3e2f",
    )
    return root


def cli_json(*args: str) -> dict[str, Any]:
    proc = teamlore_cli(*args, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def sync(root: Path) -> dict[str, Any]:
    return cli_json("sync", "--source", f"claude={root}")


def write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / "config.toml").write_text(text)
    os.chmod(home / "config.toml", 0o600)


def index(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(index_db_path(home))


# -- the user's view: sync embeds, search fuses ------------------------------------------------


def test_the_paraphrases_share_no_search_term_with_their_turns() -> None:
    from teamlore.core.analyzer import analyze, parse_query

    for query, turn in PARAPHRASES.items():
        prompt, answer = TURNS[turn - 1]
        assert parse_query(query).coverage(analyze(f"{prompt} {answer}")) == 0, query


def test_sync_embeds_every_turn_and_search_finds_a_turn_by_its_meaning(
    home: Path, claude_root: Path
) -> None:
    synced = sync(claude_root)
    vectors = synced["vectors"]
    assert vectors["status"] == "done"
    assert vectors["space"] == bundled_embedder().space.key
    assert vectors["embeddedTurns"] == vectors["turnsWithVector"] == vectors["turns"] == 6
    again = teamlore_cli("sync", "--source", f"claude={claude_root}")  # nothing new to embed
    assert "Embedded 0 turns for hybrid search; 6 of 6 turns have a vector." in again.stdout

    for query, turn in PARAPHRASES.items():
        hybrid = cli_json("sessions", "search", query)
        assert hybrid["paths"] == ["lexical", "vector"]
        assert hybrid["vector"] == {
            "ran": True,
            "space": bundled_embedder().space.key,
            "turns": 6,
            "reason": None,
            "code": None,
        }
        first = hybrid["hits"][0]
        assert (first["turn"], first["matchedBy"]) == (turn, ["vector"]), query

        words = cli_json("sessions", "search", query, "--lexical")
        assert words["paths"] == ["lexical"]
        assert words["vector"]["ran"] is False
        assert words["vector"]["reason"] == "lexical search only was asked for"
        assert turn not in [h["turn"] for h in words["hits"]]

    text = teamlore_cli("sessions", "search", "poem about fall foliage")
    assert text.returncode == 0
    assert f"words + meaning ({bundled_embedder().space.key})" in text.stdout
    assert "turn 4 (claude, score" in text.stdout and "by meaning)" in text.stdout
    lexical_text = teamlore_cli("sessions", "search", "poem about fall foliage", "--lexical")
    assert "words only (lexical search only was asked for)" in lexical_text.stdout


def test_a_word_match_still_leads_and_says_both_paths_found_it(
    home: Path, claude_root: Path
) -> None:
    sync(claude_root)
    hits = cli_json("sessions", "search", "structuredClone polyfill Safari")["hits"]
    assert hits[0]["turn"] == 6 and hits[0]["matchedBy"] == ["lexical", "vector"]


def test_embeddings_off_keeps_sync_and_search_lexical(home: Path, claude_root: Path) -> None:
    write_config(home, '[embeddings]\nbackend = "off"\n')
    assert sync(claude_root)["vectors"] == {"status": "off"}
    found = cli_json("sessions", "search", "poem about fall foliage")
    assert found["paths"] == ["lexical"]
    assert found["vector"]["reason"] == '[embeddings] backend = "off" in config.toml'
    assert not index(home).execute("SELECT count(*) FROM turn_vectors").fetchone()[0]


def test_an_index_without_vectors_of_the_model_searches_by_words_and_says_why(
    home: Path, claude_root: Path
) -> None:
    write_config(home, '[embeddings]\nbackend = "off"\n')
    sync(claude_root)
    write_config(home, "")  # back to the bundled default, but no sync since
    found = cli_json("sessions", "search", "poem about fall foliage")
    assert found["paths"] == ["lexical"]
    assert "no turn has a vector of bundled:" in found["vector"]["reason"]
    assert "teamlore sync" in found["vector"]["reason"]


# -- the configured endpoint, and a change of model ---------------------------------------------


def letters(text: str) -> list[float]:
    """A scripted 'model': counts of a few letters (enough to tell texts apart)."""
    lower = text.lower()
    return [float(lower.count(c)) + 0.5 for c in "aeioustrnl"] + [float(len(lower) % 7)]


def endpoint_config(base_url: str) -> str:
    return (
        '[embeddings]\nbackend = "endpoint"\nprofile = "embed"\n\n'
        f'[models.embed]\nbase_url = "{base_url}"\nmodel = "scripted-embedder"\n'
        'api_key_env = "EMBED_KEY"\nmax_retries = 0\n'
    )


def test_a_change_of_model_re_embeds_every_turn_and_never_mixes_spaces(
    home: Path, claude_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert sync(claude_root)["vectors"]["turnsWithVector"] == 6  # bundled first
    monkeypatch.setenv("EMBED_KEY", "sk-test-embed")
    with ScriptedServer() as server:
        server.respond_with(embeddings_responder(letters))
        write_config(home, endpoint_config(server.base_url))
        vectors = sync(claude_root)["vectors"]
        assert vectors["space"] == "endpoint:scripted-embedder"
        assert (vectors["droppedVectors"], vectors["embeddedTurns"]) == (6, 6)
        found = cli_json("sessions", "search", "poem about fall foliage")
        assert found["vector"]["space"] == "endpoint:scripted-embedder"
        assert [r.path for r in server.requests] == ["/v1/embeddings"] * 2  # turns, then query
    down = cli_json("sessions", "search", "poem about fall foliage")  # the server is gone
    assert down["paths"] == ["lexical"] and down["vector"]["code"].startswith("MODEL_")
    conn = index(home)
    assert conn.execute("SELECT key FROM vector_spaces").fetchall() == [
        ("endpoint:scripted-embedder",)
    ]
    dimensions = {len(row[0]) for row in conn.execute("SELECT vector FROM turn_vectors")}
    assert dimensions == {len(letters("x"))}


def test_an_endpoint_that_is_down_never_fails_sync_or_search(
    home: Path, claude_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMBED_KEY", "sk-test-embed")
    with ScriptedServer() as server:
        down = server.base_url
    write_config(home, endpoint_config(down))
    synced = sync(claude_root)
    assert synced["turns"] == 6
    assert synced["vectors"]["status"] == "unavailable"
    assert synced["vectors"]["code"].startswith("MODEL_")
    text = teamlore_cli("sync", "--source", f"claude={claude_root}")
    assert text.returncode == 0 and "Turns not embedded (MODEL_" in text.stdout
    found = cli_json("sessions", "search", "Docker image")
    assert found["paths"] == ["lexical"] and found["hits"][0]["turn"] == 5
    assert "no turn has a vector of endpoint:scripted-embedder" in found["vector"]["reason"]


# -- what the index keeps ------------------------------------------------------------------------


def mini_sync(home: Path, src: Path) -> sqlite3.Connection:
    indexer = Indexer(open_index(home), {"mini": MiniAdapter()}, home=home)
    indexer.sync([Source("mini", src)])
    return indexer.conn


def one(conn: sqlite3.Connection, sql: str) -> tuple[Any, ...]:
    return tuple(conn.execute(sql).fetchone())


def mini_turns(src: Path, name: str, texts: list[str]) -> Path:
    return session_file(src / f"{name}.jsonl", *({"t": "user", "text": t} for t in texts))


def test_a_changed_turn_is_re_embedded_and_its_old_slot_is_never_returned(
    home: Path, tmp_path: Path
) -> None:
    src = tmp_path / "s"
    mini_turns(src, "a", [prompt for prompt, _answer in TURNS])
    conn = mini_sync(home, src)
    embedder = bundled_embedder()
    assert turn_vectors.embed_pending_turns(conn, embedder).embedded == 6
    conn.execute(
        "UPDATE turns SET user_text = 'Write a limerick about a cat', revision = 'changed'"
        " WHERE ordinal = 4"
    )
    again = turn_vectors.embed_pending_turns(conn, embedder)
    assert (again.embedded, again.vectors) == (1, 6)
    query = embedder.embed(["a funny rhyme about a pet"])[0]
    ranked = turn_vectors.rank_turns(conn, query, embedder.space.key, depth=10, candidates=10)
    assert len(ranked.turn_ids) == len(set(ranked.turn_ids)) == 6  # turn 4's old slot: skipped
    limerick = one(conn, "SELECT id FROM turns WHERE ordinal = 4")[0]
    assert ranked.turn_ids[0] == limerick
    blocks = conn.execute("SELECT sum(size) FROM turn_vector_blocks").fetchone()[0]
    assert blocks == 7  # 6 live slots and the dead one, until compaction


def test_blocks_read_once_are_reused_until_any_connection_writes(
    home: Path, tmp_path: Path
) -> None:
    """A long-lived process keeps the sign-bit blocks between searches (the MCP server opens
    the index per call), and sees what another connection embedded since."""
    src = tmp_path / "s"
    mini_turns(src, "a", [prompt for prompt, _answer in TURNS])
    conn = mini_sync(home, src)
    embedder = bundled_embedder()
    turn_vectors.embed_pending_turns(conn, embedder)
    query = embedder.embed(["a funny rhyme about a pet"])[0]

    def nearest(connection: sqlite3.Connection) -> list[int]:
        ranked = turn_vectors.rank_turns(
            connection, query, embedder.space.key, depth=20, candidates=20
        )
        return ranked.turn_ids

    first = nearest(conn)
    kept = turn_vectors._last_read[-1][1]
    second_connection = open_index(home)
    assert nearest(second_connection) == first
    assert turn_vectors._last_read[-1][1] is kept  # nothing written: not read again
    mini_turns(src, "b", ["Write a limerick about a cat"])
    writer = mini_sync(home, src)  # another connection indexes and embeds a new turn
    turn_vectors.embed_pending_turns(writer, embedder)
    limerick = one(writer, "SELECT max(id) FROM turns")[0]
    for connection in (conn, second_connection):
        assert nearest(connection)[0] == limerick
    assert turn_vectors._last_read[-1][1] is not kept


def test_the_turn_count_is_counted_once_until_any_connection_writes(
    home: Path, tmp_path: Path
) -> None:
    """A hybrid search reports how many turns have no vector yet: a long-lived process counts
    the index's turns once (a whole index read at 250k turns), and again after any write, also
    another connection's, or inside a transaction that may hold its own new rows."""
    src = tmp_path / "s"
    mini_turns(src, "a", [prompt for prompt, _answer in TURNS])
    conn = mini_sync(home, src)
    embedder = bundled_embedder()
    turn_vectors.embed_pending_turns(conn, embedder)
    space = embedder.space.key
    counted: list[str] = []
    conn.set_trace_callback(lambda sql: counted.append(sql) if "count(*)" in sql else None)
    assert turn_vectors.vector_space_counts(conn, space) == (6, 6)
    assert turn_vectors.vector_space_counts(conn, space) == (6, 6)
    assert turn_vectors.vector_space_counts(open_index(home), space) == (6, 6)
    assert len(counted) <= 1  # counted at most once (the sync may have counted already)
    mini_turns(src, "b", ["Write a limerick about a cat"])
    mini_sync(home, src)  # another connection indexes a turn it has not embedded
    assert turn_vectors.vector_space_counts(conn, space) == (6, 7)
    conn.execute("BEGIN")
    session = one(conn, "SELECT session_id FROM turns LIMIT 1")[0]
    conn.execute(
        "INSERT INTO turns(session_id, ordinal, user_text) VALUES (?, 99, 'unsaved')", (session,)
    )
    assert turn_vectors.vector_space_counts(conn, space) == (6, 8)
    conn.execute("ROLLBACK")
    assert turn_vectors.vector_space_counts(conn, space) == (6, 7)


def test_whether_the_index_holds_chinese_is_asked_once_until_any_connection_writes(
    home: Path, tmp_path: Path
) -> None:
    """An English hybrid search looks for Chinese turns to translate into (docs/hybrid-search.md,
    "English queries over Chinese turns"): a long-lived process asks the index whether it holds
    any once, and again after another connection wrote, which finds the Chinese turn added."""
    src = tmp_path / "s"
    mini_turns(src, "a", ["Pick a threshold for the linter"])
    conn = mini_sync(home, src)
    embedder = bundled_embedder()
    turn_vectors.embed_pending_turns(conn, embedder)
    asked: list[str] = []
    conn.set_trace_callback(
        lambda sql: asked.append(sql) if sql.startswith("SELECT 1 FROM turns_fts") else None
    )
    question = "the threshold for contributors"
    for _ in range(3):
        hits = search_turns(conn, question, embedder=embedder).hits
        assert [h["sessionKey"] for h in hits] == [hits[0]["sessionKey"]]
    assert len(asked) <= 1  # asked at most once (a search before may have asked already)
    mini_turns(src, "b", ["外部貢獻者的閾值應該怎麼定？"])  # "contributor", "threshold"
    mini_sync(home, src)
    hits = search_turns(conn, question, embedder=embedder).hits
    assert len({h["sessionKey"] for h in hits}) == 2
    assert len(asked) <= 2


def test_deleted_turns_lose_their_vectors_and_compaction_repacks_the_blocks(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(turn_vectors, "BATCH_TURNS", 3)
    monkeypatch.setattr(turn_vectors, "MAX_SMALL_BLOCKS", 2)
    src = tmp_path / "s"
    for n in range(4):
        mini_turns(src, f"f{n}", [f"{prompt} (take {n})" for prompt, _a in TURNS[:3]])
    conn = mini_sync(home, src)
    embedder = bundled_embedder()
    assert turn_vectors.embed_pending_turns(conn, embedder).vectors == 12
    # 4 batches of 3 made 4 small blocks: more than 2, so they were merged into one
    assert one(conn, "SELECT count(*), sum(size) FROM turn_vector_blocks") == (1, 12)
    first_session = conn.execute("SELECT min(session_id) FROM turns").fetchone()[0]
    gone = {
        r[0] for r in conn.execute("SELECT id FROM turns WHERE session_id = ?", (first_session,))
    }
    with conn:
        conn.execute("DELETE FROM turns WHERE session_id = ?", (first_session,))
    assert conn.execute("SELECT count(*) FROM turn_vectors").fetchone()[0] == 9  # cascade
    query = embedder.embed(["database migration timeout"])[0]
    ranked = turn_vectors.rank_turns(conn, query, embedder.space.key, depth=50, candidates=50)
    assert len(ranked.turn_ids) == 9 and not gone & set(ranked.turn_ids)
    turn_vectors.embed_pending_turns(conn, embedder)  # 3 of 12 slots dead: 25 %, kept
    assert conn.execute("SELECT sum(size) FROM turn_vector_blocks").fetchone()[0] == 12
    second = conn.execute("SELECT min(session_id) FROM turns").fetchone()[0]
    with conn:
        conn.execute("DELETE FROM turns WHERE session_id = ?", (second,))
    turn_vectors.embed_pending_turns(conn, embedder)  # 6 of 12 dead: rewritten
    assert one(conn, "SELECT count(*), sum(size) FROM turn_vector_blocks") == (1, 6)
    live = conn.execute(
        "SELECT v.turn_id, v.block_id, v.slot, t.session_id FROM turn_vectors v"
        " JOIN turns t ON t.id = v.turn_id ORDER BY v.turn_id"
    )
    block = conn.execute("SELECT id, turn_ids, session_ids FROM turn_vector_blocks").fetchone()
    ids = np.frombuffer(block[1], dtype="<i8").tolist()
    sessions = np.frombuffer(block[2], dtype="<i8").tolist()
    for turn_id, block_id, slot, session_id in live:
        assert (block_id, ids[slot], sessions[slot]) == (block[0], turn_id, session_id)


def test_a_turn_with_no_known_token_is_done_without_a_slot(home: Path, tmp_path: Path) -> None:
    src = tmp_path / "s"
    mini_turns(src, "a", ["   ", "Speed up the unit tests"])
    conn = mini_sync(home, src)
    stats = turn_vectors.embed_pending_turns(conn, bundled_embedder())
    assert (stats.embedded, stats.vectors) == (2, 2)
    assert one(conn, "SELECT count(*) FROM turn_vectors WHERE block_id IS NULL") == (1,)
    assert turn_vectors.embed_pending_turns(conn, bundled_embedder()).embedded == 0


def test_the_quantized_scan_ranks_like_exact_cosine(home: Path, tmp_path: Path) -> None:
    src = tmp_path / "s"
    subjects = ["cache", "deploy", "parser", "invoice", "login", "docker", "schema", "theme"]
    verbs = ["fix", "speed up", "document", "refactor", "test", "remove", "rename", "review"]
    texts = [f"{v} the {s} module, step {n}" for v in verbs for s in subjects for n in range(5)]
    mini_turns(src, "a", texts)
    conn = mini_sync(home, src)
    embedder = bundled_embedder()
    turn_vectors.embed_pending_turns(conn, embedder)
    ids = [r[0] for r in conn.execute("SELECT id FROM turns ORDER BY ordinal")]
    exact = embedder.embed(texts)
    agree = []
    for query in ["make the caching layer faster", "write docs for the billing code"]:
        vector = embedder.embed([query])[0]
        truth = [ids[i] for i in np.argsort(-(exact @ vector), kind="stable")[:10]]
        got = turn_vectors.rank_turns(
            conn, vector, embedder.space.key, depth=10, candidates=100
        ).turn_ids
        agree.append(len(set(truth) & set(got)))
    assert min(agree) >= 8, agree


def test_vector_hits_obey_the_provider_filter(home: Path, tmp_path: Path) -> None:
    class OtherAdapter(MiniAdapter):
        provider = "other"

    mini, other = tmp_path / "mini", tmp_path / "other"
    mini_turns(mini, "m", [prompt for prompt, _answer in TURNS])
    mini_turns(other, "o", ["Compose a short verse about the sea"])
    indexer = Indexer(open_index(home), {"mini": MiniAdapter(), "other": OtherAdapter()}, home=home)
    indexer.sync([Source("mini", mini), Source("other", other)])
    embedder = bundled_embedder()
    turn_vectors.embed_pending_turns(indexer.conn, embedder)
    hits = search_turns(
        indexer.conn, "poem about fall foliage", provider="other", embedder=embedder
    ).hits
    assert [h["provider"] for h in hits] == ["other"]


def two_providers(home: Path, tmp_path: Path) -> Indexer:
    """Six turns of provider `mini`, and of provider `other` one verse and three prompts that
    share their meaning with the first three of `mini`'s."""

    class OtherAdapter(MiniAdapter):
        provider = "other"

    mini, other = tmp_path / "mini", tmp_path / "other"
    mini_turns(mini, "m", [prompt for prompt, _answer in TURNS])
    mini_turns(other, "o", ["Compose a short verse about the sea", *TURNS_ELSEWHERE])
    indexer = Indexer(open_index(home), {"mini": MiniAdapter(), "other": OtherAdapter()}, home=home)
    indexer.sync([Source("mini", mini), Source("other", other)])
    turn_vectors.embed_pending_turns(indexer.conn, bundled_embedder())
    return indexer


TURNS_ELSEWHERE = [
    "The database migration in the nightly build is timing out",
    "Header component CSS classes should use BEM names",
    "Invoices endpoint needs pagination",
]


def test_a_provider_filter_reads_no_vector_of_another_providers_turn(
    home: Path, tmp_path: Path
) -> None:
    """The sessions kept beside the sign bits drop the other provider's candidates before their
    int8 rows are read (docs/sessions.md, "Search speed")."""
    conn = two_providers(home, tmp_path).conn
    other = {
        r[0]
        for r in conn.execute(
            "SELECT t.id FROM turns t JOIN sessions s"
            " ON s.id = t.session_id WHERE s.provider = 'other'"
        )
    }
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    conn.execute("BEGIN")  # the vector side in line, on `conn`
    hits = search_turns(
        conn, "database migration timeout", provider="other", embedder=bundled_embedder()
    ).hits
    conn.execute("ROLLBACK")
    [read] = [sql for sql in statements if "FROM turn_vectors" in sql]
    read_ids = set(json.loads(read[read.index("json_each('") + 11 : read.index("')")]))
    assert read_ids and read_ids <= other
    assert {h["provider"] for h in hits} == {"other"} and hits[0]["turn"] == 2


def test_blocks_from_before_sessions_were_kept_search_alike_and_get_them_at_the_next_sync(
    home: Path, tmp_path: Path
) -> None:
    indexer = two_providers(home, tmp_path)
    conn, embedder = indexer.conn, bundled_embedder()

    def searches() -> list[list[dict[str, Any]]]:
        return [
            search_turns(conn, query, provider=provider, embedder=embedder).hits
            for query in ["database migration timeout", "poem about the ocean"]
            for provider in (None, "mini", "other")
        ]

    before = searches()
    # what an index of the schema before looks like, migrated: blocks without sessions
    conn.execute("ALTER TABLE turn_vector_blocks DROP COLUMN session_ids")
    conn.execute(f"PRAGMA user_version = {MIGRATIONS.index(TURN_VECTOR_SESSIONS)}")
    conn.commit()
    conn.close()
    conn = open_index(home)
    assert one(conn, "SELECT count(*) FROM turn_vector_blocks WHERE session_ids IS NOT NULL") == (
        0,
    )
    assert searches() == before
    assert turn_vectors.embed_pending_turns(conn, embedder).embedded == 0  # the next sync
    assert one(conn, "SELECT count(*) FROM turn_vector_blocks WHERE session_ids IS NULL") == (0,)
    for turn_ids, session_ids in conn.execute(
        "SELECT turn_ids, session_ids FROM turn_vector_blocks"
    ):
        turns = np.frombuffer(turn_ids, dtype="<i8").tolist()
        kept = dict(zip(turns, np.frombuffer(session_ids, dtype="<i8").tolist(), strict=True))
        assert kept == dict(
            conn.execute(
                f"SELECT id, session_id FROM turns WHERE id IN ({','.join(map(str, turns))})"
            ).fetchall()
        )
    assert searches() == before


def test_the_meaning_is_ranked_beside_the_words_with_the_same_hits_as_in_line(
    home: Path, tmp_path: Path
) -> None:
    mini = tmp_path / "mini"
    mini_turns(mini, "m", [f"{prompt} {answer}" for prompt, answer in TURNS])
    conn = mini_sync(home, mini)
    embedder = bundled_embedder()
    turn_vectors.embed_pending_turns(conn, embedder)
    on_conn: list[str] = []
    conn.set_trace_callback(on_conn.append)
    for provider in (None, "mini"):
        on_conn.clear()
        beside = search_turns(conn, "poem about fall foliage", provider=provider, embedder=embedder)
        # the vectors were read on a connection of their own (docs/sessions.md, "Search speed")
        assert on_conn and not any("turn_vectors" in sql for sql in on_conn)
        on_conn.clear()
        conn.execute("BEGIN")  # in a transaction the vector side runs in line, on `conn`
        in_line = search_turns(
            conn, "poem about fall foliage", provider=provider, embedder=embedder
        )
        conn.execute("ROLLBACK")
        assert any("turn_vectors" in sql for sql in on_conn)
        assert beside == in_line
        assert beside.hits[0]["turn"] == 4 and "vector" in beside.hits[0]["matchedBy"]
    assert not [t for t in threading.enumerate() if t.name == "teamlore-read-beside"]


# -- crash safety ------------------------------------------------------------------------------

CRASHING_SYNC = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from teamlore.ops.registry import OpContext, run_operation
    from teamlore.sessions import turn_vectors
    turn_vectors.BATCH_TURNS = 4
    context = OpContext(home=Path(sys.argv[2]), cwd=Path.cwd())
    run_operation("sync", context, {"sources": [f"claude={sys.argv[1]}"]})
    """
)


@pytest.mark.parametrize(
    ("failpoint", "kept"), [("embed.before-commit", 0), ("embed.after-batch", 4)]
)
def test_a_crash_while_embedding_loses_at_most_the_batch_in_flight(
    home: Path, claude_root: Path, failpoint: str, kept: int
) -> None:
    run_killed_at(failpoint, CRASHING_SYNC, str(claude_root), str(home))
    conn = index(home)
    assert one(conn, "PRAGMA integrity_check") == ("ok",)
    assert one(conn, "SELECT count(*) FROM turns") == (6,)  # the indexing had committed
    assert one(conn, "SELECT count(*) FROM turn_vectors") == (kept,)
    assert one(conn, "SELECT coalesce(sum(size), 0) FROM turn_vector_blocks") == (kept,)
    vectors = sync(claude_root)["vectors"]
    assert (vectors["embeddedTurns"], vectors["turnsWithVector"]) == (6 - kept, 6)


def test_a_damaged_bundled_model_never_fails_sync_or_search_and_says_why(
    home: Path, claude_root: Path, tmp_path: Path
) -> None:
    # a `wordllama` package earlier on the path whose files are unreadable: the space is still
    # known (package metadata), loading fails at the first embed
    shadow = tmp_path / "shadow" / "wordllama"
    (shadow / "weights").mkdir(parents=True)
    (shadow / "tokenizers").mkdir()
    (shadow / "__init__.py").write_text("")
    (shadow / "weights" / "l2_supercat_256.safetensors").write_bytes(b"damaged")
    (shadow / "tokenizers" / "l2_supercat_tokenizer_config.json").write_text("{}")
    env = {"PYTHONPATH": str(tmp_path / "shadow")}
    text = teamlore_cli("sync", "--source", f"claude={claude_root}", "--format", "json", env=env)
    assert text.returncode == 0, text.stderr
    vectors = json.loads(text.stdout)["vectors"]
    assert vectors["status"] == "unavailable" and vectors["code"] == "EMBEDDINGS_UNAVAILABLE"
    assert "cannot be loaded" in vectors["message"]
    found = teamlore_cli("sessions", "search", "Docker image", "--format", "json", env=env)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["paths"] == ["lexical"]


def random_blocks(sizes: list[int], width: int, seed: int) -> turn_vectors.Blocks:
    """Blocks of random sign bits (few distinct rows, so many distances tie), turn ids from 100
    on."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 256, size=(7, width), dtype=np.uint8)
    rows[0] = 0  # a row every bit of an all-ones query differs from
    first = list(itertools.accumulate(sizes, initial=100))
    return turn_vectors.Blocks(
        ids=[i + 1 for i in range(len(sizes))],
        sizes=sizes,
        turn_ids=[
            np.arange(first[i], first[i] + n, dtype="<i8").tobytes() for i, n in enumerate(sizes)
        ],
        session_ids=[None] * len(sizes),
        bits=[rows[rng.integers(0, len(rows), size=n)].tobytes() for n in sizes],
    )


@pytest.mark.parametrize("width", [32, 96])  # 256 dimensions (the bundled model), 768
def test_both_hamming_scans_count_every_differing_sign_bit_across_blocks(width: int) -> None:
    blocks = random_blocks([5, 1, 12], width, seed=7)
    every = np.frombuffer(b"".join(blocks.bits), dtype=np.uint8).reshape(-1, width)
    for query in (
        np.random.default_rng(8).integers(0, 256, width, dtype=np.uint8),
        np.full(width, 255, dtype=np.uint8),
    ):
        expected = [sum(bin(int(b)).count("1") for b in row ^ query) for row in every]
        scanned = turn_vectors._hamming_scan(blocks, query)
        plain = [
            d
            for bits, size in zip(blocks.bits, blocks.sizes, strict=True)
            for d in turn_vectors._plain_distances(bits, size, query.tobytes())
        ]
        assert scanned.tolist() == plain == expected


def test_the_plain_and_the_numpy_scan_choose_the_same_candidates_ties_by_slot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fresh process scans a small index without importing numpy (docs/hybrid-search.md,
    "Session search"): which turns are rescored must not depend on which scan ran, even when
    many share the distance at the cut."""
    blocks = random_blocks([4096, 300, 17], 32, seed=3)
    query = np.random.default_rng(4).integers(0, 256, 32, dtype=np.uint8).tobytes()
    distances = turn_vectors._hamming_scan(blocks, np.frombuffer(query, dtype=np.uint8))
    for take in (1, 50, 400, 4413, 5000):
        by_numpy = turn_vectors._numpy_nearest(blocks, query, take)
        monkeypatch.delitem(sys.modules, "numpy")
        by_plain = turn_vectors._nearest(blocks, query, take)
        monkeypatch.undo()
        expected = sorted(range(len(distances)), key=lambda i: (distances[i], i))[:take]
        assert sorted(by_numpy) == sorted(by_plain) == sorted(expected)


@pytest.mark.parametrize("dimensions", [256, 1024])
def test_the_rescoring_gives_the_same_cosines_with_and_without_numpy(
    monkeypatch: pytest.MonkeyPatch, dimensions: int
) -> None:
    """The plain rescoring sums every row's products at once, in fields of one big integer
    (`_plain_products`): no field may carry into the next, whatever the rows' values (the
    extremes -128 and 127 included) and the model's width (an endpoint's 1024 dimensions)."""
    rng = np.random.default_rng(5)
    rows = [rng.integers(-128, 128, dimensions, dtype=np.int8).tobytes() for _ in range(50)]
    rows.append(bytes(dimensions))  # a zero row: cosine 0, not a division by zero
    rows += [b"\x80" * dimensions, b"\x7f" * dimensions]
    query = rng.normal(size=dimensions).astype(np.float32)
    query /= np.linalg.norm(query)
    with_numpy = int8_cosines(rows, query.tolist())
    monkeypatch.delitem(sys.modules, "numpy")
    plain = int8_cosines(rows, query.tolist())
    monkeypatch.undo()
    assert with_numpy == plain
    matrix = np.frombuffer(b"".join(rows), dtype=np.int8).reshape(len(rows), -1).astype(float)
    exact = matrix @ query / np.maximum(np.linalg.norm(matrix, axis=1), 1e-9)
    assert np.allclose(plain, exact, atol=1e-6)


def test_a_chinese_query_finds_an_english_turn_by_meaning(home: Path, claude_root: Path) -> None:
    """The bundled model reads the query's Chinese words as their CC-CEDICT glosses."""
    sync(claude_root)
    for query, turn in {"写一首关于秋天落叶的诗": 4, "容器镜像太大，怎么缩小？": 5}.items():
        hits = cli_json("sessions", "search", query)["hits"]
        assert hits[0]["turn"] == turn and "vector" in hits[0]["matchedBy"], query


def test_a_chinese_query_finds_an_english_turn_by_meaning_only(
    home: Path, claude_root: Path
) -> None:
    """The word path searches the query's own words, never their English glosses (a translation
    must not outvote a literal match, docs/hybrid-search.md): with words alone (`--lexical`) a
    Chinese query finds no English turn; the vector path finds it, and so does the glosses'
    ranking, since no turn holds the query's words as typed (rule 3 gives the glosses no voice
    only when one does)."""
    sync(claude_root)
    assert cli_json("sessions", "search", "镜像", "--lexical")["hits"] == []  # "image"
    hits = cli_json("sessions", "search", "容器镜像")["hits"]  # "container image"
    assert hits[0]["turn"] == 5 and hits[0]["matchedBy"] == ["translation", "vector"]


def test_vectors_made_by_the_helper_are_stored_byte_for_byte_as_the_sync_stores_its_own(
    tmp_path: Path,
) -> None:
    # the analysis helper sends rows as stored (int8, then sign bits); mixed with rows made
    # here (turns it did not cover, a turn whose text changed since) the index is the same
    src = tmp_path / "s"
    mini_turns(src, "a", [prompt for prompt, _answer in TURNS])
    embedder = bundled_embedder()
    size = turn_vectors.stored_size(256)
    stored = {}
    for name in ("alone", "helped"):
        (tmp_path / name).mkdir()
        conn = mini_sync(tmp_path / name, src)
        rows = conn.execute(
            "SELECT id, user_text, assistant_text FROM turns ORDER BY id"
        ).fetchall()
        texts = [turn_vectors.turn_text(r[1], r[2]) for r in rows]
        made: dict[int, turn_vectors.MadeVector] = {}
        if name == "helped":
            blob = turn_vectors.stored_rows(embedder.embed(texts))
            assert len(blob) == len(texts) * size == len(texts) * (256 + 32)
            for n in range(0, len(rows), 2):  # every other turn
                made[rows[n][0]] = (hash(texts[n]), 256, blob[n * size : (n + 1) * size])
            older = turn_vectors.stored_rows(embedder.embed(["an older text of the turn"]))
            made[rows[0][0]] = (hash("an older text of the turn"), 256, older)  # not taken
        turn_vectors.embed_pending_turns(conn, embedder, made=made)
        stored[name] = conn.execute(
            "SELECT t.revision, v.vector, v.slot, b.size, b.turn_ids, b.bits FROM turn_vectors v"
            " JOIN turns t ON t.id = v.turn_id JOIN turn_vector_blocks b ON b.id = v.block_id"
            " ORDER BY t.id"
        ).fetchall()
    assert len(stored["alone"]) == len(TURNS)
    assert [tuple(r) for r in stored["helped"]] == [tuple(r) for r in stored["alone"]]


def test_the_analyzers_word_caches_are_emptied_before_the_turns_are_embedded(
    home: Path, claude_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What indexing cached of the words is memory embedding then needs: a cold sync's caches
    held ~20 MiB at its peak (docs/sessions.md, "Memory at the peak")."""
    from teamlore.core import analyzer
    from teamlore.ops.registry import OpContext, run_operation

    analyzed = analyzer.analyze("Rebased parseLines onto main")  # with the caches filled
    cached_at_embedding: list[int] = []
    real_embed = turn_vectors.embed_pending_turns

    def embedding(*args: Any, **kwargs: Any) -> turn_vectors.EmbedStats:
        cached_at_embedding.append(analyzer.cached_words())
        return real_embed(*args, **kwargs)

    monkeypatch.setattr(turn_vectors, "embed_pending_turns", embedding)
    context = OpContext(home=home, cwd=tmp_path)
    synced = run_operation("sync", context, {"sources": [f"claude={claude_root}"]})

    assert synced["turns"] == 6 and synced["vectors"]["embeddedTurns"] == 6
    assert cached_at_embedding == [0]
    assert analyzer.analyze("Rebased parseLines onto main") == analyzed  # analyzed again
