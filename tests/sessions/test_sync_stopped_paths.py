"""A sync a full disk stopped shows the failing file's path as the other refusals do: under the
home folder as `~/…`, elsewhere cut to its last part (`core/refusals.shown_paths`), never the
absolute path the exception's text holds."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from teamlore.sessions.index_health import sync_stopped


def test_sync_stopped_shows_the_exceptions_paths_as_refusals_do(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "index.sqlite")
    try:
        outside = tmp_path / "state" / "index.sqlite-wal"
        home = Path(os.path.expanduser("~")) / ".teamlore-test" / "index.sqlite-journal"
        for failed, shown in ((outside, "…/index.sqlite-wal"), (home, "~/.teamlore-test/")):
            exc = OSError(errno.ENOSPC, "No space left on device", str(failed))
            refusal = sync_stopped(conn, "index", exc)
            assert refusal.code == "DISK_FULL"
            assert str(failed.parent) not in refusal.message
            assert shown in refusal.message
    finally:
        conn.close()
