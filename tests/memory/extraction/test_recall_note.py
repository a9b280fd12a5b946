"""`memory recall`'s note on a session it left out says when that session's last turn is still
open: the real rave-era session ends in an open turn (no later prompt, no end-of-turn record),
so a window over its last two turns matches one sealed turn, and the note said only `1 matching
turns, fewer than 3`, with nothing about the turn it could not read."""

from __future__ import annotations

import json
from pathlib import Path

from support import rave_era_synced, teamlore_cli

# the rave-era session's turns 6 (sealed, 20:35) and 7 (open, 21:19), UTC
LAST_TWO = ("--since", "2026-04-26T20:30:00Z", "--until", "2026-04-27T00:00:00Z")
# its turns 5 and 6, both sealed: the turn after them is outside the window
SEALED_TWO = ("--since", "2026-04-26T20:20:00Z", "--until", "2026-04-26T21:00:00Z")


def test_a_session_short_of_turns_says_its_last_turn_is_open(tmp_path: Path, home: Path) -> None:
    repo = rave_era_synced(tmp_path, home)
    recalled = json.loads(
        teamlore_cli("memory", "recall", *LAST_TWO, "-f", "json", cwd=repo).stdout
    )
    [rejected] = recalled["selection"]["rejectedSessions"]
    key = rejected["sessionKey"]
    assert rejected["turns"] == 1 and recalled["sources"] == []
    assert recalled["note"].endswith(
        f"Sessions considered: {key} (1 matching turn, fewer than 3; its last turn is still open)."
    ), recalled["note"]

    done = teamlore_cli("memory", "recall", *LAST_TWO, cwd=repo, env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "0 extraction tasks"
    at = next(i for i, line in enumerate(lines) if line.startswith("note: "))
    end = next((i for i in range(at + 1, len(lines)) if not lines[i].startswith("      ")), None)
    note = " ".join(" ".join(lines[at:end]).split())  # wrapped under `note: ` at 80 columns
    assert note.endswith(
        f"{key[:12]} (1 matching turn, fewer than 3; its last turn is still open)."
    )
    # no tasks: nothing to hand an agent
    assert "Use --format json to get the tasks for an agent." not in done.stdout

    # an open last turn outside the window left nothing out: the note does not name it
    sealed = json.loads(
        teamlore_cli("memory", "recall", *SEALED_TWO, "-f", "json", cwd=repo).stdout
    )
    assert sealed["note"].endswith(f"{key} (2 matching turns, fewer than 3)."), sealed["note"]


def test_the_text_view_hands_tasks_to_an_agent_only_when_there_are_some(
    tmp_path: Path, home: Path
) -> None:
    repo = rave_era_synced(tmp_path, home)
    window = ("--since", "2026-04-26T00:00:00Z", "--until", "2026-04-27T00:00:00Z")
    done = teamlore_cli("memory", "recall", *window, cwd=repo, env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    assert not done.stdout.startswith("0 extraction tasks")
    assert done.stdout.rstrip().endswith("Use --format json to get the tasks for an agent.")
