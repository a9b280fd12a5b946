"""The Skills of a worktree's memory tree, read strictly for assemble, recall and staging.

Every Skill directory must be a plain directory (no symlink) named like its `name:`, hold a
SKILL.md in the portable format, and pass the Skill lint gate (secrets, session ids, home
paths). A tree with more than 256 Skills is refused as a whole: projecting or ranking a part of
it would silently drop procedures (docs/assemble.md, "Skill sources").

Recall, which binds nothing, leaves an invalid Skill out and names it instead
(`recallable_skills`).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

from teamlore.core import errors
from teamlore.core.canonical import sha256_hex
from teamlore.core.text.files import lf_sha256
from teamlore.memory.store.documents import MemoryFormatError, Skill, load_skill
from teamlore.memory.store.layout import SKILLS_DIR, refusal_fix
from teamlore.memory.store.lint import (
    MAX_SKILLS,
    DocumentKind,
    known_session_id_findings,
    lint_bytes,
)
from teamlore.memory.store.projection import MemoryFiles, read_memory_files
from teamlore.memory.store.projection_rows import diagnostic_of
from teamlore.memory.store.slugs import slug_problem
from teamlore.memory.store.tree_reader import Diagnostic, MemoryFile

# a link is unsafe; a folder where a file belongs (or the reverse) is a tree to fix, with the
# `next` the tree's rule gives it (memory/store/layout.py)
_UNSAFE_CODES = frozenset({"symlink"})


@dataclass(frozen=True, slots=True)
class SourceSkill:
    """One reviewed Skill: its name, repo-relative path, exact bytes and parsed document."""

    name: str
    path: str
    data: bytes
    skill: Skill

    @property
    def content_digest(self) -> str:
        """Of its text with CRLF read as LF: a `core.autocrlf=true` checkout of a commit gives
        the digest its LF checkout gives (for an LF file, its bytes' sha256, as before)."""
        return lf_sha256(self.data)

    def has_digest(self, recorded: str | None) -> bool:
        """Whether `recorded` names this SKILL.md as it is: its `content_digest`, or its bytes'
        sha256, which a candidate staged in a CRLF checkout before teamlore read CRLF as LF
        recorded."""
        return recorded in (self.content_digest, sha256_hex(self.data))


def refuse_unreadable(tree: MemoryFiles, prefix: str) -> None:
    """Refuse when a file under `prefix` exists but could not be read consistently (what
    `memory lint` blocks in the same words: memory/store/layout.py)."""
    for problem in tree.problems:
        if problem.file == prefix or problem.file.startswith(prefix + "/"):
            code = (
                errors.UNSAFE_PATH if problem.code in _UNSAFE_CODES else errors.MEMORY_FILE_INVALID
            )
            why = f"{problem.file}: {problem.why}"
            refusal = errors.TeamloreError(code, why, path=problem.file)
            fix = refusal_fix(problem.code)
            raise refusal.advising(fix) if fix is not None else refusal


def require_lint_clean(
    data: bytes,
    *,
    path: str,
    kind: DocumentKind,
    known_session_ids: AbstractSet[str] = frozenset(),
) -> None:
    """The lint gate every byte bound for the repository passes: any blocking finding refuses
    (with `known_session_ids`, also any provider session id this machine has indexed)."""
    blocking = [f for f in lint_bytes(data, path=path, kind=kind) if f.severity == "block"]
    if known_session_ids:
        text = data.decode("utf-8", "replace")
        blocking += known_session_id_findings(text, path=path, known=known_session_ids)
    if blocking:
        first = blocking[0]
        raise errors.TeamloreError(
            errors.LINT_BLOCKED,
            f"{first.file}:{first.line}: {first.message} ({first.rule})",
            findings=[f.model_dump() for f in blocking],
        )


def source_skills(tree: MemoryFiles) -> list[SourceSkill]:
    """The tree's Skills sorted by name (refuses on any unsafe, invalid or lint-blocked one)."""
    refuse_unreadable(tree, SKILLS_DIR)
    return sorted((_source_skill(f) for f in _skill_files(tree)), key=lambda s: s.name)


def recallable_skills(tree: MemoryFiles) -> tuple[list[SourceSkill], list[Diagnostic]]:
    """The tree's Skills sorted by name, and the ones left out with why: a SKILL.md that does
    not parse, names another directory or fails the lint gate is left out (recall binds
    nothing, so the agent still gets the other Skills); too many Skills, or a file that could
    not be read consistently (`tree.problems`), still refuses."""
    refuse_unreadable(tree, SKILLS_DIR)
    skills: list[SourceSkill] = []
    left_out: list[Diagnostic] = []
    for file in _skill_files(tree):
        try:
            skills.append(_source_skill(file))
        except MemoryFormatError as exc:
            left_out.append(diagnostic_of(exc))
        except errors.TeamloreError as exc:
            if exc.error is not errors.LINT_BLOCKED:
                raise
            first = exc.details["findings"][0]
            left_out.append(
                Diagnostic(
                    code=first["rule"],
                    file=file.path,
                    line=first["line"] or None,  # lint's 0 is the whole file
                    why=first["message"],
                )
            )
    return sorted(skills, key=lambda s: s.name), left_out


def _skill_files(tree: MemoryFiles) -> list[MemoryFile]:
    files = tree.of_kind("skill")
    if len(files) > MAX_SKILLS:
        raise errors.TeamloreError(
            errors.SKILLS_TOO_MANY,
            f"{len(files)} Skills under {SKILLS_DIR} (at most {MAX_SKILLS})",
            count=len(files),
        )
    return files


def _source_skill(file: MemoryFile) -> SourceSkill:
    directory = file.path.split("/")[-2]
    problem = slug_problem(directory, max_length=64)
    if problem is not None:
        raise MemoryFormatError(
            f"the Skill directory name {problem}", reason="slug.invalid", file=file.path
        )
    skill = load_skill(file.data, file.path)  # also: name must equal the directory
    require_lint_clean(file.data, path=file.path, kind="skill")
    return SourceSkill(skill.name, file.path, file.data, skill)


def read_source_skills(worktree_root: Path) -> list[SourceSkill]:
    return source_skills(read_memory_files(worktree_root))
