"""CRLF line ends git writes at checkout are not the team's: `format.crlf` is left out for them.

In a clone with `core.autocrlf=true` (or a `.gitattributes` `text` rule that checks files out
with CRLF) every memory file has CRLF in the worktree while git holds it with LF, and a `git add`
turns it back into LF: the warning named every file on every `memory status` and nothing the
person could do removed it. A file git holds with CRLF, or one git would commit with CRLF (no
conversion configured), keeps its warning.
"""

from __future__ import annotations

from pathlib import Path

from teamlore.core import errors
from teamlore.memory.store.lint import LintReport
from teamlore.repo.git import run_git

_CRLF = "format.crlf"


def without_checkout_crlf(report: LintReport, worktree_root: Path) -> LintReport:
    """`report` without the `format.crlf` findings of files git's checkout gave CRLF."""
    paths = [f.file for f in report.findings if f.rule == _CRLF]
    if not paths:
        return report
    converted = _converted_by_git(worktree_root, paths)
    if not converted:
        return report
    kept = [f for f in report.findings if not (f.rule == _CRLF and f.file in converted)]
    return report.model_copy(update={"findings": kept})


def _converted_by_git(root: Path, paths: list[str]) -> set[str]:
    """Which of `paths` git holds with LF and normalizes to LF when added (`core.autocrlf`
    true or input, or a `text` attribute); none when git cannot tell."""
    try:
        autocrlf = _autocrlf(root)
        out = run_git(
            ["--literal-pathspecs", "ls-files", "--eol", "-z", "--", *paths], cwd=root
        ).decode("utf-8", "surrogateescape")
    except errors.TeamloreError:
        return set()
    converted = set()
    for record in out.split("\0"):
        info, _, path = record.partition("\t")
        fields = info.split()
        if len(fields) < 2 or fields[0] != "i/lf":
            continue
        attributes = " ".join(fields[2:]).removeprefix("attr/").split()
        if "-text" in attributes:
            continue
        if autocrlf or any(a == "text" or a.startswith("text=") for a in attributes):
            converted.add(path)
    return converted


def _autocrlf(root: Path) -> bool:
    try:
        value = run_git(["config", "--get", "core.autocrlf"], cwd=root).decode().strip()
    except errors.TeamloreError:  # unset: `git config --get` exits 1
        return False
    return value.lower() in ("true", "input", "yes", "on", "1")
