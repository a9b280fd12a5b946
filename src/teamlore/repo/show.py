"""What a reviewer reads behind commit and path evidence: `git show` of a commit and the recent
history of a path, produced read-only through `git.run_git` (no textconv, no external diff, no
colour, no network) and bounded: a patch larger than `MAX_PATCH_BYTES` is replaced by the
commit's `--stat` and declared (`patchOmitted`), never cut silently.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.repo.commits import existing_commits
from teamlore.repo.git import run_git

MAX_PATCH_BYTES = 1 << 20
PATH_HISTORY_COMMITS = 5
FULL_HASH = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
HASH_PREFIX = re.compile(r"^[0-9a-f]{7,64}$")
_DIFF_FLAGS = ("--no-color", "--no-textconv", "--no-ext-diff", "--find-renames")


def _bounded(args: list[str], worktree_root: Path) -> tuple[str, bool]:
    """The command's output, or (when larger than the bound) the same with --stat only."""
    try:
        out = run_git(args, cwd=worktree_root, max_output_bytes=MAX_PATCH_BYTES)
        return out.decode("utf-8", "replace"), False
    except errors.TeamloreError as err:
        if err.details.get("max_output_bytes") is None:
            raise
    stat_only = ["--stat" if a == "--patch" else a for a in args]
    out = run_git(stat_only, cwd=worktree_root, max_output_bytes=MAX_PATCH_BYTES)
    return out.decode("utf-8", "replace"), True


def resolve_commit(worktree_root: Path, commit: str) -> str:
    """The full hash of a commit named by its full or abbreviated (≥ 7) lowercase hex hash."""
    if not HASH_PREFIX.match(commit):
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, "commit: a lowercase hex commit hash (at least 7 digits)"
        )
    if not FULL_HASH.match(commit):
        try:
            out = run_git(
                ["rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"], cwd=worktree_root
            )
            commit = out.decode("ascii", "replace").strip()
        except errors.TeamloreError:
            commit = ""
    if not commit or not existing_commits(worktree_root, [commit]):
        raise errors.TeamloreError(errors.COMMIT_NOT_FOUND, "no such commit in this repository")
    return commit


def show_commit(worktree_root: Path, commit: str) -> dict[str, Any]:
    """`git show --stat --patch` of one commit of this repository."""
    commit = resolve_commit(worktree_root, commit)
    text, omitted = _bounded(
        ["show", "--stat", "--patch", *_DIFF_FLAGS, "--format=fuller", commit, "--"],
        worktree_root,
    )
    return {"commit": commit, "text": text, "patchOmitted": omitted}


def path_history(worktree_root: Path, path: str) -> dict[str, Any]:
    """The last commits that changed a repository-relative path, with their patches to it."""
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise errors.TeamloreError(errors.INVALID_ARGUMENT, "path: a repository-relative path")
    text, omitted = _bounded(
        [
            "log",
            f"-n{PATH_HISTORY_COMMITS}",
            "--patch",
            *_DIFF_FLAGS,
            "--format=commit %H%nAuthor: %an%nDate:   %aI%n%n    %s%n",
            "HEAD",
            "--",
            f":(literal){path}",
        ],
        worktree_root,
    )
    return {"path": path, "text": text, "patchOmitted": omitted, "commits": PATH_HISTORY_COMMITS}
