"""The consolidation tests' shared fixtures: a `World` (consolidation_world.py) and, where a
test needs one, the full consolidation task synthesized in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from consolidation_world import World


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return World(tmp_path, home)


@pytest.fixture()
def task(world: World) -> dict[str, Any]:
    task: dict[str, Any] = world.synthesize(full=True)["task"]
    return task
