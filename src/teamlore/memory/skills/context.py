"""What recall hands the agent besides transcripts: the team's Skills (`skillContext`) and its
reviewed memory (`memoryContext`), so it can tell a procedure worth a Skill from facts worth
entries, and update an existing Skill instead of duplicating it (docs/assemble.md, "Skill
context").

- Each context's budget is 128 KiB of content, or half the transcript budget when the agent
  asked for chunks smaller than the default (`chunkBytes`: its client cuts long tool results,
  and the contexts come in the same result).
- skillContext: every Skill when there are at most 20 and they total at most the budget
  (`selection: "all"`, name order); otherwise ranked by the query (`"ranked"`) and taken in
  order, at most 20: a Skill over the remaining budget is skipped and later, smaller ones still
  fit. The Skills not returned are named, in rank order, in `notReturned`: the first 50, so
  thousands of Skills keep the list small (`total` - `returned` counts them all).
- memoryContext: scenes (score, heat, name), then the doctrine, then approved entries (score,
  priority, id); at most 40 items and the budget of content — an item over the remaining budget is
  skipped and later, smaller ones still fit. Items are never cut.
- A memory file that exists but cannot be read safely (a symlink, not a regular file, over the
  size cap, unreadable), or one that is not valid (a merge conflict, a broken header, a field
  of the wrong type, a missing field, a Skill that names another directory or fails the lint
  gate), is left out of recall's contexts and named in their `leftOut` (`coverage:
  "partial"`), as search leaves it out; staging, which binds the memory, still refuses it
  (UNSAFE_PATH, MEMORY_FILE_INVALID, LINT_BLOCKED).
- The memory binding (`skill-memory-first@1`): digests of the approved entry set, the scene
  index and the doctrine. A SkillCandidate echoes its digest (`memoryContextDigest`); stage,
  review and prepare refuse when the team memory changed since (MEMORY_CONTEXT_DRIFT).

Scoring (per query term; terms are the NFKC-lowercased whole query plus its word tokens):
+16 when the name equals the term, else +8 when the name contains it, else +4 when the
description/summary contains it, else +1 when the content contains it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from teamlore.core import errors
from teamlore.core.canonical import digest
from teamlore.core.text.files import lf_sha256
from teamlore.memory.skills.prompt import SKILL_CAPTURE_PROMPT, SKILL_CAPTURE_PROMPT_VERSION
from teamlore.memory.skills.source import (
    SourceSkill,
    recallable_skills,
    refuse_unreadable,
    source_skills,
)
from teamlore.memory.store.documents import (
    MemoryFormatError,
    load_doctrine,
    load_entry,
    load_scene,
)
from teamlore.memory.store.layout import DOCTRINE_FILE, ENTRIES_DIR, SCENES_DIR, SKILLS_DIR
from teamlore.memory.store.projection import MemoryFiles, read_memory_files
from teamlore.memory.store.projection_rows import diagnostic_of
from teamlore.memory.store.tree_reader import Diagnostic, Kind, MemoryFile

MEMORY_POLICY_VERSION = "skill-memory-first@1"
MAX_CONTEXT_SKILLS = 20
MAX_NOT_RETURNED_NAMES = 50
MAX_CONTEXT_ITEMS = 40
MAX_CONTEXT_BYTES = 128 * 1024
SOURCE_DRIFT = "source-drift"  # tree_reader's code for a file that changed while it was read
T = TypeVar("T")
_TOKEN = re.compile(r"[^\W_](?:[^\W_]|-){1,63}")


@dataclass(frozen=True, slots=True)
class _Item:
    kind: str  # scene | doctrine | entry
    ident: str
    path: str
    data: bytes
    summary: str
    content: str
    heat: int = 0
    priority: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "id": self.ident,
            "path": self.path,
            "contentDigest": lf_sha256(self.data),
            "content": self.content,
        }
        if self.kind == "scene":
            out |= {"summary": self.summary, "heat": self.heat}
        if self.kind == "entry":
            out |= {"priority": self.priority}
        return out


@dataclass(frozen=True, slots=True)
class TeamMemory:
    """The reviewed memory of a worktree as read from its tree."""

    skills: list[SourceSkill]
    scenes: list[_Item]
    doctrine: _Item | None
    entries: list[_Item]  # approved status only
    left_out: tuple[Diagnostic, ...] = ()  # files skipped as unreadable (recall only)

    def binding(self) -> dict[str, Any]:
        entry_set = [
            {
                "entryId": e.ident,
                "revision": int(lf_sha256(e.data)[:13], 16) + 1,
                "contentDigest": lf_sha256(e.data),
            }
            for e in sorted(self.entries, key=lambda e: e.ident)
        ]
        scene_index = [
            {"name": s.ident, "contentDigest": lf_sha256(s.data), "heat": s.heat}
            for s in sorted(self.scenes, key=lambda s: s.ident)
        ]
        return {
            "policyVersion": MEMORY_POLICY_VERSION,
            "entrySetDigest": digest(entry_set),
            "sceneIndexDigest": digest(scene_index),
            "doctrineDigest": None if self.doctrine is None else lf_sha256(self.doctrine.data),
        }

    def binding_digest(self) -> str:
        return digest(self.binding())

    def skill(self, name: str) -> SourceSkill | None:
        return next((s for s in self.skills if s.name == name), None)


def read_team_memory(worktree_root: Path, *, skip_unreadable: bool = False) -> TeamMemory:
    """Read Skills, scenes, doctrine and approved entries strictly (an unreadable or invalid
    file refuses: a partial view would bind the agent to memory it never saw). With
    `skip_unreadable` (recall, which binds nothing yet), a file that cannot be read safely or
    is not valid is left out and named in `left_out` instead; a tree that changed while it was
    read, or one with too many Skills, still refuses."""
    try:
        tree = read_memory_files(worktree_root)
    except errors.TeamloreError as exc:
        if exc.error is errors.MEMORY_NOT_INITIALIZED:
            return TeamMemory([], [], None, [])
        raise
    if not skip_unreadable:
        return team_memory(tree)
    unreadable = tuple(p for p in tree.problems if p.code != SOURCE_DRIFT)
    drift = tuple(p for p in tree.problems if p.code == SOURCE_DRIFT)
    memory = team_memory(MemoryFiles(tree.files, drift), skip_invalid=True)
    left_out = sorted((*unreadable, *memory.left_out), key=lambda d: d.file)
    return replace(memory, left_out=tuple(left_out))


def team_memory(tree: MemoryFiles, *, skip_invalid: bool = False) -> TeamMemory:
    """The team's memory in `tree`; a Skill, scene, the doctrine or an entry that is not valid
    (a merge conflict, a broken header, a field the model refuses) refuses, or with
    `skip_invalid` is left out and named in `left_out`, as search leaves it out."""
    for prefix in (SCENES_DIR, DOCTRINE_FILE, ENTRIES_DIR):
        refuse_unreadable(tree, prefix)
    invalid: list[Diagnostic] = []

    def parsed(kind: Kind, load: Callable[[bytes, str], T]) -> Iterator[tuple[MemoryFile, T]]:
        for file in tree.of_kind(kind):
            try:
                yield file, load(file.data, file.path)
            except MemoryFormatError as exc:
                if not skip_invalid:
                    raise
                invalid.append(diagnostic_of(exc))

    scenes = [
        _Item("scene", scene.name, file.path, file.data, scene.summary, scene.body, scene.heat)
        for file, scene in parsed("scene", load_scene)
    ]
    doctrine = None
    for file, loaded in parsed("doctrine", load_doctrine):
        doctrine = _Item("doctrine", "doctrine", file.path, file.data, "", loaded.text)
    entries = [
        _Item("entry", entry.id, file.path, file.data, "", entry.body, 0, entry.priority)
        for file, entry in parsed("entry", load_entry)
        if entry.status == "approved"
    ]
    if skip_invalid:
        skills, skipped = recallable_skills(tree)
        invalid.extend(skipped)
    else:
        skills = source_skills(tree)
    return TeamMemory(skills, scenes, doctrine, entries, tuple(invalid))


# --- scoring --------------------------------------------------------------------------------


def query_terms(query: str) -> list[str]:
    whole = unicodedata.normalize("NFKC", query).lower().strip()
    terms = [whole] if whole else []
    for token in _TOKEN.findall(whole):
        if token not in terms:
            terms.append(token)
    return terms


def score(terms: list[str], name: str, summary: str, content: str) -> int:
    name, summary, content = name.lower(), summary.lower(), content.lower()
    total = 0
    for term in terms:
        if name == term:
            total += 16
        elif term in name:
            total += 8
        elif term in summary:
            total += 4
        elif term in content:
            total += 1
    return total


# --- the two contexts -----------------------------------------------------------------------


def _skill_json(skill: SourceSkill) -> dict[str, Any]:
    return {
        "name": skill.name,
        "path": skill.path,
        "description": skill.skill.description,
        "contentDigest": skill.content_digest,
        "content": skill.data.decode("utf-8"),
    }


def skill_context(
    memory: TeamMemory, query: str, budget: int = MAX_CONTEXT_BYTES
) -> dict[str, Any]:
    skills = memory.skills
    total_bytes = sum(len(s.data) for s in skills)
    if len(skills) <= MAX_CONTEXT_SKILLS and total_bytes <= budget:
        ordered, chosen, selection = skills, skills, "all"
    else:
        terms = query_terms(query)
        ordered = sorted(
            skills,
            key=lambda s: (
                -score(terms, s.name, s.skill.description, s.data.decode("utf-8")),
                s.name,
            ),
        )
        chosen, selection = _within_budget(ordered, budget), "ranked"
    returned = {s.name for s in chosen}
    left_out = [s.name for s in ordered if s.name not in returned]
    not_returned = left_out[:MAX_NOT_RETURNED_NAMES]  # `total` - `returned` counts them all
    return {
        "capturePrompt": {
            "promptVersion": SKILL_CAPTURE_PROMPT_VERSION,
            "text": SKILL_CAPTURE_PROMPT,
        },
        "selection": selection,
        "total": len(skills),
        "returned": len(chosen),
        "truncated": bool(not_returned),
        "skills": [_skill_json(s) for s in chosen],
        **({"notReturned": not_returned} if not_returned else {}),
    }


def _within_budget(ranked: list[SourceSkill], budget: int) -> list[SourceSkill]:
    """The first 20 of `ranked` that fit `budget` together: one over the remaining budget is
    skipped, and a smaller one after it still fits."""
    chosen: list[SourceSkill] = []
    used = 0
    for skill in ranked:
        if len(chosen) == MAX_CONTEXT_SKILLS:
            break
        if used + len(skill.data) <= budget:
            chosen.append(skill)
            used += len(skill.data)
    return chosen


def memory_context(
    memory: TeamMemory, query: str, budget: int = MAX_CONTEXT_BYTES
) -> dict[str, Any]:
    terms = query_terms(query)
    scenes = sorted(
        memory.scenes,
        key=lambda s: (-score(terms, s.ident, s.summary, s.content), -s.heat, s.ident),
    )
    entries = sorted(
        memory.entries,
        key=lambda e: (-score(terms, e.ident, "", e.content), -e.priority, e.ident),
    )
    ordered = [*scenes, *([memory.doctrine] if memory.doctrine else []), *entries]
    chosen: list[_Item] = []
    used = 0
    for item in ordered:
        if len(chosen) == MAX_CONTEXT_ITEMS:
            break
        size = len(item.content.encode("utf-8"))
        if used + size > budget:
            continue
        chosen.append(item)
        used += size
    binding = memory.binding()
    return {
        "binding": binding,
        "bindingDigest": digest(binding),
        "total": len(ordered),
        "returned": len(chosen),
        "truncated": len(chosen) < len(ordered),
        "items": [item.to_json() for item in chosen],
    }


def recall_contexts(
    worktree_root: Path, query: str, budget: int = MAX_CONTEXT_BYTES
) -> dict[str, Any]:
    """`skillContext` and `memoryContext` for a recall over `query`, each within `budget` bytes
    of content; a context missing a file it could not read says so as a search does:
    `coverage: "partial"` and `leftOut`."""
    memory = read_team_memory(worktree_root, skip_unreadable=True)
    skills = [d for d in memory.left_out if _under(d.file, SKILLS_DIR)]
    others = [d for d in memory.left_out if not _under(d.file, SKILLS_DIR)]
    return {
        "skillContext": {**skill_context(memory, query, budget), **_partial(skills)},
        "memoryContext": {**memory_context(memory, query, budget), **_partial(others)},
    }


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def _partial(left_out: list[Diagnostic]) -> dict[str, Any]:
    if not left_out:
        return {}
    return {"coverage": "partial", "leftOut": [d.to_json() for d in left_out]}
