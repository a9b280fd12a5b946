"""What git leaves out: the files teamlore writes into a worktree that a `.gitignore`,
`.git/info/exclude` or the user's global excludes file keeps from `git add`, so the team never
gets them however often the person commits (docs/memory.md, "Sharing it through git").

A tracked file is never ignored (git shares its changes whatever the rules say), and a path a
`!` rule lets back in is not ignored either; `git check-ignore` knows both.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from teamlore.core import errors
from teamlore.core.paths import display_path
from teamlore.repo.git import GitCommandError, run_git


def ignored_by_git(root: Path, paths: Sequence[str]) -> list[dict[str, object]]:
    """The rules that ignore some of `paths` (files relative to the worktree `root`,
    `/`-separated), each with the paths it ignores, in the order given:
    `[{"rule": ".gitignore:1 .claude/", "paths": [...]}]`. Empty when git ignores none of them,
    or cannot tell (not a repository, git missing): this is advice, never a refusal."""
    if not paths:
        return []
    try:
        out = run_git(
            ["check-ignore", "--verbose", "-z", "--stdin"],
            cwd=root,
            stdin=b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths),
        )
    except GitCommandError as exc:
        if exc.returncode != 1:  # 1: none of them is ignored
            return []
        out = b""
    except errors.TeamloreError:
        return []
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    by_rule: dict[str, list[str]] = {}
    for at in range(0, len(fields) - 3, 4):
        source, line, pattern, path = fields[at : at + 4]
        if pattern.startswith("!"):  # the path matched a rule that lets it back in
            continue
        by_rule.setdefault(f"{_source(root, source)}:{line} {pattern}", []).append(path)
    return [{"rule": rule, "paths": found} for rule, found in by_rule.items()]


def _source(root: Path, source: str) -> str:
    """The rules file as the person finds it: from the worktree when it is inside it, from `~`
    (the global excludes file) otherwise."""
    path = Path(source)
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return display_path(path)
