"""Two scene files 0.1.0 allowed whose names differ only as the upgrade's renaming forgets
(`Release.md` and `release.md`): `memory lint` blocks the old one with `slug.scene-name-taken`,
naming the other file and asking for a name of its own, where it advised renaming it onto the
other and so merging two scenes. A lone old name still gets the rename (the real CLI, a real
repository)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from support import entry_file, git, in_process, memory_init

SCENES = ".threadshare/memory/scenes"


def scene(root: Path, name: str) -> None:
    (root / SCENES / f"{name}.md").write_text(
        "-----META-START-----\ncreated: 2026-01-01\nupdated: 2026-01-01\n"
        f'summary: "About {name}"\nheat: 1\n-----META-END-----\n- a point\n'
    )


def lint(root: Path, home: Path) -> list[dict[str, Any]]:
    done = in_process(
        "memory", "lint", "--format", "json", cwd=root, env={"TEAMLORE_HOME": str(home)}
    )
    assert done.returncode == 1, done.stdout
    findings: list[dict[str, Any]] = json.loads(done.stdout)["findings"]
    return findings


def repository(tmp_path: Path, home: Path, *scenes: str) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    memory_init(root, home)
    for name in scenes:
        scene(root, name)
    return root


def test_two_scenes_one_name_once_renamed_are_kept_apart(tmp_path: Path, home: Path) -> None:
    root = repository(tmp_path, home, "Release", "release", "Db_Migrations", "db_migrations")
    found = {(f["file"], f["rule"]): f["message"] for f in lint(root, home)}
    assert set(found) == {
        (f"{SCENES}/Release.md", "slug.scene-name-taken"),
        (f"{SCENES}/Db_Migrations.md", "slug.scene-name-taken"),
        (f"{SCENES}/db_migrations.md", "slug.scene-name-taken"),
    }
    release = found[(f"{SCENES}/Release.md", "slug.scene-name-taken")]
    assert f"`{SCENES}/release.md` too" in release
    assert f"`git mv {SCENES}/Release.md {SCENES}/<name>.md`" in release
    assert f"{SCENES}/release.md`)" not in release  # no rename onto the other scene
    both = found[(f"{SCENES}/db_migrations.md", "slug.scene-name-taken")]
    assert "`db-migrations`" in both and f"`{SCENES}/Db_Migrations.md` too" in both


def test_a_lone_old_scene_name_is_still_renamed_as_the_upgrade_says(
    tmp_path: Path, home: Path
) -> None:
    root = repository(tmp_path, home, "chess_ui", "release")
    (finding,) = lint(root, home)
    assert (finding["file"], finding["rule"]) == (f"{SCENES}/chess_ui.md", "slug.scene-name")
    assert f"`git mv {SCENES}/chess_ui.md {SCENES}/chess-ui.md`" in finding["message"]


def test_an_entry_whose_old_scene_name_is_taken_once_renamed_is_not_told_to_take_it(
    tmp_path: Path, home: Path
) -> None:
    """One lint run told the scene file `Release.md` not to take `release` (another scene's) and
    told its entry `scene: Release` to take it: the entry's finding says the name is taken too,
    as the scene file's does. An entry of a lone old name still gets the rename."""
    root = repository(tmp_path, home, "Release", "release", "chess_ui")
    entries = root / ".threadshare/memory/entries"
    for entry_id, old in (("tag-after-ci", "Release"), ("board-arrows", "chess_ui")):
        text = entry_file(entry_id, "- a point").replace("scene: null", f"scene: {old}")
        (entries / f"{entry_id}.md").write_text(text)
    found = {(f["file"], f["rule"]): f["message"] for f in lint(root, home)}
    taken = found[(".threadshare/memory/entries/tag-after-ci.md", "slug.scene-name-taken")]
    assert "`release`" in taken and f"`{SCENES}/Release.md` and `{SCENES}/release.md`" in taken
    assert "name it `release`" not in taken
    assert (".threadshare/memory/entries/tag-after-ci.md", "slug.scene-name") not in found
    lone = found[(".threadshare/memory/entries/board-arrows.md", "slug.scene-name")]
    assert "name it `chess-ui` here" in lone


def test_the_rename_of_a_lone_old_scene_name_runs_as_printed_for_a_name_with_a_space(
    tmp_path: Path, home: Path
) -> None:
    """`git mv .../Db Migrations.md .../db-migrations.md` unquoted was four words to the shell:
    each path is one word, and the new name is the upgrade's renaming, as everywhere else."""
    root = repository(tmp_path, home, "Db Migrations")
    (finding,) = lint(root, home)
    moved = f"{SCENES}/db-migrations.md"
    command = f"git mv '{SCENES}/Db Migrations.md' {moved}"
    assert f"`{command}`" in finding["message"], finding["message"]
    git(root, "add", ".")
    subprocess.run(["sh", "-c", command], cwd=root, check=True)
    assert (root / moved).is_file()
