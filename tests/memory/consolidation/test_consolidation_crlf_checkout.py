"""A clone with `core.autocrlf=true` (a Windows checkout: every memory file has CRLF line ends
in the worktree, git holds it with LF) reads the same memory as the clone that committed it: the
digests that decide what changed are of the text with CRLF as LF, so a teammate on Windows who
pulls a consolidation finds nothing new, a real edit there (of an entry, of a scene since
synthesize) is still a change, and the record a consolidation there writes is the one every
other clone reads. Real git, two clones."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from consolidation_world import (
    MEMORY,
    RECORD,
    SCENE,
    UPDATED_BODY,
    World,
    confirm_all,
    patch_for,
    scene_text,
)
from consolidation_world import operation as consolidation_operation
from test_consolidation_shared_baseline import consolidate

from support import git, git_run, in_process
from teamlore.core.errors import TeamloreError

ENTRY_ID = "smoke-canonical-hash-deltaid-fixture"
ENTRY = f"{MEMORY}/entries/{ENTRY_ID}.md"


class WindowsClone(World):
    """A teammate's clone of `origin` with `core.autocrlf=true`, with a state dir of its own."""

    def __init__(self, origin: Path, folder: Path, home: Path) -> None:
        self.home = home
        folder.mkdir()
        git(folder, "clone", "-q", "-c", "core.autocrlf=true", str(origin), "project")
        self.root = Path(os.path.realpath(folder / "project"))


def consolidation_status(world: World) -> dict[str, Any]:
    """The consolidation part of `memory status --format json` (the CLI, in process)."""
    done = in_process(
        "memory",
        "status",
        "--format",
        "json",
        cwd=world.root,
        env={"TEAMLORE_HOME": str(world.home)},
    )
    assert done.returncode == 0, done.stderr
    consolidation: dict[str, Any] = orjson.loads(done.stdout)["consolidation"]
    return consolidation


def promote(world: World) -> None:
    """review → confirm every operation → prepare → promote the consolidation awaiting review."""
    (item,) = world.op("memory.review", {"kind": "consolidation"})["items"]
    prepared = world.op("memory.prepare", confirm_all(item))
    assert world.op("memory.promote", {"planId": prepared["planId"]})["status"] == "applied"


def scene_update(task: dict[str, Any]) -> dict[str, Any]:
    based_on = [e["entryId"] for e in task["entries"]]
    scene = scene_text("Threadshare memory pipeline", UPDATED_BODY + "\n- Smoke the wheel.")
    return patch_for(
        task,
        [consolidation_operation("op-1", "update", "scene", "team-memory-design", scene, based_on)],
    )


@pytest.fixture()
def ana_and_bo(tmp_path: Path) -> tuple[World, WindowsClone]:
    """ana (LF) consolidated the reference tree and pushed it; bo cloned it on Windows."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    (tmp_path / "ana").mkdir()
    ana = World(tmp_path / "ana", tmp_path / "ana-state")
    consolidate(ana)
    git(ana.root, "add", "-A")
    git(ana.root, "commit", "-q", "-m", "memory: consolidate")
    git(ana.root, "remote", "add", "origin", str(origin))
    git(ana.root, "push", "-q", "origin", "main")
    bo = WindowsClone(origin, tmp_path / "bo", tmp_path / "bo-state")
    for path in (ENTRY, RECORD, SCENE):
        assert b"\r\n" in bo.read(path)  # git's checkout wrote CRLF
    return ana, bo


def test_a_windows_checkout_of_a_consolidated_tree_finds_nothing_new(
    ana_and_bo: tuple[World, WindowsClone],
) -> None:
    ana, bo = ana_and_bo
    consolidation = consolidation_status(bo)
    assert consolidation["committedEntries"] == 17
    assert consolidation["newSinceBaseline"] == 0 and consolidation["due"] is False
    synthesized = bo.synthesize()
    assert synthesized["status"] == "nothing-new" and synthesized["task"] is None

    edited = bo.read(ENTRY).replace(b"priority: 90", b"priority: 80", 1)
    assert edited != bo.read(ENTRY) and b"\r\n" in edited
    bo.write(ENTRY, edited)  # a real edit, saved with the checkout's CRLF
    assert consolidation_status(bo)["newSinceBaseline"] == 1
    task = bo.synthesize()["task"]
    assert [e["entryId"] for e in task["entries"]] == [ENTRY_ID]

    scene = bo.read(SCENE)
    bo.write(SCENE, scene + b"- A line added by hand.\r\n")  # a real edit since synthesize
    with pytest.raises(TeamloreError) as refused:
        bo.stage(scene_update(task))
    assert refused.value.code == "CONSOLIDATION_DRIFT" and refused.value.details["path"] == SCENE
    bo.write(SCENE, scene)

    bo.stage(scene_update(bo.synthesize()["task"]))
    promote(bo)
    assert consolidation_status(bo)["newSinceBaseline"] == 0
    changed = {line[3:] for line in git_run(bo.root, "status", "--porcelain").stdout.splitlines()}
    assert changed == {ENTRY, SCENE, RECORD}  # no file changed in its line ends alone
    git(bo.root, "commit", "-q", "-a", "-m", "memory: consolidate on Windows")
    git(bo.root, "push", "-q", "origin", "main")
    git(ana.root, "pull", "-q", "origin", "main")
    assert consolidation_status(ana)["newSinceBaseline"] == 0  # bo's record covers the edit
