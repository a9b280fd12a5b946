"""A migration copy killed mid-way (core/db.py, `copy_before`) leaves a temp file in the state
dir: it never stands in the way of a later copy, also one by a process with the same pid and
thread id, and the next upgrade removes it. Real databases; the kill is a real SIGKILL at a
failpoint of a real process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from teamlore.core import db, paths, safe_write
from teamlore.core.failpoints import ENV
from teamlore.memory.store.state_db import MIGRATIONS, STATE_DB_NAME, open_state_db

OLDER = 11  # teamlore 0.1.0's schema of the memory state database

UPGRADE = """
import sys
from pathlib import Path
from teamlore.memory.store.state_db import open_state_db
open_state_db(Path(sys.argv[1])).close()
"""


def _older_state_db(home: Path) -> Path:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    db.connect(home / STATE_DB_NAME, MIGRATIONS[:OLDER]).close()
    return home / STATE_DB_NAME


def _schema(path: Path) -> int:
    conn = db.connect(path, [], readonly=True)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def _temps(home: Path) -> list[str]:
    return sorted(p.name for p in home.iterdir() if p.name.startswith(safe_write.TEMP_PREFIX))


def test_a_leftover_under_the_name_this_thread_would_have_used_does_not_stop_the_copy(
    tmp_path: Path,
) -> None:
    """A killed process of the same pid and thread id (pids are reused) left its work file."""
    path = _older_state_db(tmp_path / "home")
    leftover = paths.work_path(path, "copy")
    leftover.write_bytes(b"half a copy")

    open_state_db(tmp_path / "home").close()

    assert _schema(path) == len(MIGRATIONS)
    assert _schema(db.copy_path(path, OLDER)) == OLDER


def test_a_copy_killed_mid_way_leaves_a_temp_the_next_upgrade_removes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = _older_state_db(home)
    killed = subprocess.run(
        [sys.executable, "-c", UPGRADE, str(home)],
        env={**os.environ, ENV: "db.copy-temp-created"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = _temps(home)
    assert len(left) == 1 and _schema(path) == OLDER
    assert not db.copy_path(path, OLDER).exists()

    open_state_db(home).close()

    assert _temps(home) == []
    assert _schema(path) == len(MIGRATIONS)
    assert _schema(db.copy_path(path, OLDER)) == OLDER
