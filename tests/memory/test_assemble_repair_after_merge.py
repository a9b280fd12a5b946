"""A merge of CLAUDE.md resolved by deleting git's conflict lines can keep the managed block's END
and the old block's text while its BEGIN goes with the other side's lines. `memory assemble
--repair` then removes that old block's text (back to its own `## Team memory` heading) rather
than leave it beside the new block, refuses when it cannot tell where an old block began or
ended, and lint names a lone marker and a second team-memory section; assemble's closing note
says what git needs next (`git add` finishes the stopped merge; new files need `-N` to diff).
Real git repositories (a bare origin and two clones, as a team has), the real CLI in a
subprocess (docs/assemble.md, "The managed block")."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support import commit_all, git, git_run, in_process
from teamlore.memory.assembled_git import git_note

BEGIN = "<!-- BEGIN THREADSHARE MEMORY (generated; do not edit by hand) -->"
END = "<!-- END THREADSHARE MEMORY -->"
HEADING = "## Team memory"
RULE = "- Make release inputs deterministic."
EDITED = "- Make release inputs deterministic, always."
COLUMNS = {"COLUMNS": "200"}


def cli(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = in_process(*args, "--format", "json", cwd=root)
    payload: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, payload


def lint_rules(root: Path) -> dict[str, str]:
    """rule → severity of what `memory lint` finds in CLAUDE.md."""
    _, payload = cli(root, "memory", "lint")
    return {f["rule"]: f["severity"] for f in payload["findings"] if f["file"] == "CLAUDE.md"}


def sections(root: Path) -> int:
    return (root / "CLAUDE.md").read_text().splitlines().count(HEADING)


@pytest.fixture()
def origin(tmp_path: Path, home: Path) -> Path:
    """The team's bare repository: a doctrine, a Skill and CLAUDE.md assembled, committed."""
    seed = tmp_path / "seed"
    skill = seed / ".threadshare/memory/skills/release"
    skill.mkdir(parents=True)
    git(seed, "init", "-q", "-b", "main")
    (skill / "SKILL.md").write_text(
        '---\nname: "release"\ndescription: "Cut a release."\n---\n## Procedure\n\n1. Tag.\n'
    )
    (seed / ".threadshare/memory/doctrine.md").write_text(f"{RULE}\n")
    (seed / "CLAUDE.md").write_text("# Shop\n\nRun the tests before you push.\n")
    assert in_process("memory", "assemble", "-p", "claude", cwd=seed).returncode == 0
    commit_all(seed, "team memory, assembled")
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    return bare


def clone(origin: Path, name: str) -> Path:
    git(origin.parent, "clone", "-q", str(origin), name)
    return origin.parent / name


def resolved_the_walks_way(origin: Path) -> Path:
    """The walk: a second clone replaces CLAUDE.md with its own notes and pushes; the first
    edits a line inside the block, commits and pulls (CLAUDE.md conflicts); the person deletes
    the conflict lines, keeping the other side's notes (the BEGIN went with their own side's
    text) and the old block's text through END. The first clone, the merge stopped."""
    first, second = clone(origin, "first"), clone(origin, "second")
    (second / "CLAUDE.md").write_text("# Project notes\n\nUse pnpm.\n")
    commit_all(second, "our own notes")
    git(second, "push", "-q", "origin", "main")
    claude = first / "CLAUDE.md"
    claude.write_text(claude.read_text().replace(RULE, EDITED))
    commit_all(first, "sharpen a rule")
    pulled = git_run(first, "pull", "--no-rebase", "origin", "main")
    assert pulled.returncode != 0 and "CONFLICT" in pulled.stdout, pulled.stdout
    lines = claude.read_text().splitlines()
    assert lines[2].startswith("<<<<<<<") and BEGIN in lines, lines
    old_block = lines[lines.index(HEADING) : lines.index(END) + 1]
    kept = [*lines[:2], "Use pnpm.", "", *old_block]
    claude.write_text("\n".join(kept) + "\n")
    assert git(first, "status", "--porcelain", "CLAUDE.md") == "UU CLAUDE.md"
    return first


def test_repair_removes_the_old_block_a_lone_end_closes_and_leaves_one_section(
    origin: Path,
) -> None:
    """The walk: `--repair` kept the old block's body (its `## Team memory`, the hand edit) as
    plain text and added a fresh block after it; lint said `0 findings, 0 blocking`."""
    first = resolved_the_walks_way(origin)
    claude = first / "CLAUDE.md"
    resolved = claude.read_bytes()
    assert lint_rules(first) == {"format.managed-block-markers": "block"}

    refused = in_process("memory", "assemble", "-p", "claude", cwd=first, env=COLUMNS)
    assert refused.returncode == 1
    assert "0 BEGIN and 1 END marker(s) on line 15;" in refused.stderr, refused.stderr
    assert "lines 15" not in refused.stderr
    next_line = refused.stderr[refused.stderr.index("next:") :]
    assert "assemble -p claude --repair" in next_line
    assert "Fix the markers by hand" not in next_line
    assert claude.read_bytes() == resolved

    done = in_process("memory", "assemble", "-p", "claude", "--repair", cwd=first, env=COLUMNS)

    assert done.returncode == 0, done.stderr
    assert "Repaired the damaged markers (was on line 15)." in done.stdout
    text = claude.read_text()
    assert sections(first) == 1
    assert text.count(BEGIN) == text.count(END) == 1
    assert text.startswith(f"# Project notes\n\nUse pnpm.\n\n{BEGIN}\n\n{HEADING}\n\n{RULE}\n")
    assert EDITED not in text  # the old block's text, generated then edited, went with it
    assert lint_rules(first) == {}
    assert in_process("memory", "assemble", "-p", "claude", "--check", cwd=first).returncode == 0


def test_repair_refuses_when_it_cannot_tell_where_the_old_block_ended(origin: Path) -> None:
    """The END went with the other side's lines instead: a lone BEGIN before the old block's
    text. Dropping the BEGIN alone would leave that text beside the new block."""
    first = clone(origin, "first")
    claude = first / "CLAUDE.md"
    claude.write_text(claude.read_text().replace(f"\n\n{END}\n", "\n\nUse pnpm.\n"))
    damaged = claude.read_bytes()
    assert lint_rules(first) == {"format.managed-block-markers": "block"}

    code, payload = cli(first, "memory", "assemble", "-p", "claude", "--repair")

    assert code == 1, payload
    assert payload["error"]["code"] == "ASSEMBLY_MARKERS_INVALID"
    assert "second `## Team memory` section" in payload["error"]["message"]
    assert "Delete the old block's text by hand" in payload["error"]["next"]
    assert claude.read_bytes() == damaged


def test_lint_warns_of_a_team_memory_section_outside_the_block(origin: Path) -> None:
    """What the walk's `--repair` left: the old block's text above a fresh block. Lint said
    nothing."""
    first = resolved_the_walks_way(origin)
    claude = first / "CLAUDE.md"
    fresh = git(first, "show", "HEAD:CLAUDE.md")
    block = fresh[fresh.index(BEGIN) :].replace(EDITED, RULE)
    claude.write_text(claude.read_text().replace(f"{END}\n", "") + block + "\n")
    assert sections(first) == 2

    _, payload = cli(first, "memory", "lint")

    found = [f for f in payload["findings"] if f["rule"] == "format.team-memory-outside-block"]
    assert [(f["file"], f["line"], f["severity"]) for f in found] == [("CLAUDE.md", 5, "warn")]
    assert "second `## Team memory` section" in found[0]["message"]


def test_the_closing_note_says_git_add_finishes_the_stopped_merge(origin: Path) -> None:
    """The walk: `see the changes with git status and git diff` while CLAUDE.md was `UU`."""
    first = resolved_the_walks_way(origin)

    done = in_process("memory", "assemble", "-p", "claude", "--repair", cwd=first, env=COLUMNS)

    assert done.returncode == 0, done.stderr
    assert "CLAUDE.md is still unmerged" in done.stdout
    assert "`git add CLAUDE.md` finishes the merge" in done.stdout
    assert git(first, "status", "--porcelain", "CLAUDE.md") == "UU CLAUDE.md"
    git(first, "add", "CLAUDE.md")
    git(first, "commit", "-q", "--no-edit")
    assert git(first, "status", "--porcelain") == ""


def test_the_first_assemble_names_intent_to_add_for_its_new_files(tmp_path: Path) -> None:
    """CLAUDE.md and the Skill copies are new and untracked: plain `git diff` shows nothing."""
    root = tmp_path / "fresh"
    skill = root / ".threadshare/memory/skills/release"
    skill.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (skill / "SKILL.md").write_text(
        '---\nname: "release"\ndescription: "Cut a release."\n---\n## Procedure\n\n1. Tag.\n'
    )

    done = in_process("memory", "assemble", "-p", "claude", cwd=root, env=COLUMNS)

    assert done.returncode == 0, done.stderr
    assert (
        "`git add --intent-to-add CLAUDE.md .claude/skills && git diff` shows every line"
    ) in done.stdout
    assert "see the changes with `git status` and `git diff`" not in done.stdout
    again = in_process("memory", "assemble", "-p", "claude", cwd=root, env=COLUMNS)
    commit_all(root, "assembled")
    committed = in_process("memory", "assemble", "-p", "claude", cwd=root, env=COLUMNS)
    assert "intent-to-add" in again.stdout
    assert "see the changes with `git status` and `git diff`" in committed.stdout


def stopped_merge(root: Path, name: str) -> Path:
    """A repository at `root` whose merge of `theirs` stopped on a conflict in the file `name`."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / name).write_text("base\n")
    commit_all(root, "base")
    git(root, "checkout", "-q", "-b", "theirs")
    (root / name).write_text("theirs\n")
    commit_all(root, "theirs")
    git(root, "checkout", "-q", "main")
    (root / name).write_text("ours\n")
    commit_all(root, "ours")
    git_run(root, "merge", "-q", "theirs")  # stops on the conflict
    return root


def test_the_git_add_the_note_names_runs_as_printed_for_a_path_with_a_space(
    tmp_path: Path,
) -> None:
    """Each path is one shell word in the note's commands: `git add team notes.md` added two
    files that do not exist and left the merge stopped."""
    root = stopped_merge(tmp_path / "repo", "team notes.md")

    note = git_note(root, ["team notes.md"], skills_folder=".claude/skills")

    command = re.search(r"`(git add [^`]*)` finishes the merge", note)
    assert command is not None, note
    subprocess.run(["sh", "-c", command[1]], cwd=root, check=True)
    assert git(root, "status", "--porcelain") == 'M  "team notes.md"'  # merged, staged


def test_the_git_add_the_note_names_takes_a_bracketed_name_as_it_is_not_as_a_pattern(
    tmp_path: Path,
) -> None:
    """`git add '[slug].ts'` is a pattern to git: it staged the untracked `s.ts` beside the
    Skill's `[slug].ts` and left the stopped merge's file unmerged. The note's command reads
    each path literally."""
    root = stopped_merge(tmp_path / "repo", "[slug].ts")
    (root / "s.ts").write_text("a draft of the person's own\n")

    note = git_note(root, ["[slug].ts"], skills_folder=".claude/skills")

    command = re.search(r"`(git [^`]*)` finishes the merge", note)
    assert command is not None, note
    subprocess.run(["sh", "-c", command[1]], cwd=root, check=True)
    assert git(root, "status", "--porcelain").splitlines() == ["M  [slug].ts", "?? s.ts"]
