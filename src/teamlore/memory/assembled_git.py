"""What `memory assemble` says last about git: it stages and commits nothing, and what the person
does next depends on what git makes of the files it wrote (docs/assemble.md, "Assembled files
in git"):

- an instructions file still unmerged (`UU` in `git status`: a merge stopped in it, and the
  person resolved it and assembled): `git add` of that file is what finishes its merge;
- a file git does not track yet (the first assemble creates CLAUDE.md and the Skill copies):
  plain `git diff` prints nothing for it, so the note names `git add --intent-to-add … &&
  git diff`, as `memory promote` does for new memory files (ops/memory/promote.py);
- otherwise `git status` and `git diff` show the changes.

Advice, never a refusal: when git cannot tell (not a repository, git missing) the plain note is
given.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from teamlore.core import errors
from teamlore.repo.git import run_git

_UNMERGED = {"DD", "AU", "UD", "UA", "DU", "AA", "UU"}  # git status --porcelain's X and Y


def git_states(root: Path, paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """(unmerged, untracked): which of `paths` (worktree-relative, `/`-separated) git holds
    unmerged, and which it does not track; both empty when git cannot tell."""
    if not paths:
        return [], []
    try:
        out = run_git(
            ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *paths], cwd=root
        )
    except errors.TeamloreError:
        return [], []
    unmerged, untracked = [], []
    records = iter(out.decode("utf-8", "surrogateescape").split("\0"))
    for record in records:
        if len(record) < 4:
            continue
        state, path = record[:2], record[3:]
        if state[0] in "RC":  # a rename or copy: its source follows
            next(records, None)
        if state in _UNMERGED:
            unmerged.append(path)
        elif state == "??":
            untracked.append(path)
    order = {path: at for at, path in enumerate(paths)}  # as given: the instructions file first
    return (
        sorted(unmerged, key=lambda p: order.get(p, len(order))),
        sorted(untracked, key=lambda p: order.get(p, len(order))),
    )


def git_note(root: Path, written: Sequence[str], *, skills_folder: str) -> str:
    """The closing note of an assemble that wrote (or left as they were) `written`: the
    instructions file first, then the Skill copies."""
    unmerged, untracked = git_states(root, written)
    parts = ["Nothing was staged or committed"]
    if unmerged:
        files = " ".join(unmerged)
        parts.append(
            f"{_listed(unmerged)} {'is' if len(unmerged) == 1 else 'are'} still unmerged from "
            f"the stopped merge: check {'it' if len(unmerged) == 1 else 'them'}, then "
            f"`git add {files}` finishes the merge (and `git commit` records it)"
        )
    if untracked:
        new = list(dict.fromkeys(_shown(path, skills_folder) for path in untracked))
        parts.append(
            "`git status` lists the changed and new files, and "
            f"`git add --intent-to-add {' '.join(new)} && git diff` shows every line (new files "
            "too)"
        )
    elif not unmerged:
        parts.append("see the changes with `git status` and `git diff`")
    return "; ".join(parts) + "."


def _shown(path: str, skills_folder: str) -> str:
    """A new Skill copy by its folder (there may be many), anything else by its path."""
    return skills_folder if path.startswith(f"{skills_folder}/") else path


def _listed(paths: list[str]) -> str:
    return " and ".join(", ".join(paths).rsplit(", ", 1))
