"""A Skill is a folder: assemble copies every file of it beside SKILL.md (`scripts/`,
`references/`), which lint scans like any memory file, and removes the copies of a Skill that
left the tree when they are what it wrote (docs/assemble.md, "Files beside SKILL.md", "Skill
projection"). Real git repositories and clones, the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from support import commit_all, git, teamlore_cli

SKILLS = ".threadshare/memory/skills"
SKILL_MD = (
    '---\nname: "release"\ndescription: "Cut a release."\n---\n## Procedure\n\n'
    "1. Run `scripts/check.sh`.\n2. Follow references/policy.md.\n"
)
CHECK_SH = "#!/bin/sh\nset -e\npytest -q\n"
POLICY = "# Release policy\n\nTag from main only.\n"
COPIES = ("SKILL.md", "references/policy.md", "scripts/check.sh")


def assemble_cli(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    done = teamlore_cli("memory", "assemble", *args, "--format", "json", cwd=root, env=env)
    return done.returncode, json.loads(done.stdout)


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for sub in ("entries", "scenes", "skills"):
        (root / ".threadshare/memory" / sub).mkdir(parents=True)
        (root / ".threadshare/memory" / sub / ".gitkeep").write_text("")  # as `init` keeps it
    folder = root / SKILLS / "release"
    (folder / "scripts").mkdir(parents=True)
    (folder / "references").mkdir()
    (folder / "SKILL.md").write_text(SKILL_MD)
    (folder / "scripts/check.sh").write_text(CHECK_SH)
    (folder / "scripts/check.sh").chmod(0o755)
    (folder / "references/policy.md").write_text(POLICY)
    return root


def test_every_file_of_a_skill_folder_is_copied_checked_and_guarded(repo: Path) -> None:
    """The walk: scripts/check.sh and references/policy.md never reached .claude/skills/ or
    .agents/skills/, while lint said 0 findings and --check said up to date."""
    for provider, folder in (("claude", ".claude/skills"), ("codex", ".agents/skills")):
        code, result = assemble_cli(repo, "-p", provider)
        assert code == 0, result
        for name in COPIES:
            copy = repo / folder / "release" / name
            assert copy.read_bytes() == (repo / SKILLS / "release" / name).read_bytes()
        assert os.access(repo / folder / "release/scripts/check.sh", os.X_OK)
        (skill,) = result["skills"]
        assert [f["path"] for f in skill["files"]] == [
            f"{folder}/release/references/policy.md",
            f"{folder}/release/scripts/check.sh",
        ]
        assert assemble_cli(repo, "-p", provider, "--check")[0] == 0
    commit_all(repo, "a Skill with its scripts, assembled")

    # a copy gone is stale; a copy edited by hand is refused, as SKILL.md's copy is
    (repo / ".claude/skills/release/scripts/check.sh").unlink()
    code, payload = assemble_cli(repo, "-p", "claude", "--check")
    assert code == 1 and payload["error"]["code"] == "ASSEMBLY_STALE"
    assert ".claude/skills/release/scripts/check.sh (missing)" in payload["error"]["message"]
    policy = repo / ".agents/skills/release/references/policy.md"
    policy.write_text(POLICY + "My own line.\n")
    code, payload = assemble_cli(repo, "-p", "codex")
    assert code == 1 and payload["error"]["code"] == "ASSEMBLY_CONFLICT"
    assert payload["error"]["details"]["paths"] == [".agents/skills/release/references/policy.md"]
    assert policy.read_text().endswith("My own line.\n")


def test_lint_and_assemble_scan_the_files_beside_skill_md(repo: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (repo / SKILLS / "release/references/policy.md").write_text(f"Push with {token}.\n")
    done = teamlore_cli("memory", "lint", "--format", "json", cwd=repo)
    report = json.loads(done.stdout)
    blocking = [f for f in report["findings"] if f["severity"] == "block"]
    assert [f["file"] for f in blocking] == [f"{SKILLS}/release/references/policy.md"]
    code, payload = assemble_cli(repo, "-p", "claude")
    assert code == 1 and payload["error"]["code"] == "LINT_BLOCKED"
    assert token not in json.dumps(payload)
    assert not (repo / ".claude").exists()

    (repo / SKILLS / "release/references/policy.md").write_text(POLICY)
    (repo / SKILLS / "release/references/link.md").symlink_to("/etc/hostname")
    code, payload = assemble_cli(repo, "-p", "claude")
    assert code == 1 and payload["error"]["code"] == "UNSAFE_PATH"
    done = teamlore_cli("memory", "lint", "--format", "json", cwd=repo)
    rules = {(f["rule"], f["file"]) for f in json.loads(done.stdout)["findings"]}
    assert ("tree.symlink", f"{SKILLS}/release/references/link.md") in rules


def test_copies_of_a_removed_skill_are_removed_and_a_persons_own_skill_is_not(
    repo: Path,
) -> None:
    """The walk: after `git rm -r` of a Skill, its copies stayed, assemble said nothing and
    --check exited 0."""
    assert assemble_cli(repo, "-p", "claude")[0] == 0
    mine = repo / ".claude/skills/mine/SKILL.md"
    mine.parent.mkdir()
    mine.write_text('---\nname: "mine"\ndescription: "My own."\n---\nMine.\n')
    commit_all(repo, "assembled, and a Skill of my own")
    git(repo, "rm", "-r", "-q", f"{SKILLS}/release")

    code, payload = assemble_cli(repo, "-p", "claude", "--check")
    assert code == 1 and payload["error"]["code"] == "ASSEMBLY_STALE"
    stale = {item["path"]: item["why"] for item in payload["error"]["details"]["stale"]}
    for name in COPIES:
        assert stale[f".claude/skills/release/{name}"] == (
            "its source is no longer in the memory tree"
        )

    done = teamlore_cli("memory", "assemble", "-p", "claude", cwd=repo, env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    assert "release/SKILL.md (removed: its Skill file left" in done.stdout
    assert not (repo / ".claude/skills/release").exists()
    assert mine.read_text().startswith("---")
    assert assemble_cli(repo, "-p", "claude", "--check")[0] == 0


def test_a_fresh_clone_removes_the_copies_a_pulled_removal_left_and_keeps_an_edited_one(
    repo: Path, tmp_path: Path
) -> None:
    """Git tells a clone with no record which copies were assembled: the source as it was
    before the commit that removed it."""
    assert assemble_cli(repo, "-p", "claude")[0] == 0
    commit_all(repo, "assembled")
    git(repo, "rm", "-r", "-q", f"{SKILLS}/release")
    git(repo, "commit", "-q", "-m", "retire the release Skill, not assembled")

    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    edited = clone / ".claude/skills/release/references/policy.md"
    edited.write_text(POLICY + "A note of mine.\n")
    env = {"TEAMLORE_HOME": str(tmp_path / "teammate-state")}

    code, payload = assemble_cli(clone, "-p", "claude", "--check", env=env)
    assert code == 1
    assert "remove" in payload["error"]["next"].lower()
    stale = {item["path"]: item["why"] for item in payload["error"]["details"]["stale"]}
    assert stale[".claude/skills/release/references/policy.md"].endswith(
        "and it was edited since teamlore wrote it"
    )

    code, result = assemble_cli(clone, "-p", "claude", env=env)
    assert code == 0, result
    assert result["removed"] == [
        ".claude/skills/release/SKILL.md",
        ".claude/skills/release/scripts/check.sh",
    ]
    assert result["orphans"] == [".claude/skills/release/references/policy.md"]
    assert edited.read_text().endswith("A note of mine.\n")
    assert not (clone / ".claude/skills/release/scripts").exists()
