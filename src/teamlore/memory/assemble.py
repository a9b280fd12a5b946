"""`memory assemble`: put the reviewed team memory where Claude Code and Codex read it.

Two outputs per provider (docs/assemble.md):

- the managed block, spliced into the worktree root's instructions file (`CLAUDE.md` for
  claude, `AGENTS.md` for codex): doctrine (or a placeholder line), the scene index (heat
  descending, then name; first 15) and the Skill index. The block is byte-identical to the one
  the reference product writes for the same tree, so both tools can share a repository;
- the Skill projection: every `.threadshare/memory/skills/<name>/SKILL.md` copied byte for byte
  to the provider's skill folder (`.claude/skills/` or `.agents/skills/`), guarded by a private
  manifest of the digests last written, so a projection the user edited is never overwritten.

Splice rules: no marker → the block is appended after one blank line; exactly one BEGIN before
exactly one END → the bytes from BEGIN through END are replaced and everything else is kept byte
for byte; anything else is refused with the file untouched. A file is written only when its
bytes change (atomically, no symlink followed, its mode kept). Nothing is staged or committed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from teamlore.core import errors, safe_write
from teamlore.core.canonical import sha256_hex
from teamlore.core.paths import ensure_private_dir, read_private_file, write_private_file
from teamlore.memory.skills.source import (
    SourceSkill,
    refuse_unreadable,
    require_lint_clean,
    source_skills,
)
from teamlore.memory.store.documents import load_doctrine, load_entry, load_scene
from teamlore.memory.store.frontmatter import MemoryFormatError
from teamlore.memory.store.layout import DOCTRINE_FILE, SCENES_DIR, SKILL_FILE_NAME
from teamlore.memory.store.projection import MemoryFiles, read_memory_files

Provider = Literal["claude", "codex"]

BEGIN_MARKER = "<!-- BEGIN THREADSHARE MEMORY (generated; do not edit by hand) -->"
END_MARKER = "<!-- END THREADSHARE MEMORY -->"
NO_DOCTRINE = "_No approved team doctrine yet._"
# the search hint of the managed block (docs/assemble.md, "The managed block")
SEARCH_CALLS_PER_TURN = 3
MAX_LISTED_SCENES = 15
MANIFEST_FORMAT = "teamlore-skill-assembly@v1"
MANIFEST_DIR = "skill-assembly"


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


@dataclass(frozen=True, slots=True)
class SceneLine:
    name: str
    heat: int
    summary: str


# --- the block ------------------------------------------------------------------------------


def search_hint(entries: int) -> str:
    """How approved entries reach the agent: it searches them (they are not in the block)."""
    noun = "entry" if entries == 1 else "entries"
    return (
        f"The team has {entries} approved memory {noun} in .threadshare/memory/entries/. "
        "When a task touches something the team may already know, search them with the "
        "threadshare_memory_search tool (or `teamlore memory search QUERY`): at most "
        f"{SEARCH_CALLS_PER_TURN} calls per turn."
    )


def render_block(
    layout: ProviderLayout,
    doctrine: str | None,
    scenes: list[SceneLine],
    skills: list[SourceSkill],
    entries: int = 0,
) -> str:
    """The managed block (markers included, no trailing newline)."""
    lines = [BEGIN_MARKER, "", "## Team memory", "", doctrine.strip() if doctrine else NO_DOCTRINE]
    lines += ["", search_hint(entries)]
    if scenes:
        ordered = sorted(scenes, key=lambda s: (-s.heat, s.name))
        lines += ["", "### Scenes", ""]
        lines += [
            f"- {SCENES_DIR}/{s.name}.md (heat {s.heat}) \u2014 {s.summary}"
            for s in ordered[:MAX_LISTED_SCENES]
        ]
        if len(ordered) > MAX_LISTED_SCENES:
            lines.append(f"- _{len(ordered) - MAX_LISTED_SCENES} additional scene(s) omitted._")
    if skills:
        lines += ["", "### Skills", ""]
        lines += [
            f"- {layout.skill_path(s.name)} \u2014 {s.skill.description.strip()}" for s in skills
        ]
    lines += ["", END_MARKER]
    return "\n".join(lines)


def splice(existing: str, block: str, *, file_name: str) -> str:
    """`existing` with the managed block replaced (or appended when it has no markers)."""
    begins, ends = existing.count(BEGIN_MARKER), existing.count(END_MARKER)
    if begins == 0 and ends == 0:
        if existing == "" or existing.endswith("\n\n"):
            separator = ""
        elif existing.endswith("\n"):
            separator = "\n"
        else:
            separator = "\n\n"
        return f"{existing}{separator}{block}\n"
    start, end = existing.find(BEGIN_MARKER), existing.find(END_MARKER)
    if begins != 1 or ends != 1 or end < start:
        found = f"{begins} BEGIN and {ends} END marker(s)"
        order = " (END before BEGIN)" if begins == ends == 1 else ""
        raise errors.TeamloreError(
            errors.ASSEMBLY_MARKERS_INVALID,
            f"{file_name} has {found}{order}; it was not changed",
            file=file_name,
        )
    return existing[:start] + block + existing[end + len(END_MARKER) :]


# --- reading the tree -----------------------------------------------------------------------


def _scenes(tree: MemoryFiles) -> list[SceneLine]:
    refuse_unreadable(tree, SCENES_DIR)
    lines = []
    for file in tree.of_kind("scene"):
        scene = load_scene(file.data, file.path)
        lines.append(SceneLine(scene.name, scene.heat, scene.summary))
    return lines


def _approved_entries(tree: MemoryFiles) -> int:
    """How many entries of the tree are approved (an unreadable one is not counted)."""
    count = 0
    for file in tree.of_kind("entry"):
        try:
            count += load_entry(file.data, file.path).status == "approved"
        except MemoryFormatError:
            continue
    return count


def _doctrine(tree: MemoryFiles) -> str | None:
    refuse_unreadable(tree, DOCTRINE_FILE)
    files = tree.of_kind("doctrine")
    return load_doctrine(files[0].data, files[0].path).text if files else None


# --- the instructions file ------------------------------------------------------------------


def _read_instructions(root: Path, name: str) -> tuple[bytes | None, str]:
    try:
        data = safe_write.read_file(root, name)
    except errors.TeamloreError as exc:
        if exc.error is not errors.UNSAFE_PATH:
            raise
        raise errors.TeamloreError(
            errors.ASSEMBLY_TARGET_INVALID,
            f"{name} is {exc.message.split(': ', 1)[-1]}",
            file=name,
        ) from None
    if data is None:
        return None, ""
    try:
        return data, data.decode("utf-8")
    except UnicodeDecodeError:
        raise errors.TeamloreError(
            errors.ASSEMBLY_TARGET_INVALID,
            f"{name} is not valid UTF-8; it was not changed",
            file=name,
        ) from None


def _write_if_unchanged(root: Path, relative: str, data: bytes, original: bytes | None) -> None:
    """Write `data` unless the file changed since it was read (then refuse, nothing written)."""
    try:
        safe_write.write_file(root, relative, data, expect=lambda current: current == original)
    except safe_write.ExpectationFailed:
        raise errors.TeamloreError(
            errors.ASSEMBLY_CONFLICT,
            f"{relative} changed while assemble ran; run assemble again",
            path=relative,
        ) from None


# --- the Skill projection -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Projection:
    skill: SourceSkill
    path: str
    current: bytes | None

    @property
    def needs_write(self) -> bool:
        return self.current != self.skill.data


def manifest_path(home: Path, worktree_key: str, provider: str) -> Path:
    return ensure_private_dir(home / MANIFEST_DIR / worktree_key) / f"{provider}.json"


def _load_manifest(path: Path, provider: str) -> dict[str, str]:
    try:
        raw = read_private_file(path)
    except FileNotFoundError:
        return {}
    try:
        document = orjson.loads(raw)
        files = document["files"]
        valid = (
            document.get("format") == MANIFEST_FORMAT
            and document.get("provider") == provider
            and isinstance(files, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
        )
    except (orjson.JSONDecodeError, KeyError, TypeError):
        valid = False
    if not valid:
        raise errors.TeamloreError(
            errors.ASSEMBLY_STATE_INVALID,
            f"the {provider} Skill assembly record is corrupt; delete it to start over",
        )
    return dict(files)


def _save_manifest(path: Path, provider: str, files: dict[str, str]) -> None:
    document = {
        "format": MANIFEST_FORMAT,
        "provider": provider,
        "files": dict(sorted(files.items())),
    }
    write_private_file(path, orjson.dumps(document) + b"\n")


def _plan_projection(
    root: Path, layout: ProviderLayout, skills: list[SourceSkill], manifest: dict[str, str]
) -> list[_Projection]:
    """What to write; refuses (before anything is written) when a projection was edited."""
    plan, edited = [], []
    for skill in skills:
        path = layout.skill_path(skill.name)
        current = safe_write.read_file(root, path)
        item = _Projection(skill, path, current)
        if (
            item.needs_write
            and current is not None
            and sha256_hex(current) != manifest.get(skill.name)
        ):
            edited.append(path)
        plan.append(item)
    if edited:
        raise errors.TeamloreError(
            errors.ASSEMBLY_CONFLICT,
            f"{', '.join(edited)} differ from what teamlore last wrote; nothing was changed",
            paths=edited,
        )
    return plan


# --- assemble -------------------------------------------------------------------------------


def assemble(
    worktree_root: Path, provider: str, *, home: Path, worktree_key: str
) -> dict[str, Any]:
    """Write the managed block and the Skill projection for `provider`; the JSON result."""
    layout = PROVIDERS[provider]
    tree = read_memory_files(worktree_root)
    skills = source_skills(tree)
    doctrine, scenes, entries = _doctrine(tree), _scenes(tree), _approved_entries(tree)
    block = render_block(layout, doctrine, scenes, skills, entries)
    require_lint_clean(block.encode("utf-8"), path=layout.instructions_file, kind="text")

    original, text = _read_instructions(worktree_root, layout.instructions_file)
    updated = splice(text, block, file_name=layout.instructions_file).encode("utf-8")
    record = manifest_path(home, worktree_key, provider)
    manifest = _load_manifest(record, provider)
    plan = _plan_projection(worktree_root, layout, skills, manifest)

    for item in plan:
        if item.needs_write:
            _write_if_unchanged(worktree_root, item.path, item.skill.data, item.current)
    changed = updated != original
    if changed:
        _write_if_unchanged(worktree_root, layout.instructions_file, updated, original)
    _save_manifest(record, provider, {s.name: s.content_digest for s in skills})
    return {
        "provider": provider,
        "target": layout.instructions_file,
        "changed": changed,
        "block": block,
        "skills": [
            {
                "name": item.skill.name,
                "source": item.skill.path,
                "path": item.path,
                "changed": item.needs_write,
            }
            for item in plan
        ],
        "skillsChanged": sum(1 for item in plan if item.needs_write),
        "approvedEntries": entries,
        "hasDoctrine": doctrine is not None,
        "scenes": len(scenes),
    }
