"""A cross-process advisory file lock (flock) in the state dir."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from teamlore.core import errors
from teamlore.core.paths import FILE_MODE


@contextmanager
def file_lock(
    path: Path, *, wait_seconds: float = 0.0, what: str = "this operation"
) -> Iterator[None]:
    """Hold an exclusive lock on `path`; wait up to `wait_seconds`, then refuse with LOCK_BUSY."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, FILE_MODE)
    try:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise errors.TeamloreError(
                        errors.LOCK_BUSY, f"another teamlore process is running {what}"
                    ) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
