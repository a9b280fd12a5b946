"""`teamlore hook session-end` (installed by `install --sync-on-stop` as a Stop hook): it
returns at once and indexes just the stopped session's file in the background."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from support import teamlore_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import CodexSession, make_repo


def test_the_stopped_session_becomes_searchable(tmp_path: Path, home: Path) -> None:
    root = make_repo(tmp_path / "shop")
    session = CodexSession("s1", root)
    session.turn("why does the nightly export stall", "The export waits on the zebra lock.")
    transcript = session.write(tmp_path / "codex")
    exe = shutil.which("teamlore", path=str(Path(sys.executable).parent))
    assert exe
    payload = json.dumps({"hook_event_name": "Stop", "transcript_path": str(transcript)})
    done = subprocess.run(
        [exe, "hook", "session-end", "--client", "codex"],
        input=payload,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TEAMLORE_HOME": str(home)},
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    hits: list = []
    for _ in range(120):  # the sync runs detached; poll (a bound, not a timing assertion)
        found = teamlore_cli("sessions", "search", "zebra", "--format", "json")
        if found.returncode == 0 and (hits := json.loads(found.stdout)["hits"]):
            break
        time.sleep(0.5)
    assert hits and hits[0]["provider"] == "codex"


def test_no_transcript_does_nothing_and_exits_0(tmp_path: Path, home: Path) -> None:
    done = teamlore_cli("hook", "session-end", "--client", "claude", input="{}")
    assert (done.returncode, done.stdout) == (0, "")
    assert not home.exists()  # nothing was started, nothing created
