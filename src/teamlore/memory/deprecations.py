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
advice. It warns rather than blocks: removing a secret from a deprecated entry is a right edit,
and a person says so with a commit of that text whose message has a `Teamlore-Deprecated-Edit:`
line (one more `git log` and `git cat-file`, run only for an entry the check would name). A
body-only commit made after the deprecation does not say it: `git pull --rebase` makes one of a
teammate's earlier update too.

`memory status` keeps the findings under `findings_key` (HEAD's commit, read from the files of
`.git`, and the lint digests of the deprecated entries' files), so an unchanged tree costs it
no git process.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from teamlore import __version__
from teamlore.core import errors, safe_write
from teamlore.memory.store import documents as docs
from teamlore.memory.store.layout import ENTRIES_DIR
from teamlore.memory.store.lint import Finding, LintReport
from teamlore.memory.store.slugs import slug_problem
from teamlore.repo.git import head_commit, run_git

RULE = "entry.deprecated-body-changed"
_DEPRECATING = '^status: *"*deprecated'  # a basic regex, as `git log -G` reads it
_COMMIT = "commit:"
ACKNOWLEDGED = "Teamlore-Deprecated-Edit:"  # a commit message line: the text is meant


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
    return checked_after_deprecation(worktree_root, superseded) or []


def checked_after_deprecation(
    worktree_root: Path, superseded: Sequence[tuple[str, str]]
) -> list[Finding] | None:
    """`edited_after_deprecation`'s findings, or None when git could not answer (not a
    repository, no git, no commit yet, a timeout): an answer not to keep."""
    targets = {path: by for path, by in superseded if _is_entry_path(path)}
    if not targets:
        return []
    try:
        deprecating = _deprecating_commits(worktree_root, sorted(targets))
        versions = _versions(worktree_root, deprecating)
    except errors.TeamloreError:
        return None
    changed = {}
    for path, commits in sorted(deprecating.items()):
        deprecated = {  # newest first; a commit that approved it again is not one of them
            commit: entry
            for commit in commits
            if (entry := _deprecated_entry(versions.get((commit, path)), path)) is not None
        }
        latest = deprecated.get(commits[0])  # None: the deprecation in force is not committed
        current = _current_entry(worktree_root, path)
        if latest is None or current is None:
            continue
        if current[0].body not in {e.body for e in deprecated.values()}:
            changed[path] = (commits[0], latest, current)
    meant = _acknowledged_bodies(worktree_root, sorted(changed))
    if meant is None:
        return None
    return [
        _finding(path, commit, targets[path], current, latest)
        for path, (commit, latest, current) in changed.items()
        if current[0].body not in meant.get(path, set())
    ]


def _finding(
    path: str,
    commit: str,
    replaced_by: str,
    current: tuple[docs.Entry, str],
    latest: docs.Entry,
) -> Finding:
    return Finding(
        rule=RULE,
        severity="warn",
        file=path,
        line=_first_changed_line(current, latest),
        message=(
            f"its text changed after commit {commit[:12]} deprecated it, and `{replaced_by}`, "
            f"which replaces it, did not get the change; next: carry the change into "
            f"`{replaced_by}` if it still holds; if a merge or a rebase brought it in, `git "
            f"checkout {commit[:12]} -- {path}` restores the text it was deprecated with; if "
            f"you made it on purpose (a secret removed), commit it with a `{ACKNOWLEDGED} "
            f"{path}` line in the message and this warning stops"
        ),
    )


def _acknowledged_bodies(root: Path, paths: list[str]) -> dict[str, set[str]] | None:
    """Each path's deprecated bodies that a commit gave it whose message holds a line
    `ACKNOWLEDGED <that path>`: edits a person made on purpose (None: git could not answer)."""
    if not paths:
        return {}
    selected = ["--no-merges", "-F", f"--grep={ACKNOWLEDGED}"]
    try:
        named = _acknowledged_paths(root, paths, selected)
        commits = {
            path: [commit for commit in found if path in named.get(commit, ())]
            for path, found in _commits(root, paths, selected).items()
        }
        versions = _versions(root, commits)
    except errors.TeamloreError:
        return None
    meant: dict[str, set[str]] = {}
    for (_, path), data in versions.items():
        if (entry := _deprecated_entry(data, path)) is not None:
            meant.setdefault(path, set()).add(entry.body)
    return meant


def _acknowledged_paths(root: Path, paths: list[str], selected: list[str]) -> dict[str, set[str]]:
    """Each selected commit → the paths its message's `ACKNOWLEDGED` lines name."""
    out = run_git(["log", "-z", "--format=%H%n%B", *selected, "--", *paths], cwd=root)
    named: dict[str, set[str]] = {}
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        commit, _, message = record.lstrip("\n").partition("\n")
        named[commit] = {
            line[len(ACKNOWLEDGED) :].strip()
            for line in message.splitlines()
            if line.startswith(ACKNOWLEDGED)
        }
    return named


def findings_key(
    worktree_root: Path, superseded: Sequence[tuple[str, str]], digests: Mapping[str, str]
) -> str | None:
    """What decides `edited_after_deprecation`'s answer: this check's code, HEAD's commit (the
    history `git log` reads) and each deprecated entry with its target and its file's digest
    (`digests`: the lint cache's, which follows the file's bytes). None when HEAD cannot be
    read without git (a reftable repository, no `.git`): then nothing is kept."""
    head = head_commit(worktree_root)
    if head is None:
        return None
    key = hashlib.sha256(f"{__version__}\0{head}\0".encode() + Path(__file__).read_bytes())
    for path, by in sorted(superseded):
        key.update(f"\0{path}\0{by}\0{digests.get(path, '')}".encode())
    return key.hexdigest()


def _is_entry_path(path: str) -> bool:
    folder, _, name = path.rpartition("/")
    return folder == ENTRIES_DIR and name.endswith(".md") and slug_problem(name[:-3]) is None


def _deprecating_commits(root: Path, paths: list[str]) -> dict[str, list[str]]:
    """Each path's commits (newest first) whose change adds or removes a deprecated status."""
    return _commits(root, paths, [f"-G{_DEPRECATING}"])


def _commits(root: Path, paths: list[str], which: list[str]) -> dict[str, list[str]]:
    """Each path's commits (newest first) among those `which` selects that change it."""
    out = run_git(
        [
            "log",
            f"--format={_COMMIT}%H",
            "-z",
            "--name-only",
            "--no-renames",
            "--no-textconv",
            "--no-ext-diff",
            *which,
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
    text = text.replace("\r\n", "\n")  # the body is read with `\n` line ends
    at = text.rfind(entry.body) if entry.body else len(text)
    before_body = text[: max(at, 0)].count("\n")
    old = deprecated.body.split("\n")
    for number, line in enumerate(entry.body.split("\n")):
        if number >= len(old) or old[number] != line:
            return before_body + number + 1
    return before_body + 1
