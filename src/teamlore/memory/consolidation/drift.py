"""Revalidation: does the approved tree still hold what a consolidation binding pinned?

Run at stage, review, prepare and at every promotion apply step: the entry files (paths and
digests), every approved entry's revision, the exact scene set with digests and heat, the
doctrine's digest, the tree's `consolidated.json` and the replay epoch (no other consolidation
succeeded since) must be unchanged. Files a plan writes or deletes (`exclude`) are left to the
plan's own per-file CAS, so an apply resumed after a crash — its first files already written —
still checks the rest.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.memory.consolidation.source import (
    ApprovedSource,
    Baseline,
    load_baseline,
    read_source,
)
from teamlore.memory.extraction.tasks import Owner
from teamlore.memory.store.layout import CONSOLIDATED_FILE, DOCTRINE_FILE, scene_path


def _drift(what: str, path: str | None = None) -> errors.TeamloreError:
    details: dict[str, Any] = {"changed": what}
    if path is not None:
        details["path"] = path
    return errors.TeamloreError(
        errors.CONSOLIDATION_DRIFT,
        f"{what} changed since synthesize; synthesize again",
        **details,
    )


def sync_and_read(
    conn: sqlite3.Connection, owner: Owner, worktree_root: Path
) -> tuple[ApprovedSource, Baseline]:
    """Sync the approved projection, then read the source and the baseline."""
    from teamlore.memory.store.projection import sync_approved_projection

    sync_approved_projection(
        conn,
        repository_key=owner.repository_key,
        worktree_key=owner.worktree_key,
        worktree_root=worktree_root,
    )
    return read_source(conn, owner, worktree_root), load_baseline(conn, owner, worktree_root)


def check_unchanged(
    binding: Mapping[str, Any],
    source: ApprovedSource,
    baseline: Baseline,
    *,
    exclude: Collection[str] = (),
) -> None:
    """Raise `CONSOLIDATION_DRIFT` naming the first thing that differs from `binding`."""
    if baseline.successful_run_id != binding["replay"]["afterSuccessfulRunId"]:
        raise _drift("the consolidation baseline (another consolidation succeeded)")
    if source.source_tree_digest != binding["approvedProjection"]["sourceTreeDigest"]:
        raise _drift("the approved entry files")
    if source.entry_revisions() != list(binding["entryRevisions"]):
        raise _drift("the approved entries")
    bound = {s["name"]: s for s in binding["sceneRevisions"]}
    current = {s["name"]: s for s in source.scene_revisions()}
    for name in sorted(set(bound) | set(current)):
        path = scene_path(name)
        if path in exclude:
            continue
        if bound.get(name) != current.get(name):
            raise _drift(f"scene {name}", path)
    if DOCTRINE_FILE not in exclude:
        doctrine = None if source.doctrine is None else source.doctrine.content_digest
        if doctrine != binding["doctrineDigest"]:
            raise _drift("the doctrine", DOCTRINE_FILE)
    if CONSOLIDATED_FILE not in exclude and (
        baseline.committed_digest != binding.get("consolidatedDigest")
    ):
        raise _drift("the consolidation record (consolidated.json)", CONSOLIDATED_FILE)


def revalidate(
    conn: sqlite3.Connection,
    owner: Owner,
    worktree_root: Path,
    binding: Mapping[str, Any],
    *,
    exclude: Collection[str] = (),
) -> tuple[ApprovedSource, Baseline]:
    """Sync, read and check; a tree that no longer reads completely is drift too."""
    try:
        source, baseline = sync_and_read(conn, owner, worktree_root)
    except errors.TeamloreError as exc:
        if exc.code != errors.COVERAGE_INCOMPLETE.code:
            raise
        raise _drift(f"the memory tree (it no longer reads completely: {exc.message})") from None
    check_unchanged(binding, source, baseline, exclude=exclude)
    return source, baseline
