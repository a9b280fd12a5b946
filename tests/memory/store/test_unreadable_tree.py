"""A memory tree teamlore cannot read says so with a stable code and changes nothing.

Root reads every folder, so when the tests run as root the CLI runs as an unprivileged user
through `setpriv` (util-linux); otherwise directly."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import UNPRIVILEGED, unprivileged_prefix


@pytest.fixture()
def as_user() -> list[str]:
    return unprivileged_prefix()


@pytest.fixture()
def world(as_user: list[str]) -> Iterator[Path]:
    # not under pytest's temp base: that is private to root, and the user must reach the repo
    root = Path(tempfile.mkdtemp(prefix="teamlore-unreadable-tree-"))
    os.chmod(root, 0o755)
    repo = root / "repo"
    repo.mkdir()
    git = ["git", "-c", "init.defaultBranch=main", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "teamlore.cli.main",
            "memory",
            "init",
            "--repository",
            str(repo),
            "--format",
            "json",
        ],
        check=True,
        capture_output=True,
        env={**os.environ, "TEAMLORE_HOME": str(root / "state")},
    )
    entries = repo / ".threadshare" / "memory" / "entries"
    if as_user:
        for path in [root, *root.rglob("*")]:
            os.chown(path, UNPRIVILEGED, UNPRIVILEGED, follow_symlinks=False)
    os.chmod(entries, 0)
    try:
        yield root
    finally:
        os.chmod(entries, stat.S_IRWXU)
        shutil.rmtree(root)


def run_as(as_user: list[str], world: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    """`teamlore COMMAND --repository REPO --format json` in `world`, as `as_user`."""
    return subprocess.run(
        [
            *as_user,
            sys.executable,
            "-m",
            "teamlore.cli.main",
            *command,
            "--repository",
            str(world / "repo"),
            "--format",
            "json",
        ],
        env={**os.environ, "TEAMLORE_HOME": str(world / "state"), "HOME": str(world)},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("command", [["memory", "lint"], ["memory", "status"]])
def test_an_unreadable_entries_folder_is_permission_denied_not_internal(
    world: Path, as_user: list[str], command: list[str]
) -> None:
    repo = world / "repo"
    before = sorted(p.name for p in (repo / ".threadshare" / "memory").iterdir())
    done = run_as(as_user, world, command)
    assert done.returncode == 1, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "PERMISSION_DENIED"
    assert str(world) not in error["message"]  # the folder is named by its last part only
    assert "entries" in error["message"]
    assert sorted(p.name for p in (repo / ".threadshare" / "memory").iterdir()) == before


@pytest.mark.parametrize("command", [["memory", "search", "tags"], ["memory", "status"]])
def test_an_unreadable_memory_folder_is_permission_denied_not_uninitialized(
    world: Path, as_user: list[str], command: list[str]
) -> None:
    """The tree is there: `memory init` would not help, its owner or mode would."""
    repo = world / "repo"
    memory = repo / ".threadshare" / "memory"
    os.chmod(memory, 0)
    try:
        done = run_as(as_user, world, command)
    finally:
        os.chmod(memory, stat.S_IRWXU)
    assert done.returncode == 1, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert (error["code"], error["message"]) == (
        "PERMISSION_DENIED",
        ".threadshare/memory: Permission denied",
    )
    assert "memory init" not in error["next"]
