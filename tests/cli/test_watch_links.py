"""`teamlore watch` (docs/watch.md) keeps a symlinked session file fresh as `teamlore sync` reads
it: discovery follows a link to a `*.jsonl` file, so the watch syncs when the file it names is
written, though that file lies outside the watched folders and its writes make no event there.
Real processes: the server is `teamlore watch` started as a subprocess."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_cli import sources
from test_watch import OWN_PROCESS, patient_clients_and_a_user_of_our_own, serving

from support import teamlore_cli

# fixtures: test_watch's autouse one, test_cli's session folders
__all__ = ["patient_clients_and_a_user_of_our_own", "sources"]


def append_turn(path: Path, session_id: str, n: int) -> None:
    """A prompt and its answer, as Claude Code writes them."""
    at = f"2026-12-06T10:{n:02d}:00.000Z"
    envelope = {"sessionId": session_id, "timestamp": at, "cwd": "/w", "version": "2.1.332"}
    records = [
        {
            **envelope,
            "type": "user",
            "uuid": f"u{n}",
            "message": {"role": "user", "content": f"q{n}"},
        },
        {
            **envelope,
            "type": "assistant",
            "uuid": f"a{n}",
            "message": {
                "role": "assistant",
                "id": f"m{n}",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": f"answer {n}"}],
            },
        },
    ]
    with path.open("a") as out:
        out.writelines(json.dumps(r) + "\n" for r in records)


def turns_of(session_id: str) -> list[Any]:
    shown = teamlore_cli("sessions", "show", session_id, "--format", "json", env=OWN_PROCESS)
    return [t["user"] for t in json.loads(shown.stdout)["turns"]] if shown.returncode == 0 else []


def test_a_symlinked_session_file_is_synced_when_the_file_it_names_is_written(
    home: Path, sources: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "dotfiles"
    elsewhere.mkdir()
    project = sources / "claude" / "-w"
    project.mkdir()
    before, during = "4f1c2d3e-0000-4000-8000-0000000000a1", "4f1c2d3e-0000-4000-8000-0000000000a2"
    append_turn(elsewhere / f"{before}.jsonl", before, 1)
    (project / f"{before}.jsonl").symlink_to(elsewhere / f"{before}.jsonl")
    with serving(home, sources, tmp_path) as server:
        synced = len(server.events("synced"))
        append_turn(elsewhere / f"{before}.jsonl", before, 2)
        server.wait_for("synced", synced + 1)
        assert turns_of(before) == ["q1", "q2"]

        # a link made while the watch runs: its own event syncs it, then its file is watched
        append_turn(elsewhere / f"{during}.jsonl", during, 1)
        (project / f"{during}.jsonl").symlink_to(elsewhere / f"{during}.jsonl")
        server.wait_for("synced", synced + 2)
        assert turns_of(during) == ["q1"]
        append_turn(elsewhere / f"{during}.jsonl", during, 2)
        server.wait_for("synced", synced + 3)
        assert turns_of(during) == ["q1", "q2"]
