"""The Skill projection of `memory assemble`: each team Skill's folder copied to the provider's
skill folder (`.claude/skills/<name>/`, `.agents/skills/<name>/`), guarded against hand edits.

What is copied: SKILL.md and every other regular file of the Skill's source folder
(`scripts/check.sh`, `references/policy.md`), which SKILL.md may tell the agent to run or read;
each passes the lint gate as text (a binary one, `references/diagram.png`, is copied byte for
byte unlinted), a symlink or other non-file in it refuses (docs/assemble.md, "Files beside
SKILL.md").

Whose a copy is: a private manifest records the digest of every file this machine last wrote
(plus the managed block's, for `memory.block_owner`); a copy whose bytes are neither the source
nor that record is teamlore's all the same when git holds it as assemble writes it (the source as
HEAD or a stopped merge's other side commits it, or git's unresolved merge of two such copies),
else it was edited by hand and assemble refuses (ASSEMBLY_CONFLICT) before writing anything.

Copies whose source left the tree (the Skill or one of its files was removed) are removed when
they are teamlore's by the same tests (the source as git last held it); an edited one is kept
and named, with how to remove it (docs/assemble.md, "Skill projection").
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from teamlore.core import errors, safe_write
from teamlore.core.canonical import sha256_hex
from teamlore.core.paths import ensure_private_dir, read_private_file, write_private_file
from teamlore.core.text.files import conflict_start
from teamlore.memory.skills.source import SourceSkill, require_lint_clean
from teamlore.memory.store.documents import MAX_FILE_BYTES
from teamlore.memory.store.layout import (
    SKILL_FILE_NAME,
    SKILLS_DIR,
    binary_asset,
    skill_folder_files,
)
from teamlore.repo.git import run_git

MANIFEST_FORMAT = "teamlore-skill-assembly@v1"
MANIFEST_DIR = "skill-assembly"
MAX_FOLDER_FILES = 256  # files of one Skill folder, SKILL.md included
# the commit whose changes a stopped merge, rebase or cherry-pick brings in ("theirs")
THEIRS_HEADS = ("MERGE_HEAD", "REBASE_HEAD", "CHERRY_PICK_HEAD")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a Skill's source folder, as assemble copies it."""

    skill: str  # the Skill's name
    relative: str  # inside the Skill folder: "SKILL.md", "scripts/check.sh"
    source: str  # repo-relative
    data: bytes
    executable: bool = False

    @property
    def key(self) -> str:
        """Its name in the manifest: the Skill's name for SKILL.md (as records before bundled
        files were copied name it), `<name>/<relative>` for the others."""
        return self.skill if self.relative == SKILL_FILE_NAME else f"{self.skill}/{self.relative}"


@dataclass(frozen=True, slots=True)
class Copy:
    """One file of the projection: the source file, where it goes, and what is there now."""

    file: SkillFile
    path: str
    current: bytes | None

    @property
    def needs_write(self) -> bool:
        return self.current != self.file.data


@dataclass(frozen=True, slots=True)
class Orphan:
    """A copy whose source is no longer in the tree; `removable` when it is teamlore's."""

    path: str
    current: bytes
    removable: bool


@dataclass(slots=True)
class Manifest:
    """What this machine's assemble last wrote: each copied file's digest, by `SkillFile.key`,
    and the managed block's digest (None: not recorded)."""

    files: dict[str, str] = field(default_factory=dict)
    block: str | None = None


# --- the source folders ---------------------------------------------------------------------


def skill_files(root: Path, skills: list[SourceSkill]) -> list[SkillFile]:
    """Every file of every Skill folder: SKILL.md, then the others by path."""
    out: list[SkillFile] = []
    for skill in skills:
        out.append(SkillFile(skill.name, SKILL_FILE_NAME, skill.path, skill.data))
        out.extend(_bundled(root, skill))
    return out


def _bundled(root: Path, skill: SourceSkill) -> list[SkillFile]:
    folder = skill.path.rsplit("/", 1)[0]
    found: list[SkillFile] = []
    with ExitStack() as stack:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        stack.callback(os.close, fd)
        for part in folder.split("/"):
            fd = os.open(part, _DIR_FLAGS, dir_fd=fd)  # the tree reader refused links already
            stack.callback(os.close, fd)
        for dir_fd, name, path in skill_folder_files(fd, folder):
            mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
            if not stat.S_ISREG(mode):
                what = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
                raise errors.TeamloreError(
                    errors.UNSAFE_PATH, f"{path}: {what} (a Skill folder holds files)", path=path
                )
            if len(found) + 1 >= MAX_FOLDER_FILES:
                raise errors.TeamloreError(
                    errors.MEMORY_FILE_INVALID,
                    f"{folder} holds more than {MAX_FOLDER_FILES} files",
                    path=folder,
                )
            data = safe_write.read_at(dir_fd, name, path, MAX_FILE_BYTES) or b""
            if not binary_asset(data):  # an image, a PDF: byte for byte, no text to lint
                require_lint_clean(data, path=path, kind="text")
            relative = path[len(folder) + 1 :]
            found.append(SkillFile(skill.name, relative, path, data, bool(mode & 0o111)))
    return found


# --- the manifest ---------------------------------------------------------------------------


def manifest_path(home: Path, worktree_key: str, provider: str) -> Path:
    return ensure_private_dir(home / MANIFEST_DIR / worktree_key) / f"{provider}.json"


def load_manifest(path: Path, provider: str) -> Manifest:
    try:
        raw = read_private_file(path)
    except FileNotFoundError:
        return Manifest()
    try:
        document = orjson.loads(raw)
        files = document["files"]
        block = document.get("block")
        valid = (
            document.get("format") == MANIFEST_FORMAT
            and document.get("provider") == provider
            and isinstance(files, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
            and (block is None or isinstance(block, str))
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        valid = False
    if not valid:
        raise errors.TeamloreError(
            errors.ASSEMBLY_STATE_INVALID,
            f"the {provider} Skill assembly record is corrupt; delete it to start over",
        )
    return Manifest(dict(files), block)


def save_manifest(path: Path, provider: str, manifest: Manifest) -> None:
    document: dict[str, object] = {
        "format": MANIFEST_FORMAT,
        "provider": provider,
        "files": dict(sorted(manifest.files.items())),
    }
    if manifest.block is not None:
        document["block"] = manifest.block
    write_private_file(path, orjson.dumps(document) + b"\n")


# --- planning the copies --------------------------------------------------------------------


def plan_copies(
    root: Path, skills_dir: str, files: list[SkillFile], manifest: Manifest
) -> list[Copy]:
    """What to write; refuses (before anything is written) when a copy was edited."""
    plan, unknown = [], []
    for file in files:
        path = f"{skills_dir}/{file.skill}/{file.relative}"
        current = safe_write.read_file(root, path)
        item = Copy(file, path, current)
        if (
            item.needs_write
            and current is not None
            and sha256_hex(current) != manifest.files.get(file.key)
        ):
            unknown.append(item)
        plan.append(item)
    versions = git_versions(root, [(i.file.source, i.path) for i in unknown])
    edited = [item.path for item in unknown if not made_by_teamlore(item, versions)]
    if edited:
        raise errors.TeamloreError(
            errors.ASSEMBLY_CONFLICT,
            f"{', '.join(edited)} {'differs' if len(edited) == 1 else 'differ'} from what"
            " teamlore last wrote; nothing was changed",
            paths=edited,
        ).advising(
            "Move your edit into the Skill's folder under .threadshare/memory/skills (and through "
            "review), or delete the copy, then assemble again."
        )
    return plan


def made_by_teamlore(item: Copy, versions: dict[str, bytes]) -> bool:
    """Whether a copy this machine's manifest does not know (it records only what this machine
    wrote last) is teamlore's all the same, by what git holds (docs/assemble.md, "Skill
    projection"): its bytes are the source as committed at HEAD or in the commit a stopped merge
    brings in (a checkout or a pull brought a copy assembled on another branch or by a
    teammate), or it is git's unresolved merge of two such copies, markers untouched."""
    source = item.file.source
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


def git_versions(root: Path, pairs: list[tuple[str, str]]) -> dict[str, bytes]:
    """What `made_by_teamlore` compares, for (source, copy) pairs: each source at HEAD and at
    each of `THEIRS_HEADS`, each copy's two sides of an unresolved merge (index stages 2 and
    3), by revision (`HEAD:<path>`, `:2:<path>`)."""
    revisions = [
        revision
        for source, copy in pairs
        for revision in (
            *(f"{head}:{source}" for head in ("HEAD", *THEIRS_HEADS)),
            f":2:{copy}",
            f":3:{copy}",
        )
    ]
    return cat_blobs(root, revisions)


def cat_blobs(root: Path, revisions: list[str]) -> dict[str, bytes]:
    """The blobs `revisions` name, read in one `git cat-file --batch`; those git does not have
    are left out, and all of them outside git or when git cannot tell."""
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


# --- copies whose source is gone ------------------------------------------------------------


def orphans(
    root: Path, skills_dir: str, files: list[SkillFile], manifest: Manifest
) -> list[Orphan]:
    """The files in the provider's skill folder that assemble copied from a source that is no
    longer in the tree. A copy is known as assemble's by this machine's manifest or by git
    (its source path was tracked); it is `removable` when its bytes are what assemble wrote:
    the manifest's digest, or the source as HEAD holds it (a `git rm` not committed yet) or as
    it was before the commit that removed it. A Skill folder teamlore never wrote (a person's
    own Skill) is not one."""
    wanted = {f"{skills_dir}/{f.skill}/{f.relative}" for f in files}
    found: list[Orphan] = []
    unknown: list[tuple[str, str, str, bytes]] = []  # (manifest key, source, copy, bytes)
    for path in _copies_on_disk(root, skills_dir):
        if path in wanted:
            continue
        name, _, relative = path[len(skills_dir) + 1 :].partition("/")
        key = name if relative == SKILL_FILE_NAME else f"{name}/{relative}"
        current = safe_write.read_file(root, path)
        if current is None:
            continue
        if manifest.files.get(key) == sha256_hex(current):
            found.append(Orphan(path, current, True))
        else:
            unknown.append((key, f"{SKILLS_DIR}/{name}/{relative}", path, current))
    last = _before_removal(root, [source for _, source, _, _ in unknown]) if unknown else {}
    for key, source, path, current in unknown:
        versions = last.get(source)
        if versions is None and key not in manifest.files:
            continue  # never a source git or this machine knew: a person's own file
        found.append(Orphan(path, current, _lf(current) in (versions or [])))
    return sorted(found, key=lambda orphan: orphan.path)


def _before_removal(root: Path, sources: list[str]) -> dict[str, list[bytes]]:
    """For each source path git tracked: its bytes at HEAD (when the removal is not committed
    yet) and just before the last commit that removed it, LF line ends. One history walk for
    all of them, and none when HEAD holds every one: a person's own Skill folder costs no walk
    of its own (its source path was never in git)."""
    at_head = cat_blobs(root, [f"HEAD:{source}" for source in sources])
    gone = [source for source in sources if f"HEAD:{source}" not in at_head]
    commits = _removals(root, set(gone)) if gone else {}
    revisions = [
        revision
        for source, commit in commits.items()
        for revision in (f"{commit}^:{source}", f"{commit}:{source}")
    ]
    blobs = {**at_head, **cat_blobs(root, revisions)}
    out: dict[str, list[bytes]] = {}
    for source in sources:
        commit = commits.get(source)
        candidates = [f"HEAD:{source}"]
        if commit is not None:
            candidates += [f"{commit}^:{source}", f"{commit}:{source}"]
        if f"HEAD:{source}" in blobs or commit is not None:
            out[source] = [_lf(blobs[r]) for r in candidates if r in blobs]
    return out


def _removals(root: Path, wanted: set[str]) -> dict[str, str]:
    """The last commit that removed each of `wanted` (source paths), from one walk of HEAD's
    history limited to the Skills folder: `git log --diff-filter=D` names only removed paths."""
    try:
        log = ["log", "--format=%H", "--name-only", "--no-renames", "--diff-filter=D", "-z"]
        out = run_git([*log, "HEAD", "--", SKILLS_DIR], cwd=root)
    except errors.TeamloreError:  # not a repository, no commit yet, an output past its bound
        return {}
    found: dict[str, str] = {}
    commit = ""
    for item in out.decode("utf-8", "surrogateescape").split("\0"):  # `<H>\0\n<path>\0...`
        name = item.lstrip("\n")
        if not name.startswith(f"{SKILLS_DIR}/"):
            commit = name  # newest first: the first commit naming a path removed it last
        elif name in wanted and name not in found:
            found[name] = commit
    return found


def _copies_on_disk(root: Path, skills_dir: str) -> list[str]:
    """Every regular file below the provider's skill folder (repo-relative), no link followed;
    none when the folder is missing or reached through a link."""
    top = root / skills_dir
    if any(p.is_symlink() for p in (top, *top.parents) if root in p.parents) or not top.is_dir():
        return []
    found: list[str] = []
    for folder, dirs, names in os.walk(top, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not (Path(folder) / d).is_symlink())
        for name in sorted(names):
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                found.append(path.relative_to(root).as_posix())
    return found


def _holding(data: bytes) -> Callable[[bytes | None], bool]:
    return lambda current: current == data


def remove_orphans(root: Path, skills_dir: str, removable: list[Orphan]) -> None:
    """Delete each copy unless it changed since it was read (then refuse), and the folders
    that leaves empty."""
    for orphan in removable:
        try:
            safe_write.delete_file(root, orphan.path, expect=_holding(orphan.current))
        except safe_write.ExpectationFailed:
            raise errors.TeamloreError(
                errors.ASSEMBLY_CONFLICT,
                f"{orphan.path} changed while assemble ran; run assemble again",
                path=orphan.path,
            ) from None
        folder = Path(orphan.path).parent
        while folder.as_posix() != skills_dir and folder != folder.parent:
            try:
                (root / folder).rmdir()
            except OSError:  # not empty (or not ours to judge): stop there
                break
            folder = folder.parent
