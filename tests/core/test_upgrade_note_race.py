"""The upgrade note a migration leaves (core/db.py) reaches the person even when a text view
takes the notes (cli/output.py, `say_upgrade_notes`: rename, read, unlink) in the instant
between the migrating process opening the notes file and writing its line: the line goes to
the file the next text view reads, never into the one already read and unlinked. Real
processes on a real state dir: the migration stands still at that instant
(TEAMLORE_PAUSEPOINT) while another command's text view takes the notes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from test_upgrade_copies import STATE_SCHEMA_010, older_state_db

MIGRATE = (
    "import sys; from pathlib import Path; from teamlore.memory.store.state_db import "
    "open_state_db; open_state_db(Path(sys.argv[1])).close()"
)
SAY = "from teamlore.cli.output import say_upgrade_notes; say_upgrade_notes()"


def _say(home: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SAY],
        env={**os.environ, "TEAMLORE_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_notes_taken_while_a_migration_writes_its_line_lose_no_line(tmp_path: Path) -> None:
    home = tmp_path / "state"
    older_state_db(home)
    flag = tmp_path / "paused"
    migrating = subprocess.Popen(
        [sys.executable, "-c", MIGRATE, str(home)],
        env={
            **os.environ,
            "TEAMLORE_HOME": str(home),
            "TEAMLORE_PAUSEPOINT": f"upgrade-note.opened={flag}",
        },
        stderr=subprocess.PIPE,
        text=True,
    )
    said = ""
    try:
        deadline = time.monotonic() + 30
        while not flag.exists():
            assert migrating.poll() is None and time.monotonic() < deadline, migrating.stderr
            time.sleep(0.01)
        said += _say(home)  # another command's text view, while the line is not written yet
    finally:
        deadline = time.monotonic() + 60
        while migrating.poll() is None and time.monotonic() < deadline:
            flag.unlink(missing_ok=True)  # each time the migration stops there
            time.sleep(0.01)
        _, stderr = migrating.communicate(timeout=60)
    assert migrating.returncode == 0, stderr
    said += _say(home)
    assert said.count(f"from schema {STATE_SCHEMA_010} to") == 1, said
    # said once, with the note it follows: never alone, after an empty file
    assert said.count("to go back to an older teamlore") == 1, said
