"""Promotion: apply an approved PromotionPlan@v1 to the worktree's `.threadshare/memory/` tree.

Journal (`promotion_journal.status`): `generated → approved → applying → applied | voided`.

- **approve** binds the plan digest: the stored canonical plan must hash to the stored digest
  (and to the digest the caller reviewed, when given); `generated → approved`. Re-approving an
  approved plan is a no-op.
- **apply** runs under a cross-process file lock in the state dir (`LOCK_NAME`), so one plan is
  applied by one process; a second promote waits for the lock and then sees `applied`.
  1. the owner is re-resolved from the caller's directory: another repository, or another
     worktree of the same one, is refused (`PROMOTION_OWNER_MISMATCH`; the plan stays valid for
     its own worktree);
  2. precheck (only from `approved`; nothing is written before it passes): every candidate is
     still `quarantined` at the plan's revision, the assessment digest is unchanged, the plan's
     policy version is the current lint policy and every file to write still lints clean, and
     every target's current working-tree bytes have the plan's git blob OID (null: absent),
     read with the no-follow reader (a symlink on the way is drift too). Any drift voids the
     plan with a stable code and the drifted path — review again. Passing stores the original
     bytes of every target and moves the journal to `applying` in one transaction;
  3. mutation: writes (in plan order), then deletes, each with `teamlore.core.safe_write`
     (no-follow traversal, same-dir temp + fsync + atomic rename, CAS on the current bytes);
     per-file progress is recorded after each file. Per-file idempotent: a target that already
     holds the approved bytes (or a delete target already gone) is marked done without writing.
     A target that holds neither its original nor the approved bytes (edited mid-apply) makes
     the apply roll back every file it installed (only where the installed bytes are still
     there — other bytes are never overwritten) and void;
  4. one transaction ends it: candidates `promoted` (revision + 1), removed from the candidate
     FTS, candidate projection generation + 1, journal `applied`, original bytes cleared;
  5. the approved projection is refreshed (outside the journal: a failure there is reported in
     the result, and a later sync or promote repeats it).
- The working tree only: nothing is staged, committed or pushed.

Crash safety: failpoints (`FAILPOINTS`) sit between every step. After a kill, `promote` again
(or `memory status`: `recover_promotions`) continues deterministically: `approved` re-runs the
precheck, `applying` re-checks candidates/assessments/policy and resumes the mutation file by
file, `applied` replays idempotently, `voided` stays voided.
"""

from __future__ import annotations

import contextlib
import posixpath
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel

from teamlore.core import db, errors, refusals, safe_write
from teamlore.core.failpoints import failpoint
from teamlore.core.lock import file_lock
from teamlore.core.paths import resolve_home
from teamlore.core.shapes.strict import WIRE
from teamlore.core.timeutil import now_ms
from teamlore.memory.extraction.tasks import Owner
from teamlore.memory.promotion import kinds
from teamlore.memory.promotion.bindings import (
    _check_kinds,
    _check_owner,
    _check_state_bindings,
    _check_targets,
    _Drift,
    _oid,
    _read_target,
    _void,
)
from teamlore.memory.promotion.stored_plan import (
    StoredFile,
    StoredPlan,
    _voided_error,
    approve_plan,
    load_plan,
)
from teamlore.repo.binding import RepositoryIdentity

__all__ = [
    "FAILPOINTS",
    "LOCK_NAME",
    "FileOutcome",
    "PromotionOutcome",
    "plans_holding_candidates",
    "promote",
    "recover_promotions",
    "unfinished_plan_ids",
]

LOCK_NAME = "memory-state.sqlite3-promotion.lock"
LOCK_WAIT_SECONDS = 30.0

FAILPOINTS = (
    "promotion.after-approve",  # approved, precheck not run
    "promotion.after-precheck",  # applying, originals stored, nothing written
    "promotion.before-write",  # per file: temp not yet installed
    "promotion.after-write",  # per file: installed, progress not recorded
    "promotion.after-mark",  # per file: progress recorded
    "promotion.before-finish",  # every file done, closing transaction not run
    "promotion.after-finish",  # applied, projection not refreshed
)

FileResult = Literal["written", "deleted", "already-present", "already-applied"]


class _Wire(BaseModel):
    model_config = WIRE


class FileOutcome(_Wire):
    target_path: str
    operation: Literal["write", "delete"]
    outcome: FileResult


class CandidateOutcome(_Wire):
    candidate_id: str
    revision: int  # the promoted revision


class ProjectionOutcome(_Wire):
    generation: int | None = None
    coverage: str | None = None
    error: dict[str, Any] | None = None


class PromotionOutcome(_Wire):
    plan_id: str
    plan_digest: str
    status: Literal["applied"]
    idempotent: bool  # the plan was already applied before this call
    resumed: bool  # this call continued an apply interrupted earlier
    files: list[FileOutcome]
    candidates: list[CandidateOutcome]
    candidate_generation: int | None
    projection: ProjectionOutcome | None


# --------------------------------------------------------------------------------------------
# apply


def _precheck(conn: sqlite3.Connection, stored: StoredPlan, root: Path) -> None:
    """`approved → applying` when every binding holds; originals stored for a rollback."""
    _check_state_bindings(conn, stored)
    _check_kinds(conn, stored, root, before=True)
    originals = _check_targets(root, stored)
    with db.write_tx(conn):
        changed = conn.execute(
            "UPDATE promotion_journal SET status = 'applying', updated_at = ? "
            "WHERE plan_id = ? AND status = 'approved'",
            (now_ms(), stored.plan.plan_id),
        ).rowcount
        if not changed:
            raise errors.TeamloreError(
                errors.PLAN_STATE_INVALID,
                f"plan {stored.plan.plan_id} left the approved state during the precheck",
            )
        conn.executemany(
            "INSERT OR REPLACE INTO promotion_originals (plan_id, target_path, original_content) "
            "VALUES (?, ?, ?)",
            [(stored.plan.plan_id, path, data) for path, data in originals.items()],
        )
    failpoint("promotion.after-precheck")


def _originals(conn: sqlite3.Connection, plan_id: str) -> dict[str, bytes | None]:
    return {
        r["target_path"]: None if r["original_content"] is None else bytes(r["original_content"])
        for r in conn.execute(
            "SELECT target_path, original_content FROM promotion_originals WHERE plan_id = ?",
            (plan_id,),
        )
    }


def _mark_applied(conn: sqlite3.Connection, plan_id: str, path: str) -> None:
    with db.write_tx(conn):
        conn.execute(
            "UPDATE promotion_files SET applied = 1 WHERE plan_id = ? AND target_path = ?",
            (plan_id, path),
        )


def _apply_file(
    conn: sqlite3.Connection, root: Path, stored: StoredPlan, f: StoredFile
) -> FileResult:
    plan_id = stored.plan.plan_id
    if f.applied:
        return "already-applied"
    current = _read_target(root, f.target_path)
    if current == f.content:  # the approved bytes (or, for a delete, the absence) already there
        _mark_applied(conn, plan_id, f.target_path)
        return "already-present"
    if _oid(current) != f.target_blob_hash:
        raise _Drift(
            errors.PROMOTION_TARGET_DRIFT,
            f"{f.target_path} changed while the plan was being applied",
            f.target_path,
        )

    def still_original(now: bytes | None) -> bool:
        return _oid(now) == f.target_blob_hash

    failpoint("promotion.before-write")
    try:
        if f.content is None:
            safe_write.delete_file(root, f.target_path, expect=still_original)
        else:
            safe_write.write_file(root, f.target_path, f.content, expect=still_original)
    except safe_write.ExpectationFailed:
        raise _Drift(
            errors.PROMOTION_TARGET_DRIFT,
            f"{f.target_path} changed while the plan was being applied",
            f.target_path,
        ) from None
    except errors.TeamloreError as exc:
        raise _Drift.of(exc, f.target_path) from None
    failpoint("promotion.after-write")
    _mark_applied(conn, plan_id, f.target_path)
    failpoint("promotion.after-mark")
    return "written" if f.content is not None else "deleted"


def _roll_back(conn: sqlite3.Connection, root: Path, stored: StoredPlan) -> None:
    """Put back the original bytes of every target that still holds what this plan installed;
    anything else (someone else's bytes) is left exactly as it is."""
    originals = _originals(conn, stored.plan.plan_id)
    for f in reversed(stored.files):
        if f.target_path not in originals:
            continue
        original = originals[f.target_path]
        try:
            current = safe_write.read_file(root, f.target_path)
        except errors.TeamloreError:
            continue
        if current != f.content or current == original:
            continue

        def still_ours(now: bytes | None, installed: bytes | None = f.content) -> bool:
            return now == installed

        try:
            if original is None:
                safe_write.delete_file(root, f.target_path, expect=still_ours)
            else:
                safe_write.write_file(root, f.target_path, original, expect=still_ours)
        except (safe_write.ExpectationFailed, errors.TeamloreError) as exc:
            raise errors.TeamloreError(
                errors.PROMOTION_ROLLBACK_REQUIRED,
                f"{f.target_path} changed while plan {stored.plan.plan_id} was rolled back; "
                "check it by hand (`git status`, `git diff`), then run promote again",
                planId=stored.plan.plan_id,
                path=f.target_path,
            ) from exc


def _finish(conn: sqlite3.Connection, stored: StoredPlan) -> tuple[list[CandidateOutcome], int]:
    from teamlore.memory.extraction.drafts import bump_candidate_generation, unindex_candidate

    plan = stored.plan
    now = now_ms()
    promoted: list[CandidateOutcome] = []
    with db.write_tx(conn):
        for bound in plan.candidate_revisions:
            changed = conn.execute(
                "UPDATE candidates SET status = 'promoted', revision = revision + 1, "
                "updated_at = ? WHERE candidate_id = ? AND repository_key = ? "
                "AND worktree_key = ? AND status = 'quarantined' AND revision = ?",
                (
                    now,
                    bound.candidate_id,
                    stored.repository_key,
                    stored.worktree_key,
                    bound.revision,
                ),
            ).rowcount
            if changed != 1:
                raise _Drift(
                    errors.PROMOTION_CANDIDATE_DRIFT,
                    f"candidate {bound.candidate_id} changed while the plan was applied",
                )
            unindex_candidate(conn, bound.candidate_id)
            promoted.append(
                CandidateOutcome(candidate_id=bound.candidate_id, revision=bound.revision + 1)
            )
        for hooks in kinds.kinds_of(conn, plan.candidate_ids):
            if hooks.on_applied is not None:
                hooks.on_applied(conn, plan.candidate_ids, now)
        generation = bump_candidate_generation(conn, stored.owner)
        conn.execute(
            "UPDATE promotion_journal SET status = 'applied', updated_at = ? "
            "WHERE plan_id = ? AND status = 'applying'",
            (now, plan.plan_id),
        )
        conn.execute(
            "INSERT INTO promotion_outcomes (plan_id, finished_at) VALUES (?, ?) "
            "ON CONFLICT(plan_id) DO UPDATE SET finished_at = excluded.finished_at",
            (plan.plan_id, now),
        )
        conn.execute("DELETE FROM promotion_originals WHERE plan_id = ?", (plan.plan_id,))
    failpoint("promotion.after-finish")
    return promoted, generation


def _mutate(
    conn: sqlite3.Connection, root: Path, stored: StoredPlan
) -> tuple[list[FileOutcome], list[CandidateOutcome], int]:
    outcomes: list[FileOutcome] = []
    try:
        _check_state_bindings(conn, stored)
        _check_kinds(conn, stored, root, before=False)
        for f in stored.files:
            result = _apply_file(conn, root, stored, f)
            outcomes.append(
                FileOutcome(target_path=f.target_path, operation=f.operation, outcome=result)
            )
        failpoint("promotion.before-finish")
        promoted, generation = _finish(conn, stored)
    except _Drift as drift:
        _roll_back(conn, root, load_plan(conn, stored.plan.plan_id))
        raise _void(conn, stored, drift) from None
    return outcomes, promoted, generation


def _applied_outcome(
    conn: sqlite3.Connection,
    stored: StoredPlan,
    *,
    idempotent: bool,
    resumed: bool,
    files: list[FileOutcome] | None = None,
    candidates: list[CandidateOutcome] | None = None,
    generation: int | None = None,
) -> PromotionOutcome:
    if candidates is None:
        candidates = []
        for bound in stored.plan.candidate_revisions:
            row = conn.execute(
                "SELECT revision FROM candidates WHERE candidate_id = ?", (bound.candidate_id,)
            ).fetchone()
            candidates.append(
                CandidateOutcome(
                    candidate_id=bound.candidate_id,
                    revision=int(row["revision"]) if row else bound.revision + 1,
                )
            )
    return PromotionOutcome(
        plan_id=stored.plan.plan_id,
        plan_digest=stored.plan_digest,
        status="applied",
        idempotent=idempotent,
        resumed=resumed,
        files=files
        if files is not None
        else [
            FileOutcome(target_path=f.target_path, operation=f.operation, outcome="already-applied")
            for f in stored.files
        ],
        candidates=candidates,
        candidate_generation=generation,
        projection=None,
    )


def _refresh_projection(
    conn: sqlite3.Connection, stored: StoredPlan, root: Path
) -> ProjectionOutcome:
    from teamlore.memory.store.projection import sync_approved_projection

    try:
        result = sync_approved_projection(
            conn,
            repository_key=stored.repository_key,
            worktree_key=stored.worktree_key,
            worktree_root=root,
        )
    except errors.TeamloreError as exc:
        return ProjectionOutcome(error=exc.to_json())
    return ProjectionOutcome(generation=result.generation, coverage=result.coverage)


@contextmanager
def _promotion_lock(home: Path | None) -> Iterator[None]:
    with file_lock(
        resolve_home(home) / LOCK_NAME, wait_seconds=LOCK_WAIT_SECONDS, what="a promotion"
    ):
        yield


def _apply_locked(
    conn: sqlite3.Connection, stored: StoredPlan, identity: RepositoryIdentity
) -> PromotionOutcome:
    root = identity.worktree_root
    plan_id = stored.plan.plan_id
    if stored.status == "applied":
        return _applied_outcome(conn, stored, idempotent=True, resumed=False)
    if stored.status == "voided":
        raise _voided_error(conn, plan_id)
    if stored.status == "generated":
        raise errors.TeamloreError(
            errors.PLAN_STATE_INVALID, f"plan {plan_id} is not approved", planId=plan_id
        )
    resumed = stored.status == "applying"
    if stored.status == "approved":
        try:
            _precheck(conn, stored, root)
        except _Drift as drift:
            raise _void(conn, stored, drift) from None
    files, promoted, generation = _mutate(conn, root, load_plan(conn, plan_id))
    return _applied_outcome(
        conn,
        stored,
        idempotent=False,
        resumed=resumed,
        files=files,
        candidates=promoted,
        generation=generation,
    )


def promote(
    conn: sqlite3.Connection,
    plan_id: str,
    *,
    identity: RepositoryIdentity,
    home: Path | None = None,
    plan_digest: str | None = None,
    approve: bool = True,
) -> PromotionOutcome:
    """Approve (unless `approve=False`) and apply plan `plan_id` in the caller's worktree
    `identity`, then refresh the approved projection. See the module docstring."""
    with _promotion_lock(home):
        stored = load_plan(conn, plan_id)
        _check_owner(stored, identity)
        started = time.time()
        for folder in sorted({posixpath.dirname(f.target_path) for f in stored.files}):
            # a promotion killed mid-write leaves its temp file behind: every temp made before
            # this promote that no live writer holds is removed, whatever its age (another
            # command's writer, which this lock does not stop, keeps its own: it holds a flock
            # on it). An unsafe path is left for the checks below, which void the plan for it.
            with contextlib.suppress(errors.TeamloreError):
                safe_write.remove_dead_temps(identity.worktree_root, folder, older_than=started)
        if approve:
            approve_plan(conn, plan_id, plan_digest=plan_digest)
        elif plan_digest is not None and plan_digest != stored.plan_digest:
            raise errors.TeamloreError(errors.PLAN_DIGEST_MISMATCH, planId=plan_id)
        outcome = _apply_locked(conn, load_plan(conn, plan_id), identity)
        projection = _refresh_projection(conn, stored, identity.worktree_root)
    return outcome.model_copy(update={"projection": projection})


def recover_promotions(
    conn: sqlite3.Connection, *, identity: RepositoryIdentity, home: Path | None = None
) -> list[tuple[str, PromotionOutcome | errors.TeamloreError]]:
    """Resume every plan of this worktree interrupted in `applying` (`memory status` does):
    each ends `applied`, or voided/refused with the error returned in its place."""
    results: list[tuple[str, PromotionOutcome | errors.TeamloreError]] = []
    for plan_id in unfinished_plan_ids(conn, Owner(identity.repository_key, identity.worktree_key))[
        "applying"
    ]:
        try:
            outcome = promote(conn, plan_id, identity=identity, home=home, approve=False)
        except (errors.TeamloreError, OSError) as exc:  # a full disk: status still answers
            results.append((plan_id, refusals.refusal_for(exc)))
        else:
            results.append((plan_id, outcome))
    return results


def unfinished_plan_ids(conn: sqlite3.Connection, owner: Owner) -> dict[str, list[str]]:
    """Plan ids of the owner that are `generated`, `approved` or `applying`."""
    out: dict[str, list[str]] = {"generated": [], "approved": [], "applying": []}
    for row in conn.execute(
        "SELECT plan_id, status FROM promotion_journal WHERE repository_key = ? AND "
        "worktree_key = ? AND status IN ('generated', 'approved', 'applying') "
        "ORDER BY updated_at, plan_id",
        (owner.repository_key, owner.worktree_key),
    ):
        out[row["status"]].append(row["plan_id"])
    return out


def plans_holding_candidates(conn: sqlite3.Connection, candidate_ids: Sequence[str]) -> list[str]:
    """Ids of `approved`/`applying` plans that include any of the candidates: while such a plan
    exists its candidates must not be confirmed, discarded or re-adjudicated."""
    wanted = set(candidate_ids)
    held: list[str] = []
    for row in conn.execute(
        "SELECT plan_id, candidate_ids_json FROM promotion_journal "
        "WHERE status IN ('approved', 'applying') ORDER BY plan_id"
    ):
        if wanted & set(orjson.loads(row["candidate_ids_json"])):
            held.append(row["plan_id"])
    return held
