"""The bindings a promotion re-checks before it writes: the owner, the candidates' state and
revisions, the assessment digest, lint policy, candidate kinds and every target file's blob OID.
Any drift voids the plan with a stable code and the drifted path."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from teamlore.contracts import digests
from teamlore.core import db, errors, safe_write
from teamlore.core.canonical import sha256_hex
from teamlore.core.timeutil import now_ms
from teamlore.memory.promotion import kinds
from teamlore.memory.promotion.stored_plan import StoredPlan, candidate_drift, target_drift
from teamlore.memory.store import layout
from teamlore.memory.store import lint as lint_rules
from teamlore.memory.store.frontmatter import MemoryFormatError
from teamlore.repo.binding import RepositoryIdentity

# --------------------------------------------------------------------------------------------
# bindings


class _Drift(Exception):
    def __init__(
        self,
        error: errors.ErrorCode,
        message: str,
        path: str | None = None,
        remedy: str | None = None,
    ) -> None:
        super().__init__(message)
        self.error = error
        self.message = message
        self.path = path
        self.remedy = remedy  # the `next` of the refusal it stands for, when that has its own

    @classmethod
    def of(cls, refusal: errors.TeamloreError, path: str | None) -> _Drift:
        """The drift a refusal found while checking or writing `path` is: its code, its message
        and the `next` its raise site gave (a file too large says to shorten it, not the code's
        "no symlink")."""
        return cls(refusal.error, refusal.message, path, refusal.remedy)


def _check_owner(stored: StoredPlan, identity: RepositoryIdentity) -> None:
    owner = stored.plan.owner
    if identity.repository_key != owner.repository_key:
        raise errors.TeamloreError(
            errors.PROMOTION_OWNER_MISMATCH,
            "this plan belongs to another repository; run promote inside the plan's worktree",
            planId=stored.plan.plan_id,
        )
    if identity.worktree_key != owner.worktree_key:
        raise errors.TeamloreError(
            errors.PROMOTION_OWNER_MISMATCH,
            "this plan belongs to another worktree of this repository; run promote inside the "
            "worktree where it was prepared",
            planId=stored.plan.plan_id,
        )
    info = identity.git_common_dir.stat()
    common = owner.common_directory_identity
    if (
        sha256_hex(str(identity.worktree_root).encode("utf-8")) != owner.root_realpath_digest
        or str(info.st_dev) != common.device
        or str(info.st_ino) != common.inode
    ):
        raise errors.TeamloreError(
            errors.PROMOTION_OWNER_MISMATCH,
            "the worktree or its git directory is not the one the plan was prepared in "
            "(moved or re-created); prepare the plan again",
            planId=stored.plan.plan_id,
        )


def current_assessment_digest(conn: sqlite3.Connection, candidate_ids: Sequence[str]) -> str:
    """The assessment digest exactly as `memory prepare` bound it (its function, one recipe)."""
    from teamlore.memory.promotion.journal import current_assessment_digest as prepared_recipe

    return prepared_recipe(conn, candidate_ids)


def _check_state_bindings(conn: sqlite3.Connection, stored: StoredPlan) -> None:
    """Candidates, assessments, policy and the lint of the approved bytes (no file reads)."""
    plan = stored.plan
    for bound in plan.candidate_revisions:
        drift = candidate_drift(conn, stored.owner, bound.candidate_id, bound.revision)
        if drift is not None:
            raise _Drift(errors.PROMOTION_CANDIDATE_DRIFT, drift)
    if current_assessment_digest(conn, plan.candidate_ids) != plan.assessment_digest:
        raise _Drift(
            errors.PROMOTION_ASSESSMENT_DRIFT,
            "the evidence assessments of the plan's candidates changed",
        )
    policy = lint_rules.LINT_POLICY_VERSION  # read at call time: a rule change bumps it
    if plan.policy_version != policy:
        raise _Drift(
            errors.PROMOTION_POLICY_DRIFT,
            f"the plan was linted under {plan.policy_version}; the current policy is {policy}",
        )
    for f in stored.files:
        if f.content is None:
            continue
        kind = layout.document_kind(f.target_path)
        lint_kind: lint_rules.DocumentKind = kind if kind is not None else "text"  # type: ignore[assignment]
        blocking = [
            finding
            for finding in lint_rules.lint_bytes(f.content, path=f.target_path, kind=lint_kind)
            if finding.severity == "block"
        ]
        if blocking:
            raise _Drift(
                errors.PROMOTION_POLICY_DRIFT,
                f"{f.target_path} no longer lints clean ({blocking[0].rule})",
                f.target_path,
            )


def _check_kinds(conn: sqlite3.Connection, stored: StoredPlan, root: Path, *, before: bool) -> None:
    """What the plan's candidate kinds bind beyond their files (a consolidation: the approved
    tree it was synthesized from; a Skill, before applying: the memory it was drafted against)."""
    ids, targets = stored.plan.candidate_ids, {f.target_path for f in stored.files}
    for hooks in kinds.kinds_of(conn, ids):
        for check in (hooks.check_plan, hooks.check_before_apply if before else None):
            if check is None:
                continue
            try:
                check(conn, stored.owner, root, ids, targets)
            except MemoryFormatError as exc:
                raise _Drift.of(exc, exc.file) from None
            except errors.TeamloreError as exc:
                raise _Drift.of(exc, exc.details.get("path")) from None


def _read_target(root: Path, path: str) -> bytes | None:
    try:
        return safe_write.read_file(root, path)
    except errors.TeamloreError as exc:
        raise _Drift.of(exc, path) from None


def _oid(data: bytes | None) -> str | None:
    return None if data is None else digests.git_blob_oid(data)


def _check_targets(root: Path, stored: StoredPlan) -> dict[str, bytes | None]:
    originals: dict[str, bytes | None] = {}
    for f in stored.files:
        current = _read_target(root, f.target_path)
        if _oid(current) != f.target_blob_hash:
            raise _Drift(
                errors.PROMOTION_TARGET_DRIFT,
                target_drift(f.target_path),
                f.target_path,
            )
        originals[f.target_path] = current
    return originals


CONSOLIDATION_KIND = "consolidation-patch"  # `candidates.candidate_kind` of a consolidation
CONSOLIDATE_AGAIN = "Synthesize again with `teamlore memory synthesize`."


def _void(conn: sqlite3.Connection, stored: StoredPlan, drift: _Drift) -> errors.TeamloreError:
    plan_id = stored.plan.plan_id
    with db.write_tx(conn):
        conn.execute(
            "UPDATE promotion_journal SET status = 'voided', updated_at = ? "
            "WHERE plan_id = ? AND status IN ('generated', 'approved', 'applying')",
            (now_ms(), plan_id),
        )
        conn.execute(
            "INSERT INTO promotion_outcomes (plan_id, finished_at, void_code, void_path, "
            "void_message) VALUES (?, ?, ?, ?, ?) ON CONFLICT(plan_id) DO UPDATE SET "
            "finished_at = excluded.finished_at, void_code = excluded.void_code, "
            "void_path = excluded.void_path, void_message = excluded.void_message",
            (plan_id, now_ms(), drift.error.code, drift.path, drift.message),
        )
        conn.execute("DELETE FROM promotion_originals WHERE plan_id = ?", (plan_id,))
        held = kinds.kinds_of(conn, stored.plan.candidate_ids)
        for hooks in held:
            if hooks.on_voided is not None:
                hooks.on_voided(conn, stored.plan.candidate_ids, now_ms())
    details: dict[str, Any] = {"planId": plan_id, "status": "voided", "next": "re-review"}
    if drift.path:
        details["driftedPath"] = drift.path
    if any(hooks.stored == CONSOLIDATION_KIND for hooks in held):
        # its candidate was discarded with the plan: a new one comes from synthesize
        again = "" if drift.message.endswith("synthesize again") else ", synthesize again"
        return errors.TeamloreError(
            drift.error, f"{drift.message}; plan voided{again}", **details
        ).advising(CONSOLIDATE_AGAIN)
    return errors.TeamloreError(
        drift.error, f"{drift.message}; plan voided, review and prepare again", **details
    ).advising(drift.remedy)
