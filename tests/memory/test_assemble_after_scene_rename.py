"""A block teamlore wrote listing a scene under a name the scene-name rule now refuses
(`scenes/db_migrations.md`) stays teamlore's once the scene is renamed (`git mv`, committed or
only in the working tree) or deleted: assemble rewrites it, while a line of it edited by hand is
still refused (docs/assemble.md, "Hand edits inside the block"). In 0.1.0's layout (its own
output, tests/memory/data/assembled_by_0_1_0/old_scene_name/) and in this version's; real git
repositories, the real CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_assemble_hand_edits import BEGIN, END, error_of
from test_assemble_upgrade_from_0_1_0 import (
    HINT,
    PROVIDERS,
    WRITTEN_BY_0_1_0,
    assemble_cli,
    shop,
    write_as_0_1_0,
)

from support import commit_all, git
from teamlore.memory.assemble import SceneLine, render_block
from teamlore.memory.assembled import PROVIDERS as LAYOUTS
from teamlore.memory.skills.source import source_skills
from teamlore.memory.store.tree_reader import read_memory_files

OLD_NAME = WRITTEN_BY_0_1_0 / "old_scene_name"
SCENES = ".threadshare/memory/scenes"
OLD = f"{SCENES}/db_migrations.md"
NEW = f"{SCENES}/db-migrations.md"
OLD_LINE = f"- {OLD} (heat 2) \u2014 Running the database migrations"


def written_by_0_1_0(root: Path) -> None:
    """0.1.0's assemble of the tree holding `scenes/db_migrations.md`: the block it wrote in
    CLAUDE.md and AGENTS.md (its Skill copies are the fixture's SKILL.md, byte for byte)."""
    shutil.copyfile(OLD_NAME / "db_migrations.md", root / OLD)
    for name, skills_dir in PROVIDERS.values():
        shutil.copyfile(OLD_NAME / name, root / name)
        for skill in (root / ".threadshare/memory/skills").iterdir():
            copy = root / skills_dir / skill.name / "SKILL.md"
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(skill / "SKILL.md", copy)


def written_before_the_rule(root: Path) -> None:
    """This version's layout of the tree holding `scenes/db_migrations.md`, as it wrote it
    before the scene-name rule (the same renderer, the scene under its old name), and its Skill
    copies."""
    shutil.copyfile(OLD_NAME / "db_migrations.md", root / OLD)
    tree = read_memory_files(root)
    skills = source_skills(tree)
    doctrine = (root / ".threadshare/memory/doctrine.md").read_text()
    scenes = [
        SceneLine("release-notes", 3, "Writing the release notes"),
        SceneLine("db_migrations", 2, "Running the database migrations"),
        SceneLine("ci-cache", 1, "Debugging the CI cache"),
    ]
    for provider, (name, skills_dir) in PROVIDERS.items():
        text = (root / name).read_text()
        block = render_block(LAYOUTS[provider], doctrine, scenes, skills)
        (root / name).write_text(text + block + "\n")  # as shop() left it, then the block
        for skill in skills:
            copy = root / skills_dir / skill.name / "SKILL.md"
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(skill.data)


WRITERS = {"0.1.0": written_by_0_1_0, "this version": written_before_the_rule}


def assembled_with_the_old_name(root: Path, writer: str) -> Path:
    shop(root)
    WRITERS[writer](root)
    assert OLD_LINE in (root / "CLAUDE.md").read_text()
    commit_all(root, f"team memory with scenes/db_migrations.md, assembled by {writer}")
    return root


def rewritten(root: Path, line: str = OLD_LINE) -> None:
    """Assemble rewrites each provider's block holding `line` (no ASSEMBLY_CONFLICT), in this
    version's layout, and `--check` then passes."""
    for provider, (name, _) in PROVIDERS.items():
        before = (root / name).read_text()
        assert line in before
        code, payload = assemble_cli(root, "-p", provider)
        assert code == 0, (provider, payload)
        assert payload["changed"] is True
        after = (root / name).read_text()
        start, end = before.index(BEGIN), before.index(END) + len(END)
        assert after == before[:start] + payload["block"] + before[end:]  # the rest kept
        assert HINT in after and line not in after
        assert assemble_cli(root, "-p", provider, "--check")[0] == 0


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize("committed", [True, False], ids=["committed", "working-tree"])
def test_a_block_naming_a_scene_since_renamed_is_rewritten(
    tmp_path: Path, home: Path, writer: str, committed: bool
) -> None:
    """The walk: after `git mv scenes/db_migrations.md scenes/db-migrations.md` assemble
    refused the block teamlore had written from the file under its old name as edited by
    hand: no version of the tree rendered that line any more, the loader refusing the name."""
    root = assembled_with_the_old_name(tmp_path / "shop", writer)
    git(root, "mv", OLD, NEW)
    if committed:
        commit_all(root, "rename the scene db_migrations to db-migrations")
    rewritten(root)
    assert f"- {NEW} (heat 2)" in (root / "CLAUDE.md").read_text()


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize("committed", [True, False], ids=["committed", "working-tree"])
def test_a_block_naming_a_scene_since_deleted_is_rewritten(
    tmp_path: Path, home: Path, writer: str, committed: bool
) -> None:
    """Deleted instead (`git rm`): the block names a file no version of the working tree
    holds, only git's history."""
    root = assembled_with_the_old_name(tmp_path / "shop", writer)
    git(root, "rm", "-q", OLD)
    if committed:
        commit_all(root, "remove the scene db_migrations")
    rewritten(root)
    assert "db_migrations" not in (root / "CLAUDE.md").read_text()


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_block_naming_any_scene_renamed_unchanged_is_rewritten(
    tmp_path: Path, home: Path, writer: str
) -> None:
    """A scene whose name was always allowed, renamed with `git mv` and not changed: the file
    under its old name and under its new one are one blob, which the history was read once for,
    under the new name only."""
    root = shop(tmp_path / "shop")
    if writer == "0.1.0":
        write_as_0_1_0(root)
    else:
        for provider in PROVIDERS:  # a teammate's machine: this one recorded no digest of it
            assert assemble_cli(root, "-p", provider, home=tmp_path / "teammate")[0] == 0
    commit_all(root, f"team memory, assembled by {writer}")
    git(root, "mv", f"{SCENES}/ci-cache.md", f"{SCENES}/ci-caching.md")
    commit_all(root, "rename the scene ci-cache to ci-caching")
    rewritten(root, f"- {SCENES}/ci-cache.md (heat 1) \u2014 Debugging the CI cache")
    assert f"- {SCENES}/ci-caching.md (heat 1)" in (root / "CLAUDE.md").read_text()


def test_a_mixed_team_renames_a_scene_a_teammate_on_0_1_0_added(tmp_path: Path, home: Path) -> None:
    """This version assembled and committed; a teammate still on 0.1.0 added
    `scenes/db_migrations.md` and assembled with 0.1.0, committed; then a teammate on this
    version renamed the scene (lint refuses the old name) and committed."""
    root = shop(tmp_path / "shop")
    for provider in PROVIDERS:
        assert assemble_cli(root, "-p", provider)[0] == 0
    commit_all(root, "team memory, assembled by this version")
    written_by_0_1_0(root)
    commit_all(root, "the db_migrations scene, assembled by teamlore 0.1.0")
    git(root, "mv", OLD, NEW)
    commit_all(root, "rename the scene db_migrations to db-migrations")
    rewritten(root)


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize(
    "edited",
    [
        OLD_LINE + ", on Fridays only",
        OLD_LINE.replace("heat 2", "heat 5"),
        f"{OLD_LINE}\n- {SCENES}/db_rollbacks.md (heat 1) \u2014 Rolling a migration back",
    ],
    ids=["summary", "heat", "added-line"],
)
def test_a_line_of_a_renamed_scene_edited_by_hand_is_still_refused(
    tmp_path: Path, home: Path, writer: str, edited: str
) -> None:
    root = assembled_with_the_old_name(tmp_path / "shop", writer)
    git(root, "mv", OLD, NEW)
    commit_all(root, "rename the scene db_migrations to db-migrations")
    for provider, (name, _) in PROVIDERS.items():
        path = root / name
        path.write_text(path.read_text().replace(OLD_LINE, edited))
        hand_edited = path.read_bytes()
        for options in ((), ("--repair",), ("--check",)):
            code, payload = assemble_cli(root, "-p", provider, *options)
            assert code == 1
            refusal = error_of(payload)
            assert refusal["code"] == "ASSEMBLY_CONFLICT", (provider, options, payload)
            assert "was edited by hand since teamlore wrote it" in refusal["message"]
            assert path.read_bytes() == hand_edited
    assert END in (root / "CLAUDE.md").read_text()
