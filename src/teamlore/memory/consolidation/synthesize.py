"""`memory synthesize`: a ConsolidationTask@v1 for the agent, or why there is none.

Outcomes (`status`): `task` (a task; re-running with nothing changed returns the same one),
`pending-review` (a consolidation awaits review: `pendingRunId`), `nothing-new` (no approved
entry is new or changed since the baseline), `not-due` (`--if-due` and fewer than 20 new or
changed entries). Incremental by default; `full` carries every approved entry (a new task even
when nothing changed, because the replay epoch is part of the binding).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from teamlore.core import db
from teamlore.memory.consolidation.drift import sync_and_read
from teamlore.memory.consolidation.source import DUE_ENTRY_COUNT
from teamlore.memory.consolidation.task import (
    NEXT_PASS,
    TASK_CONTENT_BUDGET,
    EntrySelection,
    Mode,
    binding_of,
    task_document,
    task_entries,
    task_id_of,
)
from teamlore.memory.extraction import tasks
from teamlore.memory.extraction.tasks import Owner
from teamlore.repo.binding import RepositoryIdentity

SYNTHESIS_FORMAT = "threadshare-memory-synthesis@v1"
REUSABLE_TASK_STATES = ("pending", "claimed")


def _result(status: str, note: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "action": "synthesize",
        "format": SYNTHESIS_FORMAT,
        "status": status,
        "task": None,
        "taskId": None,
        "mode": None,
        "entryCount": 0,
        "newSinceBaseline": 0,
        "leftSinceBaseline": 0,
        "leftEntries": [],
        "deferredEntries": 0,
        "sceneCount": 0,
        "doctrine": False,
        "baselineRunId": None,
        "pendingRunId": None,
        "dueAt": DUE_ENTRY_COUNT,
        "note": note,
        "next": None,
    }
    return {**base, **fields}


def synthesize(
    conn: sqlite3.Connection,
    identity: RepositoryIdentity,
    *,
    full: bool = False,
    if_due: bool = False,
    now: int | None = None,
) -> dict[str, Any]:
    owner = Owner(identity.repository_key, identity.worktree_key)
    moment = tasks.now_ms() if now is None else now
    source, baseline = sync_and_read(conn, owner, identity.worktree_root)
    changed = baseline.changed(source)
    left = baseline.left(source)
    common = {
        "newSinceBaseline": len(changed),
        "leftSinceBaseline": len(left),
        "leftEntries": [e.entry_id for e in left],
        "sceneCount": len(source.scenes),
        "doctrine": source.doctrine is not None,
        "baselineRunId": baseline.successful_run_id,
    }
    if baseline.pending_run_id is not None:
        return _result(
            "pending-review",
            f"consolidation {baseline.pending_run_id} is already awaiting review",
            pendingRunId=baseline.pending_run_id,
            next="teamlore memory review --kind consolidation (then prepare and promote, or "
            "discard it)",
            **common,
        )
    mode: Mode = "full" if full else "incremental"
    selection = task_entries(source, baseline, mode)
    entries = selection.carried
    if not entries and not left:
        return _result(
            "nothing-new",
            "no approved entries are new or changed since the last consolidation"
            if source.approved_entries
            else "there are no approved entries yet",
            mode=mode,
            **common,
        )
    if if_due and len(changed) + len(left) < DUE_ENTRY_COUNT:
        return _result(
            "not-due",
            f"not due: {len(changed) + len(left)}/{DUE_ENTRY_COUNT} approved entries new, changed"
            " or no longer approved",
            mode=mode,
            **common,
        )
    binding = binding_of(conn, owner, source, baseline, mode)
    task_id = _issue(conn, owner, binding, moment)
    document = task_document(task_id, binding, source, selection, left)
    gone = f", no longer approved: {len(left)}" if left else ""
    return _result(
        "task",
        f"approved entries: {len(entries)}{gone}{_deferred_note(selection)}, scenes: "
        f"{len(source.scenes)}, doctrine: " + ("yes" if source.doctrine else "none yet"),
        task=document,
        taskId=task_id,
        mode=mode,
        entryCount=len(entries),
        deferredEntries=selection.deferred_new,
        next="Consolidate the entries into scenes and doctrine as the task's instructions say, "
        "then stage the ConsolidationPatch@v1 (memory stage)."
        + ("" if selection.deferred_new == 0 else f" {NEXT_PASS}"),
        **common,
    )


def _deferred_note(selection: EntrySelection) -> str:
    """What the task's budget left out, as the note says it."""
    parts = []
    if selection.deferred_new:
        parts.append(f"{selection.deferred_new} new or changed left for a next pass")
    if selection.deferred_consolidated:
        parts.append(f"{selection.deferred_consolidated} already consolidated left out")
    if not parts:
        return ""
    return f" ({', '.join(parts)}: a task holds at most {TASK_CONTENT_BUDGET // 1024} KiB)"


def _issue(conn: sqlite3.Connection, owner: Owner, binding: dict[str, Any], now: int) -> str:
    """The task id for `binding`: the open task already issued for it, or a new one (an
    identical binding whose task ended — its patch was discarded or voided — gets a new id)."""
    with db.write_tx(conn):
        issue = 0
        while True:
            task_id = task_id_of(binding, issue)
            if tasks.create_task(
                conn, task_id=task_id, kind="consolidation", owner=owner, binding=binding, now=now
            ):
                return task_id
            existing = tasks.find_task(conn, task_id)
            if existing is not None and existing.status in REUSABLE_TASK_STATES:
                return task_id
            issue += 1
