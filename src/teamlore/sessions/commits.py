"""Commit hashes observed in shell tool results.

Two shapes count: git's own summary line after a commit-like command (`[main 1a2b3c4] subject`,
`[main (root-commit) 1a2b3c4] subject`, `[detached HEAD 1a2b3c4]`), and full 40-hex hashes in
the output of any git command. Random hex elsewhere is not an observation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SUMMARY = re.compile(r"^\[[^\]\n]*?\b([0-9a-f]{7,40})\]", re.MULTILINE)
# a full hash: a run of exactly 40 lowercase hex digits with no hex digit (of either case) next
# to it, i.e. a maximal run of hex digits that is 40 long and has no uppercase letter
_HEX_RUN = re.compile(r"[0-9a-fA-F]{40,}")
_GIT = re.compile(r"(?:^|[\s;&|(])git(?:\.exe)?\s", re.IGNORECASE)
_COMMIT_COMMAND = re.compile(
    r"(?:^|[\s;&|(])git(?:\.exe)?\s+(?:-\S+\s+(?:\S+\s+)?)*"
    r"(commit|merge|cherry-pick|revert|rebase|am|pull)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class ObservedCommit:
    hash: str
    is_full: bool
    from_commit_command: bool


def is_commit_command(command: str | None) -> bool:
    return bool(command and _COMMIT_COMMAND.search(command))


def observe_commits(command: str | None, output: str) -> list[ObservedCommit]:
    if not command or not _runs_git(command):
        return []
    committing = is_commit_command(command)
    found: dict[str, ObservedCommit] = {}
    for match in _SUMMARY.finditer(output):
        value = match.group(1)
        found[value] = ObservedCommit(value, len(value) == 40, committing)
    for match in _HEX_RUN.finditer(output):
        value = match.group()
        if len(value) == 40 and value == value.lower():
            found.setdefault(value, ObservedCommit(value, True, committing))
    return list(found.values())


def _runs_git(command: str) -> bool:
    """Whether `_GIT` matches the command. The regex is tried only when the lowered command
    holds `git` as `_GIT` can match it (its `i` also matches `İ` and `ı`): tried alone, it starts
    at every position of a long command."""
    lowered = command.lower()
    if "git" not in lowered and "gi\u0307t" not in lowered and "g\u0131t" not in lowered:
        return False
    return _GIT.search(" " + command) is not None
