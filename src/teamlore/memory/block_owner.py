"""Whose managed block CLAUDE.md / AGENTS.md holds: teamlore's, which `memory assemble` replaces,
or one edited by hand since teamlore wrote it, which assemble refuses (ASSEMBLY_CONFLICT, nothing
changed) and `--check` names (docs/assemble.md, "Hand edits inside the block").

The block carries no mark of its own (it stays the block the reference product writes), so whose
it is is told from what assemble would have written. It is teamlore's when it is:

- what assemble writes now (nothing to do), or empty (BEGIN and END with only blank lines
  between: nothing in it to lose);
- what this machine's assemble last wrote (its digest, in the private manifest);
- laid out as assemble lays a block out, every part of it (the doctrine, each scene line, each
  Skill line) rendered from a version of its file that git holds: the working tree, HEAD, a
  stopped merge's other side, or one of the last `RECENT_COMMITS` commits that changed the
  doctrine, a scene or a Skill, under the path it had there (a scene since renamed or deleted,
  or named as the scene-name rule no longer allows, `scenes/db_migrations.md`, included). A
  teammate's fresh clone after a pull holds a block assembled from files git has, maybe a few
  promotions ago: merely stale, it is rewritten;
- laid out as a released teamlore laid its block out (`released_forms`: 0.1.0 wrote no search
  hint), every part rendered as that release rendered it from such a version of its file: the
  block an upgrade finds, or a teammate not yet upgraded wrote, is rewritten too;
- git's unresolved merge of two blocks (its conflict markers inside the block): it goes with
  the block, as the splice rules say.

Anything else was edited by hand (committed or not): a line that no version of its file renders
to, or a block laid out otherwise. Only each line is checked, not the list as a whole: a known
line removed, moved or repeated still passes as teamlore's (and is rewritten).

A release that changes how the block is laid out or how a line is rendered adds the layout it
replaces to `released_forms` (a frozen `BlockForm`, not the old renderer), with a fixture of a
block that release wrote (tests/memory/data/assembled_by_0_1_0/).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from teamlore.core import errors
from teamlore.core.canonical import sha256_hex
from teamlore.core.text.files import conflict_start
from teamlore.memory.skill_copies import THEIRS_HEADS, cat_blobs
from teamlore.memory.store.documents import load_doctrine, load_scene, load_skill
from teamlore.memory.store.frontmatter import MemoryFormatError
from teamlore.memory.store.layout import (
    DOCTRINE_FILE,
    MANAGED_BLOCK_BEGIN,
    MANAGED_BLOCK_END,
    SCENES_DIR,
    SKILL_FILE_NAME,
    SKILLS_DIR,
    document_kind,
)
from teamlore.memory.store.tree_reader import MemoryFile, MemoryFiles, read_memory_files
from teamlore.repo.git import run_git

RECENT_COMMITS = 16
_INPUTS = (DOCTRINE_FILE, SCENES_DIR, SKILLS_DIR)  # what the block is rendered from
_BLOCK_KINDS = ("doctrine", "scene", "skill")
_ANY_SCENE_NAME = "scene"  # a name the rule allows, to read a misnamed scene's META by
_OMITTED = re.compile(r"- _\d+ additional scene\(s\) omitted\._")


@dataclass(frozen=True, slots=True)
class BlockForm:
    """How assemble lays a block out (memory/assemble.py renders with this very form; a
    released teamlore's, `released_forms`): `head`, the doctrine's body, `hint`, then optionally
    `scenes_head` and scene lines, optionally `skills_head` and Skill lines, then `tail`."""

    head: str
    hint: str
    scenes_head: str
    skills_head: str
    tail: str
    doctrine: Callable[[str | None], str]  # the doctrine's text (None: none) → its body
    scene: Callable[[str, int, str], str]  # name, heat, summary → its line
    skill: Callable[[str, str], str]  # name, description → its line


_Parts = tuple[str, list[str], list[str]]  # doctrine body, scene lines, Skill lines


@dataclass(slots=True)
class _Known:
    """The parts git (or the working tree) gives a block."""

    doctrines: set[str]
    scenes: set[str]
    skills: set[str]


@dataclass(slots=True)
class _Reading:
    """The block read as `form` lays a block out, and the parts `form` renders that are known
    so far."""

    form: BlockForm
    parts: list[_Parts]  # each way the block reads in `form` (none: not its layout)
    known: _Known

    def matches(self) -> bool:
        return any(_made_of(parts, self.known) for parts in self.parts)


def released_forms(skills_dir: str) -> tuple[BlockForm, ...]:
    """How released teamlores laid out a block that this one lays out otherwise, frozen as
    they wrote it (`skills_dir`: the provider's Skill folder). 0.1.0's is the reference
    product's layout: no search hint, and each document's text copied as it is (0.1.0 defused
    no marker text)."""
    return (
        BlockForm(
            head=f"{MANAGED_BLOCK_BEGIN}\n\n## Team memory\n\n",
            hint="",
            scenes_head="\n\n### Scenes\n\n",
            skills_head="\n\n### Skills\n\n",
            tail=f"\n\n{MANAGED_BLOCK_END}",
            doctrine=lambda text: text.strip() if text else "_No approved team doctrine yet._",
            scene=lambda name, heat, summary: (
                f"- {SCENES_DIR}/{name}.md (heat {heat}) \u2014 {summary}"
            ),
            skill=lambda name, description: (
                f"- {skills_dir}/{name}/{SKILL_FILE_NAME} \u2014 {description.strip()}"
            ),
        ),
    )


def block_digest(block: str) -> str:
    """What the manifest records of a block this machine wrote (LF line ends)."""
    return sha256_hex(block.replace("\r\n", "\n").encode("utf-8"))


def is_teamlores(
    root: Path,
    block: str,
    *,
    wanted: str,
    recorded: str | None,
    form: BlockForm,
    released: tuple[BlockForm, ...] = (),
) -> bool:
    """Whether `block` (markers included, as the instructions file holds it) is one assemble
    wrote, `wanted` being what it writes now in `form`, or one a release wrote in a form of
    `released`."""
    block = block.replace("\r\n", "\n")
    inside = block.removeprefix(MANAGED_BLOCK_BEGIN).removesuffix(MANAGED_BLOCK_END)
    if block == wanted or not inside.strip() or conflict_start(block) is not None:
        return True
    if recorded is not None and block_digest(block) == recorded:
        return True
    now = _readings(wanted, form)
    if not now:
        return False
    body, scenes, skills = now[-1]  # the working tree's parts, as this version renders them
    current = _Known({body, form.doctrine(None)}, set(scenes), set(skills))
    readings = [_Reading(form, _readings(block, form), current)]
    for past in released:
        placeholder = _Known({past.doctrine(None)}, set(), set())
        readings.append(_Reading(past, _readings(block, past), placeholder))
    readings = [reading for reading in readings if reading.parts]
    if any(reading.matches() for reading in readings):
        return True
    for tree in git_trees(root):
        _learn(readings, tree)
        if any(reading.matches() for reading in readings):
            return True
    # a released form has not seen the working tree yet: a teammate not yet upgraded who
    # assembled files not committed (read last: git is the usual match)
    earlier = [reading for reading in readings if reading.form is not form]
    if not earlier:
        return False
    try:
        _learn(earlier, read_memory_files(root))
    except errors.TeamloreError:
        return False
    return any(reading.matches() for reading in earlier)


def is_shallow(root: Path) -> bool:
    """Whether `root` is a shallow clone (`git clone --depth 1`, CI's usual checkout): its
    history may not reach the commit a block was assembled from."""
    try:
        out = run_git(["rev-parse", "--is-shallow-repository"], cwd=root)
    except errors.TeamloreError:
        return False
    return out.decode().strip() == "true"


def _readings(block: str, form: BlockForm) -> list[_Parts]:
    """Each way `block` reads as laid out by `form`, one per place its doctrine body may end
    (`hint` then a list's heading or the tail: a doctrine may hold a `### Scenes` heading of
    its own, and a form without a hint has nothing else to end it); none when its layout is
    not `form`'s."""
    if len(block) < len(form.head) + len(form.tail):
        return []
    if not block.startswith(form.head) or not block.endswith(form.tail):
        return []
    middle = block[len(form.head) : len(block) - len(form.tail)]
    ends = {len(middle), *_found(middle, form.scenes_head), *_found(middle, form.skills_head)}
    readings = []
    for end in sorted(ends):
        start = end - len(form.hint)
        if start < 0 or middle[start:end] != form.hint:
            continue
        lists = _lists(middle[end:], form)
        if lists is not None:
            readings.append((middle[:start], *lists))
    return readings


def _found(text: str, sub: str) -> list[int]:
    """Where `sub` starts in `text`, each time."""
    found, at = [], text.find(sub)
    while at != -1:
        found.append(at)
        at = text.find(sub, at + 1)
    return found


def _lists(rest: str, form: BlockForm) -> tuple[list[str], list[str]] | None:
    """(scene lines, Skill lines) of what follows the doctrine body and the hint; None when
    it is not laid out as `form` lays them out."""
    scenes: list[str] = []
    skills: list[str] = []
    if rest.startswith(form.scenes_head):
        listed, has_skills, after = rest[len(form.scenes_head) :].partition(form.skills_head)
        scenes = listed.split("\n")
        rest = form.skills_head + after if has_skills else ""
    if rest.startswith(form.skills_head):
        skills = rest[len(form.skills_head) :].split("\n")
        rest = ""
    return None if rest else (scenes, skills)


def _made_of(parts: _Parts, known: _Known) -> bool:
    body, scenes, skills = parts
    listed = scenes[:-1] if scenes and _OMITTED.fullmatch(scenes[-1]) else scenes
    return (
        body in known.doctrines
        and all(line in known.scenes for line in listed)
        and all(line in known.skills for line in skills)
    )


def _learn(readings: list[_Reading], tree: MemoryFiles) -> None:
    """Add the parts each file of `tree` renders to in each reading's form (a file that does
    not load adds none)."""
    for file in tree.files:
        try:
            if file.kind == "doctrine":
                text = load_doctrine(file.data, file.path).text
                for r in readings:
                    r.known.doctrines.add(r.form.doctrine(text))
            elif file.kind == "scene":
                name, heat, summary = _scene_parts(file)
                for r in readings:
                    r.known.scenes.add(r.form.scene(name, heat, summary))
            elif file.kind == "skill":
                skill = load_skill(file.data, file.path)
                for r in readings:
                    r.known.skills.add(r.form.skill(skill.name, skill.description))
        except (errors.TeamloreError, MemoryFormatError, ValueError):
            continue


def _scene_parts(file: MemoryFile) -> tuple[str, int, str]:
    """(name, heat, summary) a scene file renders to. A file named as scenes no longer may be
    (`scenes/db_migrations.md`: `_`, capitals) is read all the same: a teamlore from before the
    scene-name rule (0.1.0 too) listed it under that name, and the block it wrote stays
    teamlore's once the scene is renamed (`git mv`), the old name then only in git's history."""
    try:
        scene = load_scene(file.data, file.path)
    except MemoryFormatError as exc:
        if exc.reason != "slug.scene-name":
            raise
        scene = load_scene(file.data, f"{SCENES_DIR}/{_ANY_SCENE_NAME}.md")
        return file.path.rsplit("/", 1)[-1].removesuffix(".md"), scene.heat, scene.summary
    return scene.name, scene.heat, scene.summary


def git_trees(root: Path) -> Iterator[MemoryFiles]:
    """The block's inputs (doctrine, scenes, Skills) as git holds them: at HEAD, at each of
    `THEIRS_HEADS`, then at each of the last `RECENT_COMMITS` commits that changed them; read
    lazily (HEAD is the usual match), each version of a file once: once per path, as a scene is
    named by its path (a scene renamed since keeps its content, and its block line its old
    name)."""
    try:
        heads = run_git(
            ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
            cwd=root,
            stdin="".join(f"{head}\n" for head in ("HEAD", *THEIRS_HEADS)).encode(),
        ).decode()
        commits = [line.split()[0] for line in heads.splitlines() if line.endswith(" commit")]
        if commits:
            log = run_git(
                ["log", f"-n{RECENT_COMMITS}", "--format=%H", commits[0], "--", *_INPUTS],
                cwd=root,
            )
            commits += log.decode().split()
    except errors.TeamloreError:  # not a repository, no commit yet, git missing
        return
    seen: set[tuple[str, str]] = set()
    for commit in dict.fromkeys(commits):
        try:
            listing = [found for found in _listing(root, commit) if found not in seen]
        except errors.TeamloreError:
            continue
        seen.update(listing)
        blobs = cat_blobs(root, [oid for _, oid in listing])
        files = tuple(
            MemoryFile(path, document_kind(path), blobs[oid])  # type: ignore[arg-type]
            for path, oid in listing
            if oid in blobs
        )
        if files:
            yield MemoryFiles(files, ())


def _listing(root: Path, commit: str) -> tuple[tuple[str, str], ...]:
    """(path, blob id) of each doctrine, scene and SKILL.md file at `commit`."""
    out = run_git(["ls-tree", "-r", "-z", "--full-tree", commit, "--", *_INPUTS], cwd=root)
    found = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.decode("utf-8", "replace").partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob" and document_kind(path) in _BLOCK_KINDS:
            found.append((path, parts[2]))
    return tuple(found)
