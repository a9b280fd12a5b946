"""Where `memory assemble` writes for each provider, and lint's check of those files for a git
merge left unresolved in them, and of the managed block's markers.

Teammates who each promote and assemble commit CLAUDE.md / AGENTS.md and the Skill copies;
`git merge` of the two can stop with both sides of the managed block (or of a copy) in the
file, and every agent reads that file as it is. `memory lint` and `memory status` block on it
(`format.merge-conflict`, the rule of a memory file git left unresolved), as `memory assemble
--check` does: the next step is `memory assemble`, which writes a conflicted block anew from the
merged tree and copies a conflicted Skill copy again (memory/block_owner.py,
memory/skill_copies.py); a conflict outside the block is the person's to resolve first.

Resolving such a merge by deleting the conflict lines can leave the block's END without its
BEGIN (or the reverse), the old block's text outside any block: lint blocks on markers that are
not one BEGIN before one END (`format.managed-block-markers`: assemble refuses the file, its
`--repair` mends it, memory/block_markers.py) and warns of a `## Team memory` heading outside an
intact block (`format.team-memory-outside-block`: a second team-memory section agents read).

It stays cheap, for a pre-commit hook: no git, no parsing; the two instructions files at the
worktree root and, in each provider's Skill folder, the copies of the Skill files the lint
just read, each read once when it is there. A file reached through a symlink is not read (a
`CLAUDE.md -> AGENTS.md` link is checked as AGENTS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from teamlore.core import errors, safe_write
from teamlore.core.text.files import conflict_regions
from teamlore.memory.block_markers import (
    BLOCK_HEADING,
    headings_outside,
    intact,
    line_at,
    line_numbers,
    lines_named,
    markers,
)
from teamlore.memory.store.frontmatter import MERGE_CONFLICT
from teamlore.memory.store.layout import (
    MANAGED_BLOCK_BEGIN,
    MANAGED_BLOCK_END,
    MEMORY_ROOT,
    SKILL_FILE_NAME,
    SKILLS_DIR,
)
from teamlore.memory.store.lint import Finding, LintReport


@dataclass(frozen=True, slots=True)
class ProviderLayout:
    instructions_file: str
    skills_dir: str

    def skill_path(self, name: str) -> str:
        return f"{self.skills_dir}/{name}/{SKILL_FILE_NAME}"


PROVIDERS: dict[str, ProviderLayout] = {
    "claude": ProviderLayout("CLAUDE.md", ".claude/skills"),
    "codex": ProviderLayout("AGENTS.md", ".agents/skills"),
}

MARKERS_DAMAGED = "format.managed-block-markers"  # not one BEGIN before one END
SECTION_OUTSIDE_BLOCK = "format.team-memory-outside-block"
_DELETE_MARKERS = "delete the `<<<<<<<`, `=======` and `>>>>>>>` lines"


def with_assembled_conflicts(report: LintReport, worktree_root: Path) -> LintReport:
    """`report` of `lint_tree` with a blocking finding for each assembled file that holds an
    unresolved git merge; a memory file's own merge finding then says to assemble after it."""
    tree_merge = [
        f for f in report.findings if f.rule == MERGE_CONFLICT and f.file.startswith(MEMORY_ROOT)
    ]
    found = assembled_conflicts(worktree_root, report.files, tree_merge=bool(tree_merge))
    if not found:
        return report
    # a file assemble writes nothing into (an instructions file without the block) is the
    # person's alone: no assemble follows its merge
    ours = [(provider, finding) for provider, finding in found if provider is not None]
    commands = sorted({f"`teamlore memory assemble -p {provider}`" for provider, _ in ours})
    files = sorted({finding.file for _, finding in ours})
    then = (
        f"; then run {' and '.join(commands)} ({' and '.join(files)} "
        f"{'holds' if len(files) == 1 else 'hold'} the merge too)"
        if ours
        else ""
    )
    kept = [
        f.model_copy(update={"message": f.message + then}) if f in tree_merge else f
        for f in report.findings
    ]
    return report.model_copy(update={"findings": kept}).with_findings(
        [finding for _, finding in found]
    )


def assembled_conflicts(
    worktree_root: Path, linted: Sequence[str], *, tree_merge: bool = False
) -> list[tuple[str | None, Finding]]:
    """(provider, finding) for each file assemble writes that holds a git merge: the
    instructions files, and the copies of the Skill files in `linted` (the memory files the
    lint read). `tree_merge`: a memory file holds one too, to be resolved first. An
    instructions file without the managed block's markers is found with no provider: every
    agent reads it, but assemble has written nothing there to write again; so are the findings
    on the block of an instructions file with no merge left in it (`block_findings`)."""
    sources = [path for path in linted if path.startswith(f"{SKILLS_DIR}/")]
    found: list[tuple[str | None, Finding]] = []
    for provider, layout in PROVIDERS.items():
        text = _text(worktree_root, layout.instructions_file, merged_or_marked=True)
        if text is not None and not (regions := conflict_regions(text)):
            found.extend((None, finding) for finding in block_findings(text, layout, provider))
        elif text is not None:
            name = layout.instructions_file
            if MANAGED_BLOCK_BEGIN not in text and MANAGED_BLOCK_END not in text:
                message = (
                    f"an unresolved git merge on {_spans(text, regions)} of a file with no"
                    f" managed block, which every agent reads as it is: keep what is right"
                    f" there and {_DELETE_MARKERS}, then commit"
                )
                found.append((None, _finding(name, text, regions, message)))
                continue
            message = _instructions_message(text, regions, provider, tree_merge)
            found.append((provider, _finding(name, text, regions, message)))
        for source in sources:
            copy = layout.skills_dir + source.removeprefix(SKILLS_DIR)
            text = _text(worktree_root, copy)
            if text is not None and (regions := conflict_regions(text)):
                message = (
                    f"an unresolved git merge on {_spans(text, regions)} of this copy of "
                    f"{source}, which the agent reads as it is: "
                    + _assemble(provider, tree_merge, "copies the Skill again")
                )
                found.append((provider, _finding(copy, text, regions, message)))
    return found


def _text(root: Path, relative: str, *, merged_or_marked: bool = False) -> str | None:
    """The file's text when it is a regular file (no symlink on the way) that may hold git's
    conflict markers (or, `merged_or_marked`, a managed block's marker or heading); None
    otherwise."""
    try:
        data = safe_write.read_file(root, relative)
    except (errors.TeamloreError, OSError):  # a symlink, a folder, too large: not assemble's
        return None
    if data is None:
        return None
    looked_for = (b"<<<<<<<", *(_MARKED if merged_or_marked else ()))
    if not any(sign in data for sign in looked_for):
        return None
    return data.decode("utf-8", "replace")


_MARKED = (
    MANAGED_BLOCK_BEGIN.encode(),
    MANAGED_BLOCK_END.encode(),
    BLOCK_HEADING.encode(),
)


def block_findings(text: str, layout: ProviderLayout, provider: str) -> list[Finding]:
    """What is wrong with the managed block of an instructions file git has no merge left in:
    markers that are not one BEGIN before one END (assemble refuses the file; blocking), and a
    `## Team memory` heading outside an intact block (a second team-memory section, the old
    block's text a merge or a repair left behind, which every agent reads and assemble never
    updates; a warning, as the heading may be the person's own)."""
    name = layout.instructions_file
    found = markers(text)
    if not found:
        return []
    if not intact(found):
        begins = sum(m.begins for m in found)
        numbers = line_numbers(text, found)
        return [
            Finding(
                rule=MARKERS_DAMAGED,
                severity="block",
                file=name,
                line=numbers[0],
                message=f"{begins} BEGIN and {len(found) - begins} END marker(s) on "
                f"{lines_named(numbers)}: the managed block is damaged (a merge resolved "
                f"without one of its markers?) and `teamlore memory assemble -p {provider}` "
                f"refuses it: run `teamlore memory assemble -p {provider} --repair`, check the "
                "file, and commit",
            )
        ]
    return [
        Finding(
            rule=SECTION_OUTSIDE_BLOCK,
            severity="warn",
            file=name,
            line=line_at(text, at),
            message=f"a second `{BLOCK_HEADING}` section, outside the managed block (lines "
            f"{line_at(text, found[0].start)}-{line_at(text, found[1].start)}): every agent "
            "reads it beside the block, and assemble never updates it; if it is an old block's "
            "text left by a merge, delete it (the block holds the team memory), and commit",
        )
        for at in headings_outside(text, found)
    ]


def _instructions_message(
    text: str, regions: list[tuple[int, int]], provider: str, tree_merge: bool
) -> str:
    begin, end = text.find(MANAGED_BLOCK_BEGIN), text.rfind(MANAGED_BLOCK_END)
    one_block = (
        begin >= 0
        and text.count(MANAGED_BLOCK_BEGIN) == text.count(MANAGED_BLOCK_END) == 1
        and begin < end
    )
    mine = [r for r in regions if not (one_block and begin <= r[0] and r[1] <= end)]
    spans = _spans(text, regions)
    if not mine:
        return (
            f"an unresolved git merge on {spans}, inside the managed block every agent reads: "
            + _assemble(provider, tree_merge, "writes the block anew from the merged memory tree")
        )
    where = "outside the managed block" if one_block else "around the managed block's markers"
    return (
        f"an unresolved git merge on {spans}; on {_spans(text, mine)} it is {where}, which "
        f"assemble leaves to you: keep what is right there and {_DELETE_MARKERS}, then "
        + _assemble(provider, tree_merge, "writes the block anew")
    )


def _assemble(provider: str, tree_merge: bool, does: str) -> str:
    first = "resolve the memory files' merges (their findings), then " if tree_merge else ""
    return f"{first}run `teamlore memory assemble -p {provider}`, which {does}, and commit"


def _spans(text: str, regions: list[tuple[int, int]]) -> str:
    spans = [f"{_line(text, start)}-{_line(text, end - 1)}" for start, end in regions]
    return f"line{'s' if spans else ''} {', '.join(spans)}"


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _finding(path: str, text: str, regions: list[tuple[int, int]], message: str) -> Finding:
    return Finding(
        rule=MERGE_CONFLICT,
        severity="block",
        file=path,
        line=_line(text, regions[0][0]),
        message=message,
    )
