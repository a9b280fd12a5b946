"""`sessions list --unmapped` shows what `sync` sends a person there for, the folders its
unmapped sessions were started in: each folder once, with how many sessions it holds and the
newest start, most sessions first (then newest); JSON keeps `sessions` and adds `folders`."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from sessions.records import (
    codex_agent_message,
    codex_event,
    codex_meta,
    codex_user_message,
    write_jsonl,
)
from teamlore.cli.main import app

# (folder, day of January 2026): three in tools, three in web (newer), one in notes
STARTS = [("/Users/me/tools", d) for d in (1, 5, 3)] + [("/Users/me/web", d) for d in (2, 9, 4)]
STARTS.append(("/Users/me/notes", 20))


def test_unmapped_lists_each_folder_once_most_sessions_first(tmp_path: Path, home: Path) -> None:
    sessions = tmp_path / "codex"
    for n, (cwd, day) in enumerate(STARTS):
        session_id = f"0199{n:04d}-0000-7000-8000-000000000001"
        at = f"2026-01-{day:02d}T10:00:00Z"
        write_jsonl(
            sessions / f"rollout-2026-01-{day:02d}T10-00-00-{session_id}.jsonl",
            [
                codex_meta(session_id, cwd=cwd, at=at),
                codex_user_message(f"work {n}", at),
                codex_agent_message("done", at),
                codex_event("task_complete", at),
            ],
        )
    env = {"TEAMLORE_HOME": str(home), "COLUMNS": "100"}

    def cli(*args: str) -> str:
        done = CliRunner().invoke(app, list(args), env=env)
        assert done.exit_code == 0, done.output
        return done.output

    cli("sync", "--source", f"codex={sessions}", "--format", "json")
    assert cli("sessions", "list", "--unmapped", "--limit", "2").splitlines() == [
        "sessions  newest (UTC)      folder",
        "       3  2026-01-09 10:00  /Users/me/web",
        "       3  2026-01-05 10:00  /Users/me/tools",
        "… 1 more folder (`--limit 3` lists them all)",
    ]
    listed = json.loads(cli("sessions", "list", "--unmapped", "--limit", "2", "--format", "json"))
    assert [s["startedAt"][:10] for s in listed["sessions"]] == ["2026-01-20", "2026-01-09"]
    assert listed["more"] == 5  # the sessions, as they were
    assert listed["folders"] == [
        {
            "cwd": "/Users/me/web",
            "sessions": 3,
            "newestStartedAt": listed["sessions"][1]["startedAt"],
        },
        {"cwd": "/Users/me/tools", "sessions": 3, "newestStartedAt": "2026-01-05T10:00:00Z"},
    ]
    assert listed["moreFolders"] == 1
    # without --unmapped, the sessions as they were: no folders
    assert set(json.loads(cli("sessions", "list", "--format", "json"))) == {"sessions", "more"}
