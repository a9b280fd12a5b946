"""memory-state.sqlite3: where it lives, how it opens, and what its schema refuses."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from teamlore.core import db, errors
from teamlore.core.analyzer import analyze, fts_query
from teamlore.memory.store.state_db import (
    MIGRATIONS,
    STATE_DB_NAME,
    TABLES,
    memory_state_uuid,
    open_state_db,
    state_db_path,
)

REPO = "a1" * 12
WORKTREE = "b2" * 12
HEX64 = "c3" * 32
HEX40 = "d4" * 20


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = open_state_db(tmp_path)
    yield connection
    connection.close()


def test_opens_in_the_state_dir_private_and_in_wal_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("TEAMLORE_HOME", str(home))
    connection = open_state_db()
    path = home / STATE_DB_NAME
    assert state_db_path() == path
    assert path.is_file()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.schema_version(connection) == len(MIGRATIONS)
    connection.close()


def test_every_table_of_the_schema_exists(conn: sqlite3.Connection) -> None:
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert set(TABLES) <= names
    assert db.integrity_check(conn) == []


def test_the_database_uuid_is_created_once_and_kept(tmp_path: Path) -> None:
    first = open_state_db(tmp_path)
    uuid_value = memory_state_uuid(first)
    first.close()
    second = open_state_db(tmp_path)
    assert memory_state_uuid(second) == uuid_value
    assert len(uuid_value) == 36
    row = second.execute("SELECT value FROM memory_state_meta WHERE key = 'schema_version'")
    assert row.fetchone()[0] == str(len(MIGRATIONS))
    second.close()


def test_a_database_from_a_newer_teamlore_is_refused(tmp_path: Path) -> None:
    open_state_db(tmp_path).close()
    raw = sqlite3.connect(tmp_path / STATE_DB_NAME)
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    with pytest.raises(errors.TeamloreError) as caught:
        open_state_db(tmp_path)
    assert caught.value.code == "DB_SCHEMA_TOO_NEW"


def test_two_connections_share_one_schema(tmp_path: Path) -> None:
    a = open_state_db(tmp_path)
    b = open_state_db(tmp_path)
    assert memory_state_uuid(a) == memory_state_uuid(b)
    a.close()
    b.close()


def _insert_candidate(conn: sqlite3.Connection, **overrides: object) -> None:
    row: dict[str, object] = {
        "candidate_id": "cand-1",
        "repository_key": REPO,
        "worktree_key": WORKTREE,
        "chunk_ref": "chunk-1",
        "content_digest": HEX64,
        "payload_json": "{}",
        "updated_at": 1,
    }
    row.update(overrides)
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    conn.execute(f"INSERT INTO candidates ({columns}) VALUES ({marks})", tuple(row.values()))


def test_a_valid_candidate_gets_the_seed_defaults(conn: sqlite3.Connection) -> None:
    _insert_candidate(conn)
    row = conn.execute("SELECT revision, status, adjudication, candidate_kind FROM candidates")
    assert tuple(row.fetchone()) == (1, "draft", "pending", "entry")


@pytest.mark.parametrize(
    "overrides",
    [
        {"status": "approved"},  # git states are not candidate states
        {"adjudication": "applied"},
        {"revision": 0},
        {"content_digest": "XYZ"},
        {"content_digest": HEX64.upper()},
        {"repository_key": ""},
        {"payload_json": "{not json"},
        {"candidate_kind": "scene"},
    ],
)
def test_candidates_refuse_values_outside_the_state_machine(
    conn: sqlite3.Connection, overrides: dict[str, object]
) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        _insert_candidate(conn, **overrides)


def _insert_task(conn: sqlite3.Connection, **overrides: object) -> None:
    row: dict[str, object] = {
        "task_id": "task-1",
        "kind": "extraction",
        "repository_key": REPO,
        "worktree_key": WORKTREE,
        "chunk_ref": "chunk-1",
        "binding_json": "{}",
        "created_at": 1,
    }
    row.update(overrides)
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    conn.execute(f"INSERT INTO tasks ({columns}) VALUES ({marks})", tuple(row.values()))


def test_a_claimed_task_must_carry_its_lease(conn: sqlite3.Connection) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        _insert_task(conn, status="claimed")
    _insert_task(
        conn, status="claimed", lease_holder="agent", claim_token="tok", lease_expires_at=10
    )
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE tasks SET claim_token = NULL")


@pytest.mark.parametrize(
    "overrides",
    [
        {"kind": "synthesis"},
        {"status": "done"},
        {"chunk_ref": None},  # an extraction task always names its chunk
        {"lease_epoch": -1},
        {"authorization_plan_digest": HEX40},
    ],
)
def test_tasks_refuse_invalid_rows(conn: sqlite3.Connection, overrides: dict[str, object]) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        _insert_task(conn, **overrides)


def test_submissions_belong_to_a_known_task(conn: sqlite3.Connection) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO submissions VALUES ('missing', ?, '{}', 1)",
            (HEX64,),
        )
    _insert_task(conn)
    conn.execute("INSERT INTO submissions VALUES ('task-1', ?, '{}', 1)", (HEX64,))
    with pytest.raises(sqlite3.IntegrityError):  # a single accepted submission per task
        conn.execute("INSERT INTO submissions VALUES ('task-1', ?, '{}', 2)", (HEX64,))


def _journal(conn: sqlite3.Connection, status: str = "generated") -> None:
    conn.execute(
        "INSERT INTO promotion_journal (plan_id, repository_key, worktree_key, "
        "plan_canonical_json, plan_digest, candidate_ids_json, assessment_digest, "
        "policy_version, status, updated_at) VALUES ('plan-1', ?, ?, '{}', ?, '[]', ?, "
        "'sanitize@1', ?, 1)",
        (REPO, WORKTREE, HEX64, HEX64, status),
    )


def test_the_promotion_journal_only_knows_its_states(conn: sqlite3.Connection) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        _journal(conn, status="promoted")
    _journal(conn)
    assert conn.execute("SELECT status FROM promotion_journal").fetchone()[0] == "generated"


@pytest.mark.parametrize(
    ("target_path", "blob"),
    [
        ("../outside.md", None),
        ("/etc/passwd", None),
        (".threadshare/memory/entries/../../x.md", None),
        (".threadshare/memory/entries/a.md", "abc"),
    ],
)
def test_promotion_files_refuse_escaping_paths_and_bad_blob_ids(
    conn: sqlite3.Connection, target_path: str, blob: str | None
) -> None:
    _journal(conn)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO promotion_files (plan_id, target_path, target_blob_hash, "
            "sanitized_content, sanitized_digest) VALUES ('plan-1', ?, ?, x'00', ?)",
            (target_path, blob, HEX64),
        )


def test_promotion_files_accept_a_new_file_and_an_overwrite(conn: sqlite3.Connection) -> None:
    _journal(conn)
    for path, blob in ((".threadshare/memory/entries/a.md", None), ("entries/b.md", HEX40)):
        conn.execute(
            "INSERT INTO promotion_files (plan_id, target_path, target_blob_hash, "
            "sanitized_content, sanitized_digest) VALUES ('plan-1', ?, ?, x'00', ?)",
            (path, blob, HEX64),
        )
    # deleting the plan deletes its files
    conn.execute("DELETE FROM promotion_journal")
    assert conn.execute("SELECT count(*) FROM promotion_files").fetchone()[0] == 0


def test_manifest_authorizations_name_their_manifest(conn: sqlite3.Connection) -> None:
    insert = (
        "INSERT INTO authorization_log (plan_digest, decided_at, via, manifest_digest) "
        "VALUES (?, 1, ?, ?)"
    )
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(insert, (HEX64, "manifest", None))
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(insert, (HEX64, "email", None))
    conn.execute(insert, (HEX64, "manifest", HEX64))
    conn.execute(insert, (HEX64, "interactive", None))


def test_assessments_only_know_the_three_claim_supports(conn: sqlite3.Connection) -> None:
    _insert_candidate(conn)
    insert = (
        "INSERT INTO assessments VALUES ('cand-1', ?, ?, 'direct', '[]', ?, 'deterministic', ?, 1)"
    )
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(insert, ("s1", HEX64, "llm-said-so", HEX64))
    conn.execute(insert, ("s1", HEX64, "unverified", HEX64))
    with pytest.raises(sqlite3.IntegrityError):  # the candidate must exist
        conn.execute(insert.replace("cand-1", "ghost"), ("s2", HEX64, "unverified", HEX64))


def _projection(conn: sqlite3.Connection, generation: int, coverage: str, build: str) -> None:
    conn.execute(
        "INSERT INTO approved_projection (repository_key, worktree_key, generation, "
        "source_tree_digest, coverage, build_coverage, analyzer_version, "
        "recall_algorithm_version, projector_version, synced_at) "
        "VALUES (?, ?, ?, ?, ?, ?, 'a@1', 'r@1', 'p@1', 1)",
        (REPO, WORKTREE, generation, HEX64, coverage, build),
    )


@pytest.mark.parametrize(
    ("generation", "coverage", "build"),
    [
        (1, "complete", "partial"),  # a partial build is never reported complete
        (0, "partial", "complete"),  # generation 0 means nothing was ever built
        (1, "partial", "none"),
        (1, "unknown", "complete"),
    ],
)
def test_the_approved_projection_cannot_overstate_its_coverage(
    conn: sqlite3.Connection, generation: int, coverage: str, build: str
) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        _projection(conn, generation, coverage, build)


def test_approved_entries_are_unique_per_owner_kind_and_id(conn: sqlite3.Connection) -> None:
    insert = (
        "INSERT INTO approved_entries (repository_key, worktree_key, kind, entry_id, path, "
        "revision, content_digest, entry_type, status, title, frontmatter_json, body_text) "
        "VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, '', '{}', 'body')"
    )
    conn.execute(
        insert, (REPO, WORKTREE, "entry", "x", "entries/x.md", HEX64, "work_fact", "approved")
    )
    conn.execute(insert, (REPO, WORKTREE, "scene", "x", "scenes/x.md", HEX64, None, "approved"))
    conn.execute(
        insert, (REPO, "e5" * 12, "entry", "x", "entries/x.md", HEX64, "work_fact", "approved")
    )
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            insert, (REPO, WORKTREE, "entry", "x", "entries/y.md", HEX64, None, "approved")
        )
    with pytest.raises(sqlite3.IntegrityError):  # only entries can be deprecated
        conn.execute(
            insert, (REPO, WORKTREE, "skill", "s", "skills/s/SKILL.md", HEX64, None, "deprecated")
        )


def test_fts_tables_hold_analyzed_text_so_short_chinese_queries_match(
    conn: sqlite3.Connection,
) -> None:
    conn.execute(
        "INSERT INTO approved_fts(rowid, searchable_text) VALUES (1, ?)",
        (analyze("别重构旧鉴权模块的 session 中间件 parseLine"),),
    )
    for query in ("鉴权", "鉴", "parse line", "SESSION"):
        hits = conn.execute(
            "SELECT rowid FROM approved_fts WHERE approved_fts MATCH ?", (fts_query(query),)
        ).fetchall()
        assert [h[0] for h in hits] == [1], query


def test_a_schema_8_database_gains_an_empty_source_stats_table_and_stays_private(
    tmp_path: Path,
) -> None:
    # schema 8 had no record of file identities: the migration adds an empty table, so the first
    # sync after it reads the whole memory tree once and records it
    path = state_db_path(tmp_path)
    old = db.connect(path, MIGRATIONS[:8])
    old.execute(
        "INSERT INTO approved_projection (repository_key, worktree_key, generation, "
        "source_tree_digest, coverage, build_coverage, analyzer_version, "
        "recall_algorithm_version, projector_version, entry_count, diagnostics_json, synced_at) "
        "VALUES (?, ?, 3, ?, 'complete', 'complete', 'a', 'r', 'p', 0, '[]', 0)",
        (REPO, WORKTREE, HEX64),
    )
    old.close()
    conn = open_state_db(tmp_path)
    assert db.schema_version(conn) == len(MIGRATIONS) == 19
    assert conn.execute("SELECT count(*) FROM approved_source_stats").fetchone()[0] == 0
    assert conn.execute("SELECT generation FROM approved_projection").fetchone()[0] == 3
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    conn.close()


def test_chunks_recorded_before_chunk_budgets_keep_the_default_budget(tmp_path: Path) -> None:
    # schema 16 cut every chunk to the default 40,960 bytes; a smaller one is asked for since
    path = state_db_path(tmp_path)
    old = db.connect(path, MIGRATIONS[:16])
    old.execute(
        "INSERT INTO chunks (chunk_ref, repository_key, worktree_key, session_key, turn_range,"
        " chunk_digest) VALUES ('ref', ?, ?, ?, '1-3', ?)",
        (REPO, WORKTREE, HEX64, HEX64),
    )
    old.close()
    conn = open_state_db(tmp_path)
    assert conn.execute("SELECT budget_bytes FROM chunks").fetchone()[0] == 40_960
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE chunks SET budget_bytes = 1024")
    conn.close()


def test_chunks_extracted_before_extraction_rounds_were_never_put_back(tmp_path: Path) -> None:
    # schema 17 had no `memory discard --extract-again`: every chunk is in its first round
    path = state_db_path(tmp_path)
    old = db.connect(path, MIGRATIONS[:17])
    old.execute(
        "INSERT INTO chunks (chunk_ref, repository_key, worktree_key, session_key, turn_range,"
        " chunk_digest, status) VALUES ('ref', ?, ?, ?, '1-3', ?, 'extracted')",
        (REPO, WORKTREE, HEX64, HEX64),
    )
    old.close()
    conn = open_state_db(tmp_path)
    assert conn.execute("SELECT extraction_round FROM chunks").fetchone()[0] == 0
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE chunks SET extraction_round = -1")
    conn.close()


def test_source_stats_refuse_a_malformed_record(conn: sqlite3.Connection) -> None:
    insert = (
        "INSERT INTO approved_source_stats (repository_key, worktree_key, source_tree_digest, "
        "stats_digest, newest_ns, recorded_ns) VALUES (?, ?, ?, ?, ?, ?)"
    )
    for tree_digest, stats_digest, newest_ns, recorded_ns in (
        ("not-hex", HEX64, 0, 1),
        (HEX64, "e5" * 20, 0, 1),
        (HEX64, HEX64, -1, 1),
        (HEX64, HEX64, 0, 0),
    ):
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(
                insert, (REPO, WORKTREE, tree_digest, stats_digest, newest_ns, recorded_ns)
            )
    conn.execute(insert, (REPO, WORKTREE, HEX64, HEX64, 0, 1))
