"""Confirm and prepare: a PrepareRequest@v1 → confirmed statements → PromotionPlan@v1 (journal).

Row contract with `promote` (memory-state.sqlite3, glossary: plan; written here in ONE
`BEGIN IMMEDIATE` transaction, read by promote):

promotion_journal — one row per plan, `status = 'generated'`:
  plan_id              the plan's `planId` (UUID v4, random)
  repository_key,      the owner resolved from the caller's worktree (same as
  worktree_key         plan.owner.repositoryKey / worktreeKey)
  plan_canonical_json  canonical JSON (`core.canonical.canonical_json`) of the complete
                       PromotionPlan@v1 wire form, `planDigest` included (non-null);
                       `PromotionPlan.from_wire(json.loads(...))` re-validates it
  plan_digest          `contracts.digests.plan_digest(plan)` (= plan["planDigest"])
  candidate_ids_json   canonical JSON array of the candidate ids, plan order
                       (plan["candidateRevisions"] has each id's bound `revision`)
  assessment_digest    `current_assessment_digest(conn, candidate_ids)` right after the
                       confirmations were written — promote recomputes it with the same function
                       and voids the plan on any difference
  policy_version       `memory.store.lint.LINT_POLICY_VERSION` at prepare time
  status, updated_at   'generated', epoch ms
promotion_files — one row per target file (every row is a write; no deletes are planned):
  plan_id, target_path repo-relative path under `.threadshare/memory/` (e.g.
                       `.threadshare/memory/entries/<id>.md`), equal to perFile[].targetPath
  target_blob_hash     git blob OID of the file's current working-tree bytes at prepare time
                       (`digests.git_blob_oid`), NULL when the file did not exist
  sanitized_content    the exact bytes to write (sanitized, linted, canonical entry file)
  sanitized_digest     sha256 of those bytes (= perFile[].sanitizedContentDigest)
  applied              0

Other effects of the same transaction: every statement of every planned candidate has its
assessment row set to its verified support — `typed-fact`/`deterministic` (a renderer
re-verified it) or `human-confirmed`/`human` (listed in the request with matching digests) —
with `revision + 1`; earlier `generated` plans that share a candidate become `voided`. Candidate
rows are not changed (their `revision` stays what the plan binds). A candidate in an `approved`
or `applying` plan cannot be prepared again (`CANDIDATE_LOCKED`).

Promote checks (its own module): owner, plan digest, candidate status `quarantined` + revision,
`current_assessment_digest`, policy version, and each target's blob OID; then writes the bytes.

Pipeline per candidate (`render_candidate`, shared with review so the preview is the plan):
statements → claim units (statements with the same citation set form one unit, and a statement
whose citations another unit covers joins it; one unit per
candidate keeps the candidate's content as the body, several units each get their statements'
texts) → entries: slug ids (`slugs.unique_entry_slug`, never an id already in the tree or the
plan; an `update`/`merge` of an approved entry rewrites that entry's file in place with its id),
provenance = weakest statement, limitations = union, claim support typed-fact | human-confirmed
| mixed, public evidence (repository identity + full commit hashes, repo-relative paths,
`occurred` dates of the cited turns) → sanitize (worktree paths become repo-relative, other home
paths a placeholder) → lint (`LINT_BLOCKED` on any blocking finding of the raw or the sanitized
text: secrets, session ids, provider paths) → bytes. Further approved targets of a merge are
rewritten `deprecated` with `superseded_by` the surviving id.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from teamlore.contracts import digests
from teamlore.contracts.promotion import PrepareRequest, PromotionPlan
from teamlore.core import db, errors
from teamlore.core.canonical import canonical_json
from teamlore.core.failpoints import failpoint
from teamlore.memory.promotion.journal import (
    current_assessment_digest,
    refuse_if_locked,
    void_generated_plans,
)
from teamlore.memory.promotion.rendered import RenderContext, RenderedFile
from teamlore.memory.promotion.rendering import candidate_kind, render_candidate, statement_support
from teamlore.memory.promotion.review import (
    CandidateView,
    EvidenceResolver,
    candidate_view,
    of_another_kind,
    require_candidate,
)
from teamlore.memory.promotion.targets import public_identity_of, repository_binding
from teamlore.memory.store.lint import (
    LINT_POLICY_VERSION,
)
from teamlore.repo.binding import RepositoryIdentity

PREPARE_RESULT_FORMAT = "threadshare-memory-prepare-result@v1"
# -- prepare -------------------------------------------------------------------------------------


def parse_prepare_request(document: Any) -> PrepareRequest:
    try:
        request = PrepareRequest.from_wire(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "document"
        raise errors.TeamloreError(
            errors.PREPARE_REQUEST_INVALID,
            f"PrepareRequest@v1: {where}: {first.get('msg', 'invalid value')}",
            location=where,
        ) from None
    if request.kind != "consolidation":  # prepared whole by memory/consolidation
        candidate_kind(request.kind)
    return request


def _checked_view(
    conn: sqlite3.Connection,
    identity: RepositoryIdentity,
    resolver: EvidenceResolver,
    wanted: Any,  # contracts.promotion.PrepareCandidate
    kind: str,
) -> CandidateView:
    row = require_candidate(conn, identity, wanted.candidate_id)
    view = candidate_view(conn, row, resolver, Path(identity.worktree_root))
    if view.kind != candidate_kind(kind).stored:
        raise of_another_kind(view.candidate_id, view.kind, kind, view.status)
    if view.status != "quarantined":
        raise errors.TeamloreError(
            errors.CANDIDATE_STALE,
            f"{view.candidate_id} is {view.status}, not awaiting review",
            candidateId=view.candidate_id,
            status=view.status,
        )
    if view.revision != wanted.expected_revision:
        raise errors.TeamloreError(
            errors.CANDIDATE_STALE,
            f"{view.candidate_id} is at revision {view.revision}, the request expects "
            f"{wanted.expected_revision}; review again",
            candidateId=view.candidate_id,
            revision=view.revision,
        )
    current = {s.statement_id: s for s in view.statements}
    drifted: list[str] = []
    for confirmed in wanted.statements:
        statement = current.get(confirmed.statement_id)
        if (
            statement is None
            or not statement.consistent
            or confirmed.statement_text_digest != statement.text_digest
            or confirmed.citations_digest != statement.citations_digest
        ):
            drifted.append(confirmed.statement_id)
    if drifted:
        raise errors.TeamloreError(
            errors.CONFIRMATION_DRIFT,
            f"{view.candidate_id}: statement(s) {', '.join(drifted)} no longer match what was "
            "reviewed; the confirmation is void, review again",
            candidateId=view.candidate_id,
            statementIds=drifted,
        )
    listed = {c.statement_id for c in wanted.statements}
    unverified = [
        s.statement_id for s in view.statements if s.statement_id not in listed and not s.typed_fact
    ]
    if unverified or not view.statements:
        raise errors.TeamloreError(
            errors.UNVERIFIED_CLAIM,
            f"{view.candidate_id}: statement(s) {', '.join(unverified) or '(none)'} are not "
            "confirmed; every generated statement needs a person's confirmation",
            candidateId=view.candidate_id,
            statementIds=unverified,
        )
    return view


def _confirm(conn: sqlite3.Connection, view: CandidateView) -> list[dict[str, Any]]:
    """Write each statement's verified support (revision-CAS on the assessment row)."""
    confirmed: list[dict[str, Any]] = []
    for statement in view.statements:
        support = statement_support(statement)
        by = "deterministic" if support == "typed-fact" else "human"
        doc = statement.assessment
        cursor = conn.execute(
            "UPDATE assessments SET claim_support = ?, assessed_by = ?, revision = revision + 1 "
            "WHERE candidate_id = ? AND statement_id = ? AND revision = ? "
            "AND statement_text_digest = ? AND citations_digest = ?",
            (
                support,
                by,
                view.candidate_id,
                statement.statement_id,
                doc["revision"],
                statement.text_digest,
                statement.citations_digest,
            ),
        )
        if cursor.rowcount != 1:
            raise errors.TeamloreError(
                errors.CONFIRMATION_DRIFT,
                f"{view.candidate_id}: the assessment of {statement.statement_id} changed",
                candidateId=view.candidate_id,
                statementIds=[statement.statement_id],
            )
        confirmed.append(
            {
                "candidateId": view.candidate_id,
                "statementId": statement.statement_id,
                "claimSupport": support,
                "typedFact": statement.typed_fact,
                "assessmentRevision": doc["revision"] + 1,
            }
        )
    return confirmed


def record_confirmations(
    state: sqlite3.Connection,
    identity: RepositoryIdentity,
    candidate_id: str,
    revision: int,
    statements: Sequence[dict[str, Any]],
) -> list[str]:
    """A person's `y` to statements of a reviewed candidate, stored as it is given (`memory
    confirm`): each statement's assessment becomes `human-confirmed`/`human`, bound to the
    candidate's revision and the digests the review showed (`statementId`,
    `statementTextDigest`, `citationsDigest`). No plan is made: a later review shows them
    confirmed and nobody is asked about them again; `prepare` records them again with the
    plan. CANDIDATE_STALE or CONFIRMATION_DRIFT when the candidate changed since it was shown.
    (the statement ids recorded)"""
    recorded: list[str] = []
    with db.write_tx(state):
        row = require_candidate(state, identity, candidate_id)
        if str(row[2]) != "quarantined" or int(row[4]) != revision:
            raise errors.TeamloreError(
                errors.CANDIDATE_STALE,
                f"{candidate_id} is {row[2]} at revision {row[4]}, not the revision {revision} "
                "you were shown; review again",
                candidateId=candidate_id,
            )
        for statement in statements:
            cursor = state.execute(
                "UPDATE assessments SET claim_support = 'human-confirmed', assessed_by = 'human', "
                "revision = revision + 1 WHERE candidate_id = ? AND statement_id = ? "
                "AND statement_text_digest = ? AND citations_digest = ?",
                (
                    candidate_id,
                    statement["statementId"],
                    statement["statementTextDigest"],
                    statement["citationsDigest"],
                ),
            )
            if cursor.rowcount != 1:
                raise errors.TeamloreError(
                    errors.CONFIRMATION_DRIFT,
                    f"{candidate_id}: statement {statement['statementId']} no longer matches "
                    "what was reviewed; review again",
                    candidateId=candidate_id,
                    statementIds=[statement["statementId"]],
                )
            recorded.append(str(statement["statementId"]))
    return recorded


def prepare(
    state: sqlite3.Connection,
    index: sqlite3.Connection | None,
    identity: RepositoryIdentity,
    document: Any,
    *,
    home: Path | None = None,
    now: int | None = None,
) -> dict[str, Any]:
    """Confirm the request's statements and record a PromotionPlan@v1 (`generated`)."""
    from teamlore.memory.extraction.tasks import now_ms

    request = parse_prepare_request(document)
    moment = now_ms() if now is None else now
    if request.kind == "consolidation":
        from teamlore.memory.promotion.kinds import require

        prepare_kind = require("consolidation-patch").prepare
        if prepare_kind is None:  # pragma: no cover - the consolidation package registers one
            raise RuntimeError("the consolidation kind has no prepare")
        return prepare_kind(state, identity, request, moment)
    if index is None:
        raise errors.TeamloreError(errors.REPOSITORY_NOT_REGISTERED)
    public_identity = public_identity_of(identity)
    owner = repository_binding(identity, public_identity)
    resolver = EvidenceResolver(state, index, identity, home=home)
    candidate_ids = [c.candidate_id for c in request.candidates]
    with db.write_tx(state):
        refuse_if_locked(state, identity, candidate_ids)
        views = [
            _checked_view(state, identity, resolver, c, request.kind) for c in request.candidates
        ]
        ctx = RenderContext.open(identity, public_identity, index, resolver.roots)
        files: list[RenderedFile] = []
        for view in views:
            files.extend(render_candidate(view, ctx))
        paths = [f.target_path for f in files]
        if len(set(paths)) != len(paths):
            raise errors.TeamloreError(
                errors.PREPARE_REQUEST_INVALID,
                "two candidates of the request rewrite the same entry; prepare them separately",
            )
        confirmed = [row for view in views for row in _confirm(state, view)]
        voided = void_generated_plans(state, identity, candidate_ids, moment)
        planned = [PlannedBytes.of(f) for f in files]
        plan = build_plan(state, owner, [(v.candidate_id, v.revision) for v in views], planned)
        failpoint("memory.prepare.before-journal")
        journal_plan(state, identity, plan, planned, moment)
    return {
        "action": "prepare",
        "format": PREPARE_RESULT_FORMAT,
        "status": "generated",
        "planId": plan["planId"],
        "planDigest": plan["planDigest"],
        "plan": plan,
        "files": [f.to_json() for f in files],
        "confirmed": confirmed,
        "voidedPlanIds": voided,
        "next": f"teamlore memory promote --plan {plan['planId']}",
    }


@dataclass(frozen=True, slots=True)
class PlannedBytes:
    """One file of a plan: the exact bytes to write (None: delete) and its CAS binding."""

    target_path: str
    operation: Literal["write", "delete"]
    target_blob_hash: str | None  # git blob id of the file now; None: absent
    content: bytes | None
    diff: str

    @classmethod
    def of(cls, rendered: RenderedFile) -> PlannedBytes:
        return cls(
            rendered.target_path,
            "write",
            rendered.target_blob_hash,
            rendered.content,
            rendered.diff(),
        )


def build_plan(
    conn: sqlite3.Connection,
    owner: dict[str, Any],
    candidates: Sequence[tuple[str, int]],
    files: Sequence[PlannedBytes],
) -> dict[str, Any]:
    """PromotionPlan@v1 over these candidates (id, revision) and files, digest included."""
    candidate_ids = [c for c, _ in candidates]
    plan: dict[str, Any] = {
        "format": "threadshare-memory-promotion-plan@v1",
        "planId": str(uuid.uuid4()),
        "planDigest": None,
        "owner": owner,
        "candidateIds": candidate_ids,
        "candidateRevisions": [{"candidateId": c, "revision": r} for c, r in candidates],
        "assessmentDigest": current_assessment_digest(conn, candidate_ids),
        "perFile": [
            {
                "targetPath": f.target_path,
                "targetBlobHash": f.target_blob_hash,
                "sanitizedContentDigest": None
                if f.content is None
                else digests.sanitized_content_digest(f.content),
                "operation": f.operation,
            }
            for f in files
        ],
        "policyVersion": LINT_POLICY_VERSION,
        "diff": "".join(f.diff for f in files),
    }
    plan["planDigest"] = digests.plan_digest(plan)
    return PromotionPlan.from_wire(plan).to_wire()


def journal_plan(
    state: sqlite3.Connection,
    identity: RepositoryIdentity,
    plan: dict[str, Any],
    files: Sequence[PlannedBytes],
    now: int,
) -> None:
    """Record a generated plan (inside the caller's transaction): the journal row and one
    `promotion_files` row per file. A delete row stores empty bytes and their digest; promote
    reads neither for a delete."""
    state.execute(
        "INSERT INTO promotion_journal (plan_id, repository_key, worktree_key, "
        "plan_canonical_json, plan_digest, candidate_ids_json, assessment_digest, "
        "policy_version, status, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'generated', ?)",
        (
            plan["planId"],
            identity.repository_key,
            identity.worktree_key,
            canonical_json(plan).decode("utf-8"),
            plan["planDigest"],
            canonical_json(plan["candidateIds"]).decode("utf-8"),
            plan["assessmentDigest"],
            plan["policyVersion"],
            now,
        ),
    )
    state.executemany(
        "INSERT INTO promotion_files (plan_id, target_path, target_blob_hash, "
        "sanitized_content, sanitized_digest, applied) VALUES (?, ?, ?, ?, ?, 0)",
        [
            (
                plan["planId"],
                f.target_path,
                f.target_blob_hash,
                f.content or b"",
                digests.sanitized_content_digest(f.content or b""),
            )
            for f in files
        ],
    )


__all__ = ["PlannedBytes", "build_plan", "journal_plan", "prepare"]
