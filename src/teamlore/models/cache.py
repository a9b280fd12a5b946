"""The model cache: where what is derived once from the bundled models and the dictionary is
kept (docs/hybrid-search.md, "Derived once")."""

from __future__ import annotations

import os
from pathlib import Path

MODEL_CACHE_DIR = "models"  # in the state dir
# a folder used instead, shared by state dirs
MODEL_CACHE_ENV = "TEAMLORE_MODEL_CACHE"


def model_cache_dir(state_dir: Path) -> Path:
    """`$TEAMLORE_MODEL_CACHE` when set (one copy for many state dirs), else the state dir's
    `models/`."""
    shared = os.environ.get(MODEL_CACHE_ENV)
    return Path(shared).expanduser() if shared else state_dir / MODEL_CACHE_DIR
