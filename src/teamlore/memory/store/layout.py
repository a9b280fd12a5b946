"""Where team memory lives inside a worktree, and `memory init`.

    .threadshare/memory/
      index.json                skeleton, written once by init, never rewritten
      consolidated.json         the entries the scenes and doctrine cover (written by promote)
      doctrine.md               L3 (optional)
      entries/<id>.md           L1
      scenes/<name>.md          L2
      skills/<name>/SKILL.md    Skills

Paths handed to other modules are repo-relative POSIX strings. Every directory under the worktree
root is opened with O_NOFOLLOW: a symlinked `.threadshare`, `memory`, sub-directory or `index.json`
is refused with UNSAFE_PATH, and the message names only the repo-relative path.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Literal, NamedTuple, TypeVar

from teamlore.core.errors import UNSAFE_PATH, TeamloreError
from teamlore.memory.store.slugs import validate_slug

MEMORY_ROOT = ".threadshare/memory"
ENTRIES_DIR = f"{MEMORY_ROOT}/entries"
SCENES_DIR = f"{MEMORY_ROOT}/scenes"
SKILLS_DIR = f"{MEMORY_ROOT}/skills"
DOCTRINE_FILE = f"{MEMORY_ROOT}/doctrine.md"
INDEX_FILE = f"{MEMORY_ROOT}/index.json"
CONSOLIDATED_FILE = f"{MEMORY_ROOT}/consolidated.json"
SKILL_FILE_NAME = "SKILL.md"

# The managed block `memory assemble` writes into CLAUDE.md / AGENTS.md (docs/assemble.md).
MANAGED_BLOCK_BEGIN = "<!-- BEGIN THREADSHARE MEMORY (generated; do not edit by hand) -->"
MANAGED_BLOCK_END = "<!-- END THREADSHARE MEMORY -->"
# Marker text in any spelling a reader could take for ours (case, spaces): memory documents may
# not hold it (lint `format.managed-block-marker`), and assemble defuses it in what it copies.
MANAGED_MARKER_TEXT = re.compile(r"<!--\s*(?:BEGIN|END)\s+THREADSHARE\s+MEMORY", re.IGNORECASE)

_ROOT_PARTS = (".threadshare", "memory")
_SUBDIRS = ("entries", "scenes", "skills")
_O_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def memory_root(worktree_root: str | os.PathLike[str]) -> Path:
    return Path(worktree_root) / MEMORY_ROOT


def entry_path(entry_id: str) -> str:
    return f"{ENTRIES_DIR}/{validate_slug(entry_id)}.md"


def scene_path(name: str) -> str:
    if not name or "/" in name or "\\" in name or name.startswith(".") or "\x00" in name:
        raise ValueError(f"scene name {name!r} is not a plain file name")
    return f"{SCENES_DIR}/{name}.md"


def skill_path(name: str) -> str:
    return f"{SKILLS_DIR}/{validate_slug(name, max_length=64)}/{SKILL_FILE_NAME}"


def document_kind(repo_relative: str) -> str | None:
    """ "entry" | "scene" | "doctrine" | "skill" | "index" | "consolidated" for a memory file
    path, else None."""
    parts = repo_relative.split("/")
    if parts[:2] != list(_ROOT_PARTS):
        return None
    rest = parts[2:]
    if rest == ["index.json"]:
        return "index"
    if rest == ["consolidated.json"]:
        return "consolidated"
    if rest == ["doctrine.md"]:
        return "doctrine"
    if len(rest) == 2 and rest[0] == "entries" and rest[1].endswith(".md"):
        return "entry"
    if len(rest) == 2 and rest[0] == "scenes" and rest[1].endswith(".md"):
        return "scene"
    if len(rest) == 3 and rest[0] == "skills" and rest[2] == SKILL_FILE_NAME:
        return "skill"
    return None


def _unsafe(relative: str, why: str) -> TeamloreError:
    return TeamloreError(UNSAFE_PATH, f"{relative}: {why}", path=relative)


def open_dir_nofollow(parent_fd: int, name: str, relative: str) -> int:
    """Open `name` under `parent_fd` as a directory without following a symlink."""
    try:
        return os.open(name, _O_DIR | _O_NOFOLLOW, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise _unsafe(relative, "symbolic links are not allowed in the memory tree") from None
        if exc.errno == errno.ENOTDIR:
            raise _unsafe(relative, what_stands_there(parent_fd, name)) from None
        raise


def binary_asset(data: bytes) -> bool:
    """Whether a file beside SKILL.md is binary (an image, a PDF): a NUL byte in its first
    8000 bytes, git's own test. It is copied byte for byte without the text lint, which it
    cannot hold text for; a file without a NUL that is not UTF-8 is still linted, and refused
    (docs/assemble.md, "Files beside SKILL.md")."""
    return b"\0" in data[:8000]


def skill_folder_files(skill_fd: int, skill_rel: str) -> Iterator[tuple[int, str, str]]:
    """Each entry of a Skill folder other than its SKILL.md, depth first by name, as (the fd
    of its folder, its name, its repo-relative path): the files `memory assemble` copies beside
    SKILL.md and lint scans (docs/assemble.md, "Files beside SKILL.md"). Sub-folders are walked
    (never through a symlink); a symlink or other non-file is yielded for the caller to refuse;
    names starting with `.` (.DS_Store, editor swap files) are skipped."""
    yield from _folder_files(skill_fd, skill_rel, top=True)


def _folder_files(dir_fd: int, relative: str, *, top: bool) -> Iterator[tuple[int, str, str]]:
    for name in sorted(os.listdir(dir_fd)):
        if name.startswith(".") or (top and name == SKILL_FILE_NAME):
            continue
        path = f"{relative}/{name}"
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        if not stat.S_ISDIR(mode):
            yield dir_fd, name, path
            continue
        fd = open_dir_nofollow(dir_fd, name, path)
        try:
            yield from _folder_files(fd, path, top=False)
        finally:
            os.close(fd)


def what_stands_there(parent_fd: int, name: str) -> str:
    """What stands where a folder of the memory tree belongs, said so a person can fix it."""
    try:
        mode = os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode
    except OSError:
        return "not a directory"
    if stat.S_ISLNK(mode):
        return "symbolic links are not allowed in the memory tree"
    if stat.S_ISREG(mode):
        return f"`{name}` is a file, not a folder; move it aside, then run `teamlore memory init`"
    return f"`{name}` is not a folder"


def _ensure_dir(parent_fd: int, name: str, relative: str) -> tuple[int, bool]:
    created = False
    try:
        os.mkdir(name, 0o755, dir_fd=parent_fd)
        created = True
    except FileExistsError:
        pass
    return open_dir_nofollow(parent_fd, name, relative), created


@contextlib.contextmanager
def open_memory_root(
    worktree_root: str | os.PathLike[str], *, create: bool = False
) -> Iterator[int]:
    """A directory fd of `.threadshare/memory`, reached without following symlinks."""
    root_fd = os.open(os.fspath(worktree_root), _O_DIR)
    fds = [root_fd]
    try:
        relative = ""
        for part in _ROOT_PARTS:
            relative = f"{relative}/{part}".lstrip("/")
            if create:
                fd, _ = _ensure_dir(fds[-1], part, relative)
            else:
                fd = open_dir_nofollow(fds[-1], part, relative)
            fds.append(fd)
        yield fds[-1]
    finally:
        for fd in reversed(fds):
            os.close(fd)


def _write_index_once(memory_fd: int) -> bool:
    """Create index.json atomically and only if absent (link(2) never replaces a file)."""
    try:
        existing = os.stat("index.json", dir_fd=memory_fd, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    if existing is not None:
        if stat.S_ISLNK(existing.st_mode):
            raise _unsafe(INDEX_FILE, "symbolic links are not allowed in the memory tree")
        if not stat.S_ISREG(existing.st_mode):
            raise _unsafe(INDEX_FILE, "not a regular file")
        return False
    # the documents' models load only when a tree is created: readers of the layout (a
    # session-start hook) never need them (docs/architecture.md, "A short CLI process")
    import secrets  # only a write needs a temporary name

    from teamlore.memory.store.documents import dump_index

    temp = f".index.json.{secrets.token_hex(8)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, 0o644, dir_fd=memory_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(dump_index())
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temp, "index.json", src_dir_fd=memory_fd, dst_dir_fd=memory_fd)
        except FileExistsError:
            return False
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=memory_fd)


# An empty file that keeps an empty folder in git (git tracks files, not folders). Dot-named,
# so the projection and lint never read it as a memory document; a README.md would be one.
KEEP_FILE = ".gitkeep"


def skeleton_files() -> list[str]:
    """The repo-relative files `init_tree` writes: each folder's `.gitkeep`, then index.json."""
    return [*(f"{MEMORY_ROOT}/{name}/{KEEP_FILE}" for name in _SUBDIRS), INDEX_FILE]


def init_tree(worktree_root: str | os.PathLike[str]) -> list[str]:
    """Create the memory tree; return the repo-relative paths created (each folder, then its
    `.gitkeep`, then index.json). Idempotent: a second call returns []. A tree made before
    `.gitkeep` existed gets them. Refuses symlinked components."""
    created: list[str] = []
    with open_memory_root(worktree_root, create=True) as memory_fd:
        for name in _SUBDIRS:
            fd, made = _ensure_dir(memory_fd, name, f"{MEMORY_ROOT}/{name}")
            try:
                if made:
                    created.append(f"{MEMORY_ROOT}/{name}")
                if _write_keep_file(fd):
                    created.append(f"{MEMORY_ROOT}/{name}/{KEEP_FILE}")
            finally:
                os.close(fd)
        if _write_index_once(memory_fd):
            created.append(INDEX_FILE)
        os.fsync(memory_fd)
    return created


def _write_keep_file(dir_fd: int) -> bool:
    """Create an empty `.gitkeep` in the folder unless one is there (never follows a link)."""
    try:
        fd = os.open(
            KEEP_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, 0o644, dir_fd=dir_fd
        )
    except FileExistsError:
        return False
    os.fsync(fd)
    os.close(fd)
    return True


# --- what the tree may hold ------------------------------------------------------------------
# One rule for `memory lint` (and the lint summary of `memory status`), and for the reader behind
# search, status, assemble, synthesize and recall (memory/store/tree_reader.py):
#
# - a name starting with `.` (`.gitkeep`, an editor's swap file) is not looked at;
# - in `entries/` and `scenes/` every `<name>.md` is a memory document and must be a regular
#   file; in `skills/` every folder is a Skill and must hold `SKILL.md`; `entries`, `scenes` and
#   `skills` are folders, `doctrine.md` a regular file. What breaks this is refused by the
#   readers (a `TreeProblem`'s `code`) and blocks lint (its `rule`), in the same words (`why`),
#   with what to do (`fix`);
# - anything else (`scenes/notes.txt`, a folder `entries/old/`, a `skills/README.md`) is a stray:
#   no agent reads it, lint warns (`STRAY_RULE`) and the readers leave it alone, so it never makes
#   a search partial or refuses an assemble;
# - a symbolic link is never followed, and a file over `MAX_DOCUMENT_BYTES` (frontmatter.py)
#   is never read.

STRAY_RULE = "tree.unexpected-file"
# why a symbolic link anywhere in the tree is refused (read as nothing: never followed)
SYMLINK_WHY = "symbolic links are not allowed in the memory tree"
_NO_AGENT_READS_IT = "no agent reads it: move it out of the memory folder or delete it"
UNEXPECTED_FILE = _NO_AGENT_READS_IT  # at the memory root


class TreeProblem(NamedTuple):
    """Something the tree must not hold: the reader's diagnostic code, lint's (blocking) rule,
    the words both say, and the `next` of a refusal."""

    code: str
    rule: str
    why: str
    fix: str


NOT_A_FILE = TreeProblem(
    "not-a-file",
    "tree.not-a-file",
    "not a regular file",
    "Make the path the message names a regular file, or move what stands there out of the"
    " memory folder; `teamlore memory lint` checks the tree.",
)
MISSING_SKILL_FILE = TreeProblem(
    "missing-skill-file",
    "tree.missing-skill-file",
    "a Skill folder must hold SKILL.md",
    "Add the folder's SKILL.md, or move the folder out of .threadshare/memory/skills;"
    " `teamlore memory lint` checks the tree.",
)


def not_a_directory(folder: str) -> TreeProblem:
    """`entries`, `scenes` or `skills` is there but not a folder."""
    return TreeProblem(
        "not-a-directory",
        "tree.not-a-directory",
        f"a file stands where the memory keeps its {folder}/ folder",
        "Move the file the message names out of the memory folder, then run `teamlore memory"
        " init`, which makes the folder.",
    )


def too_large(size: int, limit: int | None = None) -> str:
    """What the reader, the format (documents.py) and lint say of a file over its limit (by
    default the format's, frontmatter.MAX_DOCUMENT_BYTES: imported here only when it is said,
    so a session-start hook that looks at the layout does not load the parser)."""
    if limit is None:
        from teamlore.memory.store.frontmatter import MAX_DOCUMENT_BYTES

        limit = MAX_DOCUMENT_BYTES
    return f"file is {size} bytes (at most {limit})"


def skipped(name: str) -> bool:
    """A name nothing in the tree's rule looks at (`.gitkeep`, `.x.md.swp`)."""
    return name.startswith(".")


def stray_in_documents(folder: str) -> str:
    """Why a file or folder in `entries/` or `scenes/` that is not `<name>.md` is a stray."""
    return f"not a memory document (only <name>.md files belong in {folder}/): {_NO_AGENT_READS_IT}"


STRAY_IN_SKILLS = (
    "not a Skill (a Skill is a folder holding SKILL.md): no agent reads it; it may stay, or"
    " move it out of the memory folder"
)


def refusal_fix(code: str) -> str | None:
    """The `next` of a reader's refusal of a file with this diagnostic code (None: the code's
    own)."""
    if code == NOT_A_FILE.code:
        return NOT_A_FILE.fix
    if code == MISSING_SKILL_FILE.code:
        return MISSING_SKILL_FILE.fix
    if code == "not-a-directory":
        return not_a_directory("").fix
    return None


Finding = TypeVar("Finding")


# the rename an entry's `slug.scene-name` advises (lint's `_scene_name_findings`)
_ENTRY_RENAME = re.compile(r"; name it `(?P<meant>[^`]+)` here and in its scene file")


def scene_names_taken(
    files: Sequence[str],
    finding: Callable[[str, Literal["block"], str, str, int], Finding],
    renames: Sequence[tuple[str, int, str]] = (),
) -> dict[tuple[str, str], Finding]:
    """The finding that replaces the `slug.scene-name` one of each scene file among `files`
    whose renamed name (the upgrade's renaming, `scene_name_for`) another scene file has or is
    renamed to (`Release.md` beside `release.md`, both from 0.1.0): renaming it as that finding
    advised merged two scenes without saying so. `slug.scene-name-taken` names the other file
    and asks for a name of its own (CHANGELOG, "Upgrading from 0.1.0"). An entry's
    `slug.scene-name` among `renames` (file, line, message) that advises such a taken name
    says so too, the same rule, rather than advise the merge."""
    # lint's path only: the contracts load pydantic, which memory search's start never needs
    from teamlore.contracts._base import is_scene_name, scene_name_for

    by_name: dict[str, list[str]] = {}
    for path in files:
        file = PurePosixPath(path)
        if str(file.parent) == SCENES_DIR and file.suffix == ".md":
            name = file.stem if is_scene_name(file.stem) else scene_name_for(file.stem)
            by_name.setdefault(name or "", []).append(path)
    taken: dict[tuple[str, str], Finding] = {}
    for name, paths in by_name.items():
        for path in paths if name and len(paths) > 1 else []:
            stem = PurePosixPath(path).stem
            if is_scene_name(stem):
                continue
            others = ", ".join(f"`{p}`" for p in paths if p != path)
            why = (
                f"the file name makes the scene name {stem!r}, which renamed is `{name}`, the "
                f"scene of {others} too: renaming it so would merge two scenes; give it a name "
                f"of its own (`git mv {path} {SCENES_DIR}/<name>.md`) and write `scene: <name>` "
                f"in the entries whose scene is {stem!r}"
            )
            taken[(path, "slug.scene-name")] = finding(
                "slug.scene-name-taken", "block", path, why, 0
            )
    for path, line, message in renames:
        advised = _ENTRY_RENAME.search(message)
        meant = advised["meant"] if advised else ""
        shared = by_name.get(meant, []) if meant else []
        if len(shared) > 1:
            why = (
                f"field `scene`: renamed, it would be `{meant}`, the scene of "
                f"{_listed_files(shared)}: that merges two scenes; give the scene file a name "
                "of its own (its `slug.scene-name-taken` finding) and write that name here"
            )
            taken[(path, "slug.scene-name")] = finding(
                "slug.scene-name-taken", "block", path, why, line
            )
    return taken


def _listed_files(paths: Sequence[str]) -> str:
    return " and ".join(f"`{path}`" for path in paths)
