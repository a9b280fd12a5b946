"""Edits git merged into a deprecated entry: `entry.deprecated-body-changed` (warn).

A merge that deprecates an entry rewrites only its `status` and `superseded_by` lines; a
teammate's update of the same entry's text touches only the body. The two edits are not next to
each other (the closing `---` stands between them), so `git merge`, `git pull` or a rebase
combines them without a conflict: the update lands in the deprecated entry, which nothing reads,
and the entry that replaces it never gets it.

The entry format has no line both edits touch (and a new field would break every reader of the
reference dialect), so the check asks git's history instead: the entry's text now must be the
text of a commit that made it deprecated (`git log -G` finds the commits that add or remove a
`status: deprecated` line, `git cat-file --batch` reads those versions; two git processes for
the whole tree, none when no entry is deprecated). When no such commit is known — a deprecation
not committed yet, a shallow clone that starts later, no git — nothing is said: this is
advice. It warns rather than blocks: removing a secret from a deprecated entry is a right edit.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from teamlore.core import errors, safe_write
from teamlore.memory.store import documents as docs
from teamlore.memory.store.layout import ENTRIES_DIR
from teamlore.memory.store.lint import Finding, LintReport
from teamlore.memory.store.slugs import slug_problem
from teamlore.repo.git import run_git

RULE = "entry.deprecated-body-changed"
_DEPRECATING = '^status: *"*deprecated'  # a basic regex, as `git log -G` reads it
_COMMIT = "commit:"


def with_deprecation_findings(report: LintReport, worktree_root: Path) -> LintReport:
    """`report` of `lint_tree` with a finding for each deprecated entry whose text changed
    since the commit that deprecated it."""
    if not report.superseded:
        return report
    return report.with_findings(edited_after_deprecation(worktree_root, report.superseded))


def edited_after_deprecation(
    worktree_root: Path, superseded: Sequence[tuple[str, str]]
) -> list[Finding]:
    """One finding per entry in `superseded` ((file, the id it is superseded by)) whose body
    is none of the bodies it had in the commits that made it deprecated."""
    targets = {path: by for path, by in superseded if _is_entry_path(path)}
    if not targets:
        return []
    try:
        deprecating = _deprecating_commits(worktree_root, sorted(targets))
        versions = _versions(worktree_root, deprecating)
    except errors.TeamloreError:  # not a repository, no git, no commit yet
        return []
    findings = []
    for path, commits in sorted(deprecating.items()):
        deprecated = {  # newest first; a commit that approved it again is not one of them
            commit: entry
            for commit in commits
            if (entry := _deprecated_entry(versions.get((commit, path)), path)) is not None
        }
        commit = commits[0]
        latest = deprecated.get(commit)  # None: the deprecation in force is not committed yet
        current = _current_entry(worktree_root, path)
        if (
            latest is None
            or current is None
            or current[0].body in {e.body for e in deprecated.values()}
        ):
            continue
        findings.append(
            Finding(
                rule=RULE,
                severity="warn",
                file=path,
                line=_first_changed_line(current, latest),
                message=(
                    f"its text changed after commit {commit[:12]} deprecated it (a merge of an "
                    f"update made before the deprecation?), and `{targets[path]}`, which "
                    f"replaces it, did not get the change; next: carry the change into "
                    f"`{targets[path]}` if it still holds, then `git checkout {commit[:12]} -- "
                    f"{path}` restores the text it was deprecated with"
                ),
            )
        )
    return findings


def _is_entry_path(path: str) -> bool:
    folder, _, name = path.rpartition("/")
    return folder == ENTRIES_DIR and name.endswith(".md") and slug_problem(name[:-3]) is None


def _deprecating_commits(root: Path, paths: list[str]) -> dict[str, list[str]]:
    """Each path's commits (newest first) whose change adds or removes a deprecated status."""
    out = run_git(
        [
            "log",
            f"--format={_COMMIT}%H",
            "-z",
            "--name-only",
            "--no-renames",
            "--no-textconv",
            "--no-ext-diff",
            f"-G{_DEPRECATING}",
            "--",
            *paths,
        ],
        cwd=root,
    )
    commits: dict[str, list[str]] = {}
    commit = ""
    for field in out.decode("utf-8", "surrogateescape").split("\0"):
        field = field.lstrip("\n")
        if field.startswith(_COMMIT):
            commit = field[len(_COMMIT) :]
        elif field and commit:
            commits.setdefault(field, []).append(commit)
    return commits


def _versions(root: Path, commits: dict[str, list[str]]) -> dict[tuple[str, str], bytes]:
    """The bytes of each (commit, path), read with one `git cat-file --batch`."""
    wanted = [(commit, path) for path, found in commits.items() for commit in found]
    if not wanted:
        return {}
    out = run_git(
        ["cat-file", "--batch"],
        cwd=root,
        stdin=b"".join(f"{commit}:{path}\n".encode() for commit, path in wanted),
    )
    versions: dict[tuple[str, str], bytes] = {}
    at = 0
    for key in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].split(b" ")
        at = end + 1
        if len(header) != 3 or not header[2].isdigit():  # `<name> missing`: no content
            continue
        size = int(header[2])
        if header[1] == b"blob":
            versions[key] = out[at : at + size]
        at += size + 1
    return versions


def _deprecated_entry(data: bytes | None, path: str) -> docs.Entry | None:
    try:
        entry = None if data is None else docs.load_entry(data, path)
    except docs.MemoryFormatError:
        return None
    return entry if entry is not None and entry.status == "deprecated" else None


def _current_entry(root: Path, path: str) -> tuple[docs.Entry, str] | None:
    """The entry file as it is now, with its text, when it reads and is deprecated."""
    try:
        data = safe_write.read_file(root, path, max_bytes=docs.MAX_FILE_BYTES)
    except (errors.TeamloreError, OSError):
        return None
    entry = _deprecated_entry(data, path)
    if data is None or entry is None:
        return None
    return entry, data.decode("utf-8", "replace")


def _first_changed_line(current: tuple[docs.Entry, str], deprecated: docs.Entry) -> int:
    """The file line (1-based) of the first body line that differs from `deprecated`'s."""
    entry, text = current
    at = text.rfind(entry.body) if entry.body else len(text)
    before_body = text[: max(at, 0)].count("\n")
    old = deprecated.body.split("\n")
    for number, line in enumerate(entry.body.split("\n")):
        if number >= len(old) or old[number] != line:
            return before_body + number + 1
    return before_body + 1
