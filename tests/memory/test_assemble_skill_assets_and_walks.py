"""Two costs of copying whole Skill folders (docs/assemble.md, "Files beside SKILL.md"): a
binary file beside SKILL.md (an image it shows) is copied byte for byte instead of refusing
every Skill, and a person's own Skill folders in the provider's skill folder cost no git history
walk each. Real git repositories, the real CLI in a subprocess, a logging `git` on PATH."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from test_assemble_skill_folders import assemble_cli

from support import commit_all, git, teamlore_cli

SKILLS = ".threadshare/memory/skills"
SKILL_MD = (
    '---\nname: "release"\ndescription: "Cut a release."\n---\n## Procedure\n\n'
    "1. Compare with references/diagram.png.\n"
)
# a PNG's signature and IHDR chunk: NUL bytes, not UTF-8
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for sub in ("entries", "scenes", "skills"):
        (root / ".threadshare/memory" / sub).mkdir(parents=True)
        (root / ".threadshare/memory" / sub / ".gitkeep").write_text("")
    folder = root / SKILLS / "release"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    return root


def test_a_binary_file_beside_skill_md_is_copied_byte_for_byte(repo: Path) -> None:
    """The review: references/diagram.png refused assemble (LINT_BLOCKED) for every Skill."""
    (repo / SKILLS / "release/references").mkdir()
    (repo / SKILLS / "release/references/diagram.png").write_bytes(PNG)
    code, result = assemble_cli(repo, "-p", "claude")
    assert code == 0, result
    assert (repo / ".claude/skills/release/references/diagram.png").read_bytes() == PNG
    assert assemble_cli(repo, "-p", "claude", "--check")[0] == 0
    report = json.loads(teamlore_cli("memory", "lint", "--format", "json", cwd=repo).stdout)
    assert [f for f in report["findings"] if f["severity"] == "block"] == []

    # text that is not UTF-8 (no NUL: not binary) is still linted, and refused
    (repo / SKILLS / "release/references/notes.txt").write_bytes(b"caf\xe9 token\n")
    code, payload = assemble_cli(repo, "-p", "claude")
    assert code == 1 and payload["error"]["code"] == "LINT_BLOCKED"


def _logging_git(tmp_path: Path) -> tuple[dict[str, str], Path]:
    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "git-calls.log"
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, log


def _history_walks(log: Path) -> int:
    calls = log.read_text().splitlines() if log.exists() else []
    return sum(1 for call in calls if " log " in f" {call} " or " rev-list " in f" {call} ")


def test_a_persons_own_skill_folders_cost_no_history_walk_each(repo: Path, tmp_path: Path) -> None:
    """The review: each Skill folder in .claude/skills that did not come from team memory cost
    a `git log` of the whole history on every assemble and --check (and each file in it
    another)."""
    assert assemble_cli(repo, "-p", "claude")[0] == 0
    commit_all(repo, "assembled")
    env, log = _logging_git(tmp_path)

    walks = []
    for count in (1, 3):
        for n in range(count):
            mine = repo / f".claude/skills/mine-{n}"
            (mine / "references").mkdir(parents=True, exist_ok=True)
            (mine / "SKILL.md").write_text(f'---\nname: "mine-{n}"\ndescription: "Mine."\n---\n')
            (mine / "references/notes.md").write_text("My notes.\n")
        commit_all(repo, f"{count} Skills of my own")
        log.unlink(missing_ok=True)
        code, payload = assemble_cli(repo, "-p", "claude", "--check", env=env)
        assert code == 0, payload
        walks.append(_history_walks(log))
    assert walks[0] == walks[1] <= 1, walks
    assert (repo / ".claude/skills/mine-2/SKILL.md").exists()
