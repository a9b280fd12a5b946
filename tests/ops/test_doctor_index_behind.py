"""`doctor`'s check of the session index (ops/integrations/state_checks.py `index_check`): it
is behind when a sync would read a session file, whatever that file's dates say."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from sessions.records import codex_meta, codex_user_message, write_jsonl
from support import in_process
from teamlore.ops.integrations import state_checks
from teamlore.ops.integrations.state_checks import index_check
from teamlore.ops.registry import OpContext
from teamlore.ops.sessions.index import files_behind
from teamlore.sessions.assembler import SessionAssembler
from teamlore.sessions.index_db import INDEX_DB_NAME


def _session(path: Path, number: int) -> Path:
    session_id = f"019a0000-0000-7000-8000-{number:012d}"
    return write_jsonl(path, [codex_meta(session_id), codex_user_message(f"hello {number}")])


def _dated_long_ago(path: Path) -> None:
    os.utime(path, (1_600_000_000, 1_600_000_000))  # 2020: long before any sync


def test_session_files_the_index_lacks_are_behind_whatever_their_mtime(tmp_path: Path) -> None:
    """It counted the files written after the last sync, so a restored backup, a folder moved
    in with `mv` or a sync cut short left files it never saw ('no session file behind') that
    the next sync indexed. Now it looks, as a sync does, for every file the index does not hold
    or holds at another size or time."""
    home, codex = tmp_path / "state", tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text(f'[sources]\ncodex = ["{codex}"]\n')
    kept = _session(codex / "kept.jsonl", 1)
    grown = _session(codex / "grown.jsonl", 2)
    assert in_process("sync", env={"TEAMLORE_HOME": str(home)}).returncode == 0
    ctx = OpContext(cwd=tmp_path, home=home)
    assert index_check(ctx, home).status == "ok"

    for number in (3, 4):  # a backup restored with its old dates
        _dated_long_ago(_session(codex / "restored" / f"{number}.jsonl", number))
    with grown.open("a") as handle:
        handle.write(json.dumps(codex_user_message("more")) + "\n")
    _dated_long_ago(grown)
    _dated_long_ago(kept)  # the same bytes at another date: a sync reads it again too

    check = index_check(ctx, home)

    assert (check.status, check.fix) == ("warn", "teamlore sync"), check
    assert check.message.endswith(
        "; 4 session files behind: 2 not in the index, 2 changed since it read them"
    ), check
    assert in_process("sync", env={"TEAMLORE_HOME": str(home)}).returncode == 0
    assert index_check(ctx, home).status == "ok"


def _synced_codex(tmp_path: Path, count: int) -> tuple[Path, Path, list[Path]]:
    """A state dir whose index holds `count` Codex sessions, dated long ago."""
    home, codex = tmp_path / "state", tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text(f'[sources]\ncodex = ["{codex}"]\n')
    files = [_session(codex / f"{number}.jsonl", number) for number in range(count)]
    for path in files:
        _dated_long_ago(path)
    assert in_process("sync", env={"TEAMLORE_HOME": str(home)}).returncode == 0
    return home, codex, files


def test_past_its_cap_it_counts_the_files_found_first_newest_folders_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the cap it counted the first files in path order (the oldest, for Codex's dated
    folders), so the session a user just wrote could go uncounted; it now walks the newest
    folders first and stops at the cap, and says the count is of those: not 'of the 2
    modified last', as a file appended to in an old folder (a resumed Codex session) does
    not move its folder's time and can be left out."""
    home, codex, _ = _synced_codex(tmp_path, 3)
    _session(codex / "zz" / "new.jsonl", 7)  # the one just written, last in path order

    assert files_behind(home, 4) == (1, 0, True)
    assert files_behind(home, 2) == (1, 0, False)
    monkeypatch.setattr(state_checks, "MAX_FILES_SCANNED", 2)
    check = index_check(OpContext(cwd=tmp_path, home=home), home)
    assert check.message.endswith(
        "; 1 session file of the first 2 found (newest folders first) behind: 1 not in the index"
    ), check


def test_a_file_moved_with_mv_is_held_as_the_sync_follows_it(tmp_path: Path) -> None:
    """The sync follows a moved file by its device and inode and reads nothing again; doctor
    called it 'not in the index'."""
    home, codex, files = _synced_codex(tmp_path, 2)
    (codex / "archived").mkdir()
    files[0].rename(codex / "archived" / files[0].name)

    assert files_behind(home, 100) == (0, 0, True)
    check = index_check(OpContext(cwd=tmp_path, home=home), home)
    assert check.status == "ok", check


def test_a_failed_file_is_behind_once_it_changed_since_it_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file held as failed is read again by every sync: behind once it changed (a failed
    file as it was is `status`'s to report). The failure keeps the size and time of the
    file's last good read, so doctor said every failed file 'changed since it read them',
    and `teamlore sync`, its fix, failed on it again."""
    home, _, files = _synced_codex(tmp_path, 2)
    with files[1].open("a") as handle:
        handle.write(json.dumps(codex_user_message("poison")) + "\n")

    def choke(self: SessionAssembler, event: Any, line: int) -> None:
        if getattr(event, "text", None) == "poison":
            raise RuntimeError("a record the sync cannot take")
        apply(self, event, line)

    apply = SessionAssembler.apply
    monkeypatch.setattr(SessionAssembler, "apply", choke)
    in_process("sync", env={"TEAMLORE_HOME": str(home)})
    with sqlite3.connect(home / INDEX_DB_NAME) as conn:
        held = dict(conn.execute("SELECT path, status FROM source_files").fetchall())
    conn.close()
    assert held[str(files[1])] == "failed"
    assert files_behind(home, 100) == (0, 0, True)
    check = index_check(OpContext(cwd=tmp_path, home=home), home)
    assert check.status == "ok", check

    with files[1].open("a") as handle:
        handle.write(json.dumps(codex_user_message("more")) + "\n")
    now = time.time_ns()  # a file's time can lag the clock by a tick: this one is after it
    os.utime(files[1], ns=(now, now))

    assert files_behind(home, 100) == (0, 1, True)
