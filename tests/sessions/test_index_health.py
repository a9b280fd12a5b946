"""Index health: advice that never destroys data.

A full disk is DISK_FULL (nothing changed), never "damaged"; a damaged index says DB_CORRUPT
(also from `status --check`) and `sync --rebuild` recovers it, but asks for `--discard-history`
before setting aside the only copy of deleted transcripts' history; a read-only state dir
still serves every read-only command. All through the real CLI on real SQLite files; the full
disk and the read-only state dir are real mounts in a private user+mount namespace
(`unshare -rm`), skipped with the reason where the kernel does not allow one.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from records import codex_meta, codex_user_message, write_jsonl

from support import in_private_namespace, teamlore_cli
from teamlore.models.cache import MODEL_CACHE_ENV


@pytest.fixture(autouse=True)
def models_derived_into_the_state_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    """The full and the read-only state dirs below also hold (or fail to hold) what is derived
    from the bundled models, as a user's does: not the suite's shared copy."""
    monkeypatch.delenv(MODEL_CACHE_ENV)


def _codex(path: Path, number: int, text: str = "hello") -> None:
    session_id = f"019a0000-0000-7000-8000-{number:012d}"
    write_jsonl(path, [codex_meta(session_id), codex_user_message(f"{text} {number}", AT1)])


AT1 = "2026-01-01T00:00:01Z"


def _cli(home: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = teamlore_cli(*args, "--format", "json", env={"TEAMLORE_HOME": str(home)})
    return done.returncode, json.loads(done.stdout or "{}")


def _synced(tmp_path: Path, files: int = 3) -> tuple[Path, Path]:
    home, codex = tmp_path / "home", tmp_path / "codex"
    for number in range(files):
        _codex(codex / f"rollout-{number}.jsonl", number)
    rc, out = _cli(home, "sync", "--source", f"codex={codex}")
    assert rc == 0 and out["totals"]["sessions"] == files
    return home, codex


def _checkpoint(home: Path) -> Path:
    index = home / "index.sqlite3"
    with sqlite3.connect(index) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return index


def _set_aside(home: Path) -> list[Path]:
    return [
        p for p in home.glob("index.sqlite3.damaged-*") if not p.name.endswith(("-wal", "-shm"))
    ]


def _sessions_in(index: Path) -> int:
    with sqlite3.connect(index) as conn:
        return int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])


def _code(out: dict[str, Any]) -> str:
    return str(out.get("error", {}).get("code"))


def _damage_pages(index: Path, seed: int) -> None:
    """Overwrite bytes inside b-tree pages after the first (the header stays valid)."""
    data = bytearray(index.read_bytes())
    page = 4096
    for number in range(1, len(data) // page):
        offset = number * page + (seed * 131 + number * 17) % 200
        data[offset : offset + 64] = bytes((seed + i) % 256 for i in range(64))
    index.write_bytes(bytes(data))


@pytest.mark.parametrize("seed", [1, 135, 4242])
def test_a_damaged_index_says_db_corrupt_everywhere_and_rebuild_recovers(
    tmp_path: Path, seed: int
) -> None:
    home, codex = _synced(tmp_path)
    _damage_pages(_checkpoint(home), seed)

    for command in (("status", "--check"), ("sessions", "list"), ("sessions", "search", "hello")):
        rc, out = _cli(home, *command)
        assert (rc, _code(out)) == (1, "DB_CORRUPT"), (command, out)
        assert "sync --rebuild" in out["error"]["message"]
    rc, out = _cli(home, "sync", "--source", f"codex={codex}", "--rebuild")
    assert rc == 0, out
    assert out["totals"]["sessions"] == 3
    assert len(_set_aside(home)) == 1
    assert _cli(home, "status", "--check")[1]["integrity"] == "ok"


@pytest.mark.parametrize("damage", ["dropped tables", "wrong file type", "empty file"])
def test_dropped_tables_or_a_wrong_file_type_are_db_corrupt_and_rebuild_recovers(
    tmp_path: Path, damage: str
) -> None:
    home, codex = _synced(tmp_path)
    index = _checkpoint(home)
    if damage == "dropped tables":
        with sqlite3.connect(index) as conn:
            conn.execute("DROP TABLE tool_uses")
    elif damage == "wrong file type":
        index.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(5000))
    else:
        index.write_bytes(b"not a database at all\n")
    for command in (("sync", "--source", f"codex={codex}"), ("status",), ("sessions", "list")):
        rc, out = _cli(home, *command)
        assert (rc, _code(out)) == (1, "DB_CORRUPT"), (command, out)
    rc, out = _cli(home, "sync", "--source", f"codex={codex}", "--rebuild")
    assert rc == 0 and out["totals"]["sessions"] == 3, out


def test_rebuild_asks_before_dropping_deleted_transcripts_history(tmp_path: Path) -> None:
    home, codex = _synced(tmp_path)
    (codex / "rollout-0.jsonl").unlink()  # the provider deleted an old transcript
    assert _cli(home, "sync", "--source", f"codex={codex}")[0] == 0
    index = _checkpoint(home)
    with sqlite3.connect(index) as conn:
        conn.execute("DROP TABLE turns_fts")
    before = _sessions_in(index)

    rc, out = _cli(home, "sync", "--source", f"codex={codex}", "--rebuild")
    assert (rc, _code(out)) == (1, "REBUILD_LOSES_HISTORY"), out
    assert out["error"]["details"] == {"sessions": 1}
    assert _sessions_in(index) == before == 3 and not list(home.glob("*.damaged-*"))

    rc, out = _cli(home, "sync", "--source", f"codex={codex}", "--rebuild", "--discard-history")
    assert rc == 0 and out["totals"]["sessions"] == 2
    assert len(_set_aside(home)) == 1  # set aside, never deleted


def test_rebuild_of_a_healthy_index_keeps_deleted_transcripts_history(tmp_path: Path) -> None:
    home, codex = _synced(tmp_path)
    (codex / "rollout-0.jsonl").unlink()
    rc, out = _cli(home, "sync", "--source", f"codex={codex}", "--rebuild")
    assert rc == 0 and out["totals"]["sessions"] == 3
    assert not list(home.glob("*.damaged-*"))


# -- real mounts in a private namespace ----------------------------------------------------------


def _teamlore(home: Path, *args: str) -> list[str]:
    exe = shutil.which("teamlore", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "teamlore.cli.main"]
    return ["env", f"TEAMLORE_HOME={home}", *cmd, *args, "--format", "json"]


def _json(step: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(step["stdout"] or "{}"))


def test_a_full_disk_is_disk_full_and_changes_nothing(tmp_path: Path) -> None:
    mnt, codex = tmp_path / "mnt", tmp_path / "codex"
    mnt.mkdir()
    home = mnt / "home"
    for number in range(3):
        _codex(codex / f"rollout-{number}.jsonl", number)
    later = tmp_path / "later"
    for number in range(3, 40):
        _codex(later / f"rollout-{number}.jsonl", number, "x" * 3000)
    sync = _teamlore(home, "sync", "--source", f"codex={codex}")
    steps: list[Any] = [
        ["sh", f"mount -t tmpfs -o size=8m tmpfs {mnt}"],  # an empty index is ~1.5 MiB
        sync,
        ["sh", f"cp {later}/* {codex}/ && (dd if=/dev/zero of={mnt}/filler bs=4k || true)"],
        sync,
        _teamlore(home, "sync", "--source", f"codex={codex}", "--rebuild"),
        _teamlore(home, "status", "--check"),
        _teamlore(home, "sessions", "list"),
        ["sh", f"ls {home}"],
        ["sh", f"rm {mnt}/filler"],
        sync,
    ]
    _, first, _, full, rebuild, status, listed, ls, _, freed = in_private_namespace(tmp_path, steps)
    assert first["rc"] == 0 and _json(first)["totals"]["sessions"] == 3
    for refused in (full, rebuild):
        assert refused["rc"] == 1 and _code(_json(refused)) == "DISK_FULL", refused
        assert "damaged" not in refused["stdout"] and "rebuild" not in refused["stdout"]
    assert status["rc"] == 0 and _json(status)["integrity"] == "ok", status
    assert len(_json(listed)["sessions"]) == 3
    assert "damaged" not in ls["stdout"]
    assert freed["rc"] == 0 and _json(freed)["totals"]["sessions"] == 40, freed


def test_a_disk_full_before_the_first_sync_says_disk_full_not_a_schema_upgrade(
    tmp_path: Path,
) -> None:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    home = mnt / "home"
    steps: list[Any] = [
        ["sh", f"mount -t tmpfs -o size=1m tmpfs {mnt} && mkdir {home}"],
        ["sh", f"dd if=/dev/zero of={mnt}/filler bs=4k || true"],
        _teamlore(home, "status"),
        _teamlore(home, "sessions", "search", "hello"),
    ]
    _, _, status, found = in_private_namespace(tmp_path, steps)
    for refused in (status, found):
        assert refused["rc"] == 1 and _code(_json(refused)) == "DISK_FULL", refused
        assert "schema upgrade" not in refused["stdout"]


def test_a_read_only_state_dir_serves_read_only_commands(tmp_path: Path) -> None:
    home, codex = _synced(tmp_path)
    steps: list[Any] = [
        ["sh", f"mount --bind {home} {home} && mount -o remount,bind,ro {home} {home}"],
        _teamlore(home, "status"),
        _teamlore(home, "sessions", "list"),
        _teamlore(home, "sessions", "search", "hello"),
        _teamlore(home, "sync", "--source", f"codex={codex}"),
    ]
    mounted, status, listed, found, sync = in_private_namespace(tmp_path, steps)
    assert mounted["rc"] == 0, mounted
    assert status["rc"] == 0 and _json(status)["sessions"] == 3, status
    assert listed["rc"] == 0 and len(_json(listed)["sessions"]) == 3, listed
    assert found["rc"] == 0 and _json(found)["hits"], found
    assert sync["rc"] == 1 and _code(_json(sync)) == "STATE_READ_ONLY", sync


def test_the_expected_tables_are_those_the_migrations_create() -> None:
    from teamlore.core import db
    from teamlore.sessions.index_db import INDEX_DB_NAME, MIGRATIONS
    from teamlore.sessions.index_health import EXPECTED_TABLES

    conn = sqlite3.connect(":memory:", isolation_level=None)
    db.migrate(conn, MIGRATIONS, name=INDEX_DB_NAME)
    created = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    # a new migration that creates or drops a table: name it in EXPECTED_TABLES
    assert created == EXPECTED_TABLES
