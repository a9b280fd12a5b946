"""What a consolidation reads: the approved entries, scenes and doctrine of one worktree, and
the consolidation baseline: the runs that succeeded here, and the record the tree carries
(`consolidated.json`, written by every promoted consolidation), so a clone that pulled another
teammate's scenes knows which entries they already cover.

The entries come from the approved projection (synced by the caller; it must cover the whole
tree), scenes and the doctrine from their files, read without following a symlink and checked
against the digest the projection recorded. `sourceTreeDigest` covers the entry files only
(paths and digests), so promoting a Skill does not disturb a pending consolidation; scenes and
the doctrine are bound separately (digest and heat).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from teamlore.contracts import digests
from teamlore.contracts._base import SCENE_NAME_RULE, is_scene_name
from teamlore.core import errors, safe_write
from teamlore.core.analyzer import ANALYZER_VERSION
from teamlore.core.canonical import digest
from teamlore.core.text.files import lf_sha256
from teamlore.memory.extraction.tasks import Owner
from teamlore.memory.store import documents as docs
from teamlore.memory.store.layout import CONSOLIDATED_FILE, MEMORY_ROOT, scene_path

# a synthesis is due once this many approved entries are new or changed since the last one
DUE_ENTRY_COUNT = 20

SOURCE_TREE_FORMAT = "threadshare-memory-source-tree@v1"


@dataclass(frozen=True, slots=True)
class ApprovedEntry:
    entry_id: str
    path: str  # repository-relative
    revision: int
    content_digest: str
    status: str
    type: str
    scene: str | None
    priority: int
    confidence: str
    body: str
    superseded_by: str | None = None

    def revision_json(self) -> dict[str, Any]:
        return {
            "entryId": self.entry_id,
            "revision": self.revision,
            "contentDigest": self.content_digest,
        }

    def task_json(self) -> dict[str, Any]:
        return {
            **self.revision_json(),
            "type": self.type,
            "scene": self.scene,
            "priority": self.priority,
            "confidence": self.confidence,
            "body": self.body,
        }


@dataclass(frozen=True, slots=True)
class LeftEntry:
    """An entry the last consolidation rested on that is no longer approved: deprecated, or
    its file removed. The scenes and doctrine may still say what it said."""

    entry_id: str
    status: str  # "deprecated" or "removed"
    superseded_by: str | None

    def task_json(self) -> dict[str, Any]:
        return {"entryId": self.entry_id, "status": self.status, "supersededBy": self.superseded_by}


@dataclass(frozen=True, slots=True)
class SceneFile:
    name: str
    path: str  # repository-relative
    content: str  # the whole file
    content_digest: str
    heat: int
    created: str
    summary: str

    def revision_json(self) -> dict[str, Any]:
        return {"name": self.name, "contentDigest": self.content_digest, "heat": self.heat}


@dataclass(frozen=True, slots=True)
class DoctrineFile:
    content: str
    content_digest: str


@dataclass(frozen=True, slots=True)
class ApprovedSource:
    """The approved tree as a consolidation binds it."""

    generation: int
    analyzer_version: str
    source_tree_digest: str  # entry files only
    entries: dict[str, ApprovedEntry]  # every entry file, approved and deprecated
    scenes: dict[str, SceneFile]
    doctrine: DoctrineFile | None

    @property
    def approved_entries(self) -> list[ApprovedEntry]:
        return sorted(
            (e for e in self.entries.values() if e.status == "approved"),
            key=lambda e: e.entry_id,
        )

    def entry_revisions(self) -> list[dict[str, Any]]:
        return [e.revision_json() for e in self.approved_entries]

    def scene_revisions(self) -> list[dict[str, Any]]:
        return [self.scenes[name].revision_json() for name in sorted(self.scenes)]


def entries_tree_digest(entries: Iterable[ApprovedEntry]) -> str:
    files = sorted(
        ({"path": e.path, "contentDigest": e.content_digest} for e in entries),
        key=lambda f: f["path"].encode("utf-8"),
    )
    return digest({"format": SOURCE_TREE_FORMAT, "entries": files})


def _incomplete(message: str, **details: Any) -> errors.TeamloreError:
    return errors.TeamloreError(errors.COVERAGE_INCOMPLETE, message, **details)


def read_source(conn: sqlite3.Connection, owner: Owner, worktree_root: Path) -> ApprovedSource:
    """The approved tree of `owner` from its (freshly synced) projection; scene and doctrine
    bytes from the files. A partial projection or a file that changed since the sync is refused
    (`COVERAGE_INCOMPLETE`): a consolidation never works from part of the memory."""
    from teamlore.memory.promotion.targets import read_memory_file

    row = conn.execute(
        "SELECT generation, coverage, analyzer_version FROM approved_projection "
        "WHERE repository_key = ? AND worktree_key = ?",
        (owner.repository_key, owner.worktree_key),
    ).fetchone()
    if row is None or row[1] != "complete" or row[2] != ANALYZER_VERSION:
        raise _incomplete(
            "the approved memory tree is not completely readable; `teamlore memory status` "
            "lists the files to fix"
        )
    entries: dict[str, ApprovedEntry] = {}
    scenes: dict[str, SceneFile] = {}
    doctrine: DoctrineFile | None = None
    for (
        kind,
        entry_id,
        path,
        revision,
        content_digest,
        status,
        entry_type,
        fm_json,
        body,
    ) in conn.execute(
        "SELECT kind, entry_id, path, revision, content_digest, status, entry_type, "
        "frontmatter_json, body_text FROM approved_entries WHERE repository_key = ? "
        "AND worktree_key = ? AND kind IN ('entry', 'scene', 'doctrine') ORDER BY path",
        (owner.repository_key, owner.worktree_key),
    ):
        frontmatter = orjson.loads(fm_json)
        repo_path = f"{MEMORY_ROOT}/{path}"
        if kind == "entry":
            entries[entry_id] = ApprovedEntry(
                entry_id=entry_id,
                path=repo_path,
                revision=int(revision),
                content_digest=content_digest,
                status=status,
                type=str(entry_type),
                scene=frontmatter.get("scene"),
                priority=int(frontmatter["priority"]),
                confidence=str(frontmatter["confidence"]),
                body=body,
                superseded_by=frontmatter.get("superseded_by"),
            )
            continue
        data = read_memory_file(worktree_root, repo_path)
        if data is None or lf_sha256(data) != content_digest:
            raise _incomplete(
                f"{repo_path} changed while it was being read; run the command again",
                path=repo_path,
            )
        if kind == "doctrine":
            doctrine = DoctrineFile(data.decode("utf-8"), content_digest)
            continue
        if not is_scene_name(entry_id) or repo_path != scene_path(entry_id):
            raise _incomplete(
                f"scene {repo_path} is not named as a scene is ({SCENE_NAME_RULE}); rename it "
                "so a consolidation can address it",
                path=repo_path,
            )
        scenes[entry_id] = SceneFile(
            name=entry_id,
            path=repo_path,
            content=data.decode("utf-8"),
            content_digest=content_digest,
            heat=int(frontmatter["heat"]),
            created=str(frontmatter["created"]),
            summary=str(frontmatter["summary"]),
        )
    return ApprovedSource(
        generation=int(row[0]),
        analyzer_version=str(row[2]),
        source_tree_digest=entries_tree_digest(entries.values()),
        entries=entries,
        scenes=scenes,
        doctrine=doctrine,
    )


# --- the baseline ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Baseline:
    """The runs that matter for the next synthesis of one owner."""

    successful_run_id: str | None  # latest no_op/applied run: the replay epoch
    last_successful_status: str | None
    last_successful_at: int | None
    pending_run_id: str | None  # a run awaiting review blocks the next one
    # latest (revision, contentDigest) per entry across every successful run
    entries: dict[str, tuple[int, str]] = field(default_factory=dict)
    # the tree's record: (revision, digest prefix) per entry; None when the tree has none
    committed: dict[str, tuple[int, str]] | None = None
    # sha256 of the record's bytes (None with `committed`): a synthesis binding pins it
    committed_digest: str | None = None
    # the approved entries of the newest consolidation (the last successful run here, or the
    # tree's record when it is newer): what the scenes and doctrine rest on now
    approved_before: frozenset[str] = frozenset()

    def covers(self, entry_id: str, revision: int, content_digest: str) -> bool:
        """Whether a consolidation, here or in the committed tree, covered this revision."""
        if self.entries.get(entry_id) == (revision, content_digest):
            return True
        covered = None if self.committed is None else self.committed.get(entry_id)
        return covered == (revision, content_digest[: docs.COVERED_DIGEST_CHARS])

    def changed(self, source: ApprovedSource) -> list[ApprovedEntry]:
        """Approved entries new or changed since the baseline."""
        return [
            e
            for e in source.approved_entries
            if not self.covers(e.entry_id, e.revision, e.content_digest)
        ]

    def covered_after(
        self, entry_revisions: Iterable[dict[str, Any]], carried: Iterable[ApprovedEntry]
    ) -> list[dict[str, Any]]:
        """The entry revisions a consolidation of `carried` leaves covered (for its record):
        those it carried and those the baseline covers; an entry it left for a next pass keeps
        the revision an earlier consolidation covered, or is not covered at all."""
        carried_ids = {e.entry_id for e in carried}
        covered: list[dict[str, Any]] = []
        for entry in entry_revisions:
            entry_id = entry["entryId"]
            if entry_id in carried_ids or self.covers(
                entry_id, entry["revision"], entry["contentDigest"]
            ):
                covered.append(entry)
                continue
            earlier = self.entries.get(entry_id) or (self.committed or {}).get(entry_id)
            if earlier is not None:
                covered.append(
                    {"entryId": entry_id, "revision": earlier[0], "contentDigest": earlier[1]}
                )
        return covered

    def left(self, source: ApprovedSource) -> list[LeftEntry]:
        """Entries the newest consolidation rested on that are no longer approved (deprecated
        or removed since): a change, which the scenes and doctrine that used them must follow."""
        approved = {e.entry_id for e in source.approved_entries}
        gone = sorted(self.approved_before - approved)
        return [_left_entry(entry_id, source.entries.get(entry_id)) for entry_id in gone]


def _left_entry(entry_id: str, entry: ApprovedEntry | None) -> LeftEntry:
    if entry is None:
        return LeftEntry(entry_id, "removed", None)
    return LeftEntry(entry_id, entry.status, entry.superseded_by)


def _approved_before(
    latest: tuple[Any, ...] | None,
    committed: dict[str, tuple[int, str]] | None,
    committed_digest: str | None,
) -> frozenset[str]:
    """The approved entries of the newest consolidation: the last successful run here, unless
    the tree's record changed since that run was bound (a pull brought a teammate's, or a
    promote wrote it), then the record's. Of the run's, not those its pass over the task
    budget left for the next one (recorded with the run): the scenes never rested on them."""
    if latest is not None:
        binding = orjson.loads(latest[3])
        if committed_digest is None or binding.get("consolidatedDigest") == committed_digest:
            deferred = frozenset(orjson.loads(latest[4] or "[]"))
            return frozenset(e["entryId"] for e in binding["entryRevisions"]) - deferred
    return frozenset(committed or ())


def covered_record(entry_revisions: Iterable[dict[str, Any]]) -> bytes:
    """`consolidated.json` after a consolidation of `entry_revisions`: its binding's (every
    approved entry, the ones it read and the ones the baseline already covered), or, for a pass
    that left entries for the next one, its `covered_after`."""
    return docs.dump_consolidated(
        {
            e["entryId"]: (int(e["revision"]), e["contentDigest"][: docs.COVERED_DIGEST_CHARS])
            for e in entry_revisions
        }
    )


def read_committed(worktree_root: Path) -> tuple[dict[str, tuple[int, str]] | None, str | None]:
    """The tree's `consolidated.json` and the sha256 of its bytes; (None, None) when there is
    none (a tree from before the record, or one never consolidated) or it does not read (lint
    names the problem: `capacity.file-size` over 1 MiB, `tree.not-a-file` for a FIFO): then the
    local runs alone are the baseline, as before. Read as every committed file a plan binds is
    read (no symlink followed, never waiting on a FIFO, at most 1 MiB), since `memory status`
    reads it on every run."""
    try:
        data = safe_write.read_file(
            worktree_root, CONSOLIDATED_FILE, max_bytes=docs.CONSOLIDATED_MAX_BYTES
        )
        if data is None:
            return None, None
        return docs.load_consolidated(data, CONSOLIDATED_FILE), lf_sha256(data)
    except (errors.TeamloreError, docs.MemoryFormatError, OSError):
        return None, None


def load_baseline(conn: sqlite3.Connection, owner: Owner, worktree_root: Path) -> Baseline:
    keys = (owner.repository_key, owner.worktree_key)
    latest = conn.execute(
        "SELECT run_id, status, updated_at, binding_json, deferred_entry_ids "
        "FROM consolidation_runs WHERE repository_key = ? "
        "AND worktree_key = ? AND status IN ('no_op', 'applied') "
        "ORDER BY updated_at DESC, rowid DESC LIMIT 1",
        keys,
    ).fetchone()
    pending = conn.execute(
        "SELECT run_id FROM consolidation_runs WHERE repository_key = ? AND worktree_key = ? "
        "AND status = 'pending_review' ORDER BY updated_at DESC, rowid DESC LIMIT 1",
        keys,
    ).fetchone()
    entries: dict[str, tuple[int, str]] = {}
    for entry_id, revision, content_digest in conn.execute(
        "SELECT e.entry_id, e.revision, e.content_digest FROM consolidation_run_entries e "
        "JOIN consolidation_runs r ON r.run_id = e.run_id WHERE r.repository_key = ? "
        "AND r.worktree_key = ? AND r.status IN ('no_op', 'applied') "
        "ORDER BY r.updated_at, r.rowid",
        keys,
    ):
        entries[entry_id] = (int(revision), content_digest)  # later runs win
    committed, committed_digest = read_committed(worktree_root)
    return Baseline(
        successful_run_id=None if latest is None else str(latest[0]),
        last_successful_status=None if latest is None else str(latest[1]),
        last_successful_at=None if latest is None else int(latest[2]),
        pending_run_id=None if pending is None else str(pending[0]),
        entries=entries,
        committed=committed,
        committed_digest=committed_digest,
        approved_before=_approved_before(latest, committed, committed_digest),
    )


def entry_set_digest(entries: Iterable[ApprovedEntry]) -> str:
    return digests.entry_set_digest([e.revision_json() for e in entries])


def status_of(conn: sqlite3.Connection, owner: Owner, worktree_root: Path) -> dict[str, Any]:
    """The consolidation part of `memory status` (read-only, from the last synced projection
    and the tree's one small `consolidated.json`): the baseline, the run awaiting review, how
    many approved entries are new or changed since the baseline, whether synthesis is due, and
    the runs by status."""
    baseline = load_baseline(conn, owner, worktree_root)
    keys = (owner.repository_key, owner.worktree_key)
    approved = conn.execute(
        "SELECT entry_id, revision, content_digest FROM approved_entries WHERE "
        "repository_key = ? AND worktree_key = ? AND kind = 'entry' AND status = 'approved'",
        keys,
    ).fetchall()
    new = sum(1 for e, r, d in approved if not baseline.covers(e, int(r), d))
    left = len(baseline.approved_before - {entry_id for entry_id, _, _ in approved})
    runs = {"pendingReview": 0, "noOp": 0, "applied": 0, "stale": 0}
    names = {"pending_review": "pendingReview", "no_op": "noOp", "applied": "applied"}
    for status, count in conn.execute(
        "SELECT status, count(*) FROM consolidation_runs WHERE repository_key = ? "
        "AND worktree_key = ? GROUP BY status",
        keys,
    ):
        runs[names.get(status, status)] = int(count)
    return {
        "baselineRunId": baseline.successful_run_id,
        "baselineStatus": baseline.last_successful_status,
        "pendingRunId": baseline.pending_run_id,
        "committedEntries": None if baseline.committed is None else len(baseline.committed),
        "newSinceBaseline": new,
        "leftSinceBaseline": left,
        "dueAt": DUE_ENTRY_COUNT,
        "due": baseline.pending_run_id is None and new + left >= DUE_ENTRY_COUNT,
        "runs": runs,
    }
