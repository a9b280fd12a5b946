"""What `org sync` reads of one clone: the memory tree of its HEAD commit, from git.

Only what was committed is reviewed memory (docs/org.md): the working tree's uncommitted edits,
sessions and anything under the state dir are never read. The tree is read with git plumbing
(`rev-parse`, `ls-tree`, `cat-file --batch`) through `repo.git.run_git` (no hooks, no pager, no
textconv), so a clone's checkout state does not matter and a symlink is never followed.

Incremental by git object ids: the memory tree's id decides whether anything changed at all;
each file's blob id decides which files are read again.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from teamlore.core import errors
from teamlore.core.secrets import scrub
from teamlore.memory.store.layout import MEMORY_ROOT, document_kind
from teamlore.memory.store.tree_reader import MAX_FILE_BYTES
from teamlore.repo.git import FolderNotEntered, GitCommandError, run_git, run_git_text
from teamlore.repo.public_identity import public_repository_identity

MAX_FILES = 50_000  # files of one memory tree (the projection's bound)
_REGULAR_MODES = ("100644", "100755")
_SYMLINK_MODE = "120000"
_THREADSHARE = MEMORY_ROOT.partition("/")[0]

# where an indexed commit stands in its clone's history now: HEAD itself; behind HEAD (HEAD has
# moved on since); no longer in HEAD's history (a force-push, a rebase, an amend, another branch)
CommitState = Literal["head", "behind", "not-in-history"]


@dataclass(frozen=True, slots=True)
class TreeFile:
    path: str  # repository-relative: .threadshare/memory/entries/x.md
    kind: str  # entry | scene | doctrine | skill; "other" for what is refused unread
    blob: str  # git blob id
    mode: str
    size: int
    utf8_name: bool = True


@dataclass(frozen=True, slots=True)
class MemoryTree:
    commit: str  # full hash of HEAD
    tree: str | None  # id of HEAD's .threadshare/memory tree; None when HEAD has none
    files: tuple[TreeFile, ...]


class RepositoryGone(Exception):
    """The clone is not there any more, or is no longer a git repository with a HEAD."""

    def __init__(self, why: str, error: errors.ErrorCode = errors.NOT_A_GIT_REPOSITORY) -> None:
        super().__init__(why)
        self.why = why
        self.error = error


def head_state(clone: Path) -> tuple[str, str | None]:
    """(HEAD commit, memory tree id or None), asked of one `git cat-file --batch-check` (the
    no-op sync of many repositories is one git process each). Raises RepositoryGone, also for
    a folder git cannot be started in (mode 000, another account's): its words never say where
    the clone lives (they are stored, and served to a token's holder)."""
    try:
        if not stat.S_ISDIR(os.stat(clone).st_mode):
            raise RepositoryGone(GONE, errors.PATH_NOT_FOUND)
    except (FileNotFoundError, NotADirectoryError):
        raise RepositoryGone(GONE, errors.PATH_NOT_FOUND) from None
    except OSError as exc:  # a folder on its path may not be entered
        denied = exc.errno in (errno.EACCES, errno.EPERM)
        code = errors.PERMISSION_DENIED if denied else errors.NOT_A_GIT_REPOSITORY
        raise RepositoryGone(_unreadable(exc.strerror, denied), code) from None
    try:
        out = run_git(
            ["cat-file", "--batch-check"], cwd=clone, stdin=f"HEAD\nHEAD:{MEMORY_ROOT}\n".encode()
        ).decode("utf-8", "replace")
    except FolderNotEntered as denied:
        permission = denied.error is errors.PERMISSION_DENIED
        raise RepositoryGone(_unreadable(denied.reason, permission), denied.error) from None
    except GitCommandError as failed:
        if failed.error is errors.REPOSITORY_NOT_TRUSTED:
            raise RepositoryGone(failed.message, failed.error) from None
        raise RepositoryGone("not a git repository with a commit") from None
    except errors.TeamloreError as failed:  # git did not finish, or said too much
        raise RepositoryGone(f"git cannot read it: {failed.message}", failed.error) from None
    head, memory = (line.split() for line in out.splitlines()[:2])
    if len(head) != 3 or head[1] != "commit":
        raise RepositoryGone("not a git repository with a commit")
    return head[0], memory[0] if len(memory) == 3 and memory[1] == "tree" else None


GONE = "the clone's directory no longer exists"


def _unreadable(reason: str | None, denied: bool) -> str:
    why = f"the clone's folder cannot be read: {reason or 'unknown reason'}"
    return f"{why} (its mode or owner)" if denied else why


def problem_of(failure: errors.TeamloreError) -> str:
    """Why git could not read a clone, in words that never say where it lives (a repository's
    problem is served to every token's holder)."""
    if isinstance(failure, FolderNotEntered):
        return _unreadable(failure.reason, failure.error is errors.PERMISSION_DENIED)
    return failure.message


def clone_root(path: Path) -> Path:
    """The clone a folder belongs to: its work tree's top (`billing/.threadshare/memory` is
    `billing`), a bare clone's git dir. `path` is in a repository (`head_state` said so)."""
    bare, git_dir = run_git_text(
        ["rev-parse", "--is-bare-repository", "--absolute-git-dir"], cwd=path
    ).splitlines()
    if bare == "true":
        return Path(git_dir)
    return Path(run_git_text(["rev-parse", "--show-toplevel"], cwd=path).strip())


def list_tree(clone: Path, commit: str) -> list[TreeFile]:
    """Every memory document of the commit's memory tree (index.json and other files are not
    documents), and everything the tree linter blocks wherever it is (`memory lint`): a
    symlink or a submodule, the root or `.threadshare` itself included, and a name that is not
    UTF-8. `refusal` says why such a file is not read."""
    raw = run_git(["ls-tree", "-r", "-z", "--long", commit, "--", _THREADSHARE], cwd=clone)
    files: list[TreeFile] = []
    for record in raw.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, _type, blob, size = meta.decode().split()
        path = name.decode("utf-8", "backslashreplace")  # a name not UTF-8 shows as `\xNN`
        if not (path in (_THREADSHARE, MEMORY_ROOT) or path.startswith(f"{MEMORY_ROOT}/")):
            continue
        utf8_name = _is_utf8(name)
        kind = document_kind(path)
        if mode in _REGULAR_MODES and utf8_name and kind in (None, "index", "consolidated"):
            continue
        length = int(size) if size.isdigit() else -1
        files.append(TreeFile(path, kind or "other", blob, mode, length, utf8_name))
        if len(files) > MAX_FILES:
            raise errors.TeamloreError(
                errors.INVALID_ARGUMENT, f"the memory tree holds more than {MAX_FILES} documents"
            )
    return files


def _is_utf8(name: bytes) -> bool:
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def refusal(file: TreeFile) -> tuple[str, str] | None:
    """Why a listed file is not read, as (rule, message) in the tree linter's terms, or None."""
    if file.mode == _SYMLINK_MODE:
        return "tree.symlink", "symbolic links are not allowed in the memory tree"
    if file.mode not in _REGULAR_MODES:
        return "org.unreadable", "a submodule, not a file"
    if not file.utf8_name:
        return "tree.name-not-utf8", "the name is not UTF-8 text (shown escaped); rename it"
    if file.size > MAX_FILE_BYTES:
        return "org.unreadable", f"larger than {MAX_FILE_BYTES} bytes"
    return None


def read_blobs(clone: Path, blobs: list[str]) -> dict[str, bytes]:
    """The contents of these blobs, in one `git cat-file --batch`."""
    if not blobs:
        return {}
    wanted = list(dict.fromkeys(blobs))
    out = run_git(
        ["cat-file", "--batch"],
        cwd=clone,
        stdin=("\n".join(wanted) + "\n").encode(),
        max_output_bytes=len(wanted) * (MAX_FILE_BYTES + 128),
    )
    found: dict[str, bytes] = {}
    position = 0
    for blob in wanted:
        end = out.index(b"\n", position)
        header = out[position:end].split()
        if len(header) != 3:  # `<oid> missing`
            raise errors.TeamloreError(errors.GIT_FAILED, f"git cannot read blob {blob}")
        size = int(header[2])
        found[blob] = out[end + 1 : end + 1 + size]
        position = end + 1 + size + 1
    return found


def remote_url(clone: Path) -> str | None:
    try:
        url = run_git_text(["config", "--get", "remote.origin.url"], cwd=clone).strip()
    except (GitCommandError, errors.TeamloreError):
        return None
    return url or None


def public_remote(clone: Path) -> str | None:
    """The public identity of the clone's `origin` (`github.com/acme/billing`), or None: asked
    at `org add` and again at every `org sync` (a remote added or changed later is picked up).
    A secret in its path (a token pasted where the owner goes) is masked as lint masks it in a
    message (`github.com/ghp_…[40 chars]/web`): the remote is stored and shown to every
    token's holder, and the identity strips only user, password, query and fragment."""
    identity = public_repository_identity(remote_url(clone))
    return None if identity is None else scrub(identity)


def commit_state(clone: Path, commit: str) -> CommitState | None:
    """Where `commit` stands in the history of the clone's HEAD, from one `git rev-list`; None
    when that cannot be told here (no clone at that path, git cannot read it, or a shallow
    clone, whose history ends where it was cut: a fast-forward leaves the old commit outside
    it as a rewrite would)."""
    if not os.path.isdir(clone):  # False too where a folder on its path is unreadable
        return None
    try:
        out = run_git_text(["rev-list", "--left-right", "--count", f"{commit}...HEAD"], cwd=clone)
    except GitCommandError:
        # a commit the clone no longer has (pruned after a rewrite) is out of its history too
        try:
            head_state(clone)
        except RepositoryGone:
            return None
        return _out_of_history(clone)
    except errors.TeamloreError:
        return None
    only_commit, only_head = (int(n) for n in out.split())
    if only_commit:
        return _out_of_history(clone)
    return "behind" if only_head else "head"


def _out_of_history(clone: Path) -> CommitState | None:
    try:
        shallow = run_git_text(["rev-parse", "--is-shallow-repository"], cwd=clone).strip()
    except errors.TeamloreError:
        return None
    return None if shallow == "true" else "not-in-history"
