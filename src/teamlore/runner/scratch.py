"""The throw-away folder a runner CLI runs in (its HOME, CLAUDE_CONFIG_DIR / CODEX_HOME and
working directory; docs/runner.md "What is sent, to whom").

It may hold a copy of the caller's `claude login` or `codex login` file, so it must not outlive
its run. A teamlore killed with SIGKILL cannot remove it, so each folder carries a lock its run
holds for as long as it lives (the kernel drops it when the process dies, however it dies), and
every new scratch folder first removes this user's folders whose lock nobody holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PREFIX = "teamlore-runner-"
IN_USE = ".in-use"  # the lock file: held while the folder's run lives


def _abandoned(folder: Path) -> bool:
    """Whether `folder` is one of this user's scratch folders whose run is gone: its lock file
    exists and nobody holds it. A folder without one (being made, or made by an older teamlore)
    is left alone."""
    try:
        info = folder.lstat()
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    try:
        lock = os.open(folder / IN_USE, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # its run is alive
    finally:
        os.close(lock)
    return True


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
