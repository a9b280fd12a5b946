"""`memory assemble`: put the reviewed team memory where Claude Code and Codex read it.

Two outputs per provider (docs/assemble.md):

- the managed block, spliced into the worktree root's instructions file (`CLAUDE.md` for
  claude, `AGENTS.md` for codex): doctrine (or a placeholder line), the scene index (heat
  descending, then name; first 15) and the Skill index. The block is byte-identical to the one
  the reference product writes for the same tree, so both tools can share a repository;
- the Skill projection: every `.threadshare/memory/skills/<name>/SKILL.md` copied byte for byte
  to the provider's skill folder (`.claude/skills/` or `.agents/skills/`), guarded by a private
  manifest of the digests last written, so a projection the user edited is never overwritten
  (one that holds the Skill as git commits it, or git's merge of two such, is teamlore's,
  whoever assembled it).

Splice rules: no marker → the block is appended after one blank line; exactly one BEGIN before
exactly one END → the bytes from BEGIN through END are replaced and everything else is kept byte
for byte; anything else (a block damaged by hand) is refused with the file untouched and a message
naming the marker lines and the fix, `--repair`: each BEGIN with the last END before the next
BEGIN is an old block and is replaced, a stray marker is removed, every other byte is kept.
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
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from teamlore.core import errors, safe_write
from teamlore.core.canonical import sha256_hex
from teamlore.core.failpoints import failpoint
from teamlore.core.lock import file_lock
from teamlore.core.paths import ensure_private_dir, read_private_file, write_private_file
from teamlore.core.text.files import (
    all_crlf,
    conflict_regions,
    conflict_start,
    with_line_ends_of,
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
from teamlore.repo.git import run_git

Provider = Literal["claude", "codex"]

BEGIN_MARKER = MANAGED_BLOCK_BEGIN
END_MARKER = MANAGED_BLOCK_END
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


def render_block(
    layout: ProviderLayout,
    doctrine: str | None,
    scenes: list[SceneLine],
    skills: list[SourceSkill],
) -> str:
    """The managed block (markers included, no trailing newline). Nothing in it changes when
    an entry is promoted (docs/assemble.md, "Assembled files in git")."""
    body = defuse_markers(doctrine.strip()) if doctrine else NO_DOCTRINE
    lines = [BEGIN_MARKER, "", "## Team memory", "", body]
    lines += ["", search_hint()]
    if scenes:
        ordered = sorted(scenes, key=lambda s: (-s.heat, s.name))
        lines += ["", "### Scenes", ""]
        lines += [
            f"- {SCENES_DIR}/{s.name}.md (heat {s.heat}) \u2014 {defuse_markers(s.summary)}"
            for s in ordered[:MAX_LISTED_SCENES]
        ]
        if len(ordered) > MAX_LISTED_SCENES:
            lines.append(f"- _{len(ordered) - MAX_LISTED_SCENES} additional scene(s) omitted._")
    if skills:
        lines += ["", "### Skills", ""]
        lines += [
            f"- {layout.skill_path(s.name)} \u2014 {defuse_markers(s.skill.description.strip())}"
            for s in skills
        ]
    lines += ["", END_MARKER]
    return "\n".join(lines)


def block_content(block: str) -> str:
    """The block without its two markers (what lint judges: the markers themselves are ours)."""
    return block.removeprefix(BEGIN_MARKER).removesuffix(END_MARKER)


@dataclass(frozen=True, slots=True)
class _Marker:
    start: int
    end: int
    begins: bool


def _markers(text: str) -> list[_Marker]:
    found = [
        _Marker(m.start(), m.end(), marker == BEGIN_MARKER)
        for marker in (BEGIN_MARKER, END_MARKER)
        for m in re.finditer(re.escape(marker), text)
    ]
    return sorted(found, key=lambda m: m.start)


def _intact(markers: list[_Marker]) -> bool:
    """No block yet, or exactly one BEGIN before exactly one END."""
    return not markers or (len(markers) == 2 and markers[0].begins and not markers[1].begins)


def _line_numbers(text: str, markers: list[_Marker]) -> list[int]:
    return [text.count("\n", 0, m.start) + 1 for m in markers]


def splice(existing: str, block: str, *, file_name: str, repair: bool = False) -> str:
    """`existing` with the managed block replaced (or appended when it has no markers); a
    damaged block is refused with the fix in the message, or repaired when `repair`."""
    markers = _markers(existing)
    _refuse_unresolved_merge(existing, markers, file_name)
    if not markers:
        if existing == "" or existing.endswith("\n\n"):
            separator = ""
        elif existing.endswith("\n"):
            separator = "\n"
        else:
            separator = "\n\n"
        return f"{existing}{separator}{block}\n"
    if _intact(markers):
        return existing[: markers[0].start] + block + existing[markers[1].end :]
    if repair:
        return _repaired(existing, block, markers)
    begins = sum(m.begins for m in markers)
    found = f"{begins} BEGIN and {len(markers) - begins} END marker(s)"
    order = " (END before BEGIN)" if begins == len(markers) - begins == 1 else ""
    lines = ", ".join(str(n) for n in _line_numbers(existing, markers))
    raise errors.TeamloreError(
        errors.ASSEMBLY_MARKERS_INVALID,
        f"{file_name} has {found}{order} on lines {lines}; it was not changed. Run "
        "`teamlore memory assemble --repair` to replace the old block(s) and drop the stray "
        "markers (text outside them is kept), or fix those lines by hand",
        file=file_name,
        lines=_line_numbers(existing, markers),
    )


def _refuse_unresolved_merge(text: str, markers: list[_Marker], file_name: str) -> None:
    """A git conflict inside an intact block goes with the block (assemble writes it anew from
    the merged tree); one outside it, or one that splits the markers, is the person's to
    resolve: written around, its marker lines would reach every agent that reads the file."""
    block = (markers[0].start, markers[1].end) if _intact(markers) and markers else None
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


def _damaged_regions(text: str, markers: list[_Marker]) -> list[tuple[int, int]]:
    """What `--repair` removes: each BEGIN through the last END before the next BEGIN (an old
    block: its text was generated), and each stray marker alone (its line when it stands alone)."""
    regions: list[tuple[int, int]] = []
    index = 0
    while index < len(markers):
        marker = markers[index]
        following = index + 1
        while following < len(markers) and not markers[following].begins:
            following += 1
        ends = markers[index + 1 : following] if marker.begins else []
        if ends:
            regions.append((marker.start, ends[-1].end))
            index = following
            continue
        regions.append(_whole_line_if_alone(text, marker))
        index += 1
    return regions


def _whole_line_if_alone(text: str, marker: _Marker) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, marker.start) + 1
    line_end = text.find("\n", marker.end)
    line_end = len(text) if line_end < 0 else line_end + 1
    if text[line_start:line_end].strip() == text[marker.start : marker.end]:
        return line_start, line_end
    return marker.start, marker.end


def _repaired(text: str, block: str, markers: list[_Marker]) -> str:
    """One block where the first damaged region was; every byte outside the regions kept."""
    regions = _damaged_regions(text, markers)
    pieces, cursor = [], 0
    for number, (start, end) in enumerate(regions):
        pieces.append(text[cursor:start])
        if number == 0:
            pieces.append(block + ("\n" if text[start:end].endswith("\n") else ""))
        elif text.startswith("\n", end) and (start == 0 or text[start - 1] == "\n"):
            end += 1  # a removed old block leaves no empty line behind
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


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
    markers = _markers(text)
    if not markers or not _intact(markers):
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
    plan, unknown = [], []
    for skill in skills:
        path = layout.skill_path(skill.name)
        current = safe_write.read_file(root, path)
        item = _Projection(skill, path, current)
        if (
            item.needs_write
            and current is not None
            and sha256_hex(current) != manifest.get(skill.name)
        ):
            unknown.append(item)
        plan.append(item)
    versions = _git_versions(root, unknown)
    edited = [item.path for item in unknown if not _made_by_teamlore(item, versions)]
    if edited:
        raise errors.TeamloreError(
            errors.ASSEMBLY_CONFLICT,
            f"{', '.join(edited)} {'differs' if len(edited) == 1 else 'differ'} from what"
            " teamlore last wrote; nothing was changed",
            paths=edited,
        )
    return plan


# the commit whose changes a stopped merge, rebase or cherry-pick brings in ("theirs")
THEIRS_HEADS = ("MERGE_HEAD", "REBASE_HEAD", "CHERRY_PICK_HEAD")


def _made_by_teamlore(item: _Projection, versions: dict[str, bytes]) -> bool:
    """Whether a projection this machine's manifest does not know (it records only what this
    machine wrote last) is teamlore's all the same, by what git holds (docs/assemble.md, "Skill
    projection"): its bytes are the Skill as committed at HEAD or in the commit a stopped merge
    brings in (a checkout or a pull brought a projection assembled on another branch or by a
    teammate), or it is git's unresolved merge of two such projections, markers untouched."""
    source = item.skill.path
    ours = versions.get(f"HEAD:{source}")
    theirs = [
        versions[f"{head}:{source}"] for head in THEIRS_HEADS if f"{head}:{source}" in versions
    ]
    committed = [_lf(version) for version in (ours, *theirs) if version is not None]
    if item.current is not None and _lf(item.current) in committed:
        return True
    return (
        ours is not None
        and versions.get(f":2:{item.path}") == ours
        and versions.get(f":3:{item.path}") in theirs
        and conflict_start((item.current or b"").decode("utf-8", "replace")) is not None
    )


def _lf(data: bytes) -> bytes:
    """`data` with LF line ends: git checks text out with CRLF under `core.autocrlf`."""
    return data.replace(b"\r\n", b"\n")


def _git_versions(root: Path, items: list[_Projection]) -> dict[str, bytes]:
    """What `_made_by_teamlore` compares, read in one `git cat-file --batch`: each Skill's
    source at HEAD and at each of `THEIRS_HEADS`, each projection's two sides of an unresolved
    merge (index stages 2 and 3), by revision (`HEAD:<path>`, `:2:<path>`). Those git does not
    have are left out; none outside git or when git cannot tell."""
    revisions = [
        revision
        for item in items
        for revision in (
            *(f"{head}:{item.skill.path}" for head in ("HEAD", *THEIRS_HEADS)),
            f":2:{item.path}",
            f":3:{item.path}",
        )
    ]
    if not revisions:
        return {}
    try:
        out = run_git(
            ["cat-file", "--batch"], cwd=root, stdin="".join(f"{r}\n" for r in revisions).encode()
        )
    except errors.TeamloreError:  # not a repository, git missing, an output past its bound
        return {}
    found: dict[str, bytes] = {}
    position = 0
    for revision in revisions:
        end = out.index(b"\n", position)
        header = out[position:end].split()  # `<oid> <type> <size>`, or `<revision> missing`
        position = end + 1
        if len(header) == 3:
            size = int(header[2])
            if header[1] == b"blob":
                found[revision] = out[position : position + size]
            position += size + 1
    return found


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
    lock = ensure_private_dir(home / MANIFEST_DIR / worktree_key) / LOCK_FILE
    with file_lock(lock, wait_seconds=LOCK_WAIT_SECONDS, what="memory assemble in this worktree"):
        return _assemble(
            worktree_root, provider, home=home, worktree_key=worktree_key, repair=repair
        )


@dataclass(frozen=True, slots=True)
class _Wanted:
    """What assemble writes for one provider now, as the tree gives it (nothing written)."""

    layout: ProviderLayout
    block: str
    skills: list[SourceSkill]
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
        doctrine is not None,
        len(scenes),
        entries,
        linked_counterpart(worktree_root, provider, layout.instructions_file),
        linked_counterpart(worktree_root, provider, layout.skills_dir),
    )


def _spliced(text: str, block: str, *, file_name: str, repair: bool) -> tuple[bytes, list[int]]:
    """The instructions file `text` with `block` spliced in, in the file's own line ends, and
    the marker lines `repair` replaced."""
    saved = text
    if all_crlf(text):  # spliced as LF lines, then given the file's own line ends back
        text = text.replace("\r\n", "\n")
    markers = _markers(text)
    repaired = _line_numbers(text, markers) if repair and not _intact(markers) else []
    updated = splice(text, block, file_name=file_name, repair=repair)
    return with_line_ends_of(saved, updated).encode("utf-8"), repaired


@dataclass(frozen=True, slots=True)
class Planned:
    """What assemble writes for one provider, worked out before anything is written: the real
    run writes it, `install --dry-run` shows it (`preview`), so the two cannot differ."""

    wanted: _Wanted
    original: bytes | None  # the instructions file now
    updated: bytes | None  # what it gets; None: the block goes to the linked file
    repaired: list[int]
    projections: list[_Projection]

    @property
    def changed(self) -> bool:
        return self.updated is not None and self.updated != self.original

    def writes(self) -> list[tuple[str, bytes | None, bytes]]:
        """Each file this assemble changes: (path from the worktree root, bytes now, bytes
        written), in the order they are written."""
        out = [(p.path, p.current, p.skill.data) for p in self.projections if p.needs_write]
        if self.changed:
            assert self.updated is not None
            out.append((self.wanted.layout.instructions_file, self.original, self.updated))
        return out


def plan(
    worktree_root: Path, provider: str, *, manifest: Callable[[], dict[str, str]], repair: bool
) -> Planned:
    """Every file assemble would write (refused as assemble refuses); writes nothing.
    `manifest` gives the digests of the Skill projection this machine last wrote."""
    wanted = _wanted(worktree_root, provider)
    original: bytes | None = None
    updated: bytes | None = None
    repaired: list[int] = []
    if wanted.block_link is None:
        original, text = _read_instructions(worktree_root, wanted.layout.instructions_file)
        updated, repaired = _spliced(
            text, wanted.block, file_name=wanted.layout.instructions_file, repair=repair
        )
    projections = (
        []
        if wanted.skills_link
        else _plan_projection(worktree_root, wanted.layout, wanted.skills, manifest())
    )
    return Planned(wanted, original, updated, repaired, projections)


def preview(worktree_root: Path, provider: str, *, home: Path, worktree_key: str | None) -> Planned:
    """`plan` for a dry run, creating nothing (no `worktree_key`: no state dir secret yet)."""
    record = home / MANIFEST_DIR / (worktree_key or "-") / f"{provider}.json"

    def manifest() -> dict[str, str]:
        return _load_manifest(record, provider) if worktree_key and record.is_file() else {}

    return plan(worktree_root, provider, manifest=manifest, repair=False)


def _assemble(
    worktree_root: Path, provider: str, *, home: Path, worktree_key: str, repair: bool
) -> dict[str, Any]:
    def manifest() -> dict[str, str]:
        return _load_manifest(manifest_path(home, worktree_key, provider), provider)

    planned = plan(worktree_root, provider, manifest=manifest, repair=repair)
    wanted = planned.wanted
    failpoint("assemble.planned")
    for path, current, data in planned.writes():
        _write_if_unchanged(worktree_root, path, data, current)
    if wanted.skills_link is None:
        record = manifest_path(home, worktree_key, provider)
        _save_manifest(record, provider, {s.name: s.content_digest for s in wanted.skills})
    return {
        **_about(provider, wanted),
        "changed": planned.changed,
        "repairedMarkerLines": planned.repaired,
        "block": wanted.block,
        "skills": [
            {
                "name": item.skill.name,
                "source": item.skill.path,
                "path": item.path,
                "changed": item.needs_write,
            }
            for item in planned.projections
        ],
        "skillsChanged": sum(1 for item in planned.projections if item.needs_write),
        "approvedEntries": wanted.entries,
        "hasDoctrine": wanted.has_doctrine,
        "scenes": wanted.scenes,
    }


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


def check(worktree_root: Path, provider: str) -> dict[str, Any]:
    """Whether every file assemble writes for `provider` holds what it would write now (`assemble
    --check`, for CI); writes nothing. ASSEMBLY_STALE names each file that does not and why; a
    git merge left in the instructions file is stale wherever it is. A file assemble itself
    would refuse (damaged markers, a symlink) is refused with that code."""
    wanted = _wanted(worktree_root, provider)
    layout = wanted.layout
    stale: list[dict[str, str]] = []
    checked: list[str] = []
    if wanted.block_link is None:
        checked.append(layout.instructions_file)
        why = _instructions_staleness(worktree_root, layout.instructions_file, wanted.block)
        if why:
            stale.append({"path": layout.instructions_file, "why": why})
    for skill in [] if wanted.skills_link else wanted.skills:
        path = layout.skill_path(skill.name)
        checked.append(path)
        current = safe_write.read_file(worktree_root, path)
        if current is None:
            stale.append({"path": path, "why": "missing"})
        elif current != skill.data:
            stale.append({"path": path, "why": f"differs from {skill.path}"})
    if stale:
        named = "; ".join(f"{item['path']} ({item['why']})" for item in stale)
        are = "is" if len(stale) == 1 else "are"
        raise errors.TeamloreError(
            errors.ASSEMBLY_STALE,
            f"{len(stale)} assembled {'file' if len(stale) == 1 else 'files'} {are} not what "
            f"`teamlore memory assemble -p {provider}` writes now: {named}",
            provider=provider,
            stale=stale,
        ).advising(f"Run `teamlore memory assemble -p {provider}`, then commit what it wrote.")
    return {**_about(provider, wanted), "checked": checked, "stale": []}


def _instructions_staleness(root: Path, name: str, block: str) -> str | None:
    """Why the instructions file is not what assemble writes now; None when it is."""
    original, text = _read_instructions(root, name)
    if original is None:
        return "missing"
    regions = conflict_regions(text)
    if regions:
        spans = (f"{_line_at(text, start)}-{_line_at(text, end - 1)}" for start, end in regions)
        return f"an unresolved git merge on lines {', '.join(spans)}"
    updated, _ = _spliced(text, block, file_name=name, repair=False)
    if updated == original:
        return None
    if not _markers(text):
        return "no managed block"
    return "its managed block differs from the memory tree"


def _line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
