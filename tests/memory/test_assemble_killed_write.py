"""A `memory assemble` killed in the middle of a write leaves the writer's temp file
(`.teamlore-write-<hex>.tmp`) at the worktree root or in a Skill folder; the next assemble
removes it under its lock — only files of that exact name, older than itself and held by no
live writer, so a concurrent command's temp file is never taken (core/safe_write.py,
memory/interrupted.py). Real git repository, real `teamlore` processes, real kills."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import git, teamlore_cli
from teamlore.core import safe_write

TEMP = safe_write.TEMP_PREFIX
SKILL = (
    b'---\nname: "release"\ndescription: "Cut and verify a release of the shop."\n---\n'
    b"## Procedure\n\n1. Run pytest tests/test_release.py.\n2. Push the v-prefixed tag.\n"
)


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for sub in ("entries", "scenes", "skills"):
        (root / ".threadshare" / "memory" / sub).mkdir(parents=True)
    return Path(os.path.realpath(root))


def add_skill(repo: Path) -> None:
    folder = repo / ".threadshare" / "memory" / "skills" / "release"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(SKILL)


def killed_assemble(repo: Path) -> None:
    killed = teamlore_cli(
        "memory",
        "assemble",
        "-p",
        "claude",
        cwd=repo,
        env={"TEAMLORE_FAILPOINT": "write.temp-synced"},
    )
    assert killed.returncode == -9, killed.stdout + killed.stderr


def temps(repo: Path) -> list[str]:
    return sorted(p.relative_to(repo).as_posix() for p in repo.rglob(f"{TEMP}*"))


def assemble(repo: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    done = teamlore_cli(
        "memory", "assemble", "-p", "claude", *args, "--format", "json", cwd=repo, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_the_next_assemble_removes_the_temp_files_killed_ones_left(repo: Path) -> None:
    killed_assemble(repo)
    [left] = temps(repo)
    assert left.startswith(TEMP)  # beside CLAUDE.md, at the worktree root
    assert f"?? {left}" in git(repo, "status", "--porcelain", "--untracked-files=all")
    add_skill(repo)
    killed_assemble(repo)  # a Skill is copied first: killed in its folder this time
    [in_skill] = temps(repo)  # that one removed the first one's before it wrote
    assert in_skill.startswith(f".claude/skills/release/{TEMP}")
    past = time.time() - 5
    # names teamlore does not make are the person's, whatever they look like
    mine = [repo / f"{TEMP}notes.tmp", repo / "draft.tmp", repo / f"{TEMP}0123456789ABCDEF.tmp"]
    for path in mine:
        path.write_text("mine\n")
        os.utime(path, (past, past))

    result = assemble(repo)

    assert result["changed"] is True and result["skillsChanged"] == 1
    assert temps(repo) == sorted(p.name for p in mine if p.name.startswith(TEMP))
    assert all(path.read_text() == "mine\n" for path in mine)
    assert (repo / ".claude" / "skills" / "release" / "SKILL.md").read_bytes() == SKILL
    assert assemble(repo, "--check")["stale"] == []


def test_a_live_temp_file_of_a_concurrent_writer_is_kept(repo: Path, tmp_path: Path) -> None:
    """Another command (an integration install, say) writes a file at the worktree root with the
    same writer and stands still after its temp file is on disk, started before this assemble:
    the temp file is older than the assemble, but its writer is alive and holds it."""
    flag = tmp_path / "paused"
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from teamlore.core import safe_write; "
            "safe_write.write_file(Path(sys.argv[1]), '.mcp.json', b'{}\\n')",
            str(repo),
        ],
        env={**os.environ, "TEAMLORE_PAUSEPOINT": f"write.temp-synced={flag}"},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not flag.exists():
            assert writer.poll() is None, writer.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        [live] = temps(repo)
        time.sleep(0.05)  # the assemble starts strictly after the temp file was last written

        assemble(repo)

        assert temps(repo) == [live]
    finally:
        flag.unlink(missing_ok=True)
    _, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    assert (repo / ".mcp.json").read_bytes() == b"{}\n" and temps(repo) == []


def test_a_temp_file_named_by_a_symlink_is_never_followed(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    link = repo / f"{TEMP}00000000000000aa.tmp"
    link.symlink_to(outside)

    assemble(repo)

    assert link.is_symlink() and outside.read_text() == "keep\n"
