from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from support import shared_fixtures, teamlore_cli
from teamlore.core import db, errors

MIGRATIONS = [
    "CREATE TABLE a (id INTEGER PRIMARY KEY, v TEXT);",
    "ALTER TABLE a ADD COLUMN w TEXT; CREATE INDEX a_w ON a(w);",
]


def test_connect_creates_private_wal_database_and_migrates(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite3"
    conn = db.connect(path, MIGRATIONS)
    assert db.schema_version(conn) == 2
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    conn.execute("INSERT INTO a(v, w) VALUES ('1', '2')")
    assert db.integrity_check(conn) == []


def test_reopening_applies_only_new_migrations(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite3"
    db.connect(path, MIGRATIONS[:1]).execute("INSERT INTO a(v) VALUES ('kept')")
    conn = db.connect(path, MIGRATIONS)
    assert conn.execute("SELECT v FROM a").fetchall()[0][0] == "kept"


def test_a_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite3"
    db.connect(path, MIGRATIONS)
    with pytest.raises(errors.TeamloreError) as caught:
        db.connect(path, MIGRATIONS[:1])
    assert caught.value.code == "DB_SCHEMA_TOO_NEW"


def test_write_tx_rolls_back_on_error(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "x.sqlite3", MIGRATIONS)
    with pytest.raises(RuntimeError), db.write_tx(conn):
        conn.execute("INSERT INTO a(v) VALUES ('lost')")
        raise RuntimeError("boom")
    assert conn.execute("SELECT count(*) FROM a").fetchone()[0] == 0


def test_a_derived_write_another_writer_blocks_is_skipped_and_the_reader_goes_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "x.sqlite3"
    writer = db.connect(path, MIGRATIONS)
    reader = db.connect(path, MIGRATIONS)  # waits up to BUSY_TIMEOUT_MS for a lock otherwise
    writer.execute("BEGIN IMMEDIATE")
    assert not db.write_derived(reader, lambda c: c.execute("INSERT INTO a(v) VALUES ('d')"))
    assert not reader.in_transaction
    assert reader.execute("PRAGMA busy_timeout").fetchone()[0] == db.BUSY_TIMEOUT_MS
    writer.execute("COMMIT")
    assert reader.execute("SELECT count(*) FROM a").fetchone()[0] == 0
    # the lock is free again: written
    assert db.write_derived(reader, lambda c: c.execute("INSERT INTO a(v) VALUES ('d')"))
    assert reader.execute("SELECT count(*) FROM a").fetchone()[0] == 1


def test_a_derived_write_still_raises_what_is_not_about_storage(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "x.sqlite3", MIGRATIONS)
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        db.write_derived(conn, lambda c: c.execute("INSERT INTO missing(v) VALUES ('x')"))

    def half_then_boom(c: sqlite3.Connection) -> None:
        c.execute("INSERT INTO a(v) VALUES ('lost')")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        db.write_derived(conn, half_then_boom)
    assert conn.execute("SELECT count(*) FROM a").fetchone()[0] == 0
    assert not conn.in_transaction


def test_failpoint_kill_mid_transaction_leaves_the_database_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite3"
    db.connect(path, MIGRATIONS).execute("INSERT INTO a(v) VALUES ('before')")
    script = textwrap.dedent(f"""
        from pathlib import Path
        from teamlore.core import db
        from teamlore.core.failpoints import failpoint
        conn = db.connect(Path({str(path)!r}), {MIGRATIONS!r})
        with db.write_tx(conn):
            conn.execute("INSERT INTO a(v) VALUES ('half')")
            failpoint("test.mid-tx")
    """)
    env = {**os.environ, "TEAMLORE_FAILPOINT": "test.mid-tx"}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True)
    assert proc.returncode == -9
    conn = db.connect(path, MIGRATIONS)
    assert [r[0] for r in conn.execute("SELECT v FROM a")] == ["before"]
    assert db.integrity_check(conn) == []


# -- work read beside a connection ---------------------------------------------------------------


def beside_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "teamlore-read-beside"]


def test_work_read_beside_runs_on_its_own_read_only_connection_and_thread(
    tmp_path: Path,
) -> None:
    conn = db.connect(tmp_path / "x.sqlite3", MIGRATIONS)
    conn.execute("INSERT INTO a(v) VALUES ('committed')")

    def work(beside: sqlite3.Connection) -> tuple[str, bool, list[str]]:
        values = [str(r[0]) for r in beside.execute("SELECT v FROM a")]
        return threading.current_thread().name, beside is conn, values

    assert db.ReadBeside(conn, work).result() == ("teamlore-read-beside", False, ["committed"])
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        db.ReadBeside(conn, lambda beside: beside.execute("DELETE FROM a")).result()
    assert not beside_threads()


def test_work_read_beside_a_transaction_or_a_memory_database_runs_in_line(
    tmp_path: Path,
) -> None:
    def work(beside: sqlite3.Connection) -> tuple[str, list[str]]:
        values = [str(r[0]) for r in beside.execute("SELECT v FROM a")]
        return threading.current_thread().name, values

    conn = db.connect(tmp_path / "x.sqlite3", MIGRATIONS)
    with db.write_tx(conn):  # only `conn` sees its uncommitted row
        conn.execute("INSERT INTO a(v) VALUES ('uncommitted')")
        assert db.ReadBeside(conn, work).result() == ("MainThread", ["uncommitted"])
    memory = sqlite3.connect(":memory:")
    memory.execute("CREATE TABLE a (v TEXT)")
    memory.execute("INSERT INTO a VALUES ('in memory')")
    assert db.ReadBeside(memory, work).result() == ("MainThread", ["in memory"])


def test_work_read_beside_raises_its_own_error_once_waited_for_and_leaves_no_thread(
    tmp_path: Path,
) -> None:
    conn = db.connect(tmp_path / "x.sqlite3", MIGRATIONS)
    failure = LookupError("the work's own error")

    def work(_beside: sqlite3.Connection) -> None:
        raise failure

    beside = db.ReadBeside(conn, work)
    beside.join()  # a caller that failed first only waits: the work's error is not raised
    assert not beside_threads()
    with pytest.raises(LookupError) as caught:
        beside.result()
    assert caught.value is failure


def test_an_upgrade_while_another_process_holds_the_write_lock_is_lock_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "x.sqlite3"
    db.connect(path, MIGRATIONS[:1]).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process writing
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)
    try:
        with pytest.raises(errors.TeamloreError) as caught:
            db.connect(path, MIGRATIONS)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert caught.value.code == "LOCK_BUSY"
    assert (
        "x.sqlite3" in caught.value.message and "another teamlore process" in caught.value.message
    )
    assert db.schema_version(db.connect(path, MIGRATIONS[:1])) == 1  # nothing changed meanwhile
    assert db.schema_version(db.connect(path, MIGRATIONS)) == 2  # and it upgrades afterwards


def test_a_write_another_process_blocks_is_refused_as_lock_busy_not_internal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from teamlore.core import refusals

    path = tmp_path / "x.sqlite3"
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)
    conn = db.connect(path, MIGRATIONS)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(sqlite3.OperationalError) as caught, db.write_tx(conn):
            conn.execute("INSERT INTO a(v) VALUES ('lost')")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    refusal = refusals.refusal_for(caught.value)
    assert refusal.code == "LOCK_BUSY"
    assert refusal.exit_code == 1
    assert "another teamlore process" in refusal.message
    assert conn.execute("SELECT count(*) FROM a").fetchone()[0] == 0


def test_a_database_sqlite_keeps_out_of_wal_mode_is_not_sent_to_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite answers a WAL switch it cannot make with the mode it keeps, here an in-memory
    database's (`file::memory:`): neither rebuilding the index nor restoring the state
    database would change that, so the refusal says where WAL works instead."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(errors.TeamloreError) as refused:
        db.connect(Path(":memory:"), MIGRATIONS)
    assert refused.value.code == "DB_CORRUPT"
    assert refused.value.remedy is not None
    assert "--rebuild" not in refused.value.remedy
    assert "TEAMLORE_HOME" in refused.value.remedy
    assert refused.value.message == ":memory:: cannot enable WAL (journal mode memory)"


def test_a_state_dir_whose_name_looks_like_uri_parameters_is_that_folder(tmp_path: Path) -> None:
    # the databases were opened as `file:{path}`: `?mode=ro` or `#` in a folder's name was read
    # as SQLite URI parameters or a fragment, and the sync opened another file or none
    home = tmp_path / "state?mode=ro#x%20y"
    projects = tmp_path / "projects" / "-work-demo"
    projects.mkdir(parents=True)
    session = shared_fixtures("sessions", "claude", "entire-cli-2.0.64.jsonl")
    shutil.copyfile(session, projects / session.name)
    env = {"TEAMLORE_HOME": str(home)}
    synced = teamlore_cli(
        "sync", "--source", f"claude={tmp_path / 'projects'}", "--format", "json", env=env
    )
    assert synced.returncode == 0, synced.stderr
    assert (home / "index.sqlite3").is_file()
    found = teamlore_cli("sessions", "search", "prompt", "--format", "json", env=env)
    assert found.returncode == 0 and json.loads(found.stdout)["hits"], found.stderr


def test_opening_a_database_again_keeps_the_locks_an_open_connection_holds(
    tmp_path: Path,
) -> None:
    """An MCP server's calls open the state database while another call of the same process
    has it open: a reader's snapshot must stay pinned, so another process's checkpoint cannot
    take the write-ahead log from under it (closing any descriptor of a file drops every POSIX
    lock the process holds on it — SQLite's among them)."""
    path = tmp_path / "x.sqlite3"
    writer = db.connect(path, MIGRATIONS)
    writer.execute("INSERT INTO a(v) VALUES ('before')")
    reader = db.connect(path, MIGRATIONS)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM a").fetchone()[0] == 1
    writer.execute("INSERT INTO a(v) VALUES ('after')")  # a commit past the reader's snapshot
    db.connect(path, MIGRATIONS).close()  # a third call of this process opens it meanwhile
    checkpoint = (
        "import sqlite3, sys; conn = sqlite3.connect(sys.argv[1], timeout=0); "
        "print(conn.execute('PRAGMA wal_checkpoint(TRUNCATE)').fetchone()[0])"
    )
    busy = subprocess.run(
        [sys.executable, "-c", checkpoint, str(path)], capture_output=True, text=True, check=True
    )
    assert busy.stdout.strip() == "1"  # the reader still holds its part of the log
    assert reader.execute("SELECT count(*) FROM a").fetchone()[0] == 1
    reader.execute("COMMIT")
    assert db.integrity_check(reader) == []
    for conn in (reader, writer):
        conn.close()
