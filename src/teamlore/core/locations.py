"""Where the state dir is, and how much room its disk has: the one module both `paths` (which
creates it) and `errors` (which asks whether its disk is full, and what in it is big) can use
without importing each other, and the watch client (`cli/warm.py`) without pathlib."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not `typing`'s: the watch client does not load typing
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

APP_NAME = "teamlore"
# the state dir's file of what migrations did, which the CLI's text view says once (core/db.py)
UPGRADE_NOTES_NAME = "upgrade-notes"


def state_dir_path() -> Path:
    """Where the state dir is (`$TEAMLORE_HOME`, else the platform's), without creating it:
    read-only processes must leave no trace."""
    from pathlib import Path

    return Path(state_dir_location(os.environ))


def state_dir_location(environ: Mapping[str, str]) -> str:
    """`state_dir_path` as text, for the environment `environ`: `$TEAMLORE_HOME`, else the
    platform's user state dir."""
    configured = environ.get("TEAMLORE_HOME")
    if configured:
        return os.path.expanduser(configured)
    known = _linux_state_dir(environ)
    if known is not None:
        return known
    import platformdirs  # see _linux_state_dir

    return os.path.expanduser(platformdirs.user_state_dir(APP_NAME, appauthor=False))


def pinned_state_dir(environ: Mapping[str, str]) -> str | None:
    """The state dir an entry that starts teamlore must name (`TEAMLORE_HOME=…`) to reach the
    one `environ` resolves: `$TEAMLORE_HOME` when set, else the resolved dir when it is not the
    bare default (it came from `$XDG_STATE_HOME`, which a client need not pass on: Codex hands
    an MCP server only an allow-list of variables); None: the default, which any environment
    with the same HOME resolves."""
    configured = environ.get("TEAMLORE_HOME")
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    resolved = state_dir_location(environ)
    bare = {k: v for k, v in environ.items() if k not in ("TEAMLORE_HOME", "XDG_STATE_HOME")}
    return None if resolved == state_dir_location(bare) else os.path.abspath(resolved)


def _linux_state_dir(environ: Mapping[str, str]) -> str | None:
    """platformdirs' user state dir on Linux where every 4.x release answers the same (an
    absolute `$XDG_STATE_HOME`; or none and an absolute `$HOME`), else None. Importing
    platformdirs (and the `tempfile` and `shutil` it loads) costs a short command ~8 ms of CPU
    (docs/architecture.md, "A short CLI process"); tests/core/test_locations.py holds the two
    answers equal."""
    if sys.platform != "linux":
        return None
    xdg = environ.get("XDG_STATE_HOME", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, APP_NAME)
    home = environ.get("HOME", "")
    if xdg or not home.startswith("/"):
        return None  # a relative XDG_STATE_HOME or HOME: platformdirs releases differ
    return os.path.join(home.rstrip("/") or "/", ".local", "state", APP_NAME)


def state_disk_free() -> int | None:
    """The bytes left on the state dir's file system (None: it cannot be told)."""
    try:
        stats = os.statvfs(state_dir_path())
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def largest_in_state_dir(count: int) -> list[tuple[int, str]]:
    """The `count` largest things in the state dir, `(bytes, name)`, largest first (a folder
    counts what it holds); [] when it cannot be read."""
    try:
        with os.scandir(state_dir_path()) as listing:
            return sorted(((_size_of(e), e.name) for e in listing), reverse=True)[:count]
    except OSError:
        return []


def _size_of(entry: os.DirEntry[str]) -> int:
    try:
        if not entry.is_dir(follow_symlinks=False):
            return entry.stat(follow_symlinks=False).st_size
        return sum(
            os.lstat(os.path.join(folder, name)).st_size
            for folder, _, names in os.walk(entry.path)
            for name in names
        )
    except OSError:
        return 0
