"""A memory tree in the middle of a `git merge` (docs/memory.md, "Merge conflicts").

Two teammates change the same entry, or both assemble CLAUDE.md after promoting different
Skills (each adds a line to the block's Skill index); `git merge` stops with both sides in the
file. A memory file holding git's conflict
markers is not read as one document: lint names it (blocking), search leaves it out (coverage
partial) and assemble refuses until the merge is resolved. A conflict inside the managed block
of CLAUDE.md is resolved by assembling again: the block is generated from the merged tree.
"""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from support import commit_all, git, git_run, in_process, shared_fixtures
from teamlore.core.errors import TeamloreError
from teamlore.memory.assemble import PROVIDERS, render_block, splice

ENTRY = (
    ".threadshare/memory/entries/threadshare-s-memory-extraction-prompts-should-protect-again.md"
)
CONFLICT_MARKERS = ("<<<<<<<", "=======", ">>>>>>>")
COLUMNS_80 = {"COLUMNS": "80"}


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    """A git repository whose first commit holds the reference memory tree."""
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    memory = root / ".threadshare" / "memory"
    shutil.copytree(
        shared_fixtures("threadshare-memory"), memory, ignore=shutil.ignore_patterns("SOURCE.md")
    )
    for path in [memory, *memory.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    commit_all(root, "memory")
    return root


def append_to(path: Path, words: str) -> None:
    path.write_text(path.read_text().rstrip("\n") + f" {words}\n")


def conflicting_edits(repo: Path) -> None:
    """Both sides add a sentence to the same entry; the merge stops with both in the file."""
    git(repo, "checkout", "-q", "-b", "theirs")
    append_to(repo / ENTRY, "Their side adds this.")
    commit_all(repo, "theirs")
    git(repo, "checkout", "-q", "main")
    append_to(repo / ENTRY, "Our side adds that.")
    commit_all(repo, "ours")
    assert git_run(repo, "merge", "-q", "theirs").returncode != 0
    assert all(marker in (repo / ENTRY).read_text() for marker in CONFLICT_MARKERS)


def run_json(repo: Path, *args: str) -> tuple[int, dict[str, object]]:
    done = in_process(*args, "--format", "json", cwd=repo)
    payload: dict[str, object] = json.loads(done.stdout)
    return done.returncode, payload


def test_lint_names_the_line_an_unresolved_merge_starts_on(repo: Path) -> None:
    conflicting_edits(repo)
    done = in_process("memory", "lint", cwd=repo)
    assert done.returncode == 1
    start = (repo / ENTRY).read_text().split("\n").index("<<<<<<< HEAD") + 1
    assert f"{ENTRY}:{start} block format.merge-conflict an unresolved git merge conflict" in (
        done.stdout
    )


def test_search_and_status_leave_the_conflicted_entry_out_until_it_is_resolved(
    repo: Path,
) -> None:
    _, before = run_json(repo, "memory", "status")
    conflicting_edits(repo)
    code, found = run_json(repo, "memory", "search", "Their side adds this")
    assert code == 0 and found["coverage"] == "partial"
    assert ENTRY not in json.dumps(found["results"])
    _, during = run_json(repo, "memory", "status")
    assert during["entries"]["approved"] == before["entries"]["approved"] - 1  # type: ignore[index]

    git(repo, "checkout", "--theirs", ENTRY)
    git(repo, "add", ENTRY)
    code, found = run_json(repo, "memory", "search", "Their side adds this")
    assert found["coverage"] == "complete"
    assert found["results"][0]["path"] == ENTRY  # type: ignore[index]


def test_search_names_the_file_it_left_out_and_the_line_the_conflict_starts_on(
    repo: Path,
) -> None:
    """A search that finds nothing said only "Try other words" while the entry that holds
    them was left out: the person kept rewording the query."""
    conflicting_edits(repo)
    start = (repo / ENTRY).read_text().split("\n").index("<<<<<<< HEAD") + 1

    _, found = run_json(repo, "memory", "search", "Their side adds this")
    assert found["leftOut"] == [  # type: ignore[comparison-overlap]
        {
            "code": "format.merge-conflict",
            "field": None,
            "file": ENTRY,
            "line": start,
            "why": "an unresolved git merge conflict starts here: keep what is right, delete the "
            "`<<<<<<<`, `=======` and `>>>>>>>` lines and commit",
        }
    ]
    shown = in_process("memory", "search", "Their side adds this", cwd=repo, env=COLUMNS_80)
    assert "Not searched: 1 invalid file:" in shown.stdout  # read, but not a memory file yet
    assert f"format.merge-conflict {ENTRY}:{start} an unresolved git merge" in " ".join(
        shown.stdout.split()
    )

    git(repo, "checkout", "--theirs", ENTRY)
    _, found = run_json(repo, "memory", "search", "Their side adds this")
    assert found["coverage"] == "complete" and "leftOut" not in found


def test_assemble_refuses_during_an_unresolved_merge_and_writes_nothing(repo: Path) -> None:
    conflicting_edits(repo)
    code, refusal = run_json(repo, "memory", "assemble", "--provider", "claude")
    assert code == 1
    assert refusal["error"]["code"] == "MEMORY_FILE_INVALID"  # type: ignore[index]
    assert "unresolved git merge conflict" in refusal["error"]["message"]  # type: ignore[index]
    assert not (repo / "CLAUDE.md").exists()


def add_line(path: Path, text: str) -> None:
    path.write_text(path.read_text() + f"{text}\n")


def add_skill(repo: Path, name: str) -> None:
    folder = repo / ".threadshare/memory/skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f'---\nname: "{name}"\ndescription: "The {name} procedure."\n---\n## Steps\n\n1. Go.\n'
    )


def both_promote_a_skill(repo: Path, notes: tuple[str, str] | None = None) -> bytes:
    """Each side promoted (here: wrote) a different Skill and assembled (and, with `notes`,
    added its own line to the person's notes under the block); the merge stops with a
    conflict inside the block (the Skill index) and one in the notes. Returns the file."""
    (repo / "CLAUDE.md").write_text("# Shop\n")
    run_json(repo, "memory", "assemble", "--provider", "claude")
    if notes:
        add_line(repo / "CLAUDE.md", "\n## Release\n\nTag releases.\nRun the tests first.")
    commit_all(repo, "assembled")
    git(repo, "checkout", "-q", "-b", "theirs")
    add_skill(repo, "deploy")
    run_json(repo, "memory", "assemble", "--provider", "claude")
    if notes:
        add_line(repo / "CLAUDE.md", notes[1])
    commit_all(repo, "theirs")
    git(repo, "checkout", "-q", "main")
    add_skill(repo, "release")
    run_json(repo, "memory", "assemble", "--provider", "claude")
    if notes:
        add_line(repo / "CLAUDE.md", notes[0])
    commit_all(repo, "ours")
    assert git_run(repo, "merge", "-q", "theirs").returncode != 0
    return (repo / "CLAUDE.md").read_bytes()


def test_assembling_again_resolves_a_conflict_inside_the_managed_block(repo: Path) -> None:
    """Each side promoted a different Skill and assembled; the Skill index of the block
    conflicts. Assembling on the merged tree writes the block the merge should hold."""
    both_promote_a_skill(repo)
    assert "<<<<<<< HEAD" in (repo / "CLAUDE.md").read_text()

    code, _ = run_json(repo, "memory", "assemble", "--provider", "claude")
    assert code == 0
    text = (repo / "CLAUDE.md").read_text()
    assert not any(marker in text for marker in CONFLICT_MARKERS)
    assert text.startswith("# Shop\n")
    assert "- .claude/skills/deploy/SKILL.md \u2014 The deploy procedure.\n" in text
    assert "- .claude/skills/release/SKILL.md \u2014 The release procedure.\n" in text


def both_add_a_note_under_the_block(repo: Path) -> bytes:
    """Each side promoted a different Skill, assembled, and added its own note under the
    managed block of CLAUDE.md; the merge stops with a conflict inside the block (the Skill
    index) and one in the person's text below it. Returns the conflicted file."""
    return both_promote_a_skill(repo, notes=("Tag without a prefix.", "Tag with a v prefix."))


def test_assemble_refuses_a_conflict_in_the_persons_text_of_claude_md(repo: Path) -> None:
    """Written around, the conflict's marker lines would reach every agent reading CLAUDE.md
    while assemble reported success; `--repair` left them too. Resolved by hand, the conflict
    inside the block goes with the block."""
    conflicted = both_add_a_note_under_the_block(repo)
    lines = conflicted.decode().split("\n")
    starts = [number for number, line in enumerate(lines, 1) if line == "<<<<<<< HEAD"]
    assert len(starts) == 2  # the Skill index inside the block, the notes below it

    for repair in ([], ["--repair"]):
        code, refusal = run_json(repo, "memory", "assemble", "--provider", "claude", *repair)
        assert code == 1
        error = refusal["error"]
        assert error["code"] == "ASSEMBLY_MERGE_UNRESOLVED"  # type: ignore[index]
        assert error["message"].startswith(  # type: ignore[index]
            f"CLAUDE.md:{starts[1]} holds an unresolved git merge"
        )
        assert "outside the managed block" in error["message"]  # type: ignore[index]
        assert (repo / "CLAUDE.md").read_bytes() == conflicted

    text = conflicted.decode()
    notes = text.index("<<<<<<< HEAD", text.index("<!-- END THREADSHARE MEMORY -->"))
    (repo / "CLAUDE.md").write_text(text[:notes] + "Tag with a v prefix.\n")
    code, _ = run_json(repo, "memory", "assemble", "--provider", "claude")
    assert code == 0
    text = (repo / "CLAUDE.md").read_text()
    assert not any(marker in text for marker in CONFLICT_MARKERS)
    assert text.endswith(
        "## Release\n\nTag releases.\nRun the tests first.\nTag with a v prefix.\n"
    )


@pytest.mark.parametrize("repair", [False, True], ids=["assemble", "repair"])
def test_a_conflict_across_the_block_markers_is_refused_not_repaired(repair: bool) -> None:
    """Both sides' blocks end inside one conflict (two END markers): `--repair` took BEGIN to
    the last END as the old block and left the `>>>>>>>` line below it in CLAUDE.md."""
    block = render_block(PROVIDERS["claude"], None, [], [])
    end = "<!-- END THREADSHARE MEMORY -->"
    up_to_end = block.partition(end)[0]
    conflicted = (
        f"# Shop\n\n{up_to_end}<<<<<<< HEAD\n{end}\n=======\n{end}\n\n## Notes\nUse make.\n"
        ">>>>>>> theirs\n"
    )

    with pytest.raises(TeamloreError) as refused:
        splice(conflicted, block, file_name="CLAUDE.md", repair=repair)

    assert refused.value.code == "ASSEMBLY_MERGE_UNRESOLVED"
    first = conflicted.split("\n").index("<<<<<<< HEAD") + 1
    assert refused.value.message.startswith(f"CLAUDE.md:{first} holds an unresolved git merge")
    assert "across the managed block's markers" in refused.value.message


def test_lint_and_status_block_on_a_conflict_inside_the_managed_block(repo: Path) -> None:
    """Lint passed a CLAUDE.md git left conflicted (`0 findings, 0 blocking.`, exit 0) and
    status said `0 blocking`: the README's pre-commit hook let every agent read the markers.
    Both block now, naming `memory assemble`, which writes the block anew."""
    conflicted = both_promote_a_skill(repo).decode()
    start = conflicted.split("\n").index("<<<<<<< HEAD") + 1
    done = in_process("memory", "lint", cwd=repo)
    assert done.returncode == 1, done.stdout
    assert f"CLAUDE.md:{start} block format.merge-conflict an unresolved git merge on lines " in (
        done.stdout
    )
    assert (
        "inside the managed block every agent reads: run `teamlore memory assemble -p claude`"
        in (done.stdout)
    )
    assert done.stdout.endswith("1 finding, 1 blocking.\n")
    _, status = run_json(repo, "memory", "status")
    assert status["lint"]["blocking"] == 1  # type: ignore[index]
    assert status["lint"]["rules"] == {"format.merge-conflict": 1}  # type: ignore[index]

    assert run_json(repo, "memory", "assemble", "--provider", "claude")[0] == 0
    done = in_process("memory", "lint", cwd=repo)
    assert (done.returncode, done.stdout) == (0, "0 findings, 0 blocking.\n")


def test_lint_leaves_a_conflict_outside_the_block_to_the_person(repo: Path) -> None:
    conflicted = both_add_a_note_under_the_block(repo).decode()
    starts = [n for n, line in enumerate(conflicted.split("\n"), 1) if line == "<<<<<<< HEAD"]
    code, report = run_json(repo, "memory", "lint")
    assert code == 1
    (finding,) = report["findings"]  # type: ignore[index]
    assert (finding["file"], finding["line"], finding["rule"]) == (
        "CLAUDE.md",
        starts[0],
        "format.merge-conflict",
    )
    assert f"on line {starts[1]}-" not in finding["message"]
    assert f"; on lines {starts[1]}-" in finding["message"]
    assert "it is outside the managed block, which assemble leaves to you" in finding["message"]
    assert finding["message"].endswith(
        "then run `teamlore memory assemble -p claude`, which writes the block anew, and commit"
    )


def test_a_conflicted_skill_says_to_assemble_after_it_is_resolved(repo: Path) -> None:
    """Both sides changed the same Skill and assembled: its source and its copy conflict.
    The source's finding says to assemble once it is resolved; the copy's says so too."""
    add_skill(repo, "deploy")
    (repo / "CLAUDE.md").write_text("# Shop\n")
    run_json(repo, "memory", "assemble", "--provider", "claude")
    commit_all(repo, "assembled")
    source = repo / ".threadshare/memory/skills/deploy/SKILL.md"
    git(repo, "checkout", "-q", "-b", "theirs")
    add_line(source, "2. Their step.")
    run_json(repo, "memory", "assemble", "--provider", "claude")
    commit_all(repo, "theirs")
    git(repo, "checkout", "-q", "main")
    add_line(source, "2. Our step.")
    run_json(repo, "memory", "assemble", "--provider", "claude")
    commit_all(repo, "ours")
    assert git_run(repo, "merge", "-q", "theirs").returncode != 0

    code, report = run_json(repo, "memory", "lint")
    assert code == 1
    found = {f["file"]: f["message"] for f in report["findings"]}  # type: ignore[index]
    assert set(found) == {
        ".threadshare/memory/skills/deploy/SKILL.md",
        ".claude/skills/deploy/SKILL.md",
    }
    assert found[".threadshare/memory/skills/deploy/SKILL.md"].endswith(
        " lines and commit; then run `teamlore memory assemble -p claude`"
        " (.claude/skills/deploy/SKILL.md holds the merge too)"
    )
    assert found[".claude/skills/deploy/SKILL.md"].endswith(
        "of this copy of .threadshare/memory/skills/deploy/SKILL.md, which the agent reads as it "
        "is: resolve the memory files' merges (their findings), then run "
        "`teamlore memory assemble -p claude`, which copies the Skill again, and commit"
    )

    source.write_text(source.read_text().split("<<<<<<<")[0] + "2. Our step.\n")
    assert run_json(repo, "memory", "assemble", "--provider", "claude")[0] == 0
    assert run_json(repo, "memory", "lint")[0] == 0


def test_a_conflict_in_a_file_without_a_managed_block_is_not_called_one_around_it(
    repo: Path,
) -> None:
    """A person's own AGENTS.md (no teamlore block: the team assembles for Claude only) left
    conflicted by a merge: the finding said the conflict was "around the managed block's
    markers" and told them to run `memory assemble -p codex`, which would write a block into a
    file that never had one and leave the conflict where it was."""
    git(repo, "checkout", "-q", "-b", "theirs")
    (repo / "AGENTS.md").write_text("# Agents\n\nTheir rule.\n")
    commit_all(repo, "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "AGENTS.md").write_text("# Agents\n\nOur rule.\n")
    commit_all(repo, "ours")
    assert git_run(repo, "merge", "-q", "theirs").returncode != 0
    code, report = run_json(repo, "memory", "lint")
    assert code == 1
    (finding,) = report["findings"]  # type: ignore[index]
    assert (finding["file"], finding["line"], finding["rule"]) == (
        "AGENTS.md",
        3,
        "format.merge-conflict",
    )
    message = finding["message"]
    assert "around the managed block" not in message and "memory assemble" not in message
    assert message == (
        "an unresolved git merge on lines 3-7 of a file with no managed block, which every agent"
        " reads as it is: keep what is right there and delete the `<<<<<<<`, `=======` and"
        " `>>>>>>>` lines, then commit"
    )
