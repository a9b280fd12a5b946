"""The throw-away folder a runner CLI runs in (its HOME, CLAUDE_CONFIG_DIR / CODEX_HOME and
working directory; docs/runner.md "What is sent, to whom").

It may hold a copy of the caller's `claude login` or `codex login` file, so it must not outlive
its run. A teamlore killed with SIGKILL cannot remove it, so each folder carries a lock its run
holds for as long as it lives (the kernel drops it when the process dies, however it dies), and
every new scratch folder first removes this user's folders whose lock nobody holds.

A folder without a lock file was made by a teamlore older than the lock (or is being made this
very moment). It is removed once it is certainly dead: nothing in it (the folder, or anything
directly in it) changed for a day (`LEGACY_DEAD_AFTER_S`), where no run of any teamlore lives
longer than 2 hours (TEAMLORE_RUNNER_TIMEOUT_S is at most 7200 s, and was before the lock).
So is a folder whose lock is still under its first name (`.in-use.new`) and not held: its
maker opened that file and has not locked it yet, or was killed before the rename; nothing was
copied into it before the rename, so it waits its day at no cost.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PREFIX = "teamlore-runner-"
IN_USE = ".in-use"  # the lock file: held while the folder's run lives
# a folder without a lock file untouched this long is dead: a run lives at most 7200 s
LEGACY_DEAD_AFTER_S = 24 * 3600


def _last_change(folder: Path) -> float:
    """The newest modification time of `folder` and of what lies directly in it (a live run
    writes in its HOME and working directory, which changes theirs)."""
    newest = folder.lstat().st_mtime
    with os.scandir(folder) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
    return newest


def _lock_free(path: Path) -> bool | None:
    """Whether nobody holds the lock file `path` (None: there is none; False also when it
    cannot be opened)."""
    try:
        lock = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError:
        return False
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # its run is alive
    finally:
        os.close(lock)
    return True


def _abandoned(folder: Path) -> bool:
    """Whether `folder` is one of this user's scratch folders whose run is gone: its lock file
    exists and nobody holds it, or it has none (an older teamlore's, or one being made) and
    nothing in it changed for LEGACY_DEAD_AFTER_S."""
    try:
        info = folder.lstat()
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    free = _lock_free(folder / IN_USE)
    if free is not None:
        return free
    # a folder being made is locked under the first name, but only a moment after it created
    # that file: unheld, it may be that moment (module doc), so it is judged by its age
    if _lock_free(folder / f"{IN_USE}.new") is False:
        return False
    try:
        return time.time() - _last_change(folder) > LEGACY_DEAD_AFTER_S
    except OSError:
        return False


def remove_abandoned(root: Path | None = None) -> list[Path]:
    """Remove the scratch folders under `root` (the temp dir) left by runs that died; the
    folders removed."""
    base = Path(root or tempfile.gettempdir())
    removed = []
    with contextlib.suppress(OSError):
        for folder in base.glob(f"{PREFIX}*"):
            if _abandoned(folder):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed


@contextmanager
def scratch_folder() -> Iterator[Path]:
    """A private (0700) throw-away folder, locked while in use; always removed afterwards, and
    by the next run if this process is killed first."""
    remove_abandoned()
    path = Path(tempfile.mkdtemp(prefix=PREFIX))
    # locked before it takes its name: another run's sweep never sees it unlocked
    lock = os.open(path / f"{IN_USE}.new", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        os.rename(path / f"{IN_USE}.new", path / IN_USE)
        os.chmod(path, 0o700)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(lock)
