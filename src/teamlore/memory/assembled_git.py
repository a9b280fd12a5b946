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

`--repair` asks git one more thing (`lines_outside_block`): the lines the instructions file
holds outside its block as committed, which the old block's text a lone END closes never takes
(memory/block_markers.py).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from teamlore.core import errors
from teamlore.memory.block_markers import intact, markers
from teamlore.memory.skill_copies import THEIRS_HEADS
from teamlore.repo.git import run_git

_UNMERGED = {"DD", "AU", "UD", "UA", "DU", "AA", "UU"}  # git status --porcelain's X and Y
# what git reads in a path as a pattern (`*`, `?`, `[`, `\`), a pathspec's magic or a flag
_PATHSPEC_MAGIC = re.compile(r"[*?\[\\]|^[:-]")


def git_states(root: Path, paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """(unmerged, untracked): which of `paths` (worktree-relative, `/`-separated) git holds
    unmerged, and which it does not track; both empty when git cannot tell."""
    if not paths:
        return [], []
    try:
        out = run_git(
            # a file named `[ab].md` is that file, never a pattern matching `a.md`
            [
                "--literal-pathspecs",
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--",
                *paths,
            ],
            cwd=root,
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
        parts.append(still_unmerged(unmerged))
    if untracked:
        new = list(dict.fromkeys(_shown(path, skills_folder) for path in untracked))
        parts.append(
            "`git status` lists the changed and new files, and "
            f"`git add --intent-to-add {_words(new)} && git diff` shows every line (new files "
            "too)"
        )
    elif not unmerged:
        parts.append("see the changes with `git status` and `git diff`")
    return "; ".join(parts) + "."


def still_unmerged(unmerged: list[str]) -> str:
    """What a command that wrote `unmerged` (files git holds unmerged: a merge, rebase or
    cherry-pick stopped on them) says git needs: `memory assemble`'s and `memory promote`'s."""
    return (
        f"{_listed(unmerged)} {'is' if len(unmerged) == 1 else 'are'} still unmerged from "
        f"the stopped merge: check {'it' if len(unmerged) == 1 else 'them'}, then "
        f"`{_git_add(unmerged)}` finishes the merge (and `git commit` records it)"
    )


def _git_add(paths: Sequence[str]) -> str:
    """The `git add` of `paths`, each taken as it is: git reads `*`, `?`, `[…]` (a Skill's
    `[slug].ts`) as a pattern that adds files beside it, and a leading `:` or `-` as magic or a
    flag, unless told otherwise, which the common path does without."""
    if any(_PATHSPEC_MAGIC.search(path) for path in paths):
        return f"git --literal-pathspecs add -- {_words(paths)}"
    return f"git add {_words(paths)}"


def _words(paths: Sequence[str]) -> str:
    """`paths` as a shell takes them, each one word (a path may hold a space or a quote)."""
    return " ".join(map(shlex.quote, paths))


def _shown(path: str, skills_folder: str) -> str:
    """A new Skill copy by its folder (there may be many), anything else by its path."""
    return skills_folder if path.startswith(f"{skills_folder}/") else path


def _listed(paths: list[str]) -> str:
    return " and ".join(", ".join(paths).rsplit(", ", 1))


def lines_outside_block(root: Path, relative: str) -> frozenset[str]:
    """The lines (stripped, blank ones left out) of the instructions file `relative` outside its
    managed block as git holds it: at HEAD and at a stopped merge's other side (a version with
    no block is all outside; one whose markers are damaged tells nothing). The person's own
    text, a `## Team memory` section of theirs among it; empty when git cannot tell."""
    found: set[str] = set()
    for head in ("HEAD", *THEIRS_HEADS):
        try:
            data = run_git(["cat-file", "blob", f"{head}:{relative}"], cwd=root)
        except errors.TeamloreError:  # no such head or file, not a repository, git missing
            continue
        text = data.decode("utf-8", "replace")
        found_markers = markers(text)
        if not intact(found_markers):
            continue
        outside = (
            text[: found_markers[0].start] + "\n" + text[found_markers[1].end :]
            if found_markers
            else text
        )
        found.update(line.strip() for line in outside.split("\n") if line.strip())
    return frozenset(found)
