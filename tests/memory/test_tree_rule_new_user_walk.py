"""One rule for what the memory tree may hold (memory/store/layout.py), on a new user's walk
(`teamlore demo`, its repository committed, the real CLI): what assemble, synthesize and the
projection refuse, `memory lint` blocks in the same words, so a CI lint step is never green while
`assemble --check` is red; what lint only warns about, every reader leaves alone. One size limit
for a memory file, in one wording; lint's findings wrapped at the terminal's width."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from demo_walk import MEMORY, KeptAside, Walk

from support import entry_file, teamlore_in_pty

README = f"{MEMORY}/skills/README.md"
NOTES = f"{MEMORY}/scenes/notes.txt"
OLD = f"{MEMORY}/entries/old"
SKILL_DIR = f"{MEMORY}/skills/acme-billing-release"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> KeptAside:
    return KeptAside(tmp_path_factory.mktemp("demo"))


@pytest.fixture()
def walk(demo: KeptAside) -> Walk:
    return demo.walk()


def lint_findings(walk: Walk) -> tuple[int, list[tuple[str, str, str, str]]]:
    code, report = walk.json("memory", "lint")
    found = [(f["file"], f["severity"], f["rule"], f["message"]) for f in report["findings"]]
    return code, found


def test_a_readme_in_skills_is_a_stray_lint_names_and_every_reader_leaves_alone(
    walk: Walk,
) -> None:
    """`echo '# skills' > skills/README.md`: lint said `0 findings` while assemble refused it
    (`UNSAFE_PATH … expected a directory`, "Make the path … a real folder or file")."""
    walk.write(README, "# skills\n")

    code, findings = lint_findings(walk)
    assert code == 0
    assert [f[:3] for f in findings] == [(README, "warn", "tree.unexpected-file")]
    assert findings[0][3].startswith("not a Skill (a Skill is a folder holding SKILL.md)")

    checked = walk.cli("memory", "assemble", "--check", "-p", "claude")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    code, status = walk.json("memory", "status")
    assert status["projection"]["coverage"] == "complete"
    assert status["lint"]["rules"] == {"tree.unexpected-file": 1}
    code, synthesized = walk.json("memory", "synthesize")
    assert code == 0 and synthesized["status"] == "nothing-new"
    code, recalled = walk.json("memory", "recall", "--since", "2026-01-01", "--until", "2026-12-31")
    assert code == 0, recalled
    assert "leftOut" not in recalled["skillContext"]
    assert [s["name"] for s in recalled["skillContext"]["skills"]] == ["acme-billing-release"]


def test_stray_files_in_entries_and_scenes_are_warned_about_and_refuse_nothing(
    walk: Walk,
) -> None:
    """`scenes/notes.txt` and a folder `entries/old/`: lint only warned, yet assemble refused
    the notes (MEMORY_FILE_INVALID) and synthesize refused both (COVERAGE_INCOMPLETE)."""
    walk.write(NOTES, "notes\n")
    walk.path(OLD).mkdir()

    code, findings = lint_findings(walk)
    assert code == 0
    assert findings == [
        (
            OLD,
            "warn",
            "tree.unexpected-file",
            "not a memory document (only <name>.md files belong in entries/): no agent reads"
            " it: move it out of the memory folder or delete it",
        ),
        (
            NOTES,
            "warn",
            "tree.unexpected-file",
            "not a memory document (only <name>.md files belong in scenes/): no agent reads"
            " it: move it out of the memory folder or delete it",
        ),
    ]
    code, status = walk.json("memory", "status")
    assert status["projection"]["coverage"] == "complete"
    assert status["lint"]["rules"] == {"tree.unexpected-file": 2}  # both, not the folder alone
    assert status["lint"]["blocking"] == 0
    checked = walk.cli("memory", "assemble", "--check", "-p", "claude")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    code, synthesized = walk.json("memory", "synthesize")
    assert code == 0 and synthesized["status"] == "nothing-new", synthesized
    code, found = walk.json("memory", "search", "invoice", "export")
    assert code == 0 and found["coverage"] == "complete"


def _a_folder_named_as_a_scene(walk: Walk) -> str:
    walk.path(f"{MEMORY}/scenes/old.md").mkdir()
    return f"{MEMORY}/scenes/old.md"


def _a_skill_folder_without_its_skill(walk: Walk) -> str:
    (walk.path(SKILL_DIR) / "SKILL.md").unlink()
    return SKILL_DIR


def _a_file_where_the_skills_folder_stands(walk: Walk) -> str:
    shutil.rmtree(walk.path(f"{MEMORY}/skills"))
    walk.write(f"{MEMORY}/skills", "skills\n")
    return f"{MEMORY}/skills"


@pytest.mark.parametrize(
    ("make", "rule", "why", "next_words"),
    [
        (_a_folder_named_as_a_scene, "tree.not-a-file", "not a regular file", "a regular file"),
        (
            _a_skill_folder_without_its_skill,
            "tree.missing-skill-file",
            "a Skill folder must hold SKILL.md",
            "Add the folder's SKILL.md",
        ),
        (
            _a_file_where_the_skills_folder_stands,
            "tree.not-a-directory",
            "a file stands where the memory keeps its skills/ folder",
            "`teamlore memory init`",
        ),
    ],
)
def test_what_assemble_refuses_lint_blocks_in_the_same_words(
    walk: Walk, make: object, rule: str, why: str, next_words: str
) -> None:
    path = make(walk)  # type: ignore[operator]

    code, findings = lint_findings(walk)
    assert code == 1  # the CI step is red too
    assert (path, "block", rule, why) in findings

    code, refused = walk.json("memory", "assemble", "--check", "-p", "claude")
    error = refused["error"]
    assert code != 0
    assert (error["code"], error["message"]) == ("MEMORY_FILE_INVALID", f"{path}: {why}")
    assert next_words in error["next"]
    assert "symlink" not in error["next"]  # not the advice for a link
    code, synthesized = walk.json("memory", "synthesize")
    assert synthesized["error"]["code"] == "COVERAGE_INCOMPLETE"


def test_one_size_limit_for_a_memory_file_in_one_wording(walk: Walk) -> None:
    """A 1.19 MB entry: lint said `file is over 65536 bytes`, status and search `1190278 bytes
    is over the 262144-byte limit`; a 100 KB one was read, then refused by the format."""
    huge = f"{MEMORY}/entries/huge.md"
    walk.write(huge, entry_file("huge", "x" * 1_190_000))
    size = walk.path(huge).stat().st_size
    said = f"file is {size} bytes (at most 65536)"

    code, findings = lint_findings(walk)
    assert code == 1 and (huge, "block", "capacity.file-size", said) in findings
    code, status = walk.json("memory", "status")
    [diagnostic] = status["projection"]["diagnostics"]
    assert (diagnostic["file"], diagnostic["why"]) == (huge, said)
    code, found = walk.json("memory", "search", "invoice")
    assert [(d["file"], d["why"]) for d in found["leftOut"]] == [(huge, said)]

    walk.write(huge, entry_file("huge", "y" * 100_000))  # over the limit, under the old cap
    size = walk.path(huge).stat().st_size
    code, status = walk.json("memory", "status")
    [diagnostic] = status["projection"]["diagnostics"]
    assert diagnostic["why"] == f"file is {size} bytes (at most 65536)"
    code, findings = lint_findings(walk)
    assert (huge, "block", "capacity.file-size", diagnostic["why"]) in findings


def test_lint_findings_are_wrapped_at_80_columns(walk: Walk) -> None:
    old = f"{MEMORY}/entries/old-rule.md"
    walk.write(
        old,
        entry_file("old-rule", "Sort rows.", status="deprecated").replace(
            "superseded_by: null", 'superseded_by: "a-rule-this-tree-does-not-hold"'
        ),
    )
    walk.write(NOTES, "notes\n")
    # at a terminal 80 columns wide (in a pipe each finding stays one line, for grep)
    _, printed = teamlore_in_pty(
        "memory", "lint", answers=[], cwd=walk.root, env={"TEAMLORE_HOME": str(walk.state)}
    )
    # what stays on the screen: after the progress line is cleared (`ESC[2K`), colours off
    shown = printed.split("\x1b[2K")[-1]
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).replace("\r\n", "\n")
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), text
    # a finding starts at its file (editors jump to it), its message goes on indented under it
    assert lines[0].startswith(f"{old} warn entry.superseded-target-missing")
    assert lines[1].startswith("  ") and not lines[1].startswith("   ")
    [notes] = [n for n, line in enumerate(lines) if line.startswith(f"{NOTES} warn ")]
    assert lines[notes + 1].startswith("  ")
    words = " ".join(line.strip() for line in lines[:-1])
    assert "`a-rule-this-tree-does-not-hold`, which is not an entry in this tree" in words
    assert "no agent reads it: move it out of the memory folder or delete it" in words
    assert lines[-1].endswith(" findings, 0 blocking.")


def test_a_symlinked_scene_is_refused_by_assemble_in_the_words_lint_blocks_it_with(
    walk: Walk, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(walk.read(f"{MEMORY}/scenes/release.md"))
    linked = f"{MEMORY}/scenes/linked.md"
    walk.path(linked).symlink_to(outside)

    code, findings = lint_findings(walk)
    why = "symbolic links are not allowed in the memory tree"
    assert code == 1 and (linked, "block", "tree.symlink", why) in findings
    code, refused = walk.json("memory", "assemble", "--check", "-p", "claude")
    assert (refused["error"]["code"], refused["error"]["message"]) == (
        "UNSAFE_PATH",
        f"{linked}: {why}",
    )
