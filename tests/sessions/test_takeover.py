"""A session file whose path another session's transcript takes (a backup restored over it, a tool
that writes another session's content there): sync reads the path again, keeps the history of the
session it held, marked unavailable as when its file disappears, and indexes the new content as
the session it is (docs/sessions.md, "Incremental by design"). Real Claude Code and Codex files
(the shared fixtures), the real `teamlore sync`."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from support import Cli, shared_fixtures

CLAUDE_OLD = "moredip-images-in-user-messages.jsonl"
CLAUDE_OLD_ID = "47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c"
CLAUDE_NEW = "entire-cli-2.1.12.jsonl"
CLAUDE_NEW_ID = "85cc202e-0e74-46ce-a485-e5fcd11f7a8c"
CODEX_OLD = "acidicsoil-0.58.0.jsonl"
CODEX_OLD_ID = "019a93b9-f380-7600-98ff-940e6b99603c"
CODEX_NEW = "trezo-ai-0.120.0.jsonl"
CODEX_NEW_ID = "019daa66-5b7b-7b01-b9ce-b527014cc09f"


def turns(cli: Cli, session: str) -> list[dict[str, Any]]:
    shown: list[dict[str, Any]] = cli.json("sessions", "show", session)["turns"]
    return [{k: v for k, v in t.items() if k != "deliveryEdges"} for t in shown]


def listed(cli: Cli) -> dict[str, tuple[int, bool]]:
    """Each listed session's key: (turns, available)."""
    return {
        s["sessionKey"]: (s["turns"], s["available"])
        for s in cli.json("sessions", "list")["sessions"]
    }


def key_of(cli: Cli, session: str) -> str:
    return str(cli.json("sessions", "show", session)["session"]["sessionKey"])


def take_over(path: Path, source: Path) -> None:
    """`source`'s transcript at `path`, the file there deleted first (a backup restored)."""
    path.unlink()
    shutil.copyfile(source, path)


def test_a_claude_file_taken_over_keeps_the_old_session_and_indexes_the_new_one(
    tmp_path: Path,
) -> None:
    cli = Cli(tmp_path / "state")
    root = tmp_path / "projects"
    (root / "p").mkdir(parents=True)
    path = root / "p" / f"{CLAUDE_OLD_ID}.jsonl"
    shutil.copyfile(shared_fixtures("sessions", "claude", CLAUDE_OLD), path)
    cli.json("sync", "--source", f"claude={root}")
    old_key, old_turns = key_of(cli, CLAUDE_OLD_ID), turns(cli, CLAUDE_OLD_ID)
    take_over(path, shared_fixtures("sessions", "claude", CLAUDE_NEW))

    cli.json("sync", "--source", f"claude={root}")

    new_key = key_of(cli, CLAUDE_NEW_ID)
    assert listed(cli) == {old_key: (len(old_turns), False), new_key: (2, True)}
    assert turns(cli, old_key) == old_turns
    assert cli.json("status")["sessions"] == 2


def test_a_codex_file_rewritten_with_another_sessions_rollout_is_that_session_of_its_own(
    tmp_path: Path,
) -> None:
    """The other session's own file is still there: the copy is a session of its own, as any
    copy is, and the one the path held keeps its history."""
    cli = Cli(tmp_path / "state")
    root = tmp_path / "codex" / "sessions"
    day = root / "2026" / "04" / "20"
    day.mkdir(parents=True)
    old = day / f"rollout-2025-11-17T21-30-28-{CODEX_OLD_ID}.jsonl"
    shutil.copyfile(shared_fixtures("sessions", "codex", CODEX_OLD), old)
    shutil.copyfile(
        shared_fixtures("sessions", "codex", CODEX_NEW),
        day / f"rollout-2026-04-20T10-18-48-{CODEX_NEW_ID}.jsonl",
    )
    cli.json("sync", "--source", f"codex={root}")
    before = listed(cli)
    old_key, old_turns = key_of(cli, CODEX_OLD_ID), turns(cli, CODEX_OLD_ID)
    new_key, new_turns = key_of(cli, CODEX_NEW_ID), turns(cli, CODEX_NEW_ID)
    old.write_bytes(shared_fixtures("sessions", "codex", CODEX_NEW).read_bytes())

    cli.json("sync", "--source", f"codex={root}")

    after = listed(cli)
    (copy_key,) = after.keys() - before.keys()
    assert after == {
        old_key: (len(old_turns), False),
        new_key: (len(new_turns), True),
        copy_key: (len(new_turns), True),
    }
    assert turns(cli, old_key) == old_turns
    assert turns(cli, copy_key) == new_turns


def test_a_session_restored_at_the_path_it_was_taken_from_is_itself_again(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "state")
    root = tmp_path / "projects"
    (root / "p").mkdir(parents=True)
    path = root / "p" / f"{CLAUDE_OLD_ID}.jsonl"
    original = shared_fixtures("sessions", "claude", CLAUDE_OLD)
    shutil.copyfile(original, path)
    cli.json("sync", "--source", f"claude={root}")
    old_key, old_turns = key_of(cli, CLAUDE_OLD_ID), turns(cli, CLAUDE_OLD_ID)
    take_over(path, shared_fixtures("sessions", "claude", CLAUDE_NEW))
    cli.json("sync", "--source", f"claude={root}")
    new_key = key_of(cli, CLAUDE_NEW_ID)
    take_over(path, original)

    cli.json("sync", "--source", f"claude={root}")

    assert listed(cli) == {old_key: (len(old_turns), True), new_key: (2, False)}
    assert turns(cli, old_key) == old_turns
