"""What a user walking into storage failures met (docs/sessions.md, "When storage fails"): a
rebuilt index keeps the registered repositories, a full disk during a sync says what was kept,
a full repository disk is named as such, a read-only state dir after a killed sync is one code
from every command, and `doctor` finds a damaged index. All through the real CLI on real
SQLite files; the full disks are real tmpfs mounts (skipped where none can be mounted)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from records import codex_meta, codex_user_message, write_jsonl

from support import (
    UNPRIVILEGED,
    fill_to_the_last_byte,
    refusal_lines,
    release_repository,
    teamlore_cli,
    tmpfs,
    unprivileged_prefix,
)

AT = "2026-01-01T00:00:01Z"


def git_project(tmp_path: Path) -> Path:
    """`tmp_path/proj`: a git repository with one (empty) commit."""
    proj = tmp_path / "proj"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    commit = ["commit", "-q", "--allow-empty", "-m", "init"]
    subprocess.run(
        ["git", "-C", str(proj), "-c", "user.name=t", "-c", "user.email=t@t", *commit], check=True
    )
    return proj


def _sessions(folder: Path, cwd: Path, count: int = 3, text: str = "hello") -> Path:
    for number in range(count):
        session_id = f"019a0000-0000-7000-8000-{number:012d}"
        write_jsonl(
            folder / f"rollout-{number}.jsonl",
            [codex_meta(session_id, cwd=str(cwd)), codex_user_message(f"{text} {number}", AT)],
        )
    return folder


def _json(home: Path, *args: str, **extra: str) -> tuple[int, dict[str, Any]]:
    done = teamlore_cli(*args, "--format", "json", env={"TEAMLORE_HOME": str(home), **extra})
    return done.returncode, json.loads(done.stdout or "{}")


@pytest.mark.parametrize("discard", [False, True], ids=["rebuild", "discard-history"])
def test_a_rebuild_of_a_damaged_index_keeps_the_registered_repositories(
    tmp_path: Path, discard: bool
) -> None:
    home, proj = tmp_path / "home", git_project(tmp_path)
    codex = _sessions(tmp_path / "codex", proj)
    rc, out = _json(home, "sync", "--source", f"codex={codex}", "--repository", str(proj))
    assert rc == 0 and out["delivery"]["sessionsMapped"] == 3, out
    os.truncate(home / "index.sqlite3", 50000)
    rc, out = _json(home, "status")
    assert rc == 1 and out["error"]["code"] == "DB_CORRUPT", out

    rebuild = ["sync", "--source", f"codex={codex}", "--rebuild"]
    rebuild += ["--discard-history"] if discard else []
    done = teamlore_cli(*rebuild, env={"TEAMLORE_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    kept = [
        p.name for p in home.glob("index.sqlite3.damaged-*") if p.name[-4:] not in ("-wal", "-shm")
    ]
    assert len(kept) == 1 and f"set aside, not deleted: {kept[0]}" in done.stdout, done.stdout
    assert "Registered repository proj again, from config.toml." in done.stdout

    rc, listed = _json(home, "repo", "list")
    assert rc == 0 and [r["name"] for r in listed["repositories"]] == ["proj"], listed
    rc, mapped = _json(home, "sessions", "list", "--repository", str(proj))
    assert rc == 0 and len(mapped["sessions"]) == 3, mapped
    rc, again = _json(home, "sync", "--source", f"codex={codex}")
    assert rc == 0 and again["restoredRepositories"] == [] and not again["damagedIndexKept"]


def _long_sessions(folder: Path, cwd: Path, count: int, turns: int) -> Path:
    for number in range(count):
        session_id = f"019a0000-0000-7000-8000-{number:012d}"
        said = [
            codex_user_message(" ".join(f"w{number}x{t}y{i}" for i in range(300)), AT)
            for t in range(turns)
        ]
        write_jsonl(
            folder / f"rollout-{number}.jsonl", [codex_meta(session_id, cwd=str(cwd)), *said]
        )
    return folder


def test_a_disk_filling_during_a_sync_says_what_was_kept_not_that_nothing_changed(
    tmp_path: Path,
) -> None:
    """A first sync on a 5 MiB state disk commits its sessions, then the disk fills (linking
    or embedding): the refusal says what the index holds now, as `status` shows it, and what
    was not written; it never says "nothing was changed"."""
    proj = git_project(tmp_path)
    codex = _long_sessions(tmp_path / "codex", proj, count=10, turns=20)
    with tmpfs(tmp_path / "disk", "5m") as disk:
        home = disk / "home"
        rc, out = _json(home, "sync", "--source", f"codex={codex}", "--repository", str(proj))
        assert rc == 1 and out["error"]["code"] == "DISK_FULL", out
        message = out["error"]["message"]
        rc, status = _json(home, "status")
        assert rc == 0 and status["sessions"] > 0, status  # the disk filled after a commit
        assert "nothing was changed" not in message, message
        assert f"the index holds {status['sessions']} sessions, {status['turns']} turns" in message
        assert "were not written" in message or "found by words only" in message, message
        if (home / "index.sqlite3-wal").exists():
            assert "index.sqlite3-wal keeps part of it" in message and "never delete it" in message


def test_doctor_finds_damage_in_pages_status_does_not_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    codex = _long_sessions(tmp_path / "codex", tmp_path, count=3, turns=20)
    rc, _ = _json(home, "sync", "--source", f"codex={codex}")
    assert rc == 0
    index = home / "index.sqlite3"
    with sqlite3.connect(index) as conn:  # a page of the word index, which `status` never reads
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (page,) = conn.execute(
            "SELECT pageno FROM dbstat WHERE name = 'turns_fts_data' AND pagetype = 'leaf'"
        ).fetchone()
        size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    data = bytearray(index.read_bytes())
    at = (page - 1) * size
    data[at : at + 64] = bytes((i * 7 + 3) % 256 for i in range(64))
    index.write_bytes(bytes(data))
    rc, status = _json(home, "status")
    assert rc == 0, status  # the pages it reads are whole
    rc, checked = _json(home, "status", "--check")
    assert rc == 1 and checked["error"]["code"] == "DB_CORRUPT", checked

    _, doctor = _json(home, "doctor")
    (found,) = [c for c in doctor["checks"] if c["check"] == "index"]
    assert found["status"] == "fail" and "index.sqlite3 is damaged" in found["message"], found
    assert found["fix"] == "teamlore sync --rebuild"


def test_a_full_repository_disk_is_named_when_the_state_disk_is_small_but_has_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state dir on a 64 MiB disk with room (less than any "roomy" guess), the worktree on
    a full one: `memory assemble` names the disk it failed on, the repository's, not the state
    directory's."""
    with (
        tmpfs(tmp_path / "state-disk", "64m") as state_disk,
        tmpfs(tmp_path / "repo-disk", "8m") as disk,
    ):
        home = state_disk / "home"
        monkeypatch.setenv("TEAMLORE_HOME", str(home))
        repo = release_repository(disk, home)
        fill_to_the_last_byte(disk)
        refused = teamlore_cli(
            "memory", "assemble", "-p", "claude", cwd=repo, env={"HOME": str(tmp_path)}
        )
        assert refused.returncode == 1
        first = refusal_lines(refused.stderr)[0]
        assert first.startswith(
            "error DISK_FULL: a disk teamlore writes to is full, not the state directory's"
        ), refused.stderr
        assert "~/repo-disk/shop/CLAUDE.md" in first, first
        assert "TEAMLORE_HOME" not in first, first


def _killed_mid_batch(built: Path, crashed: Path) -> None:
    """`crashed`: the state dir `built` as a sync killed mid-batch leaves it, a hot rollback
    journal beside the index (tests/sessions/test_first_build.py makes it the same way)."""
    shutil.copytree(built, crashed)
    writer = sqlite3.connect(built / "index.sqlite3", isolation_level=None)
    assert writer.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
    writer.execute("PRAGMA cache_size = 8")  # the batch spills pages into the file
    writer.execute("BEGIN IMMEDIATE")
    writer.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?)", [(f"k{n}", "v" * 500) for n in range(400)]
    )
    for name in ("index.sqlite3", "index.sqlite3-journal"):
        shutil.copyfile(built / name, crashed / name)
    writer.execute("ROLLBACK")
    writer.close()


def test_a_read_only_state_dir_after_a_killed_sync_is_state_read_only_from_every_command(
    tmp_path: Path,
) -> None:
    """`status` and `sessions` said STATE_READ_ONLY, `sync` and `memory review` INTERNAL (a
    disk I/O error), `memory status|search` PERMISSION_DENIED on memory-state.sqlite3."""
    as_user = unprivileged_prefix()
    root = Path(tempfile.mkdtemp(prefix="teamlore-read-only-state-"))  # nobody must reach it
    try:
        os.chmod(root, 0o755)
        proj = git_project(root)
        built, state = root / "built", root / "state"
        rc, _ = _json(built, "sync", "--source", f"codex={_sessions(root / 'codex', proj)}")
        assert rc == 0
        _killed_mid_batch(built, state)
        if as_user:
            for path in [root, *root.rglob("*")]:
                os.chown(path, UNPRIVILEGED, UNPRIVILEGED, follow_symlinks=False)
        os.chmod(state, 0o500)
        env = {**os.environ, "TEAMLORE_HOME": str(state), "HOME": str(root)}
        cli = [*as_user, sys.executable, "-m", "teamlore.cli.main"]
        for command in (
            ["status"],
            ["sessions", "list"],
            ["sync"],
            ["memory", "review"],
            ["memory", "status"],
            ["memory", "search", "hello"],
        ):
            done = subprocess.run(
                [*cli, *command, "--format", "json"],
                cwd=proj,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            error = json.loads(done.stdout or "{}").get("error", {})
            assert done.returncode == 1 and error.get("code") == "STATE_READ_ONLY", (command, done)
            assert error["message"].startswith("index.sqlite3 holds an interrupted sync's batch")
        assert (state / "index.sqlite3-journal").exists()  # nothing was rolled back or removed
    finally:
        os.chmod(root / "state", 0o700)
        shutil.rmtree(root)
