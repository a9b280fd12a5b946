"""The review queue: every quarantined candidate's view (`review`) with the exact files prepare
would write (`rendering.preview_candidate`), bound by one `approvalDigest` per item. Read-only.

It sits above both `review` and `prepare`, so neither imports the other's caller.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from teamlore.core.canonical import digest
from teamlore.core.remedies import NOT_ADJUDICATED, discard_command
from teamlore.core.timeutil import format_instant
from teamlore.memory.promotion.rendered import RenderContext
from teamlore.memory.promotion.rendering import candidate_kind, preview_candidate, wire_kind
from teamlore.memory.promotion.review import (
    REVIEW_FORMAT,
    CandidateView,
    EvidenceResolver,
    candidate_view,
    entry_claim_support,
    prepare_candidate_fields,
    statement_json,
    weakest,
)
from teamlore.memory.promotion.targets import public_identity_of
from teamlore.memory.store.lint import LINT_POLICY_VERSION
from teamlore.repo.binding import RepositoryIdentity


def review_item(
    view: CandidateView,
    files: dict[str, Any],
    public_identity: str | None,
    *,
    updated_at: str | None = None,
) -> dict[str, Any]:
    """One review item; `files` is prepare's preview ({files, blocked, findings, evidence});
    `updated_at` is when the candidate last changed (canonical UTC instant)."""

    payload = view.payload
    item_kind = wire_kind(view.kind)
    all_typed = bool(view.statements) and all(s.typed_fact for s in view.statements)
    statements = [statement_json(s, public_identity) for s in view.statements]
    item: dict[str, Any] = {
        "candidateId": view.candidate_id,
        "revision": view.revision,
        "kind": item_kind,
        "status": view.status,
        "adjudication": view.adjudication,
        "updatedAt": updated_at,
        "contentDigest": view.content_digest,
        "content": payload.get("content", ""),
        # the content as promotion writes it, and how it differs (None: it does not)
        "writtenContent": view.written_content,
        "writtenNotice": view.notice,
        "type": payload.get("type"),
        "priority": payload.get("priority"),
        "confidence": payload.get("confidence"),
        "scene": payload.get("scene"),
        "supersedes": payload.get("supersedes", []),
        "mergedFrom": [
            {k: v for k, v in m.items() if k not in ("body",)}
            for m in payload.get("mergedFrom", [])
        ],
        "statements": statements,
        **({"skill": payload["skill"]} if "skill" in payload else {}),
        "provenanceStrength": weakest([s.provenance_strength for s in view.statements]),
        "limitations": sorted({x for s in view.statements for x in s.assessment["limitations"]}),
        "claimSupport": entry_claim_support([s.support for s in view.statements]),
        "needsConfirmation": [s.statement_id for s in view.statements if s.typed_fact is None],
        "publicEvidence": files["publicEvidence"],
        "files": files["files"],
        "blocked": files["blocked"],
        "lintFindings": files["findings"],
        # a blocked candidate's findings that do not block (its warnings, a home path promotion
        # writes as {local-path}): it has no files to list them under
        "lintWarnings": files["notBlocking"],
        "approveAll": {
            "offered": all_typed and not files["blocked"],
            "reason": "every statement is a verified typed fact"
            if all_typed
            else "generated statements must be confirmed one by one",
        },
        "prepareRequest": {
            "format": "threadshare-memory-prepare-request@v1",
            "kind": item_kind,
            "candidates": [prepare_candidate_fields(view)],
        }
        if all_typed and not files["blocked"]
        else None,
    }
    item["approvalDigest"] = digest(item)
    return item


def review_queue(
    state: sqlite3.Connection,
    index: sqlite3.Connection,
    identity: RepositoryIdentity,
    *,
    home: Path | None = None,
    kind: str = "entry",
    choose: Callable[[list[sqlite3.Row]], list[sqlite3.Row]] | None = None,
) -> dict[str, Any]:
    """The review of every quarantined candidate of `kind` for the owner (read-only), or of
    those `choose` picks from the queue's rows (in review order: updated_at, candidate_id; a
    row is `candidate_id, candidate_kind, status, …, updated_at`): a page of the review,
    only whose items are built."""

    public_identity = public_identity_of(identity)
    resolver = EvidenceResolver(state, index, identity, home=home)
    rows = state.execute(
        "SELECT candidate_id, candidate_kind, status, adjudication, revision, content_digest, "
        "payload_json, updated_at FROM candidates WHERE repository_key = ? AND worktree_key = ? "
        "AND candidate_kind = ? AND (status = 'quarantined' OR "
        "(status = 'draft' AND adjudication = 'failed')) ORDER BY updated_at, candidate_id",
        (identity.repository_key, identity.worktree_key, candidate_kind(kind).stored),
    ).fetchall()
    if choose is not None:
        rows = choose(rows)
    items: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    ctx = RenderContext.open(identity, public_identity, index, resolver.roots)
    for row in rows:
        if row[2] == "draft":
            payload = orjson.loads(row[6])
            failed.append(
                {
                    "candidateId": row[0],
                    "revision": int(row[4]),
                    "adjudication": "failed",
                    "content": payload.get("content", ""),
                    "next": discard_command(row[0], NOT_ADJUDICATED),
                }
            )
            continue
        view = candidate_view(state, row, resolver, identity.worktree_root, ctx.known_session_ids)
        preview = preview_candidate(view, ctx)
        items.append(review_item(view, preview, public_identity, updated_at=_instant(int(row[7]))))
    return {
        "action": "review",
        "format": REVIEW_FORMAT,
        "kind": kind,
        "owner": {
            "repositoryKey": identity.repository_key,
            "worktreeKey": identity.worktree_key,
            "project": public_identity,
        },
        "policyVersion": LINT_POLICY_VERSION,
        "count": len(items),
        "items": items,
        "failed": failed,
        "next": _next(items, failed),
    }


def _instant(epoch_ms: int) -> str:
    return format_instant(datetime.fromtimestamp(epoch_ms / 1000, UTC))


def _next(items: list[dict[str, Any]], failed: list[dict[str, Any]]) -> str | None:
    if items:
        return (
            "Show each statement with its evidence to the user; for the candidates they confirm, "
            "send a PrepareRequest@v1 (candidateId, revision, and every statement's "
            "statementId/statementTextDigest/citationsDigest) to memory prepare."
        )
    if failed:
        return "Adjudication failed for some drafts: discard them (memory discard)."
    return None


def prepare_request_from_review(
    items: list[dict[str, Any]], candidate_ids: list[str] | None = None
) -> dict[str, Any]:
    """The PrepareRequest@v1 that confirms every statement of these reviewed items (all
    unblocked ones when `candidate_ids` is None), bound to the digests the review showed."""
    chosen = [
        item
        for item in items
        if not item["blocked"] and (candidate_ids is None or item["candidateId"] in candidate_ids)
    ]
    return {
        "format": "threadshare-memory-prepare-request@v1",
        "kind": chosen[0]["kind"] if chosen else "entry",
        "candidates": [
            {
                "candidateId": item["candidateId"],
                "expectedRevision": item["revision"],
                "statements": [
                    {
                        "statementId": st["statementId"],
                        "statementTextDigest": st["statementTextDigest"],
                        "citationsDigest": st["citationsDigest"],
                    }
                    for st in item["statements"]
                ],
            }
            for item in chosen
        ],
    }
