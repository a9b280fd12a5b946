"""`doctor`'s check of the session index (ops/integrations/state_checks.py `index_check`): it
is behind when a sync would read a session file, whatever that file's dates say."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sessions.records import codex_meta, codex_user_message, write_jsonl
from support import in_process
from teamlore.ops.integrations.state_checks import index_check
from teamlore.ops.registry import OpContext


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
