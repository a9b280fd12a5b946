"""DB_SCHEMA_TOO_NEW over MCP: its `next` names the copy a newer teamlore kept (core/db.py,
`_going_back`), by its file name only; the state dir it is in stays on this machine, as in every
refusal an MCP client gets (core/refusals.py, `redacted`). Real server process over stdio."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from test_hostile_input import _call

from support import initialized_repository
from teamlore.memory.store.state_db import MIGRATIONS, STATE_DB_NAME


def test_the_way_back_over_mcp_names_the_copy_but_not_the_state_dir(
    tmp_path: Path, home: Path
) -> None:
    repo = initialized_repository(tmp_path, home)
    raw = sqlite3.connect(home / STATE_DB_NAME)
    raw.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    raw.close()
    copy = f"{STATE_DB_NAME}.schema-{len(MIGRATIONS)}.bak"
    (home / copy).write_bytes(b"")

    result = _call(repo, {}, "threadshare_memory_status", {})

    error = json.loads(result["content"][0]["text"])["error"]
    assert result["isError"] is True and error["code"] == "DB_SCHEMA_TOO_NEW", error
    assert copy in error["next"], error
    for private in (str(home), str(tmp_path)):
        assert private not in json.dumps(result), error
