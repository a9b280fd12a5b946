"""A scene is named by one rule (`contracts/_base.py` `SCENE_NAME`, `is_scene_name`): the file
`scenes/<name>.md`, an entry's or a draft's `scene`, and the scenes a consolidation reads and
writes. A draft could say `"scene": "Release_Notes"`, which no scene file was allowed to be named
for a consolidation (lowercase a-z slugs only), while the demo's own entry names the scene
`数据库迁移`, which consolidation refused to read as a scene file. Now: lowercase letters and
digits of any script, `-` between words, everywhere (the real CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from demo_walk import LOCK_ENTRY, MEMORY, SCENE, KeptAside, Walk
from recall_world import WINDOW

from support import draft_batch, release_repository, teamlore_cli
from teamlore.contracts._base import scene_name_for

RULE = (
    "1-64 lowercase letters and digits (any script), with `-` between words, as"
    " `scenes/<name>.md` is named (`release-notes`)"
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> KeptAside:
    return KeptAside(tmp_path_factory.mktemp("demo"))


@pytest.fixture()
def walk(demo: KeptAside) -> Walk:
    return demo.walk()


def test_stage_refuses_a_draft_scene_no_scene_file_could_be_named(
    tmp_path: Path, home: Path
) -> None:
    repo = release_repository(tmp_path, home)
    since, until = WINDOW["since"], WINDOW["until"]
    recalled = teamlore_cli(
        "memory", "recall", "--since", since, "--until", until, "--format", "json", cwd=repo
    )
    task = json.loads(recalled.stdout)["sources"][0]
    for scene, staged in (("Release_Notes", False), ("release_notes", False), ("发布", True)):
        document = draft_batch(task)
        document["candidates"][0]["scene"] = scene
        request = tmp_path / "drafts.json"
        request.write_text(json.dumps(document))
        done = teamlore_cli(
            "memory", "stage", "--request", str(request), "--format", "json", cwd=repo
        )
        answer = json.loads(done.stdout)
        if staged:
            assert done.returncode == 0, answer
            continue
        assert answer["error"]["code"] == "STAGE_REQUEST_INVALID"
        assert RULE in answer["error"]["message"]


def test_lint_blocks_an_entry_scene_no_scene_file_could_be_named(walk: Walk) -> None:
    walk.write(
        LOCK_ENTRY, walk.read(LOCK_ENTRY).replace("scene: 数据库迁移", "scene: Release_Notes")
    )
    done = walk.cli("memory", "lint", "--format", "json")
    assert done.returncode == 1
    [finding] = json.loads(done.stdout)["findings"]
    assert (finding["file"], finding["rule"]) == (LOCK_ENTRY, "slug.scene-name")
    # the value it holds and the name the upgrade's renaming gives it, ready to write
    assert finding["message"] == (
        f"field `scene`: `Release_Notes` is not a scene name: {RULE}; name it `release-notes`"
        " here and in its scene file (`scenes/release-notes.md`)"
    )


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("chess_ui", "chess-ui"),
        ("Chess-Rules", "chess-rules"),
        ("chess-variant-", "chess-variant"),
        ("DB  migrations", "db-migrations"),
        ("数据库_迁移", "数据库-迁移"),
        ("release-notes", "release-notes"),
        ("___", None),
        ("release/notes", None),
        ("../x", None),
        ("x" * 80 + "_y", "x" * 64),
    ],
)
def test_the_name_an_old_scene_name_meant(written: str, meant: str | None) -> None:
    """0.1.0 took `chess_ui`, `Chess-Rules` and `chess-variant-`: each has one name it meant."""
    assert scene_name_for(written) == meant


def test_a_scene_named_as_the_demos_entry_names_one_is_consolidated(walk: Walk) -> None:
    """The demo's entry says `scene: 数据库迁移`; a scene file so named made synthesize refuse
    the whole tree (COVERAGE_INCOMPLETE), and a patch could not name it."""
    chinese = f"{MEMORY}/scenes/数据库迁移.md"
    walk.path(SCENE).rename(walk.path(chinese))
    assert walk.cli("memory", "lint").returncode == 0

    code, synthesized = walk.json("memory", "synthesize", "--full")
    assert code == 0 and synthesized["status"] == "task", synthesized
    task = synthesized["task"]
    assert [s["name"] for s in task["scenes"]] == ["数据库迁移"]
    scene_of = {e["entryId"]: e["scene"] for e in task["entries"]}
    assert "数据库迁移" in scene_of.values()

    def patch(name: str) -> Path:
        request = walk.root.parent / "patch.json"
        content = '-----META-START-----\nsummary: "Migrations on staging"\n-----META-END-----\n'
        operation = {
            "operationId": "o1",
            "op": "update" if name == "数据库迁移" else "create",
            "target": "scene",
            "name": name,
            "newContent": content + "## Migrations\n- Set LOCK_TIMEOUT first.\n",
            "basedOnEntryIds": [next(iter(scene_of))],
            "mergeSources": [],
            "rationale": "The lock timeout belongs to migrations.",
        }
        document = {
            "format": "threadshare-memory-consolidation-patch@v1",
            "taskId": task["taskId"],
            "binding": task["binding"],
            "operations": [operation],
        }
        request.write_text(json.dumps(document))
        return request

    code, refused = walk.json("memory", "stage", "--request", str(patch("Release_Notes")))
    assert refused["error"]["code"] == "STAGE_REQUEST_INVALID"
    assert RULE in refused["error"]["message"]
    code, staged = walk.json("memory", "stage", "--request", str(patch("数据库迁移")))
    assert code == 0 and staged["status"] == "staged", staged
