"""The commit scan: read a repository's history into the index DB, read-only and incrementally.

A scan first digests the repository's refs (`git for-each-ref`) and every worktree's HEAD
(`git worktree list --porcelain`). An unchanged digest means no work. Otherwise one `git log`
walks every ref (stash and notes excluded: they are not deliveries) and every worktree HEAD,
newest first, bounded by `max_commits`, and stops at the heads of the stored history: it was read
by an earlier scan. Only commits not yet stored are inserted, with their changed paths
(`--name-status -z`, rename detection on; merge commits record no changed paths, as `git log`
shows none by default).

Nothing here writes to the repository: only read-only plumbing runs, through `git.run_git`
(no optional locks, no hooks, no textconv, no external diff, no network).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from teamlore.core import db, errors
from teamlore.core.canonical import sha256_hex
from teamlore.core.shapes.strict import STRICT_FROZEN
from teamlore.repo import tables
from teamlore.repo.binding import RepositoryIdentity
from teamlore.repo.git import run_git

DEFAULT_MAX_COMMITS = 5000
LOG_FORMAT = "%x1e%H%x1f%P%x1f%aI%x1f%cI%x1f%s"
EXCLUDED_REFS = ("refs/stash", "refs/notes/*")
_HASH = re.compile(rb"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_RECORD_START = re.compile(rb"\x1e(?=[0-9a-f]{40}(?:[0-9a-f]{24})?\x1f)")


class ScanResult(BaseModel):
    model_config = STRICT_FROZEN

    repository_key: str
    ref_digest: str
    changed: bool  # False: the refs were unchanged and nothing was read
    commits_read: int
    commits_inserted: int
    files_inserted: int
    truncated: bool  # the walk stopped at max_commits; older history stays unscanned


@dataclass(slots=True)
class CommitRecord:
    hash: str
    parents: list[str]
    author_time: str | None
    committer_time: str | None
    subject: str
    files: list[tuple[str, str]] = field(default_factory=list)  # (path, change)


@dataclass(slots=True)
class RefState:
    digest: str
    tips: list[str]  # commit hashes the refs and worktree HEADs point at (peeled)


def utc_iso(value: str) -> str | None:
    """`2024-05-01T12:00:00+02:00` -> `2024-05-01T10:00:00Z`; None when unparsable."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _excluded(refname: bytes) -> bool:
    return refname == b"refs/stash" or refname.startswith(b"refs/notes/")


def read_ref_state(worktree_root: Path) -> RefState:
    refs = run_git(
        ["for-each-ref", "--format=%(objectname) %(*objectname) %(refname)"], cwd=worktree_root
    )
    worktrees = run_git(["worktree", "list", "--porcelain"], cwd=worktree_root)
    tips: set[str] = set()
    for line in refs.splitlines():
        parts = line.split(b" ", 2)
        if len(parts) != 3 or _excluded(parts[2]):
            continue
        peeled = parts[1] or parts[0]
        if _HASH.match(peeled):
            tips.add(peeled.decode())
    for line in worktrees.splitlines():
        if line.startswith(b"HEAD ") and _HASH.match(line[5:]) and line[5:].strip(b"0"):
            tips.add(line[5:].decode())
    digest = sha256_hex(b"refs\x00" + refs + b"\x00worktrees\x00" + worktrees)
    return RefState(digest=digest, tips=sorted(tips))


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def parse_log(output: bytes) -> Iterator[CommitRecord]:
    """Parse `git log -z --name-status --format=LOG_FORMAT` output."""
    for record in _RECORD_START.split(output):
        if not record.strip(b"\x00\n"):
            continue
        header, _, body = record.partition(b"\x00")
        fields = header.split(b"\x1f", 4)
        if len(fields) != 5 or not _HASH.match(fields[0]):
            continue
        commit = CommitRecord(
            hash=fields[0].decode(),
            parents=[p.decode() for p in fields[1].split()],
            author_time=utc_iso(fields[2].decode()),
            committer_time=utc_iso(fields[3].decode()),
            subject=_decode(fields[4]),
        )
        tokens = body.lstrip(b"\n").split(b"\x00")
        i = 0
        while i < len(tokens) and tokens[i]:
            status = tokens[i].decode("ascii", "replace")
            kind = status[:1]
            if kind in ("R", "C") and i + 2 < len(tokens):
                commit.files.append((_decode(tokens[i + 2]), kind))
                commit.files.append((_decode(tokens[i + 1]), f"{kind}-from"))
                i += 3
            elif i + 1 < len(tokens):
                commit.files.append((_decode(tokens[i + 1]), kind))
                i += 2
            else:
                break
        yield commit


def stored_heads(conn: sqlite3.Connection, repository_key: str) -> list[str]:
    """Stored commits no stored commit names as a parent: the tips an earlier scan reached.

    Their history was read then (down to the max_commits bound), so a new walk stops there.
    """
    hashes: set[str] = set()
    parents: set[str] = set()
    for hash_, parent_list in tables.commit_parents(conn, repository_key):
        hashes.add(hash_)
        parents.update(parent_list.split())
    return sorted(hashes - parents)


def existing_commits(worktree_root: Path, hashes: list[str]) -> list[str]:
    """The hashes that still name commit objects (a stored head may have been gc'd since)."""
    if not hashes:
        return []
    out = run_git(
        ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
        cwd=worktree_root,
        stdin=("\n".join(hashes) + "\n").encode(),
    )
    found = []
    for line in out.decode("ascii", "replace").splitlines():
        name, _, kind = line.partition(" ")
        if kind == "commit":
            found.append(name)
    return found


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def scan_commits(
    conn: sqlite3.Connection,
    identity: RepositoryIdentity,
    *,
    max_commits: int = DEFAULT_MAX_COMMITS,
    full: bool = False,
) -> ScanResult:
    """Bring `commits`/`commit_files` up to date with the repository's refs.

    `full=True` ignores the stored ref digest and walks past stored tips (use it after raising
    `max_commits` to fill in history an earlier bounded scan left out).
    """
    if max_commits < 1:
        raise errors.TeamloreError(errors.INVALID_ARGUMENT, "max_commits must be at least 1")
    stored_digest = tables.stored_ref_digest(conn, identity.worktree_key)
    state = read_ref_state(identity.worktree_root)
    if stored_digest == state.digest and not full:
        return ScanResult(
            repository_key=identity.repository_key,
            ref_digest=state.digest,
            changed=False,
            commits_read=0,
            commits_inserted=0,
            files_inserted=0,
            truncated=False,
        )

    known_tips = (
        []
        if full
        else existing_commits(identity.worktree_root, stored_heads(conn, identity.repository_key))
    )
    revisions = [*state.tips, *(f"^{tip}" for tip in known_tips)]
    args = [
        "log",
        "-z",
        "--name-status",
        "-M",
        "--no-textconv",
        "--no-ext-diff",
        "--no-color",
        "--encoding=UTF-8",
        f"--format={LOG_FORMAT}",
        f"--max-count={max_commits + 1}",
        *(f"--exclude={pattern}" for pattern in EXCLUDED_REFS),
        "--all",
        "--stdin",
    ]
    output = run_git(args, cwd=identity.worktree_root, stdin=("\n".join(revisions) + "\n").encode())
    records = list(parse_log(output))
    truncated = len(records) > max_commits
    records = records[:max_commits]

    inserted = files = 0
    with db.write_tx(conn):
        for commit in records:
            added = tables.insert_commit(
                conn,
                identity.repository_key,
                commit.hash,
                parents=commit.parents,
                author_time=commit.author_time,
                committer_time=commit.committer_time,
                subject=commit.subject,
                files=commit.files,
            )
            if added is not None:
                inserted += 1
                files += added
        tables.mark_scanned(conn, identity.repository_key, state.digest, _now())
    return ScanResult(
        repository_key=identity.repository_key,
        ref_digest=state.digest,
        changed=True,
        commits_read=len(records),
        commits_inserted=inserted,
        files_inserted=files,
        truncated=truncated,
    )
