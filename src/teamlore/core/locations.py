"""Where the state dir is, and nothing else: the one module both `paths` (which creates it) and
`errors` (which asks whether its disk is full) can use without importing each other."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir_path() -> Path:
    """Where the state dir is (`$TEAMLORE_HOME`, else the platform's), without creating it:
    read-only processes must leave no trace."""
    env = os.environ.get("TEAMLORE_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs  # only without TEAMLORE_HOME (docs/architecture.md, "A short CLI process")

    return Path(platformdirs.user_state_dir("teamlore", appauthor=False)).expanduser()
