"""`memory recall` in a registered repository that has no team memory tree refuses at once
(MEMORY_NOT_INITIALIZED, as stage would after a whole drafting round), saying the problem in its
message and the step in `next`, once; a window longer than 366 days is told the `since` that
fits. Real git repository, real Codex session, real `teamlore` processes."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import WINDOW, CodexSession, make_repo, sync

from support import teamlore_cli


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    """Registered and synced, `memory init` never run."""
    repo = make_repo(tmp_path / "shop")
    session = CodexSession("a1", repo)
    session.turn("why does the release fail", "The tag check is wrong.")
    session.turn("fix the tag check", "Fixed it.")
    session.turn("run the release tests", "They pass.")
    session.write(tmp_path / "codex")
    sync(home, tmp_path / "codex", repo)
    return repo


def recall(repo: Path, *window: str, fmt: str = "json") -> tuple[int, dict]:
    done = teamlore_cli("memory", "recall", *window, "--format", fmt, cwd=repo)
    return done.returncode, json.loads(done.stdout or done.stderr)


def tasks_recorded(home: Path) -> int:
    conn = sqlite3.connect(home / "memory-state.sqlite3")
    try:
        return int(conn.execute("SELECT count(*) FROM tasks").fetchone()[0])
    finally:
        conn.close()


def test_recall_without_a_memory_tree_refuses_before_handing_out_any_task(
    repo: Path, home: Path
) -> None:
    since_until = ("--since", WINDOW["since"], "--until", WINDOW["until"])

    code, refused = recall(repo, *since_until)

    assert code == 1, refused
    error = refused["error"]
    assert error["code"] == "MEMORY_NOT_INITIALIZED"
    assert "memory init" not in error["message"]  # the problem; the step is `next`
    assert "`teamlore memory init`" in error["next"]
    assert not (repo / ".threadshare").exists()
    assert tasks_recorded(home) == 0
    # the text view says the step once
    text = teamlore_cli("memory", "recall", *since_until, cwd=repo)
    assert text.returncode == 1 and text.stderr.count("memory init") == 1, text.stderr

    assert teamlore_cli("memory", "init", cwd=repo).returncode == 0
    code, recalled = recall(repo, *since_until)
    assert code == 0 and recalled["sources"], recalled


def test_a_window_over_366_days_is_told_the_since_that_fits(repo: Path) -> None:
    assert teamlore_cli("memory", "init", cwd=repo).returncode == 0

    code, refused = recall(repo, "--since", "2025-11-01", "--until", "2026-12-01")

    assert code == 2, refused
    error = refused["error"]
    assert error["code"] == "WINDOW_INVALID"
    assert "since first" not in error["next"]  # the step of a missing or reversed window
    assert "`since` 2025-11-30T00:00:00.000Z or later" in error["next"], error["next"]
    # the `since` it names is accepted with that `until`
    code, recalled = recall(repo, "--since", "2025-11-30T00:00:00.000Z", "--until", "2026-12-01")
    assert code == 0, recalled
