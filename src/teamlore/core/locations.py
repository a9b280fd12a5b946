"""Where the state dir is, and nothing else: the one module both `paths` (which creates it) and
`errors` (which asks whether its disk is full) can use without importing each other."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def state_dir_path() -> Path:
    """Where the state dir is (`$TEAMLORE_HOME`, else the platform's), without creating it:
    read-only processes must leave no trace."""
    env = os.environ.get("TEAMLORE_HOME")
    base = Path(env) if env else Path(platformdirs.user_state_dir("teamlore", appauthor=False))
    return base.expanduser()
