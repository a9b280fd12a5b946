"""`teamlore watch` does not sync for writes inside a symlinked session folder: sync does not
enter such folders (docs/sessions.md), so each write there started a sync that changed
nothing. The watch (watchfiles) follows the link and names the change by the link's path."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import watchfiles

from teamlore.cli.watch import Watcher


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A session folder with a real project folder and a symlink to a folder elsewhere."""
    root = tmp_path / "projects"
    (root / "real").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (root / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    return root


def test_a_change_through_a_linked_folder_is_not_a_session_change(root: Path) -> None:
    watcher = Watcher([root], threading.Event())
    added, modified = watchfiles.Change.added, watchfiles.Change.modified
    assert watcher.wanted(modified, str(root / "real" / "a.jsonl"))
    assert watcher.wanted(added, str(root / "real"))
    assert not watcher.wanted(modified, str(root / "linked" / "a.jsonl"))
    assert not watcher.wanted(added, str(root / "linked"))
    assert not watcher.wanted(added, str(root / "linked" / "deeper" / "a.jsonl"))


def test_a_file_symlinked_into_a_real_folder_is_still_a_session_change(root: Path) -> None:
    """Sync follows a symlinked session file (its target has a watch of its own)."""
    (root / "real" / "b.jsonl").symlink_to(root.parent / "elsewhere" / "b.jsonl")
    watcher = Watcher([root], threading.Event())
    assert watcher.wanted(watchfiles.Change.added, str(root / "real" / "b.jsonl"))


def test_the_running_watch_stays_quiet_for_a_linked_folder_and_wakes_for_a_real_one(
    root: Path,
) -> None:
    changed = threading.Event()
    watcher = Watcher([root], changed)
    changed.clear()  # the first sync at start
    watcher.start()
    try:
        time.sleep(0.5)  # the watch is set up
        (root.parent / "elsewhere" / "a.jsonl").write_text("{}\n")
        # changes within 1.6 s are one batch: a batch that was kept would have set it by now
        assert not changed.wait(3.0)
        (root / "real" / "a.jsonl").write_text("{}\n")
        assert changed.wait(30.0)
    finally:
        watcher.stop.set()
        watcher.join(10)
