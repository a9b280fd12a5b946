"""The delivery trace: session/turn -> commit edges with a strength, reasons and limitations.

An edge says how a turn is *linked* to a commit, never that the turn's claims are true nor that
the session wrote the commit's lines (glossary: delivery edge; docs/sessions.md
"Repositories and delivery evidence"). Evidence, per turn of every session mapped to
a worktree of the repository:

- `direct`     a full hash of a stored commit in the result of a commit command
               (`git commit`, `git merge`, cherry-pick, ...) run in the turn.
- `observed`   a full hash seen in any other tool result; a short hash that is the prefix of
               exactly one stored commit; or an exact repo-relative path the turn wrote that the
               commit changed, with the commit inside the turn's commit window.
- `candidate`  a short hash matching several stored commits (each match, `ambiguous-short-hash`);
               a commit inside the window that changed a file in a directory the turn wrote in;
               a commit inside the window while the turn wrote files that the commit did not touch.
- `contextual` a path the turn wrote that a commit changed outside the window (the nearest
               `CONTEXTUAL_PER_PATH` such commits per path; the rest are counted, not linked).

Commit window of a turn: from the turn's start (floored to the second, as git times are) to
`COMMIT_WINDOW_AFTER_SESSION` (2 h) after the session's end (the latest of the session's
recorded end and its turns' times). A commit is inside when its author or committer time is. A
turn without a start time uses the session's start and carries `incomplete-timestamps`.

Several pieces of evidence for one (turn, commit) make one edge: the strongest strength wins, the
reasons of all are kept, the limitations are those of the winning evidence. The edge revision is
the canonical digest of its content keyed by session key and turn ordinal (not database ids), so
a rebuild over the same input yields the same edges and revisions; the table is updated by diff,
so unchanged edges keep their rows.
"""

from __future__ import annotations

import bisect
import json
import os
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel

from teamlore.core import db, errors
from teamlore.core.canonical import digest
from teamlore.core.shapes.strict import STRICT_FROZEN
from teamlore.repo import tables
from teamlore.repo.binding import is_windows_path, is_within, normalize_posix

EDGE_FORMAT = "teamlore-delivery-edge@1"
COMMIT_WINDOW_AFTER_SESSION = timedelta(hours=2)
CONTEXTUAL_PER_PATH = 3
MAX_SHORT_HASH_MATCHES = 8
MIN_SHORT_HASH = 7
MAX_PATH_REASONS = 32

Strength = Literal["direct", "observed", "candidate", "contextual"]
STRENGTH_RANK: dict[str, int] = {"direct": 0, "observed": 1, "candidate": 2, "contextual": 3}

# limitation codes (Delivery Trace vocabulary, plus the ones this classifier needs)
NOT_AUTHORSHIP = "not-authorship"
NOT_CAUSALITY = "not-causality"
NOT_EXCLUSIVE = "not-exclusive-line-attribution"
AMBIGUOUS_SHORT_HASH = "ambiguous-short-hash"
OUTSIDE_WINDOW = "outside-window"
PATH_ONLY_CONTEXT = "path-only-context"
CANDIDATE_NOT_DEFAULT = "candidate-not-default"
INCOMPLETE_TIMESTAMPS = "incomplete-timestamps"
TIME_WINDOW_ONLY = "time-window-only"
DIRECTORY_LEVEL_ONLY = "directory-level-only"

_MENTION = (NOT_AUTHORSHIP, NOT_CAUSALITY)
_WEAK = (NOT_AUTHORSHIP, NOT_CAUSALITY, CANDIDATE_NOT_DEFAULT)


class DeliveryEdge(BaseModel):
    model_config = STRICT_FROZEN

    repository_key: str
    session_id: int
    session_key: str
    turn_id: int
    turn_ordinal: int
    hash: str
    strength: Strength
    reasons: list[str]
    limitations: list[str]
    revision: str


class DeliveryResult(BaseModel):
    model_config = STRICT_FROZEN

    repository_key: str
    sessions: int
    turns: int
    edges: dict[str, int]  # strength -> count
    inserted: int
    updated: int
    deleted: int
    unchanged: int
    ambiguous_short_hashes: int  # observed short hashes matching several stored commits
    unmatched_hashes: int  # observed hashes matching no stored commit (not linked)
    paths_outside_worktree: int  # written paths not inside a worktree of this repository
    contextual_omitted: int  # contextual links beyond CONTEXTUAL_PER_PATH (counted, not linked)


@dataclass(slots=True)
class _Evidence:
    strength: Strength
    reason: str
    limitations: tuple[str, ...]


@dataclass(slots=True)
class _Commit:
    hash: str
    times: tuple[datetime, ...]  # author and committer instants that parsed


@dataclass(slots=True)
class _Counters:
    ambiguous: int = 0
    unmatched: int = 0
    outside: int = 0
    contextual_omitted: int = 0


@dataclass(slots=True)
class _RepoView:
    """The stored commits of one repository, indexed for the classifier."""

    conn: sqlite3.Connection
    repository_key: str
    roots: list[str]
    commits: dict[str, _Commit]
    sorted_hashes: list[str]
    timeline: list[tuple[datetime, str]]
    _files: dict[str, frozenset[str]] = field(default_factory=dict)
    _by_path: dict[str, list[str]] = field(default_factory=dict)

    def prefix_matches(self, prefix: str, limit: int) -> list[str]:
        start = bisect.bisect_left(self.sorted_hashes, prefix)
        out: list[str] = []
        for candidate in self.sorted_hashes[start:]:
            if not candidate.startswith(prefix) or len(out) >= limit:
                break
            out.append(candidate)
        return out

    def in_window(self, start: datetime, end: datetime) -> set[str]:
        lo = bisect.bisect_left(self.timeline, (start, ""))
        hi = bisect.bisect_right(self.timeline, (end, "\U0010ffff"))
        return {hash_ for _, hash_ in self.timeline[lo:hi]}

    def files(self, hash_: str) -> frozenset[str]:
        if hash_ not in self._files:
            paths = tables.commit_paths(self.conn, self.repository_key, hash_)
            self._files[hash_] = frozenset(paths)
        return self._files[hash_]

    def commits_changing(self, path: str) -> list[str]:
        if path not in self._by_path:
            hashes = tables.commits_changing(self.conn, self.repository_key, path)
            self._by_path[path] = [hash_ for hash_ in hashes if hash_ in self.commits]
        return self._by_path[path]

    def repo_relative(self, absolute: str) -> str | None:
        best = None
        for root in self.roots:
            if is_within(absolute, root) and (best is None or len(root) > len(best)):
                best = root
        if best is None or absolute == best:
            return None
        return absolute[len(best.rstrip("/")) + 1 :]


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _load_repository(conn: sqlite3.Connection, repository_key: str) -> _RepoView:
    roots = tables.worktree_roots(conn, repository_key)
    if not roots:
        raise errors.TeamloreError(errors.REPOSITORY_NOT_REGISTERED, repository_key=repository_key)
    commits: dict[str, _Commit] = {}
    timeline: list[tuple[datetime, str]] = []
    for hash_, author_time, committer_time in tables.commit_times(conn, repository_key):
        times = tuple({t for t in (parse_time(author_time), parse_time(committer_time)) if t})
        commits[hash_] = _Commit(hash_, times)
        timeline.extend((t, hash_) for t in times)
    timeline.sort()
    return _RepoView(conn, repository_key, roots, commits, sorted(commits), timeline)


def _hash_evidence(
    view: _RepoView, observed: str, from_commit_command: bool, counters: _Counters
) -> list[tuple[str, _Evidence]]:
    observed = observed.lower()
    full = len(observed) in (40, 64)
    if full:
        if observed not in view.commits:
            counters.unmatched += 1
            return []
        if from_commit_command:
            return [(observed, _Evidence("direct", "full-hash-in-commit-output", (NOT_EXCLUSIVE,)))]
        return [(observed, _Evidence("observed", "full-hash-in-tool-output", _MENTION))]
    if len(observed) < MIN_SHORT_HASH:
        return []
    matches = view.prefix_matches(observed, MAX_SHORT_HASH_MATCHES)
    if not matches:
        counters.unmatched += 1
        return []
    if len(matches) == 1:
        if from_commit_command:
            evidence = _Evidence("observed", "short-hash-in-commit-output", (NOT_EXCLUSIVE,))
        else:
            evidence = _Evidence("observed", "short-hash-in-tool-output", _MENTION)
        return [(matches[0], evidence)]
    counters.ambiguous += 1
    ambiguous = _Evidence(
        "candidate", f"ambiguous-short-hash:{observed}", (AMBIGUOUS_SHORT_HASH, *_WEAK)
    )
    return [(match, ambiguous) for match in matches]


def _distance(commit: _Commit, start: datetime | None, end: datetime | None) -> float:
    if not commit.times or start is None or end is None:
        return float("inf")
    return min(
        (start - t).total_seconds() if t < start else (t - end).total_seconds()
        for t in commit.times
    )


def _path_evidence(
    view: _RepoView,
    written: set[str],
    window: tuple[datetime, datetime] | None,
    extra: tuple[str, ...],
    counters: _Counters,
) -> list[tuple[str, _Evidence]]:
    out: list[tuple[str, _Evidence]] = []
    in_window = view.in_window(*window) if window else set()
    overlapped: set[str] = set()
    for path in sorted(written):
        outside: list[str] = []
        for hash_ in view.commits_changing(path):
            if hash_ in in_window:
                overlapped.add(hash_)
                reason = f"path-overlap-in-window:{path}"
                limits = (*_MENTION, NOT_EXCLUSIVE, *extra)
                out.append((hash_, _Evidence("observed", reason, limits)))
            else:
                outside.append(hash_)
        start, end = window if window else (None, None)
        outside.sort(key=lambda h: (_distance(view.commits[h], start, end), h))
        counters.contextual_omitted += max(0, len(outside) - CONTEXTUAL_PER_PATH)
        limits = (OUTSIDE_WINDOW, PATH_ONLY_CONTEXT, *_MENTION, *extra)
        if window is None:
            limits = (*limits, INCOMPLETE_TIMESTAMPS)
        for hash_ in outside[:CONTEXTUAL_PER_PATH]:
            reason = f"path-overlap-outside-window:{path}"
            out.append((hash_, _Evidence("contextual", reason, limits)))
    written_dirs = {os.path.dirname(p) for p in written} - {""}
    for hash_ in sorted(in_window - overlapped):
        shared = sorted({os.path.dirname(p) for p in view.files(hash_)} & written_dirs)
        if shared:
            for directory in shared:
                reason = f"directory-overlap-in-window:{directory}/"
                out.append((hash_, _Evidence("candidate", reason, (*_WEAK, DIRECTORY_LEVEL_ONLY))))
        else:
            evidence = _Evidence("candidate", "time-window-with-writes", (*_WEAK, TIME_WINDOW_ONLY))
            out.append((hash_, evidence))
    return out


def _merge(evidence: list[_Evidence]) -> tuple[Strength, list[str], list[str]]:
    best = min(evidence, key=lambda e: STRENGTH_RANK[e.strength]).strength
    limitations = sorted({lim for e in evidence if e.strength == best for lim in e.limitations})
    reasons = sorted({e.reason for e in evidence})
    if len(reasons) > MAX_PATH_REASONS:
        omitted = len(reasons) - MAX_PATH_REASONS
        reasons = [*reasons[:MAX_PATH_REASONS], f"reasons-omitted:{omitted}"]
    return best, reasons, limitations


def edge_revision(
    repository_key: str,
    session_key: str,
    turn_ordinal: int,
    hash_: str,
    strength: str,
    reasons: list[str],
    limitations: list[str],
) -> str:
    """Digest of an edge's content; excludes database ids and the revision itself."""
    return digest(
        {
            "format": EDGE_FORMAT,
            "repositoryKey": repository_key,
            "sessionKey": session_key,
            "turnOrdinal": turn_ordinal,
            "hash": hash_,
            "strength": strength,
            "reasons": reasons,
            "limitations": limitations,
        }
    )


def _session_edges(
    view: _RepoView, session: sqlite3.Row, counters: _Counters
) -> tuple[list[DeliveryEdge], int]:
    conn = view.conn
    turns = conn.execute(
        "SELECT id, ordinal, started_at, ended_at FROM turns WHERE session_id = ? ORDER BY ordinal",
        (session["id"],),
    ).fetchall()
    writes: dict[int, list[str]] = defaultdict(list)
    for row in conn.execute(
        "SELECT f.turn_id, f.path FROM file_touches f JOIN turns t ON t.id = f.turn_id"
        " WHERE t.session_id = ? AND f.kind = 'write' ORDER BY f.id",
        (session["id"],),
    ):
        writes[row["turn_id"]].append(row["path"])
    observed: dict[int, list[sqlite3.Row]] = defaultdict(list)
    for row in conn.execute(
        "SELECT o.turn_id, o.hash, o.from_commit_command FROM observed_commits o"
        " JOIN turns t ON t.id = o.turn_id WHERE t.session_id = ? ORDER BY o.id",
        (session["id"],),
    ):
        observed[row["turn_id"]].append(row)

    instants = [parse_time(session["ended_at"]), parse_time(session["started_at"])]
    for turn in turns:
        instants += [parse_time(turn["started_at"]), parse_time(turn["ended_at"])]
    known = [t for t in instants if t is not None]
    window_end = max(known) + COMMIT_WINDOW_AFTER_SESSION if known else None
    session_start = parse_time(session["started_at"])
    cwd = normalize_posix(session["cwd"] or "")

    edges: list[DeliveryEdge] = []
    for turn in turns:
        found: list[tuple[str, _Evidence]] = []
        for row in observed[turn["id"]]:
            found += _hash_evidence(view, row["hash"], bool(row["from_commit_command"]), counters)
        written = _repo_relative_paths(view, writes[turn["id"]], cwd, counters)
        if written:
            start = parse_time(turn["started_at"])
            extra: tuple[str, ...] = ()
            if start is None and session_start is not None:
                start, extra = session_start, (INCOMPLETE_TIMESTAMPS,)
            window = None
            if start is not None and window_end is not None:
                window = (start.replace(microsecond=0), window_end)
            found += _path_evidence(view, written, window, extra, counters)
        by_commit: dict[str, list[_Evidence]] = defaultdict(list)
        for hash_, evidence in found:
            by_commit[hash_].append(evidence)
        for hash_ in sorted(by_commit):
            strength, reasons, limitations = _merge(by_commit[hash_])
            edges.append(
                DeliveryEdge(
                    repository_key=view.repository_key,
                    session_id=session["id"],
                    session_key=session["session_key"],
                    turn_id=turn["id"],
                    turn_ordinal=turn["ordinal"],
                    hash=hash_,
                    strength=strength,
                    reasons=reasons,
                    limitations=limitations,
                    revision=edge_revision(
                        view.repository_key,
                        session["session_key"],
                        turn["ordinal"],
                        hash_,
                        strength,
                        reasons,
                        limitations,
                    ),
                )
            )
    return edges, len(turns)


def _repo_relative_paths(
    view: _RepoView, paths: list[str], cwd: str | None, counters: _Counters
) -> set[str]:
    out: set[str] = set()
    for path in paths:
        if path.startswith("/"):
            joined: str | None = path
        elif cwd is not None and path and not is_windows_path(path):
            joined = os.path.join(cwd, path)
        else:
            joined = None
        absolute = None
        if joined is not None and "\x00" not in joined:
            # resolve the directory only: git records a symlink at its own path
            joined = os.path.normpath(joined)
            directory = normalize_posix(os.path.dirname(joined))
            if directory is not None:
                absolute = os.path.join(directory, os.path.basename(joined))
        relative = view.repo_relative(absolute) if absolute else None
        if relative is None:
            counters.outside += 1
        else:
            out.add(relative)
    return out


def build_delivery_edges(conn: sqlite3.Connection, repository_key: str) -> DeliveryResult:
    """Recompute the delivery edges of one repository and store them (idempotent, by diff)."""
    view = _load_repository(conn, repository_key)
    sessions = tables.mapped_sessions(conn, repository_key)
    counters = _Counters()
    edges: list[DeliveryEdge] = []
    turn_count = 0
    for session in sessions:
        session_edges, turns = _session_edges(view, session, counters)
        edges += session_edges
        turn_count += turns

    with db.write_tx(conn):
        changes = tables.replace_edges(conn, repository_key, [s["id"] for s in sessions], edges)
    counts = {strength: 0 for strength in STRENGTH_RANK}
    for edge in edges:
        counts[edge.strength] += 1
    return DeliveryResult(
        repository_key=repository_key,
        sessions=len(sessions),
        turns=turn_count,
        edges=counts,
        inserted=changes.inserted,
        updated=changes.updated,
        deleted=changes.deleted,
        unchanged=changes.unchanged,
        ambiguous_short_hashes=counters.ambiguous,
        unmatched_hashes=counters.unmatched,
        paths_outside_worktree=counters.outside,
        contextual_omitted=counters.contextual_omitted,
    )


def list_edges(
    conn: sqlite3.Connection,
    repository_key: str,
    *,
    session_id: int | None = None,
    turn_id: int | None = None,
) -> list[DeliveryEdge]:
    """Stored edges of a repository (optionally of one session or turn), in a stable order."""
    return [
        DeliveryEdge(
            repository_key=row[0],
            session_id=row[1],
            session_key=row[2],
            turn_id=row[3],
            turn_ordinal=row[4],
            hash=row[5],
            strength=row[6],
            reasons=json.loads(row[7]),
            limitations=json.loads(row[8]),
            revision=row[9],
        )
        for row in tables.edge_rows(conn, repository_key, session_id=session_id, turn_id=turn_id)
    ]
