"""The consolidation baseline travels with the tree: a promoted consolidation writes
`consolidated.json` (the approved entries its scenes and doctrine cover), so a teammate who
pulls it knows what is already consolidated. Two clones of one origin, each with its own state
dir, driven with the real git binary."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from consolidation_world import (
    RECORD,
    UPDATED_BODY,
    World,
    confirm_all,
    operation,
    patch_for,
    scene_text,
    update_scene_and_create_doctrine,
)

from support import git
from teamlore.core.canonical import sha256_hex
from teamlore.core.errors import TeamloreError
from teamlore.memory.store import documents

ENTRIES = ".threadshare/memory/entries"


class Clone(World):
    """A teammate's clone of `origin`, with a state dir of its own."""

    def __init__(self, origin: Path, folder: Path, home: Path) -> None:
        self.home = home
        folder.mkdir()
        git(folder, "clone", "-q", str(origin), "project")
        self.root = Path(os.path.realpath(folder / "project"))


class Team:
    def __init__(self, tmp_path: Path) -> None:
        self.origin = tmp_path / "origin.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(self.origin))
        (tmp_path / "ana").mkdir()
        self.ana = World(tmp_path / "ana", tmp_path / "ana-state")
        git(self.ana.root, "remote", "add", "origin", str(self.origin))
        git(self.ana.root, "push", "-q", "origin", "main")
        self.bo = Clone(self.origin, tmp_path / "bo", tmp_path / "bo-state")


@pytest.fixture()
def team(tmp_path: Path) -> Team:
    return Team(tmp_path)


def consolidate(world: World) -> dict[str, Any]:
    """synthesize → stage → review → confirm every operation → promote; the task it did."""
    task = world.synthesize()["task"]
    world.stage(update_scene_and_create_doctrine(task))
    (item,) = world.op("memory.review", {"kind": "consolidation"})["items"]
    prepared = world.op("memory.prepare", confirm_all(item))
    assert world.op("memory.promote", {"planId": prepared["planId"]})["status"] == "applied"
    return task


def commit_and_push(world: World, message: str) -> None:
    git(world.root, "add", "-A")
    git(world.root, "commit", "-q", "-m", message)
    git(world.root, "push", "-q", "origin", "main")


def cli(world: World, *args: str) -> Any:
    """The real `teamlore` CLI in `world`'s clone, with the clone's own state dir."""
    return world.cli(*args, env={"TEAMLORE_HOME": str(world.home)})


def status(world: World) -> tuple[dict[str, Any], str]:
    """`memory status` (JSON, then text) of the real CLI in `world`'s clone."""
    as_json = cli(world, "memory", "status", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    as_text = cli(world, "memory", "status")
    assert as_text.returncode == 0, as_text.stderr
    return orjson.loads(as_json.stdout)["consolidation"], as_text.stdout


def promote_entry(world: World, entry_id: str, body: str) -> None:
    """An approved entry as a promotion writes it."""
    entry = documents.Entry(
        id=entry_id,
        type="work_method",
        status="approved",
        priority=50,
        confidence="high",
        provenance_strength="direct",
        claim_support="human-confirmed",
        limitations=["source-local-only"],
        scope="repo",
        scene=None,
        occurred=["2026-08-12"],
        evidence=documents.Evidence(commits=[], paths=[]),
        superseded_by=None,
        body=body + "\n",
    )
    world.write(f"{ENTRIES}/{entry_id}.md", documents.dump_entry(entry))


def test_a_teammate_who_pulls_a_consolidation_finds_nothing_new_to_consolidate(
    team: Team,
) -> None:
    ana, bo = team.ana, team.bo
    task = consolidate(ana)
    assert len(task["entries"]) == 17
    commit_and_push(ana, "memory: consolidate")
    git(bo.root, "pull", "-q", "origin", "main")

    consolidation, text = status(bo)
    assert consolidation["newSinceBaseline"] == 0 and consolidation["due"] is False
    assert consolidation["baselineRunId"] is None and consolidation["committedEntries"] == 17
    assert "Consolidation baseline consolidated.json (17 entries), 0 approved entries new" in (
        " ".join(text.split())
    )
    synthesized = bo.synthesize()
    assert synthesized["status"] == "nothing-new" and synthesized["task"] is None

    promote_entry(bo, "tag-releases-from-main", "Tag releases from main, never from a branch.")
    promote_entry(bo, "pin-the-rust-toolchain", "Pin the Rust toolchain in rust-toolchain.toml.")
    assert status(bo)[0]["newSinceBaseline"] == 2
    handed_over = bo.synthesize()["task"]["entries"]
    assert [e["entryId"] for e in handed_over] == [
        "pin-the-rust-toolchain",
        "tag-releases-from-main",
    ]


def test_the_record_holds_each_covered_entry_revision_and_nothing_of_the_machine(
    team: Team,
) -> None:
    ana = team.ana
    task = consolidate(ana)
    record = ana.read(RECORD)
    covered = {
        e["entryId"]: (e["revision"], e["contentDigest"][:16])
        for e in task["binding"]["entryRevisions"]
    }
    assert documents.load_consolidated(record) == covered
    assert record == documents.dump_consolidated(covered)  # canonical: a rewrite is the same
    for entry_id, (revision, digest) in covered.items():
        assert f'    "{entry_id}": [{revision}, "{digest}"]' in record.decode()
        assert sha256_hex(ana.read(f"{ENTRIES}/{entry_id}.md")).startswith(digest)
    for private in (str(ana.root), str(ana.home), "run-", "consolidate-", "patch-"):
        assert private not in record.decode()
    assert re.search(r"\d{4}-\d{2}-\d{2}", record.decode()) is None  # no date to churn
    lint = orjson.loads(cli(ana, "memory", "lint", "--format", "json").stdout)
    assert [f for f in lint["findings"] if f["file"] == RECORD] == []
    assert RECORD in lint["files"]
    assemble = cli(ana, "memory", "assemble", "--provider", "claude")
    assert assemble.returncode == 0, assemble.stderr


def test_a_tree_without_the_record_keeps_the_local_baseline(team: Team) -> None:
    ana, bo = team.ana, team.bo
    consolidate(ana)
    (ana.root / RECORD).unlink()  # a tree consolidated before the record existed
    commit_and_push(ana, "memory: consolidate")
    git(bo.root, "pull", "-q", "origin", "main")

    assert status(ana)[0]["newSinceBaseline"] == 0
    assert ana.synthesize()["status"] == "nothing-new"
    consolidation, _ = status(bo)
    assert consolidation["committedEntries"] is None
    assert consolidation["newSinceBaseline"] == 17  # as before: bo's machine never consolidated


def test_a_record_that_does_not_read_is_ignored_and_named_by_lint(team: Team) -> None:
    bo = team.bo
    bo.write(RECORD, '{"format": "threadshare-memory-consolidated@v1", "entries": []}\n')
    assert status(bo)[0]["newSinceBaseline"] == 17
    lint = orjson.loads(cli(bo, "memory", "lint", "--format", "json").stdout)
    assert [(f["file"], f["rule"]) for f in lint["findings"] if f["file"] == RECORD] == [
        (RECORD, "format.invalid-field")
    ]


def test_an_entry_the_scenes_rest_on_through_a_teammate_stays_named_when_the_record_breaks(
    team: Team,
) -> None:
    """A merge that leaves conflict markers in the record: the local baseline alone is used,
    and an entry the scenes rest on through the teammate's consolidation, deprecated since, is
    still named in leftEntries (the agent is told to take it out of the scenes)."""
    ana, bo = team.ana, team.bo
    consolidate(ana)
    commit_and_push(ana, "memory: consolidate")
    git(bo.root, "pull", "-q", "origin", "main")
    promote_entry(bo, "bo-new-entry", "Run the smoke suite before tagging.")
    commit_and_push(bo, "memory: a new entry")
    task = bo.synthesize()["task"]
    assert [e["entryId"] for e in task["entries"]] == ["bo-new-entry"]
    assert bo.stage(patch_for(task, []))["status"] == "no-op"
    bo.write(RECORD, b"<<<<<<< HEAD\n" + bo.read(RECORD) + b"=======\n>>>>>>> theirs\n")
    deprecated = sorted((bo.root / ENTRIES).glob("*.md"))[0]
    deprecated.write_bytes(
        deprecated.read_bytes().replace(b"status: approved", b"status: deprecated", 1)
    )

    synthesized = bo.synthesize()

    assert synthesized["leftSinceBaseline"] == 1
    assert [e["entryId"] for e in synthesized["task"]["leftEntries"]] == [deprecated.stem]


def status_in_at_most(world: World, seconds: float, *, memory_bytes: int) -> dict[str, Any]:
    """`memory status --format json` of the real CLI, killed after `seconds` and refused more
    than `memory_bytes` of address space."""
    done = world.cli_in_at_most(
        seconds, "memory", "status", "--format", "json", memory_bytes=memory_bytes
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = orjson.loads(done.stdout)
    return result


def test_a_record_of_a_gibibyte_is_not_read_and_lint_names_its_size(team: Team) -> None:
    bo = team.bo
    with (bo.root / RECORD).open("wb") as record:
        record.truncate(1 << 30)  # sparse: a gibibyte to read, none of it on disk
    result = status_in_at_most(bo, 60, memory_bytes=768 << 20)
    assert result["consolidation"]["committedEntries"] is None
    assert result["consolidation"]["newSinceBaseline"] == 17
    assert result["lint"]["rules"].get("capacity.file-size") == 1


def test_a_fifo_in_place_of_the_record_is_never_waited_on(team: Team) -> None:
    bo = team.bo
    os.mkfifo(bo.root / RECORD)
    result = status_in_at_most(bo, 60, memory_bytes=4 << 30)
    assert result["consolidation"]["committedEntries"] is None
    assert result["lint"]["rules"].get("tree.not-a-file") == 1
    assert bo.synthesize()["task"]["binding"].get("consolidatedDigest") is None


PROMOTED = "tag-releases-from-main"


def test_a_hand_edit_of_the_record_alone_after_synthesize_makes_the_task_stale(
    team: Team,
) -> None:
    ana = team.ana
    consolidate(ana)
    promote_entry(ana, PROMOTED, "Tag releases from main, never from a branch.")
    task = ana.synthesize()["task"]
    assert [e["entryId"] for e in task["entries"]] == [PROMOTED]
    assert task["binding"]["consolidatedDigest"] == sha256_hex(ana.read(RECORD))
    covered = documents.load_consolidated(ana.read(RECORD))
    del covered[sorted(covered)[0]]  # one entry said to be not yet consolidated
    ana.write(RECORD, documents.dump_consolidated(covered))

    scene = scene_text("Threadshare memory pipeline", UPDATED_BODY)
    patch = patch_for(
        task,
        [operation("op-1", "update", "scene", "team-memory-design", scene, [PROMOTED])],
    )
    with pytest.raises(TeamloreError) as refused:
        ana.stage(patch)
    assert refused.value.code == "CONSOLIDATION_DRIFT"
    assert refused.value.details["path"] == RECORD
    assert "consolidated.json" in refused.value.message
    assert ana.synthesize()["task"]["taskId"] != task["taskId"]  # the tree as it is now
