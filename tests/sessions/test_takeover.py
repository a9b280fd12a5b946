"""A session file whose path another session's transcript takes (a backup restored over it, a tool
that writes another session's content there): sync reads the path again, keeps the history of the
session it held, marked unavailable as when its file disappears, and indexes the new content as
the session it is (docs/sessions.md, "Incremental by design"); a session whose own transcript
moved to another path (files that swapped or rotated transcripts, one moved over another)
follows it there. Real Claude Code and Codex files (the shared fixtures), the real `teamlore
sync`."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from records import codex_event, codex_meta, codex_user_message, write_jsonl

from support import Cli, shared_fixtures
from teamlore.sessions.index_db import index_db_path

CLAUDE_OLD = "moredip-images-in-user-messages.jsonl"
CLAUDE_OLD_ID = "47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c"
CLAUDE_NEW = "entire-cli-2.1.12.jsonl"
CLAUDE_NEW_ID = "85cc202e-0e74-46ce-a485-e5fcd11f7a8c"
CODEX_OLD = "acidicsoil-0.58.0.jsonl"
CODEX_OLD_ID = "019a93b9-f380-7600-98ff-940e6b99603c"
CODEX_NEW = "trezo-ai-0.120.0.jsonl"
CODEX_NEW_ID = "019daa66-5b7b-7b01-b9ce-b527014cc09f"


# left out of a turn's history: its delivery edges, and what started a promptless turn, which
# is read from the transcript as it is shown (a transcript that is gone says nothing;
# docs/sessions.md, "Titles, subagents and turns without a prompt")
READ_FROM_THE_TRANSCRIPT = frozenset({"deliveryEdges", "startedBy"})


def turns(cli: Cli, session: str) -> list[dict[str, Any]]:
    shown: list[dict[str, Any]] = cli.json("sessions", "show", session)["turns"]
    return [{k: v for k, v in t.items() if k not in READ_FROM_THE_TRANSCRIPT} for t in shown]


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


# Files that exchange transcripts between two syncs (`mv a tmp; mv b a; mv tmp b`): each
# session follows its transcript to its new path. Three Claude Code transcripts, each with a word
# none of the others has.
SESSIONS = {
    "moredip-0ccf1a04.jsonl": ("0ccf1a04-1b4c-43b6-8aa5-79e41db43a68", "curry"),
    CLAUDE_OLD: (CLAUDE_OLD_ID, "robot"),
    "entire-cli-2.0.64.jsonl": ("cde341db-b80a-44f5-b0f2-94db2ef7a164", "telemetry"),
}


def transcripts(root: Path, *names: str) -> list[Path]:
    """The fixtures `names` as `a.jsonl`, `b.jsonl`, … of one project folder."""
    (root / "p").mkdir(parents=True)
    paths = [root / "p" / f"{chr(ord('a') + n)}.jsonl" for n in range(len(names))]
    for name, path in zip(names, paths, strict=True):
        shutil.copyfile(shared_fixtures("sessions", "claude", name), path)
    return paths


def exchange(*paths: Path) -> None:
    """Each path's file moved to the next path, the last one's to the first (two paths: `mv a
    tmp; mv b a; mv tmp b`)."""
    spare = paths[-1].with_suffix(".moving")
    paths[-1].rename(spare)
    for source, target in zip(paths[-2::-1], paths[:0:-1], strict=True):
        source.rename(target)
    spare.rename(paths[0])


def indexed(cli: Cli, *names: str) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """Each named transcript's session id: its key and turns."""
    ids = [SESSIONS[name][0] for name in names]
    return {session: (key_of(cli, session), turns(cli, session)) for session in ids}


def files_held(state: Path) -> dict[str, tuple[str | None, str]]:
    """Each indexed file's name: the provider id of the session it holds, and its status."""
    with sqlite3.connect(index_db_path(state)) as conn:
        rows = conn.execute(
            "SELECT f.path, s.provider_session_id, f.status FROM source_files f"
            " LEFT JOIN sessions s ON s.id = f.session_id"
        ).fetchall()
    return {Path(path).name: (session, status) for path, session, status in rows}


def found_once_each(cli: Cli, *names: str) -> dict[str, set[str]]:
    """Each transcript's own word: the sessions a search for it finds."""
    return {
        SESSIONS[name][1]: {
            hit["sessionKey"]
            for hit in cli.json("sessions", "search", SESSIONS[name][1], "--no-sync")["hits"]
        }
        for name in names
    }


def assert_each_session_follows_its_transcript(
    cli: Cli, root: Path, names: tuple[str, ...], before: dict[str, Any]
) -> None:
    """The sessions of `names` once each, available, with their turns, and a search for each
    one's word finds it alone; a second sync reads nothing, and a rebuild changes nothing."""
    assert listed(cli) == {key: (len(shown), True) for key, shown in before.values()}
    assert indexed(cli, *names) == before
    assert found_once_each(cli, *names) == {
        SESSIONS[name][1]: {before[SESSIONS[name][0]][0]} for name in names
    }
    again = cli.json("sync", "--source", f"claude={root}")
    assert (again["files"]["changed"], again["bytesRead"]) == (0, 0)
    cli.json("sync", "--source", f"claude={root}", "--rebuild")
    assert listed(cli) == {key: (len(shown), True) for key, shown in before.values()}


def test_two_files_that_swapped_transcripts_each_hold_their_session_at_its_new_path(
    tmp_path: Path,
) -> None:
    cli = Cli(tmp_path / "state")
    root = tmp_path / "projects"
    names = ("moredip-0ccf1a04.jsonl", CLAUDE_OLD)
    a, b = transcripts(root, *names)
    cli.json("sync", "--source", f"claude={root}")
    before = indexed(cli, *names)
    exchange(a, b)

    synced = cli.json("sync", "--source", f"claude={root}")

    assert synced["files"] == {"seen": 2, "changed": 2, "failed": 0, "unavailable": 0}
    assert files_held(tmp_path / "state") == {
        "a.jsonl": (CLAUDE_OLD_ID, "ok"),
        "b.jsonl": (SESSIONS[names[0]][0], "ok"),
    }
    assert_each_session_follows_its_transcript(cli, root, names, before)


def test_three_files_whose_transcripts_rotated_each_hold_their_session_at_its_new_path(
    tmp_path: Path,
) -> None:
    cli = Cli(tmp_path / "state")
    root = tmp_path / "projects"
    names = tuple(SESSIONS)
    a, b, c = transcripts(root, *names)
    cli.json("sync", "--source", f"claude={root}")
    before = indexed(cli, *names)
    exchange(a, b, c)  # a's to b, b's to c, c's to a

    cli.json("sync", "--source", f"claude={root}")

    assert files_held(tmp_path / "state") == {
        "a.jsonl": (SESSIONS[names[2]][0], "ok"),
        "b.jsonl": (SESSIONS[names[0]][0], "ok"),
        "c.jsonl": (SESSIONS[names[1]][0], "ok"),
    }
    assert_each_session_follows_its_transcript(cli, root, names, before)


def test_a_transcript_that_grew_and_swapped_files_is_read_whole_at_its_new_path(
    tmp_path: Path,
) -> None:
    """The agent wrote more of `a`'s session before the files swapped: the session holds all of
    it, as a sync of the whole file alone reads it."""
    names = ("moredip-0ccf1a04.jsonl", CLAUDE_OLD)
    whole = tmp_path / "whole"
    alone = Cli(tmp_path / "alone")
    transcripts(whole, names[0])
    alone.json("sync", "--source", f"claude={whole}")
    cli = Cli(tmp_path / "state")
    root = tmp_path / "projects"
    a, b = transcripts(root, *names)
    content = a.read_bytes()
    lines = content.splitlines(keepends=True)
    begun = b"".join(lines[: len(lines) // 3])
    a.write_bytes(begun)
    cli.json("sync", "--source", f"claude={root}")
    before = indexed(cli, *names)
    grown = SESSIONS[names[0]][0]
    whole_turns = indexed(alone, names[0])[grown][1]
    assert before[grown][1] != whole_turns  # not yet all of it
    with a.open("ab") as handle:
        handle.write(content[len(begun) :])
    exchange(a, b)

    cli.json("sync", "--source", f"claude={root}")

    before[grown] = (before[grown][0], whole_turns)
    assert files_held(tmp_path / "state") == {
        "a.jsonl": (CLAUDE_OLD_ID, "ok"),
        "b.jsonl": (SESSIONS[names[0]][0], "ok"),
    }
    assert_each_session_follows_its_transcript(cli, root, names, before)


def test_a_transcript_moved_over_another_is_its_session_there_and_the_other_keeps_history(
    tmp_path: Path,
) -> None:
    """`mv b a`: `a`'s transcript is gone (its session is unavailable, with its history) and
    `b`'s session is at `a`, once."""
    cli = Cli(tmp_path / "state")
    root = tmp_path / "projects"
    names = ("moredip-0ccf1a04.jsonl", CLAUDE_OLD)
    a, b = transcripts(root, *names)
    cli.json("sync", "--source", f"claude={root}")
    (gone_key, gone_turns), (moved_key, moved_turns) = indexed(cli, *names).values()
    b.rename(a)

    cli.json("sync", "--source", f"claude={root}")

    assert listed(cli) == {gone_key: (len(gone_turns), False), moved_key: (len(moved_turns), True)}
    assert turns(cli, gone_key) == gone_turns and turns(cli, moved_key) == moved_turns
    assert files_held(tmp_path / "state") == {
        "a.jsonl": (CLAUDE_OLD_ID, "ok"),
        "b.jsonl": (None, "unavailable"),
    }
    assert found_once_each(cli, CLAUDE_OLD) == {"robot": {moved_key}}


def test_a_transcript_copied_elsewhere_and_deleted_where_it_was_is_its_session_there(
    tmp_path: Path,
) -> None:
    """A move the index cannot follow by its inode (to another disk, or by a tool that copies
    then deletes): one session, at the copy."""
    cli = Cli(tmp_path / "state")
    root = tmp_path / "projects"
    (a,) = transcripts(root, CLAUDE_OLD)
    cli.json("sync", "--source", f"claude={root}")
    before = indexed(cli, CLAUDE_OLD)
    (root / "q").mkdir()
    shutil.copyfile(a, root / "q" / "moved.jsonl")
    a.unlink()

    cli.json("sync", "--source", f"claude={root}")

    assert listed(cli) == {key: (len(shown), True) for key, shown in before.values()}
    assert indexed(cli, CLAUDE_OLD) == before
    assert files_held(tmp_path / "state") == {
        "a.jsonl": (None, "unavailable"),
        "moved.jsonl": (CLAUDE_OLD_ID, "ok"),
    }


def test_another_transcript_naming_a_gone_files_session_leaves_that_history_alone(
    tmp_path: Path,
) -> None:
    """A Codex thread's continuation file names the thread's id: it is not the transcript the
    index read of the thread's first file, so the first file gone, its history stays as it was
    and the continuation is a session of its own (a guard: only a session's own transcript
    takes it to a new path)."""
    cli = Cli(tmp_path / "state")
    day = tmp_path / "codex" / "2026" / "01" / "01"
    thread = "019a0000-0000-7000-8000-0000000000c1"

    def turn(n: int) -> list[dict[str, Any]]:
        at = f"2026-01-01T00:0{n}:00Z"
        return [
            codex_user_message(f"prompt {n}", at),
            codex_event("agent_message", at, message=f"answer {n}"),
            codex_event("task_complete", at),
        ]

    first = write_jsonl(day / f"rollout-{thread}.jsonl", [codex_meta(thread), *turn(1), *turn(2)])
    cli.json("sync", "--source", f"codex={tmp_path / 'codex'}")
    key, history = key_of(cli, thread), turns(cli, thread)
    first.unlink()
    write_jsonl(day / f"rollout-{thread}_next.jsonl", [codex_meta(thread), *turn(3)])

    cli.json("sync", "--source", f"codex={tmp_path / 'codex'}")

    after = listed(cli)
    assert after.pop(key) == (2, False) and turns(cli, key) == history
    assert list(after.values()) == [(1, True)]


def keys_held(state: Path) -> dict[str, str | None]:
    """Each indexed file's name: the key of the session it holds."""
    with sqlite3.connect(index_db_path(state)) as conn:
        rows = conn.execute(
            "SELECT f.path, s.session_key FROM source_files f"
            " LEFT JOIN sessions s ON s.id = f.session_id"
        ).fetchall()
    return {Path(path).name: key for path, key in rows}


def first_lines(content: bytes, share: int) -> bytes:
    """The first 1/`share` of the transcript's lines: an older copy of it."""
    lines = content.splitlines(keepends=True)
    return b"".join(lines[: len(lines) // share])


def test_an_older_copy_of_a_gone_files_transcript_is_a_session_of_its_own(
    tmp_path: Path,
) -> None:
    """A backup holding the transcript's first half, restored elsewhere once its file is gone:
    not all the index read of that session, so it takes nothing, and the gone session keeps its
    whole history."""
    cli = Cli(tmp_path / "state")
    root = tmp_path / "projects"
    (a,) = transcripts(root, CLAUDE_OLD)
    cli.json("sync", "--source", f"claude={root}")
    ((gone_key, history),) = indexed(cli, CLAUDE_OLD).values()
    content = a.read_bytes()
    a.unlink()
    cli.json("sync", "--source", f"claude={root}")
    (root / "q").mkdir()
    (root / "q" / "old-backup.jsonl").write_bytes(first_lines(content, 2))

    cli.json("sync", "--source", f"claude={root}")

    after = listed(cli)
    assert after.pop(gone_key) == (len(history), False) and turns(cli, gone_key) == history
    ((backup_key, (backup_turns, available)),) = after.items()
    assert available and 0 < backup_turns < len(history)
    assert keys_held(tmp_path / "state") == {"a.jsonl": gone_key, "old-backup.jsonl": backup_key}


@pytest.mark.parametrize(
    ("original_grows", "read_again"),
    [(False, "rebuild"), (True, "rebuild"), (False, "saved anew")],
)
def test_a_copy_indexed_beside_its_original_stays_its_own_session_once_the_original_is_gone(
    tmp_path: Path, original_grows: bool, read_again: str
) -> None:
    """`cp a b` synced (b a session of its own), `a` deleted: `b` read again from its start (a
    rebuild, or an editor saving it anew, the same bytes in a new file) is still the file the
    index read, not `a`'s transcript moved there; it keeps its session, available, and `a`'s
    stays gone with its history."""
    cli = Cli(tmp_path / "state")
    root = tmp_path / "projects"
    (a,) = transcripts(root, CLAUDE_OLD)
    content = a.read_bytes()
    a.write_bytes(first_lines(content, 2))
    cli.json("sync", "--source", f"claude={root}")
    (root / "q").mkdir()
    b = root / "q" / "b.jsonl"
    shutil.copyfile(a, b)
    cli.json("sync", "--source", f"claude={root}")
    if original_grows:
        a.write_bytes(content)
        cli.json("sync", "--source", f"claude={root}")
    held = keys_held(tmp_path / "state")
    before = listed(cli)
    a.unlink()
    cli.json("sync", "--source", f"claude={root}")

    if read_again == "rebuild":
        cli.json("sync", "--source", f"claude={root}", "--rebuild")
    else:
        saved = b.with_suffix(".saving")
        saved.write_bytes(b.read_bytes())
        saved.replace(b)
        cli.json("sync", "--source", f"claude={root}")

    assert keys_held(tmp_path / "state") == held
    assert listed(cli) == {
        held["a.jsonl"]: (before[held["a.jsonl"]][0], False),
        held["b.jsonl"]: (before[held["b.jsonl"]][0], True),
    }


def test_a_file_being_rewritten_keeps_its_session_from_a_copy_read_first(tmp_path: Path) -> None:
    """The sync reads a copy of `a` while `a` is being rewritten (truncated, then written
    again): `a`, shorter than the bytes the index read first, cannot tell which transcript it
    starts with, so the copy takes nothing; `a` written whole is its session again."""
    cli = Cli(tmp_path / "state")
    root = tmp_path / "projects"
    (a,) = transcripts(root, CLAUDE_OLD)
    cli.json("sync", "--source", f"claude={root}")
    ((key, history),) = indexed(cli, CLAUDE_OLD).values()
    (root / "0-backup").mkdir()  # read before `p`
    copy = root / "0-backup" / "copy.jsonl"
    shutil.copyfile(a, copy)
    content = a.read_bytes()
    a.write_bytes(content[:100])  # half its first line: no session named yet

    cli.json("sync", "--source", f"claude={root}")
    a.write_bytes(content)
    cli.json("sync", "--source", f"claude={root}")

    held = keys_held(tmp_path / "state")
    assert held["a.jsonl"] == key and held["copy.jsonl"] != key
    assert listed(cli) == {key: (len(history), True), held["copy.jsonl"]: (len(history), True)}
    assert turns(cli, key) == history
