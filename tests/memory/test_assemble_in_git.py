"""Assembled files shared through git (docs/assemble.md, "Assembled files in git"): teammates who
each promote an entry and assemble merge CLAUDE.md / AGENTS.md without a conflict and without a
wrong line, and `memory assemble --check` tells CI whether what is committed is what assemble
writes now. Real clones made with the git binary; the CLI in a subprocess where the exit code
and the text matter."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from support import commit_all, entry_file, git, git_run, shared_fixtures, teamlore_cli
from teamlore.core.errors import TeamloreError
from teamlore.ops.registry import OpContext, run_operation

INSTRUCTIONS = ("CLAUDE.md", "AGENTS.md")
CONFLICT_MARKERS = ("<<<<<<<", "=======", ">>>>>>>")


def assemble(root: Path, home: Path, provider: str, **options: bool) -> dict[str, Any]:
    return run_operation(
        "memory.assemble", OpContext(cwd=root, home=home), {"provider": provider, **options}
    )


def check(root: Path, provider: str) -> tuple[int, dict[str, Any]]:
    done = teamlore_cli(
        "memory", "assemble", "-p", provider, "--check", "--format", "json", cwd=root
    )
    payload: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, payload


def assemble_both(root: Path, home: Path) -> None:
    for provider in ("claude", "codex"):
        assemble(root, home, provider)


def write_entry(root: Path, entry_id: str, body: str) -> None:
    (root / ".threadshare/memory/entries" / f"{entry_id}.md").write_text(entry_file(entry_id, body))


def add_skill(root: Path, name: str, description: str) -> None:
    folder = root / ".threadshare/memory/skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f'---\nname: "{name}"\ndescription: "{description}"\n---\n## Procedure\n\n1. {name}.\n'
    )


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(root).parts
    }


@pytest.fixture()
def shared(tmp_path: Path, home: Path) -> Path:
    """The team's repository: the reference memory tree, a CLAUDE.md of the team's own and
    both providers assembled, committed on main."""
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    memory = root / ".threadshare" / "memory"
    shutil.copytree(
        shared_fixtures("threadshare-memory"), memory, ignore=shutil.ignore_patterns("SOURCE.md")
    )
    for path in [memory, *memory.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    (root / "CLAUDE.md").write_text("# Shop\n\nRun the tests before you push.\n")
    assemble_both(root, home)
    commit_all(root, "team memory, assembled")
    return root


def clone(shared: Path, name: str) -> Path:
    git(shared.parent, "clone", "-q", str(shared), name)
    return shared.parent / name


def merge(into: Path, other: Path) -> Any:
    git(into, "fetch", "-q", str(other), "main")
    return git_run(into, "merge", "--no-edit", "FETCH_HEAD")


# --- two teammates, two promotions ----------------------------------------------------------


@pytest.mark.parametrize("alice_promotes", [1, 2], ids=["same-count", "different-count"])
def test_two_clones_that_each_promote_and_assemble_merge_cleanly_and_need_no_new_assemble(
    shared: Path, home: Path, alice_promotes: int
) -> None:
    """The block said how many approved entries there were: with one promotion each the merge
    was clean but said 18 of 19 entries; with different counts every merge stopped with
    `CONFLICT (content): Merge conflict in AGENTS.md` (and in CLAUDE.md)."""
    alice, bob = clone(shared, "alice"), clone(shared, "bob")
    for number in range(alice_promotes):
        write_entry(alice, f"alice-release-rule-{number}", f"Release rule {number} of Alice.")
    assemble_both(alice, home)
    commit_all(alice, "alice promotes")
    write_entry(bob, "bob-run-make-check", "Run make check before pushing.")
    assemble_both(bob, home)
    commit_all(bob, "bob promotes")
    assembled = {name: (alice / name).read_bytes() for name in INSTRUCTIONS}
    assert assembled == {name: (bob / name).read_bytes() for name in INSTRUCTIONS}

    merged = merge(bob, alice)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "CONFLICT" not in merged.stdout
    before = snapshot(bob)
    for provider in ("claude", "codex"):
        assert assemble(bob, home, provider)["changed"] is False
        assert check(bob, provider)[0] == 0
    assert snapshot(bob) == before
    assert {name: (bob / name).read_bytes() for name in INSTRUCTIONS} == assembled
    assert (bob / "CLAUDE.md").read_text().startswith("# Shop\n\nRun the tests before you push.\n")


# --- --check --------------------------------------------------------------------------------


def test_check_passes_on_what_assemble_wrote_and_writes_nothing(shared: Path) -> None:
    (shared / "AGENTS.md").write_bytes(
        (shared / "AGENTS.md").read_bytes().replace(b"\n", b"\r\n")  # saved on Windows
    )
    before = snapshot(shared)

    for provider in ("claude", "codex"):
        code, result = check(shared, provider)
        assert code == 0
        assert result["stale"] == [] and result["checked"] == [result["target"]]

    assert snapshot(shared) == before
    shown = teamlore_cli("memory", "assemble", "-p", "claude", "--check", cwd=shared)
    assert shown.returncode == 0
    assert shown.stdout.splitlines() == [
        "Up to date: what `teamlore memory assemble -p claude` writes now (1 file):",
        "  CLAUDE.md",
    ]


def test_check_names_each_stale_file_and_why_and_writes_nothing(shared: Path) -> None:
    """A Skill promoted and committed without assembling: the block lacks its line, the
    projection is missing; a projection edited by hand differs from its source."""
    add_skill(shared, "release", "Cut and verify a release of the shop.")
    add_skill(shared, "deploy", "Deploy the shop.")
    projection = shared / ".claude/skills/deploy/SKILL.md"
    projection.parent.mkdir(parents=True)
    projection.write_text("edited by hand\n")
    before = snapshot(shared)

    code, refusal = check(shared, "claude")

    assert code == 1
    error = refusal["error"]
    assert error["code"] == "ASSEMBLY_STALE"
    assert error["details"]["stale"] == [
        {"path": "CLAUDE.md", "why": "its managed block differs from the memory tree"},
        {
            "path": ".claude/skills/deploy/SKILL.md",
            "why": "differs from .threadshare/memory/skills/deploy/SKILL.md",
        },
        {"path": ".claude/skills/release/SKILL.md", "why": "missing"},
    ]
    assert error["message"].startswith(
        "3 assembled files are not what `teamlore memory assemble -p claude` writes now: "
        "CLAUDE.md (its managed block differs from the memory tree); "
    )
    assert error["next"] == "Run `teamlore memory assemble -p claude`, then commit what it wrote."
    assert snapshot(shared) == before


def test_check_names_a_missing_instructions_file_and_one_without_a_block(shared: Path) -> None:
    (shared / "CLAUDE.md").unlink()
    (shared / "AGENTS.md").write_text("# Codex notes\n")

    assert check(shared, "claude")[1]["error"]["details"]["stale"] == [
        {"path": "CLAUDE.md", "why": "missing"}
    ]
    assert check(shared, "codex")[1]["error"]["details"]["stale"] == [
        {"path": "AGENTS.md", "why": "no managed block"}
    ]


def test_check_names_the_lines_of_a_merge_left_in_claude_md(shared: Path, home: Path) -> None:
    """Each side promoted a different Skill, assembled and added a note under the block: the
    merge stops in CLAUDE.md across the block's END marker. Assemble refuses it
    (ASSEMBLY_MERGE_UNRESOLVED); for CI it is a stale file like any other, named with the lines
    of the conflict."""
    alice, bob = clone(shared, "alice"), clone(shared, "bob")
    for root, skill, note in ((alice, "deploy", "Tag with v."), (bob, "release", "Tag bare.")):
        add_skill(root, skill, f"The {skill} procedure.")
        assemble(root, home, "claude")
        (root / "CLAUDE.md").write_text((root / "CLAUDE.md").read_text() + f"\n{note}\n")
        commit_all(root, skill)
    assert merge(bob, alice).returncode != 0
    lines = (bob / "CLAUDE.md").read_text().split("\n")
    starts = [n for n, line in enumerate(lines, 1) if line.startswith(CONFLICT_MARKERS[0])]
    ends = [n for n, line in enumerate(lines, 1) if line.startswith(CONFLICT_MARKERS[2])]
    assert starts and len(starts) == len(ends)
    spans = ", ".join(f"{start}-{end}" for start, end in zip(starts, ends, strict=True))
    conflicted = snapshot(bob)

    code, refusal = check(bob, "claude")

    assert code == 1 and refusal["error"]["code"] == "ASSEMBLY_STALE"
    assert refusal["error"]["details"]["stale"] == [
        {"path": "CLAUDE.md", "why": f"an unresolved git merge on lines {spans}"}
    ]
    assert snapshot(bob) == conflicted


def test_check_of_a_provider_whose_files_link_to_the_other_checks_nothing_itself(
    shared: Path, home: Path
) -> None:
    (shared / "CLAUDE.md").unlink()
    (shared / "CLAUDE.md").symlink_to("AGENTS.md")
    (shared / ".agents/skills").mkdir(parents=True)
    (shared / ".claude").mkdir()
    (shared / ".claude/skills").symlink_to("../.agents/skills")

    code, result = check(shared, "claude")

    assert code == 0 and result["checked"] == [] and result["linkedProvider"] == "codex"
    shown = teamlore_cli("memory", "assemble", "-p", "claude", "--check", cwd=shared)
    assert "Nothing to check" in shown.stdout


def test_check_and_repair_together_are_a_usage_error(shared: Path, home: Path) -> None:
    with pytest.raises(TeamloreError) as refused:
        assemble(shared, home, "claude", check=True, repair=True)
    assert refused.value.code == "INVALID_ARGUMENT" and refused.value.exit_code == 2
    assert refused.value.message == "check writes nothing: give check or repair, not both"


def test_the_closing_note_takes_a_path_as_that_path_never_as_a_pattern(tmp_path: Path) -> None:
    from teamlore.memory.assembled_git import git_states

    git(tmp_path, "init", "-q")
    for name in ("a.md", "[ab].md", "x*.md", "xyz.md"):
        (tmp_path / name).write_text("new\n")
    # `[ab].md` as a pattern matches a.md, and `x*.md` xyz.md: neither was written by assemble
    assert git_states(tmp_path, ["[ab].md", "x*.md"]) == ([], ["[ab].md", "x*.md"])
