"""Which runner scratch folders the next run sweeps (runner/scratch.py): those whose run is gone,
including the lock-less ones a teamlore older than the scratch lock left, once they are
certainly dead (nothing in them changed for a day; no run lives longer than 2 hours)."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from teamlore.runner.scratch import IN_USE, PREFIX, remove_abandoned

DAY_S = 24 * 3600  # docs/runner.md: a lock-less folder untouched this long is swept


def _left_by_an_older_teamlore(root: Path, name: str, age_s: float) -> Path:
    """A scratch folder as teamlore made it before the lock: HOME with a copied login, a working
    directory, no lock file; nothing in it changed for `age_s` seconds."""
    folder = root / f"{PREFIX}{name}"
    (folder / "home" / ".claude").mkdir(parents=True)
    (folder / "home" / ".claude" / ".credentials.json").write_text('{"token": "x"}')
    (folder / "work").mkdir()
    then = time.time() - age_s
    for path in (folder / "home" / ".claude", folder / "home", folder / "work", folder):
        os.utime(path, (then, then))
    return folder


def test_a_lockless_folder_untouched_for_a_day_is_swept_with_its_login_copy(
    tmp_path: Path,
) -> None:
    dead = _left_by_an_older_teamlore(tmp_path, "old", DAY_S + 60)

    assert remove_abandoned(tmp_path) == [dead]
    assert not dead.exists()


def test_a_lockless_folder_changed_within_the_day_is_left_alone(tmp_path: Path) -> None:
    """It may be a run of an older teamlore still going (or a folder being made right now)."""
    recent = _left_by_an_older_teamlore(tmp_path, "recent", 3 * 3600)
    touched = _left_by_an_older_teamlore(tmp_path, "touched", DAY_S + 60)
    (touched / "work" / "answer.txt").write_text("a run still writes here")

    assert remove_abandoned(tmp_path) == []
    assert recent.exists() and touched.exists()


def test_a_folder_being_made_is_left_alone_until_it_is_a_day_old(tmp_path: Path) -> None:
    """Locked under its first name (`.in-use.new`) until it is renamed: held, it is alive. Not
    held, its maker may have created the file and not locked it yet (another run's sweep in
    that moment removed the folder under it) or died before the rename: nothing was copied into
    it yet, so it waits its day like a lock-less folder."""
    folder = tmp_path / f"{PREFIX}making"
    folder.mkdir()
    lock = os.open(folder / f"{IN_USE}.new", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        assert remove_abandoned(tmp_path) == []  # created, not locked yet
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert remove_abandoned(tmp_path) == []
    finally:
        os.close(lock)
    assert remove_abandoned(tmp_path) == []  # its maker died before the rename: young still

    then = time.time() - DAY_S - 60
    for path in (folder / f"{IN_USE}.new", folder):
        os.utime(path, (then, then))
    assert remove_abandoned(tmp_path) == [folder]
