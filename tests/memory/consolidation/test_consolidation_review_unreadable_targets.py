"""A scene or the doctrine a pending consolidation writes is read as every committed file a plan
binds is read: a FIFO in its place is never waited on and a file over the 64 KiB limit is never
read whole; the review is refused with UNSAFE_PATH naming it, and `memory status` still answers,
its lint naming the file. Driven through the real CLI in a git worktree."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from consolidation_world import DOCTRINE, SCENE, World, update_scene_and_create_doctrine

REVIEW = ("memory", "review", "--kind", "consolidation", "--format", "json")
STATUS = ("memory", "status", "--format", "json")


@pytest.fixture()
def world(tmp_path: Path) -> World:
    """A pending consolidation that updates the scene and creates the doctrine."""
    world = World(tmp_path, tmp_path / "state")
    world.stage(update_scene_and_create_doctrine(world.synthesize()["task"]))
    return world


def refusal(done: Any) -> dict[str, Any]:
    assert done.returncode == 1, done.stderr[-2000:]
    error: dict[str, Any] = orjson.loads(done.stdout)["error"]
    return error


def lint_rules(world: World, *, memory_bytes: int) -> dict[str, int]:
    done = world.cli_in_at_most(60, *STATUS, memory_bytes=memory_bytes)
    assert done.returncode == 0, done.stderr[-2000:]
    rules: dict[str, int] = orjson.loads(done.stdout)["lint"]["rules"]
    return rules


def test_a_fifo_in_place_of_the_scene_is_never_waited_on(world: World) -> None:
    (world.root / SCENE).unlink()
    os.mkfifo(world.root / SCENE)

    error = refusal(world.cli_in_at_most(60, *REVIEW, memory_bytes=4 << 30))
    assert (error["code"], error["details"]) == ("UNSAFE_PATH", {"path": SCENE})
    assert error["message"] == f"{SCENE}: not a regular file"
    assert lint_rules(world, memory_bytes=4 << 30).get("tree.not-a-file") == 1


def test_a_doctrine_of_a_gibibyte_is_not_read(world: World) -> None:
    with (world.root / DOCTRINE).open("wb") as doctrine:
        doctrine.truncate(1 << 30)  # sparse: a gibibyte to read, none of it on disk

    error = refusal(world.cli_in_at_most(60, *REVIEW, memory_bytes=768 << 20))
    assert (error["code"], error["details"]) == ("UNSAFE_PATH", {"path": DOCTRINE})
    assert error["message"] == f"{DOCTRINE}: larger than 65536 bytes"
    assert error["next"] == "Shorten the file the message names to under its limit, then retry."
    assert lint_rules(world, memory_bytes=768 << 20).get("capacity.file-size") == 1
