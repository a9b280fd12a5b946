"""`memory init` and the tree paths: idempotent, symlink-refusing, reference-shaped."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from teamlore.core.errors import UNSAFE_PATH, TeamloreError
from teamlore.memory.store import layout

CREATED = [
    ".threadshare/memory/entries",
    ".threadshare/memory/entries/.gitkeep",
    ".threadshare/memory/scenes",
    ".threadshare/memory/scenes/.gitkeep",
    ".threadshare/memory/skills",
    ".threadshare/memory/skills/.gitkeep",
    ".threadshare/memory/index.json",
]
FOLDERS = CREATED[0:6:2]


def test_init_creates_the_tree_and_the_index_skeleton(tmp_path: Path) -> None:
    assert layout.init_tree(tmp_path) == CREATED
    for relative in FOLDERS:
        assert (tmp_path / relative).is_dir()
        assert (tmp_path / relative / ".gitkeep").read_bytes() == b""
    index = tmp_path / layout.INDEX_FILE
    assert index.read_text() == (
        '{\n  "format": "threadshare-memory-index@v1",\n  "entries": [],\n  "scenes": []\n}\n'
    )
    assert json.loads(index.read_text())["format"] == "threadshare-memory-index@v1"
    assert [
        p.name for p in (tmp_path / layout.MEMORY_ROOT).iterdir() if p.name.endswith(".tmp")
    ] == []


def test_init_is_idempotent_and_never_rewrites_the_index(tmp_path: Path) -> None:
    layout.init_tree(tmp_path)
    index = tmp_path / layout.INDEX_FILE
    index.write_text('{"format": "threadshare-memory-index@v1", "entries": [], "scenes": []}')
    assert layout.init_tree(tmp_path) == []
    assert index.read_text().startswith('{"format"')


def test_init_fills_in_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / layout.ENTRIES_DIR).mkdir(parents=True)
    assert layout.init_tree(tmp_path) == CREATED[1:]
    # a tree made before .gitkeep existed gets them from the next init
    for keep in CREATED[1:6:2]:
        (tmp_path / keep).unlink()
    assert layout.init_tree(tmp_path) == CREATED[1:6:2]


@pytest.mark.parametrize("component", [".threadshare", ".threadshare/memory", layout.SCENES_DIR])
def test_init_refuses_a_symlinked_directory(tmp_path: Path, component: str) -> None:
    worktree = tmp_path / "wt"
    outside = tmp_path / "outside"
    outside.mkdir()
    (worktree / component).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, worktree / component)
    with pytest.raises(TeamloreError) as caught:
        layout.init_tree(worktree)
    assert caught.value.error is UNSAFE_PATH
    assert "symbolic links" in caught.value.message
    assert str(tmp_path) not in caught.value.message
    assert list(outside.iterdir()) == []


def test_init_refuses_a_symlinked_index(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    (tmp_path / layout.MEMORY_ROOT).mkdir(parents=True)
    os.symlink(target, tmp_path / layout.INDEX_FILE)
    with pytest.raises(TeamloreError) as caught:
        layout.init_tree(tmp_path)
    assert caught.value.error is UNSAFE_PATH
    assert target.read_text() == "{}"


def test_init_refuses_a_file_where_a_directory_belongs(tmp_path: Path) -> None:
    (tmp_path / ".threadshare").write_text("not a dir")
    with pytest.raises(TeamloreError) as caught:
        layout.init_tree(tmp_path)
    assert caught.value.error is UNSAFE_PATH
    assert "`.threadshare` is a file, not a folder; move it aside" in caught.value.message


@pytest.mark.parametrize("operation", ["memory.status", "memory.search", "memory.lint"])
def test_a_memory_root_that_is_a_file_is_named_a_file_not_a_symlink(
    tmp_path: Path, home: Path, operation: str
) -> None:
    """Issue 27: `.threadshare/memory` being a regular file was blamed on a symbolic link."""
    from support import git
    from teamlore.ops.registry import OpContext, run_operation

    git(tmp_path, "init", "-q")
    (tmp_path / ".threadshare").mkdir()
    (tmp_path / layout.MEMORY_ROOT).write_text("not a folder")
    payload = {"query": "release"} if operation == "memory.search" else {}
    try:
        result = run_operation(operation, OpContext(cwd=tmp_path, home=home), payload)
    except TeamloreError as refused:
        message = refused.message
    else:
        assert result["tree"] == "unsafe"
        return
    assert "`memory` is a file, not a folder; move it aside" in message
    assert "symbolic" not in message


def test_created_index_is_a_regular_readable_file(tmp_path: Path) -> None:
    layout.init_tree(tmp_path)
    mode = os.stat(tmp_path / layout.INDEX_FILE).st_mode
    assert stat.S_ISREG(mode) and mode & stat.S_IRUSR


def test_paths_are_repo_relative_and_validated() -> None:
    assert layout.entry_path("run-e2e") == ".threadshare/memory/entries/run-e2e.md"
    assert layout.scene_path("鉴权模块") == ".threadshare/memory/scenes/鉴权模块.md"
    assert layout.skill_path("release") == ".threadshare/memory/skills/release/SKILL.md"
    with pytest.raises(ValueError):
        layout.entry_path("../escape")
    with pytest.raises(ValueError):
        layout.scene_path("../escape")
    with pytest.raises(ValueError):
        layout.skill_path("Bad Name")


def test_document_kind_classifies_memory_paths() -> None:
    assert layout.document_kind(".threadshare/memory/entries/a.md") == "entry"
    assert layout.document_kind(".threadshare/memory/scenes/a.md") == "scene"
    assert layout.document_kind(".threadshare/memory/doctrine.md") == "doctrine"
    assert layout.document_kind(".threadshare/memory/skills/a/SKILL.md") == "skill"
    assert layout.document_kind(".threadshare/memory/index.json") == "index"
    assert layout.document_kind(".threadshare/memory/consolidated.json") == "consolidated"
    assert layout.document_kind(".threadshare/memory/entries/a.txt") is None
    assert layout.document_kind("docs/entries/a.md") is None
