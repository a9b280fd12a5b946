"""`memory assemble`: put the reviewed team memory where Claude Code and Codex read it.

Two outputs per provider (docs/assemble.md):

- the managed block, spliced into the worktree root's instructions file (`CLAUDE.md` for
  claude, `AGENTS.md` for codex): doctrine (or a placeholder line), the scene index (heat
  descending, then name; first 15) and the Skill index. The block is byte-identical to the one
  the reference product writes for the same tree, so both tools can share a repository;
- the Skill projection (memory/skill_copies.py): every file of each
  `.threadshare/memory/skills/<name>/` folder (SKILL.md, `scripts/`, `references/`) copied byte
  for byte to the provider's skill folder (`.claude/skills/` or `.agents/skills/`), guarded by a
  private manifest of the digests last written, so a copy the user edited is never overwritten
  (one that holds the Skill as git commits it, or git's merge of two such, is teamlore's,
  whoever assembled it); a copy whose source left the tree is removed when it is teamlore's.

A block edited by hand since teamlore wrote it is refused like an edited copy (ASSEMBLY_CONFLICT,
nothing changed; memory/block_owner.py tells whose a block is).

Splice rules: no marker → the block is appended after one blank line; exactly one BEGIN before
exactly one END → the bytes from BEGIN through END are replaced and everything else is kept byte
for byte; anything else (a block damaged by hand) is refused with the file untouched and a message
naming the marker lines and the fix, `--repair`: each BEGIN with the first END after it is an
old block and is replaced, a lone END with the old block's text back to its `## Team memory`
heading, a stray marker is removed, every other byte is kept; it refuses rather than leave a
second `## Team memory` section beside the new block (memory/block_markers.py).
A git conflict inside an intact block is replaced with it; one outside the block or across its
markers is refused (`ASSEMBLY_MERGE_UNRESOLVED`), `--repair` or not: its lines are not ours.
Marker text inside a memory document (lint `format.managed-block-marker`) is defused on the way
in (`<!--` → `&lt;!--`), so no document can close the block early. A file is written only when its
bytes change (atomically, no symlink followed, its mode kept). Nothing is staged or committed.

Nothing in the block changes when an entry is promoted (no count, no date), so teammates who each
promote and assemble merge without a conflict in CLAUDE.md / AGENTS.md. `check` (`--check`, for
CI) writes nothing and says which assembled file is not what assemble would write now.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from teamlore.core import errors, safe_write
from teamlore.core.canonical import sha256_hex
from teamlore.core.failpoints import failpoint
from teamlore.core.lock import file_lock
from teamlore.core.paths import ensure_private_dir
from teamlore.core.text.files import all_crlf, conflict_regions, with_line_ends_of
from teamlore.memory.assembled import PROVIDERS, ProviderLayout
from teamlore.memory.assembled_git import lines_outside_block
from teamlore.memory.block_markers import BLOCK_HEADING, Marker, damaged, intact, line_numbers
from teamlore.memory.block_markers import markers as find_markers
from teamlore.memory.block_markers import repaired as repaired_markers
from teamlore.memory.block_owner import (
    BlockForm,
    block_digest,
    is_shallow,
    is_teamlores,
    released_forms,
)
from teamlore.memory.interrupted import remove_dead_write_temps
from teamlore.memory.skill_copies import (
    MANIFEST_DIR,
    Copy,
    Manifest,
    Orphan,
    SkillFile,
    load_manifest,
    manifest_path,
    orphans,
    plan_copies,
    remove_orphans,
    save_manifest,
    skill_files,
)
from teamlore.memory.skills.source import (
    SourceSkill,
    refuse_unreadable,
    require_lint_clean,
    source_skills,
)
from teamlore.memory.store.documents import load_doctrine, load_entry, load_scene
from teamlore.memory.store.frontmatter import MERGE_CONFLICT, MemoryFormatError
from teamlore.memory.store.layout import (
    DOCTRINE_FILE,
    MANAGED_BLOCK_BEGIN,
    MANAGED_BLOCK_END,
    MANAGED_MARKER_TEXT,
    SCENES_DIR,
    SKILL_FILE_NAME,
)
from teamlore.memory.store.projection import MemoryFiles, read_memory_files

Provider = Literal["claude", "codex"]

BEGIN_MARKER = MANAGED_BLOCK_BEGIN
END_MARKER = MANAGED_BLOCK_END
NO_DOCTRINE = "_No approved team doctrine yet._"
# the search hint of the managed block (docs/assemble.md, "The managed block")
SEARCH_CALLS_PER_TURN = 3
MAX_LISTED_SCENES = 15


@dataclass(frozen=True, slots=True)
class SceneLine:
    name: str
    heat: int
    summary: str


# --- the block ------------------------------------------------------------------------------


def search_hint() -> str:
    """How approved entries reach the agent: it searches them (they are not in the block). It
    names no count: the block would change with every promotion, so two teammates who each
    promote an entry would merge a wrong count, or conflict in CLAUDE.md / AGENTS.md."""
    return (
        "The team's approved memory entries are in .threadshare/memory/entries/ (not copied "
        "here). When a task touches something the team may already know, search them with the "
        "threadshare_memory_search tool (or `teamlore memory search QUERY`): at most "
        f"{SEARCH_CALLS_PER_TURN} calls per turn."
    )


def defuse_markers(text: str) -> str:
    """`text` with every managed-marker look-alike made inert (`<!--` → `&lt;!--`): what a
    memory document says can never open or close the block."""
    return MANAGED_MARKER_TEXT.sub(lambda m: "&lt;" + m.group(0)[1:], text)


def block_form(layout: ProviderLayout) -> BlockForm:
    """How assemble lays out `layout`'s block: what `render_block` writes and what
    `block_owner` reads a block by."""
    return BlockForm(
        head=f"{BEGIN_MARKER}\n\n{BLOCK_HEADING}\n\n",
        hint=f"\n\n{search_hint()}",
        scenes_head="\n\n### Scenes\n\n",
        skills_head="\n\n### Skills\n\n",
        tail=f"\n\n{END_MARKER}",
        doctrine=lambda text: defuse_markers(text.strip()) if text else NO_DOCTRINE,
        scene=lambda name, heat, summary: (
            f"- {SCENES_DIR}/{name}.md (heat {heat}) \u2014 {defuse_markers(summary)}"
        ),
        skill=lambda name, description: (
            f"- {layout.skill_path(name)} \u2014 {defuse_markers(description.strip())}"
        ),
    )


def render_block(
    layout: ProviderLayout,
    doctrine: str | None,
    scenes: list[SceneLine],
    skills: list[SourceSkill],
) -> str:
    """The managed block (markers included, no trailing newline). Nothing in it changes when
    an entry is promoted (docs/assemble.md, "Assembled files in git")."""
    form = block_form(layout)
    block = form.head + form.doctrine(doctrine) + form.hint
    if scenes:
        ordered = sorted(scenes, key=lambda s: (-s.heat, s.name))
        lines = [form.scene(s.name, s.heat, s.summary) for s in ordered[:MAX_LISTED_SCENES]]
        if len(ordered) > MAX_LISTED_SCENES:
            lines.append(f"- _{len(ordered) - MAX_LISTED_SCENES} additional scene(s) omitted._")
        block += form.scenes_head + "\n".join(lines)
    if skills:
        lines = [form.skill(s.name, s.skill.description) for s in skills]
        block += form.skills_head + "\n".join(lines)
    return block + form.tail


def block_content(block: str) -> str:
    """The block without its two markers (what lint judges: the markers themselves are ours)."""
    return block.removeprefix(BEGIN_MARKER).removesuffix(END_MARKER)


def splice(
    existing: str,
    block: str,
    *,
    file_name: str,
    repair: bool = False,
    kept: frozenset[str] = frozenset(),
) -> str:
    """`existing` with the managed block replaced (or appended when it has no markers); a
    damaged block is refused with the fix in the message, or repaired when `repair` (`kept`:
    the lines outside the block as git holds the file, which a repair never removes)."""
    markers = find_markers(existing)
    _refuse_unresolved_merge(existing, markers, file_name)
    if not markers:
        if existing == "" or existing.endswith("\n\n"):
            separator = ""
        elif existing.endswith("\n"):
            separator = "\n"
        else:
            separator = "\n\n"
        return f"{existing}{separator}{block}\n"
    if intact(markers):
        return existing[: markers[0].start] + block + existing[markers[1].end :]
    if repair:
        return repaired_markers(existing, block, markers, file_name, kept)
    raise damaged(existing, markers, file_name)


def _refuse_unresolved_merge(text: str, markers: list[Marker], file_name: str) -> None:
    """A git conflict inside an intact block goes with the block (assemble writes it anew from
    the merged tree); one outside it, or one that splits the markers, is the person's to
    resolve: written around, its marker lines would reach every agent that reads the file."""
    block = (markers[0].start, markers[1].end) if intact(markers) and markers else None
    for start, end in conflict_regions(text):
        if block is not None and block[0] <= start and end <= block[1]:
            continue
        first = text.count("\n", 0, start) + 1
        last = text.count("\n", 0, end - 1) + 1
        raise errors.TeamloreError(
            errors.ASSEMBLY_MERGE_UNRESOLVED,
            f"{file_name}:{first} holds an unresolved git merge (lines {first}-{last})"
            + (
                " across the managed block's markers"
                if any(start <= m.start < end for m in markers)
                else " outside the managed block"
            )
            + "; it was not changed: resolve it by hand (one BEGIN/END pair may stay, assemble "
            "rewrites what is inside it), then run assemble again",
            file=file_name,
            lines=[first, last],
        )


def without_block(data: bytes) -> bytes | None:
    """An instructions file with its managed block taken out (uninstall, when the copy of the
    file from before install is lost): every byte outside the block kept, in the file's own
    line ends, and the blank line `splice` put before a block it appended taken out with it;
    None when the file is not UTF-8 or has no single intact block."""
    try:
        saved = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = saved.replace("\r\n", "\n") if all_crlf(saved) else saved
    markers = find_markers(text)
    if not markers or not intact(markers):
        return None
    before, after = text[: markers[0].start], text[markers[1].end :]
    if after in ("", "\n"):  # appended: `existing + separator + block + "\n"`
        rest = before[:-1] if before.endswith("\n\n") else before
    elif after.startswith("\n") and (before == "" or before.endswith("\n")):  # its own lines
        rest = before + after[1:]
    else:
        rest = before + after
    return with_line_ends_of(saved, rest).encode("utf-8")


# --- one file for both providers -----------------------------------------------------------


def linked_counterpart(root: Path, provider: str, path: str) -> str | None:
    """The other provider's instructions file or skill folder that `path` (this provider's) is
    a symlink to, as many repositories share one (`CLAUDE.md -> AGENTS.md`, `.claude/skills ->
    ../.agents/skills`); None when it is not such a link. The other provider's assemble writes
    there: a block or a projection written through the link would name this provider's Skill
    paths, and each provider's assemble would undo the other's. Any other link is refused where
    it is written, never followed (docs/assemble.md, "One file for both agents")."""
    other, mine = PROVIDERS[_other(provider)], PROVIDERS[provider]
    counterpart = other.instructions_file if path == mine.instructions_file else other.skills_dir
    link = root / path
    if _linked_folders(root, path) or not link.is_symlink():
        return None
    target = os.readlink(link)
    if os.path.isabs(target):  # `ln -s "$PWD/AGENTS.md" CLAUDE.md`, maybe through /tmp's link
        folder, name = os.path.split(os.path.normpath(target))
        pointed = os.path.relpath(os.path.join(os.path.realpath(folder), name), root.resolve())
    else:
        pointed = os.path.normpath(os.path.join(os.path.dirname(path), target))
    if pointed != counterpart or _linked_folders(root, counterpart):
        return None
    return None if (root / counterpart).is_symlink() else counterpart


def _other(provider: str) -> str:
    (other,) = (name for name in PROVIDERS if name != provider)
    return other


def _linked_folders(root: Path, relative: str) -> bool:
    """Whether a folder on the way from `root` to `relative` is a symlink."""
    parts = Path(relative).parts[:-1]
    return any(root.joinpath(*parts[: n + 1]).is_symlink() for n in range(len(parts)))


# --- reading the tree -----------------------------------------------------------------------


def _scenes(tree: MemoryFiles) -> list[SceneLine]:
    refuse_unreadable(tree, SCENES_DIR)
    lines = []
    for file in tree.of_kind("scene"):
        scene = load_scene(file.data, file.path)
        lines.append(SceneLine(scene.name, scene.heat, scene.summary))
    return lines


def _approved_entries(tree: MemoryFiles) -> int:
    """How many entries of the tree are approved, for the result (the block names no count);
    an unreadable one is not counted, but an unresolved merge refuses: the block and the Skills
    would be assembled from a tree the merge has not made yet."""
    count = 0
    for file in tree.of_kind("entry"):
        try:
            count += load_entry(file.data, file.path).status == "approved"
        except MemoryFormatError as exc:
            if exc.reason == MERGE_CONFLICT:
                raise
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


def _write_if_unchanged(
    root: Path, relative: str, data: bytes, original: bytes | None, *, executable: bool = False
) -> None:
    """Write `data` unless the file changed since it was read (then refuse, nothing written);
    a new file is executable when its source is (a Skill's `scripts/check.sh`)."""
    mode = 0o755 if executable else safe_write.DEFAULT_FILE_MODE
    try:
        safe_write.write_file(
            root, relative, data, expect=lambda current: current == original, new_file_mode=mode
        )
    except safe_write.ExpectationFailed:
        raise errors.TeamloreError(
            errors.ASSEMBLY_CONFLICT,
            f"{relative} changed while assemble ran; run assemble again",
            path=relative,
        ) from None


# --- assemble -------------------------------------------------------------------------------


LOCK_FILE = "assemble.lock"  # beside the worktree's manifests
LOCK_WAIT_SECONDS = 60.0


def assemble(
    worktree_root: Path,
    provider: str,
    *,
    home: Path,
    worktree_key: str,
    repair: bool = False,
) -> dict[str, Any]:
    """Write the managed block and the Skill projection for `provider`; the JSON result. One
    assemble at a time in a worktree: a second one (an agent's call while the person runs the
    command) waits and then finds the files as the first left them, where both would otherwise
    see the other's writes as a hand edit (ASSEMBLY_CONFLICT)."""
    started, lock = time.time(), ensure_private_dir(home / MANIFEST_DIR / worktree_key) / LOCK_FILE
    with file_lock(lock, wait_seconds=LOCK_WAIT_SECONDS, what="memory assemble in this worktree"):
        # no other assemble writes now: the temp files killed ones left go (memory/interrupted.py)
        remove_dead_write_temps(worktree_root, PROVIDERS[provider].skills_dir, older_than=started)
        return _assemble(
            worktree_root, provider, home=home, worktree_key=worktree_key, repair=repair
        )


@dataclass(frozen=True, slots=True)
class _Wanted:
    """What assemble writes for one provider now, as the tree gives it (nothing written)."""

    layout: ProviderLayout
    block: str
    skills: list[SourceSkill]
    files: list[SkillFile]  # every file of every Skill folder, SKILL.md first in each
    has_doctrine: bool
    scenes: int
    entries: int
    block_link: str | None
    skills_link: str | None


def _wanted(worktree_root: Path, provider: str) -> _Wanted:
    layout = PROVIDERS[provider]
    tree = read_memory_files(worktree_root)
    skills = source_skills(tree)
    doctrine, scenes, entries = _doctrine(tree), _scenes(tree), _approved_entries(tree)
    block = render_block(layout, doctrine, scenes, skills)
    require_lint_clean(
        block_content(block).encode("utf-8"), path=layout.instructions_file, kind="text"
    )
    return _Wanted(
        layout,
        block,
        skills,
        skill_files(worktree_root, skills),
        doctrine is not None,
        len(scenes),
        entries,
        linked_counterpart(worktree_root, provider, layout.instructions_file),
        linked_counterpart(worktree_root, provider, layout.skills_dir),
    )


def _spliced(
    text: str, block: str, *, file_name: str, repair: bool, root: Path | None = None
) -> tuple[bytes, list[int]]:
    """The instructions file `text` with `block` spliced in, in the file's own line ends, and
    the marker lines `repair` replaced (`root`: the worktree, whose git tells the person's
    lines a repair keeps)."""
    saved = text
    if all_crlf(text):  # spliced as LF lines, then given the file's own line ends back
        text = text.replace("\r\n", "\n")
    markers = find_markers(text)
    repaired = line_numbers(text, markers) if repair and not intact(markers) else []
    kept = lines_outside_block(root, file_name) if repaired and root is not None else frozenset()
    updated = splice(text, block, file_name=file_name, repair=repair, kept=kept)
    return with_line_ends_of(saved, updated).encode("utf-8"), repaired


def _hand_edit(
    root: Path, provider: str, wanted: _Wanted, text: str, recorded: str | None
) -> errors.TeamloreError | None:
    """ASSEMBLY_CONFLICT when the file's one intact block was edited by hand since teamlore
    wrote it (docs/assemble.md, "Hand edits inside the block"); None when assemble may
    replace it."""
    text = text.replace("\r\n", "\n") if all_crlf(text) else text
    markers = find_markers(text)
    if not markers or not intact(markers):
        return None
    block = text[markers[0].start : markers[1].end]
    name = wanted.layout.instructions_file
    form, released = block_form(wanted.layout), released_forms(wanted.layout.skills_dir)
    if is_teamlores(
        root, block, wanted=wanted.block, recorded=recorded, form=form, released=released
    ):
        return None
    lines = f"lines {_line_at(text, markers[0].start)}-{_line_at(text, markers[1].start)}"
    again = f"`teamlore memory assemble -p {provider}` again."
    if is_shallow(root):  # the commit it was assembled from may be beyond the clone's history
        return errors.TeamloreError(
            errors.ASSEMBLY_CONFLICT,
            f"{name}: its managed block ({lines}) is not what assemble writes from the memory "
            "tree, now or in the history this shallow clone holds: it is stale or edited by "
            "hand, and a shallow clone cannot tell which; nothing was changed",
            path=name,
            paths=[name],
            shallow=True,
        ).advising(
            "Fetch the history (`git fetch --unshallow`) and run " + again + " Or, to drop "
            "whatever is in the block, delete the lines between the markers and run " + again
        )
    return errors.TeamloreError(
        errors.ASSEMBLY_CONFLICT,
        f"{name}: its managed block ({lines}) was edited by hand since teamlore wrote it: it "
        "is not what assemble writes from the memory tree, now or as git holds it; nothing was "
        "changed",
        path=name,
        paths=[name],
    ).advising(
        "Move your edit outside the BEGIN/END markers (or into team memory through review), or "
        "delete the lines between the markers to drop it; then run " + again
    )


@dataclass(frozen=True, slots=True)
class Planned:
    """What assemble writes for one provider, worked out before anything is written: the real
    run writes it, `install --dry-run` shows it (`preview`), so the two cannot differ."""

    wanted: _Wanted
    original: bytes | None  # the instructions file now
    updated: bytes | None  # what it gets; None: the block goes to the linked file
    repaired: list[int]
    projections: list[Copy]
    orphans: list[Orphan]  # copies whose source left the tree: removed when `removable`

    @property
    def changed(self) -> bool:
        return self.updated is not None and self.updated != self.original

    def writes(self) -> list[tuple[str, bytes | None, bytes]]:
        """Each file this assemble changes: (path from the worktree root, bytes now, bytes
        written), in the order they are written."""
        out = [(p.path, p.current, p.file.data) for p in self.projections if p.needs_write]
        if self.changed:
            assert self.updated is not None
            out.append((self.wanted.layout.instructions_file, self.original, self.updated))
        return out


def plan(
    worktree_root: Path, provider: str, *, manifest: Callable[[], Manifest], repair: bool
) -> Planned:
    """Every file assemble would write (refused as assemble refuses); writes nothing.
    `manifest` gives what this machine's assemble last wrote."""
    wanted = _wanted(worktree_root, provider)
    original: bytes | None = None
    updated: bytes | None = None
    repaired: list[int] = []
    record = manifest()
    if wanted.block_link is None:
        original, text = _read_instructions(worktree_root, wanted.layout.instructions_file)
        updated, repaired = _spliced(
            text,
            wanted.block,
            file_name=wanted.layout.instructions_file,
            repair=repair,
            root=worktree_root,
        )
        # intact markers: a hand edit is refused, --repair or not (repair mends damaged ones)
        edited = _hand_edit(worktree_root, provider, wanted, text, record.block)
        if edited is not None:
            raise edited
    if wanted.skills_link:
        return Planned(wanted, original, updated, repaired, [], [])
    skills_dir = wanted.layout.skills_dir
    projections = plan_copies(worktree_root, skills_dir, wanted.files, record)
    gone = orphans(worktree_root, skills_dir, wanted.files, record)
    return Planned(wanted, original, updated, repaired, projections, gone)


def _read_only_manifest(home: Path, worktree_key: str | None, provider: str) -> Manifest:
    """This machine's record for a run that creates nothing (no `worktree_key`: none yet)."""
    record = home / MANIFEST_DIR / (worktree_key or "-") / f"{provider}.json"
    return load_manifest(record, provider) if worktree_key and record.is_file() else Manifest()


def preview(worktree_root: Path, provider: str, *, home: Path, worktree_key: str | None) -> Planned:
    """`plan` for a dry run, creating nothing (no `worktree_key`: no state dir secret yet)."""
    return plan(
        worktree_root,
        provider,
        manifest=lambda: _read_only_manifest(home, worktree_key, provider),
        repair=False,
    )


def _assemble(
    worktree_root: Path, provider: str, *, home: Path, worktree_key: str, repair: bool
) -> dict[str, Any]:
    record = manifest_path(home, worktree_key, provider)
    manifest = load_manifest(record, provider)
    planned = plan(worktree_root, provider, manifest=lambda: manifest, repair=repair)
    wanted = planned.wanted
    failpoint("assemble.planned")
    executable = {p.path for p in planned.projections if p.file.executable}
    for path, current, data in planned.writes():
        _write_if_unchanged(worktree_root, path, data, current, executable=path in executable)
    removed = [orphan for orphan in planned.orphans if orphan.removable]
    if wanted.skills_link is None:
        remove_orphans(worktree_root, wanted.layout.skills_dir, removed)
        manifest.files = {f.key: sha256_hex(f.data) for f in wanted.files}
    if wanted.block_link is None:
        manifest.block = block_digest(wanted.block)
    save_manifest(record, provider, manifest)
    return {
        **_about(provider, wanted),
        "changed": planned.changed,
        "repairedMarkerLines": planned.repaired,
        "block": wanted.block,
        "skills": _skills_result(planned.projections),
        "skillsChanged": len({p.file.skill for p in planned.projections if p.needs_write}),
        "removed": [orphan.path for orphan in removed],
        "orphans": [orphan.path for orphan in planned.orphans if not orphan.removable],
        "approvedEntries": wanted.entries,
        "hasDoctrine": wanted.has_doctrine,
        "scenes": wanted.scenes,
    }


def _skills_result(projections: list[Copy]) -> list[dict[str, Any]]:
    """One item per Skill (its SKILL.md copy), with the other files of its folder."""
    skills: list[dict[str, Any]] = []
    for item in projections:
        about = {"source": item.file.source, "path": item.path, "changed": item.needs_write}
        if item.file.relative == SKILL_FILE_NAME:
            skills.append({"name": item.file.skill, **about, "files": []})
        else:
            skills[-1]["files"].append(about)
            skills[-1]["changed"] = skills[-1]["changed"] or item.needs_write
    return skills


def _about(provider: str, wanted: _Wanted) -> dict[str, Any]:
    """What an assemble and a check result both say first: the files and the links."""
    return {
        "provider": provider,
        "target": wanted.layout.instructions_file,
        "targetLinksTo": wanted.block_link,
        "skillsFolder": wanted.layout.skills_dir,
        "skillsLinkTo": wanted.skills_link,
        # whose assemble writes what this provider's links lead to
        "linkedProvider": _other(provider) if wanted.block_link or wanted.skills_link else None,
    }


# --- check ----------------------------------------------------------------------------------


def check(
    worktree_root: Path, provider: str, *, home: Path | None = None, worktree_key: str | None = None
) -> dict[str, Any]:
    """Whether every file assemble writes for `provider` holds what it would write now (`assemble
    --check`, for CI); writes nothing. ASSEMBLY_STALE names each file that does not and why; a
    git merge left in the instructions file is stale wherever it is, and so is a copy whose
    Skill left the tree. A file assemble itself would refuse (damaged markers, a symlink, a
    block edited by hand) is refused with that code; in a shallow clone, which cannot tell a
    hand edit from an old block, such a block is stale. `home` and `worktree_key` name this
    machine's record of what it wrote, when there is one (CI has none: git tells)."""
    wanted = _wanted(worktree_root, provider)
    record = _read_only_manifest(home, worktree_key, provider) if home else Manifest()
    layout = wanted.layout
    stale: list[dict[str, str]] = []
    checked: list[str] = []
    if wanted.block_link is None:
        checked.append(layout.instructions_file)
        why = _instructions_staleness(worktree_root, provider, wanted, record.block)
        if why:
            stale.append({"path": layout.instructions_file, "why": why})
    if not wanted.skills_link:
        for file in wanted.files:
            path = f"{layout.skills_dir}/{file.skill}/{file.relative}"
            checked.append(path)
            current = safe_write.read_file(worktree_root, path)
            if current is None:
                stale.append({"path": path, "why": "missing"})
            elif current != file.data:
                stale.append({"path": path, "why": f"differs from {file.source}"})
        for orphan in orphans(worktree_root, layout.skills_dir, wanted.files, record):
            why = "its source is no longer in the memory tree" + (
                "" if orphan.removable else " and it was edited since teamlore wrote it"
            )
            stale.append({"path": orphan.path, "why": why})
    if stale:
        raise _stale(provider, stale)
    return {**_about(provider, wanted), "checked": checked, "stale": []}


def _stale(provider: str, stale: list[dict[str, str]]) -> errors.TeamloreError:
    named = "; ".join(f"{item['path']} ({item['why']})" for item in stale)
    are = "is" if len(stale) == 1 else "are"
    by_hand = [item["path"] for item in stale if item["why"].endswith("since teamlore wrote it")]
    remedy = f"Run `teamlore memory assemble -p {provider}`, then commit what it wrote."
    if by_hand:
        remedy = (
            f"Remove {', '.join(by_hand)} (`git rm`, or `rm` when not committed): assemble keeps "
            f"an edited copy. Then run `teamlore memory assemble -p {provider}` and commit."
        )
    if any(item["why"] == SHALLOW_WHY for item in stale):
        remedy = (
            "Check out the full history (actions/checkout `fetch-depth: 0`; locally `git fetch "
            f"--unshallow`) and check again; or run `teamlore memory assemble -p {provider}` "
            "in a full clone and commit what it wrote."
        )
    return errors.TeamloreError(
        errors.ASSEMBLY_STALE,
        f"{len(stale)} assembled {'file' if len(stale) == 1 else 'files'} {are} not what "
        f"`teamlore memory assemble -p {provider}` writes now: {named}",
        provider=provider,
        stale=stale,
    ).advising(remedy)


def _instructions_staleness(
    root: Path, provider: str, wanted: _Wanted, recorded: str | None
) -> str | None:
    """Why the instructions file is not what assemble writes now; None when it is.
    ASSEMBLY_CONFLICT when its block was edited by hand, as assemble refuses it."""
    name = wanted.layout.instructions_file
    original, text = _read_instructions(root, name)
    if original is None:
        return "missing"
    regions = conflict_regions(text)
    if regions:
        spans = (f"{_line_at(text, start)}-{_line_at(text, end - 1)}" for start, end in regions)
        return f"an unresolved git merge on lines {', '.join(spans)}"
    updated, _ = _spliced(text, wanted.block, file_name=name, repair=False)
    if updated == original:
        return None
    if not find_markers(text):
        return "no managed block"
    edited = _hand_edit(root, provider, wanted, text, recorded)
    if edited is not None and edited.details.get("shallow"):
        return SHALLOW_WHY
    if edited is not None:
        raise edited
    return "its managed block differs from the memory tree"


SHALLOW_WHY = (
    "its managed block differs from the memory tree, and this shallow clone's history cannot "
    "tell stale from edited by hand (check out the full history: `fetch-depth: 0`)"
)


def _line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
