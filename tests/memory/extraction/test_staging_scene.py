"""A draft's `scene` names a scene (`scenes/<name>.md`): stage refuses a path, a blank or a line
break there (STAGE_REQUEST_INVALID, nothing written), so such a value never reaches an entry's
front matter or a ConsolidationTask; so is a name no scene is named by (capitals, `_`: scene
files, entries and consolidations name a scene by one rule); a real scene name, in any script, is
staged unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from recall_world import WINDOW
from test_staging import OWNER, World, draft, dump, refused

from support import draft_batch, release_repository
from teamlore.contracts.adjudication import MergedFields
from teamlore.core import errors
from teamlore.memory.extraction import staging
from teamlore.memory.extraction.adjudication import _kept_fields
from teamlore.memory.store.state_db import open_state_db
from teamlore.ops.registry import OpContext, run_operation

NOT_SCENE_NAMES = [
    "../../../../tmp/evil",
    "/abs/scene",
    "a\nb: injected",
    "a\r\nb",
    "release readiness",
    "scenes/release",
    "..\\..\\evil",
    ".hidden",
    "-leading-dash",
    "x" * 65,
    "Release_Notes",  # accepted once, though no scene could be named so
    "release_notes",
    "Release",
]
# the shared fixture tree's scenes, the seed's own example (000 §9) and the demo's
SCENE_NAMES = ["release-readiness", "team-memory-design", "insights-agent", "鉴权模块维护", "发布"]


@pytest.fixture()
def world(home: Path) -> World:
    return World(open_state_db(home))


@pytest.mark.parametrize("scene", NOT_SCENE_NAMES)
def test_a_scene_that_is_not_a_scene_name_is_refused_and_nothing_is_staged(
    world: World, scene: str
) -> None:
    task_id, ev = world.task("scene")
    document = world.batch(task_id, [{**draft("Use make release.", [ev[0]]), "scene": scene}])
    before = dump(world.conn)
    error = refused(
        staging.stage_draft_batch, world.conn, document, owner=OWNER, sources=world.sources
    )
    assert error.code == errors.STAGE_REQUEST_INVALID.code
    assert "candidates.0.scene" in error.message and "invalid-scene-name" in error.message
    assert scene not in error.message  # the value is not echoed back
    assert dump(world.conn) == before


@pytest.mark.parametrize("scene", [*SCENE_NAMES, None])
def test_a_scene_name_in_any_script_is_staged_unchanged(world: World, scene: str | None) -> None:
    task_id, ev = world.task("scene")
    world.stage(task_id, [{**draft("Use make release.", [ev[0]]), "scene": scene}])
    [payload] = world.conn.execute("SELECT payload_json FROM candidates").fetchall()
    assert json.loads(payload[0])["scene"] == scene


@pytest.mark.parametrize("scene", NOT_SCENE_NAMES)
def test_an_adjudication_cannot_set_a_scene_that_is_not_a_scene_name(scene: str) -> None:
    with pytest.raises(ValidationError, match="invalid-scene-name"):
        MergedFields.from_wire({"scene": scene})
    assert MergedFields.from_wire({"scene": "release-readiness"}).scene == "release-readiness"


def test_an_update_keeps_the_targets_scene_only_when_it_is_a_scene_name() -> None:
    assert _kept_fields({"scene": "release-readiness"}) == {"scene": "release-readiness"}
    assert _kept_fields({"scene": None}) == {"scene": None}
    assert "scene" not in _kept_fields({"scene": "../../../etc/passwd"})


def test_memory_stage_refuses_a_path_as_scene_end_to_end(tmp_path: Path, home: Path) -> None:
    """The real operation (`teamlore memory stage` / `threadshare_memory_stage`) on a real
    repository, sessions and recall: the refusal names the field; a scene name is staged."""
    repo = release_repository(tmp_path, home)
    ctx = OpContext(cwd=repo, home=home)
    task = run_operation("memory.recall", ctx, WINDOW)["sources"][0]
    for scene in ("../../../../tmp/evil", "/abs/scene", "a\nb: injected"):
        document = draft_batch(task)
        document["candidates"][0]["scene"] = scene
        with pytest.raises(errors.TeamloreError) as caught:
            run_operation("memory.stage", ctx, document)
        assert caught.value.code == errors.STAGE_REQUEST_INVALID.code
        assert "candidates.0.scene" in caught.value.message
    staged = run_operation("memory.stage", ctx, draft_batch(task))  # scene `release`
    assert staged["status"] == "adjudication-required"
