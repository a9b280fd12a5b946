"""A promotion plan as the journal stores it (`StoredPlan`, its files), loading it with its
integrity checks, and approval: `generated → approved`, bound to the plan digest."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import ValidationError

from teamlore.contracts import digests
from teamlore.contracts.promotion import PromotionPlan
from teamlore.core import db, errors, safe_write
from teamlore.core.failpoints import failpoint
from teamlore.core.timeutil import now_ms
from teamlore.memory.extraction.tasks import Owner
from teamlore.memory.promotion import kinds

PlanStatus = Literal["generated", "approved", "applying", "applied", "voided"]


@dataclass(frozen=True, slots=True)
class StoredFile:
    target_path: str
    operation: Literal["write", "delete"]
    target_blob_hash: str | None
    content: bytes | None  # the approved bytes (None for a delete)
    applied: bool


@dataclass(frozen=True, slots=True)
class StoredPlan:
    plan: PromotionPlan
    plan_digest: str
    status: PlanStatus
    repository_key: str
    worktree_key: str
    files: tuple[StoredFile, ...]  # writes in plan order, then deletes

    @property
    def owner(self) -> Owner:
        return Owner(self.repository_key, self.worktree_key)


# --------------------------------------------------------------------------------------------
# loading


def _corrupt(plan_id: str, why: str) -> errors.TeamloreError:
    return errors.TeamloreError(errors.PLAN_CORRUPT, f"plan {plan_id}: {why}", planId=plan_id)


def load_plan(conn: sqlite3.Connection, plan_id: str) -> StoredPlan:
    """The journaled plan with its approved bytes, verified against its digest."""
    row = conn.execute(
        "SELECT plan_id, repository_key, worktree_key, plan_canonical_json, plan_digest, "
        "candidate_ids_json, assessment_digest, policy_version, status "
        "FROM promotion_journal WHERE plan_id = ?",
        (plan_id,),
    ).fetchone()
    if row is None:
        raise errors.TeamloreError(
            errors.PLAN_NOT_FOUND, f"no promotion plan {plan_id!r}", planId=plan_id
        )
    try:
        plan = PromotionPlan.from_wire(orjson.loads(row["plan_canonical_json"]))
    except (ValidationError, orjson.JSONDecodeError) as exc:
        raise _corrupt(plan_id, f"the stored plan is not a PromotionPlan@v1 ({exc})") from None
    if digests.plan_digest(plan) != row["plan_digest"]:
        raise _corrupt(plan_id, "the stored plan does not hash to its digest")
    if (
        plan.plan_id != plan_id
        or plan.owner.repository_key != row["repository_key"]
        or plan.owner.worktree_key != row["worktree_key"]
        or list(plan.candidate_ids) != orjson.loads(row["candidate_ids_json"])
        or plan.assessment_digest != row["assessment_digest"]
        or plan.policy_version != row["policy_version"]
    ):
        raise _corrupt(plan_id, "the journal row disagrees with the plan it stores")
    stored = {
        r["target_path"]: r
        for r in conn.execute(
            "SELECT target_path, target_blob_hash, sanitized_content, sanitized_digest, applied "
            "FROM promotion_files WHERE plan_id = ?",
            (plan_id,),
        )
    }
    if set(stored) != {f.target_path for f in plan.per_file}:
        raise _corrupt(plan_id, "the stored files are not the plan's files")
    files: list[StoredFile] = []
    for planned in plan.per_file:
        r = stored[planned.target_path]
        if r["target_blob_hash"] != planned.target_blob_hash:
            raise _corrupt(plan_id, f"{planned.target_path}: stored blob OID differs from plan")
        content: bytes | None = None
        if planned.operation == "write":
            content = bytes(r["sanitized_content"])
            actual = digests.sanitized_content_digest(content)
            if actual != planned.sanitized_content_digest or actual != r["sanitized_digest"]:
                raise _corrupt(plan_id, f"{planned.target_path}: stored bytes differ from plan")
        files.append(
            StoredFile(
                planned.target_path,
                planned.operation,
                planned.target_blob_hash,
                content,
                bool(r["applied"]),
            )
        )
    files.sort(key=lambda f: f.operation == "delete")  # stable: writes first, then deletes
    return StoredPlan(
        plan,
        row["plan_digest"],
        row["status"],
        row["repository_key"],
        row["worktree_key"],
        tuple(files),
    )


@dataclass(frozen=True, slots=True)
class PlanState:
    """A plan as it stands now; for a voided plan, why (`void_code`, `void_message` and the
    drifted path, when promote found the drift)."""

    plan_id: str
    status: PlanStatus
    void_code: str | None = None
    void_path: str | None = None
    void_message: str | None = None
    # what the journal says: `generated` for a plan shown voided because a candidate or a
    # target file changed
    journal_status: PlanStatus | None = None
    # the kinds of candidates a plan still to promote holds (entry, skill, consolidation-patch):
    # what a voided one is made again with
    kinds: tuple[str, ...] = ()
    candidate_ids: tuple[str, ...] = ()


def plan_states(
    conn: sqlite3.Connection, owner: Owner, worktree_root: Path | None = None
) -> list[PlanState]:
    """The owner's plans with their status now, newest first: `memory status` lists the
    `generated` ones as plans to promote, the review page shows every plan it prepared as it is
    now. A discard, a newer plan or promote's drift check voids a plan in the journal; a plan
    the journal still holds as `generated` whose candidate has changed since (a later merge
    consumed it) is shown voided at once, with the drift promote would find
    (`PROMOTION_CANDIDATE_DRIFT`); so is one, given `worktree_root`, whose target file changed
    since (a `git pull` brought a teammate's version of it: `PROMOTION_TARGET_DRIFT`). Only the
    candidates' rows and a pending plan's target files are read (their paths and blob OIDs from
    its file list), never the plan body: no plan is loaded or verified."""
    rows = conn.execute(
        "SELECT j.plan_id, j.status, o.void_code, o.void_path, o.void_message, "
        "CASE WHEN j.status = 'generated' "
        "THEN json_extract(j.plan_canonical_json, '$.candidateRevisions') END "
        "FROM promotion_journal j LEFT JOIN promotion_outcomes o ON o.plan_id = j.plan_id "
        "WHERE j.repository_key = ? AND j.worktree_key = ? "
        "ORDER BY j.updated_at DESC, j.plan_id",
        (owner.repository_key, owner.worktree_key),
    ).fetchall()
    states: list[PlanState] = []
    for plan_id, journaled, code, path, message, bound in rows:
        status: PlanStatus = journaled
        ids = [str(c["candidateId"]) for c in orjson.loads(bound)] if bound else []
        drift = _candidate_drift(conn, owner, orjson.loads(bound)) if bound else None
        if drift is not None:
            code, path, message = errors.PROMOTION_CANDIDATE_DRIFT.code, None, drift
        elif journaled == "generated" and worktree_root is not None:
            # in promote's order: what the candidates' kinds bind (a consolidation: the tree it
            # was synthesized from), then the target files
            target = _kind_drift(conn, owner, str(plan_id), ids, worktree_root)
            target = target or _target_drift(conn, str(plan_id), worktree_root)
            if target is not None:
                (code, path, message), drift = target, target[2]
        now: PlanStatus = "voided" if drift is not None else status
        kinds_held = tuple(sorted(kinds.stored_kinds(conn, ids)))
        states.append(
            PlanState(str(plan_id), now, code, path, message, status, kinds_held, tuple(ids))
        )
    return states


def _candidate_drift(
    conn: sqlite3.Connection, owner: Owner, bound: list[dict[str, Any]]
) -> str | None:
    for candidate in bound:
        drift = candidate_drift(conn, owner, candidate["candidateId"], int(candidate["revision"]))
        if drift is not None:
            return drift
    return None


def _kind_drift(
    conn: sqlite3.Connection, owner: Owner, plan_id: str, ids: list[str], worktree_root: Path
) -> tuple[str, str | None, str] | None:
    """What a registered kind of the plan's candidates finds changed, as promote's check of
    it would void the plan (a consolidation whose entries a pull changed: CONSOLIDATION_DRIFT,
    not the drift of a target file), or None."""
    checks = [h.check_plan for h in kinds.registered_kinds_of(conn, ids) if h.check_plan]
    if not checks:
        return None
    targets = {
        str(path)
        for (path,) in conn.execute(
            "SELECT json_extract(f.value, '$.targetPath') FROM promotion_journal j, "
            "json_each(j.plan_canonical_json, '$.perFile') f WHERE j.plan_id = ?",
            (plan_id,),
        )
    }
    for check in checks:
        try:
            check(conn, owner, worktree_root, ids, targets)
        except errors.TeamloreError as exc:
            return exc.code, exc.details.get("path"), exc.message
    return None


def target_drift(path: str) -> str:
    """Why promote refuses a plan whose target file is not the blob it was prepared against."""
    return f"{path} changed after the plan was made"


def _target_drift(
    conn: sqlite3.Connection, plan_id: str, worktree_root: Path
) -> tuple[str, str, str] | None:
    """The first target file, in the order promote checks them (writes, then deletes), that is
    not the blob the plan binds: (void code, path, why), as promote would void the plan."""
    for path, bound in conn.execute(
        "SELECT json_extract(f.value, '$.targetPath'), json_extract(f.value, '$.targetBlobHash') "
        "FROM promotion_journal j, json_each(j.plan_canonical_json, '$.perFile') f "
        "WHERE j.plan_id = ? "
        "ORDER BY json_extract(f.value, '$.operation') = 'delete', f.key",
        (plan_id,),
    ):
        try:
            current = safe_write.read_file(worktree_root, path)
        except errors.TeamloreError as exc:
            return errors.UNSAFE_PATH.code, path, exc.message
        if (None if current is None else digests.git_blob_oid(current)) != bound:
            return errors.PROMOTION_TARGET_DRIFT.code, path, target_drift(path)
    return None


def candidate_drift(
    conn: sqlite3.Connection, owner: Owner, candidate_id: str, revision: int
) -> str | None:
    """How a candidate a plan binds at `revision` (quarantined) has changed since, in the words
    promote refuses the plan with; None when it has not. A candidate a later merge consumed
    names the candidate that merged it."""
    row = conn.execute(
        "SELECT status, revision FROM candidates WHERE candidate_id = ? "
        "AND repository_key = ? AND worktree_key = ?",
        (candidate_id, owner.repository_key, owner.worktree_key),
    ).fetchone()
    if row is not None and row[0] == "quarantined" and row[1] == revision:
        return None
    now = "gone" if row is None else f"{row[0]} at revision {row[1]}"
    merged = _merged_into(conn, owner, candidate_id) if row is not None else None
    return (
        f"candidate {candidate_id} was quarantined at revision {revision} when the plan was "
        f"made and is now {now}" + (f": {merged} merged it when it was staged" if merged else "")
    )


def _merged_into(conn: sqlite3.Connection, owner: Owner, candidate_id: str) -> str | None:
    """The candidate whose merge (or update) consumed `candidate_id`, if one did."""
    for other, payload in conn.execute(
        "SELECT candidate_id, payload_json FROM candidates WHERE repository_key = ? "
        "AND worktree_key = ? AND candidate_id != ? AND instr(payload_json, ?) > 0",
        (owner.repository_key, owner.worktree_key, candidate_id, f'"{candidate_id}"'),
    ):
        supersedes = orjson.loads(payload).get("supersedes") or []
        if any(
            s.get("sourceKind") == "candidate" and s.get("id") == candidate_id for s in supersedes
        ):
            return str(other)
    return None


def _status(conn: sqlite3.Connection, plan_id: str) -> PlanStatus:
    row = conn.execute(
        "SELECT status FROM promotion_journal WHERE plan_id = ?", (plan_id,)
    ).fetchone()
    status: PlanStatus = row[0]
    return status


def _voided_error(conn: sqlite3.Connection, plan_id: str) -> errors.TeamloreError:
    row = conn.execute(
        "SELECT void_code, void_path, void_message FROM promotion_outcomes WHERE plan_id = ?",
        (plan_id,),
    ).fetchone()
    details: dict[str, Any] = {"planId": plan_id, "status": "voided"}
    if row is not None and row["void_code"]:
        details["reason"] = row["void_code"]
        if row["void_path"]:
            details["driftedPath"] = row["void_path"]
    return errors.TeamloreError(
        errors.PLAN_VOIDED,
        f"plan {plan_id} was voided ({details.get('reason', 'drift')}); review and prepare again",
        **details,
    )


# --------------------------------------------------------------------------------------------
# approval


def approve_plan(
    conn: sqlite3.Connection, plan_id: str, *, plan_digest: str | None = None
) -> PlanStatus:
    """`generated → approved`, binding the stored plan digest (and `plan_digest`, the digest
    the person reviewed, when given). Returns the status after the call; a plan already
    approved, applying or applied is left as it is. A voided plan is refused."""
    stored = load_plan(conn, plan_id)
    if plan_digest is not None and plan_digest != stored.plan_digest:
        raise errors.TeamloreError(
            errors.PLAN_DIGEST_MISMATCH,
            f"plan {plan_id} has digest {stored.plan_digest[:12]}…, not the reviewed "
            f"{plan_digest[:12]}…",
            planId=plan_id,
        )
    if stored.status == "voided":
        raise _voided_error(conn, plan_id)
    if stored.status != "generated":
        return stored.status
    with db.write_tx(conn):
        changed = conn.execute(
            "UPDATE promotion_journal SET status = 'approved', updated_at = ? "
            "WHERE plan_id = ? AND status = 'generated' AND plan_digest = ?",
            (now_ms(), plan_id, stored.plan_digest),
        ).rowcount
        if changed:
            conn.execute(
                "INSERT INTO promotion_outcomes (plan_id, approved_digest, approved_at) "
                "VALUES (?, ?, ?) ON CONFLICT(plan_id) DO UPDATE SET "
                "approved_digest = excluded.approved_digest, approved_at = excluded.approved_at",
                (plan_id, stored.plan_digest, now_ms()),
            )
    failpoint("promotion.after-approve")
    return _status(conn, plan_id)
