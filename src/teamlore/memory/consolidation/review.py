"""Review of consolidation candidates: each operation as current vs proposed.

Per quarantined `consolidation-patch` candidate: every operation (a statement to confirm, its
`statementTextDigest` = digest of the materialized operation, its `citationsDigest` = the
entries it is based on) with the review text

    <OP> <target> <name>
    Target: <path>
    Merge sources: <names | none>
    Rationale: <why>
    --- current
    <the file now | (file does not exist)>
    +++ proposed
    <the new file | (file will be deleted)>

(and a delete section for each merge source), the approved entries it rests on (id and the
start of the body), the exact files a plan would write or delete with a diff, the lint
findings of the new files (a blocking one blocks the candidate), and — when the approved tree
moved since synthesize — the drift, which blocks it too (discard it and synthesize again).
Read-only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from teamlore.contracts import digests
from teamlore.core import errors
from teamlore.core.canonical import digest
from teamlore.core.text.diffs import unified_diff
from teamlore.core.text.excerpts import excerpt
from teamlore.core.timeutil import format_instant
from teamlore.memory.consolidation.drift import check_unchanged, sync_and_read
from teamlore.memory.consolidation.source import ApprovedSource, covered_record
from teamlore.memory.consolidation.staging import CANDIDATE_KIND
from teamlore.memory.extraction.tasks import Owner
from teamlore.memory.store.layout import CONSOLIDATED_FILE
from teamlore.repo.binding import RepositoryIdentity

ABSENT = "(file does not exist)"
DELETED = "(file will be deleted)"


def _text(data: bytes | None) -> str:
    return ABSENT if data is None else data.decode("utf-8", "replace")


def review_text(operation: Mapping[str, Any], current: Mapping[str, bytes | None]) -> str:
    """The text a person reads and confirms for one operation."""
    op = operation
    lines = [
        f"{op['op'].upper()} {op['target']} {op['name']}",
        f"Target: {op['targetPath']}",
        f"Merge sources: {', '.join(op['mergeSources']) or 'none'}",
        f"Rationale: {op['rationale'] or 'none given'}",
        "--- current",
        _text(current.get(op["targetPath"])),
        "+++ proposed",
        DELETED if op["content"] is None else op["content"],
    ]
    for path in op["deletes"]:
        if path == op["targetPath"]:
            continue
        lines += [
            f"Delete: {path}",
            "--- current",
            _text(current.get(path)),
            "+++ proposed",
            DELETED,
        ]
    return "\n".join(lines)


def _blob(data: bytes | None) -> str | None:
    return None if data is None else digests.git_blob_oid(data)


def file_diff(path: str, old: bytes | None, new: bytes | None) -> str:
    return unified_diff(
        None if old is None else old.decode("utf-8", "replace"),
        None if new is None else new.decode("utf-8"),
        fromfile="/dev/null" if old is None else f"a/{path}",
        tofile="/dev/null" if new is None else f"b/{path}",
    )


def patch_files(payload: Mapping[str, Any]) -> tuple[list[tuple[str, bytes]], list[str]]:
    """(writes, deletes) of a staged patch, in plan order (writes then deletes, by path). The
    writes include `consolidated.json`: the entries the promoted scenes and doctrine cover, so
    every clone of the tree shares the baseline (a partial pass's `coveredEntries`: the entries
    it left for a next pass are not among them)."""
    writes = {
        op["targetPath"]: op["content"].encode("utf-8")
        for op in payload["operations"]
        if op["content"] is not None
    }
    covered = payload.get("coveredEntries", payload["binding"]["entryRevisions"])
    writes[CONSOLIDATED_FILE] = covered_record(covered)
    deletes = {path for op in payload["operations"] for path in op["deletes"]}

    def by_path(path: str) -> bytes:
        return path.encode("utf-8")

    return [(p, writes[p]) for p in sorted(writes, key=by_path)], sorted(deletes, key=by_path)


def lint_findings(writes: Sequence[tuple[str, bytes]]) -> list[dict[str, Any]]:
    """Blocking lint findings of the files a plan would write (scenes and the doctrine pass
    the same gate as entries)."""
    from teamlore.memory.store import layout
    from teamlore.memory.store import lint as lint_rules

    found: list[dict[str, Any]] = []
    for path, data in writes:
        kind = layout.document_kind(path) or "text"
        for finding in lint_rules.lint_bytes(data, path=path, kind=kind):  # type: ignore[arg-type]
            if finding.severity == "block":
                found.append(finding.model_dump())
    return found


def _evidence(source: ApprovedSource | None, entry_ids: Sequence[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for entry_id in entry_ids:
        entry = None if source is None else source.entries.get(entry_id)
        body = "" if entry is None else excerpt(entry.body)
        out.append(
            {
                "evidenceId": entry_id,
                "kind": "approved-entry",
                "display": entry_id,
                "excerpt": body or None,
                "strength": None,
                "limitations": [],
            }
        )
    return out


def _citations_digest(source: ApprovedSource | None, entry_ids: Sequence[str]) -> str | None:
    if source is None or any(e not in source.entries for e in entry_ids):
        return None
    return digests.consolidation_citations_digest(
        [source.entries[e].revision_json() for e in entry_ids]
    )


def candidate_rows(
    conn: sqlite3.Connection, owner: Owner, candidate_id: str | None = None
) -> list[sqlite3.Row]:
    query = (
        "SELECT candidate_id, candidate_kind, status, adjudication, revision, content_digest, "
        "payload_json, updated_at FROM candidates WHERE repository_key = ? AND worktree_key = ? "
        "AND candidate_kind = ?"
    )
    args: list[Any] = [owner.repository_key, owner.worktree_key, CANDIDATE_KIND]
    if candidate_id is None:
        query += " AND status = 'quarantined'"
    else:
        query += " AND candidate_id = ?"
        args.append(candidate_id)
    return list(conn.execute(query + " ORDER BY updated_at, candidate_id", args))


def review_item(
    conn: sqlite3.Connection,
    row: sqlite3.Row,
    source: ApprovedSource | None,
    drift: errors.TeamloreError | None,
    worktree_root: Path,
) -> dict[str, Any]:
    from teamlore.memory.promotion.review import assessment_docs
    from teamlore.memory.promotion.targets import read_memory_file

    payload: dict[str, Any] = orjson.loads(row[6])
    writes, deletes = patch_files(payload)
    paths = [p for p, _ in writes] + deletes + [op["targetPath"] for op in payload["operations"]]
    current = {path: read_memory_file(worktree_root, path) for path in dict.fromkeys(paths)}
    stored = assessment_docs(conn, str(row[0]))
    statements: list[dict[str, Any]] = []
    for op in payload["operations"]:
        doc = stored.get(op["operationId"], {})
        cited = _citations_digest(source, op["basedOnEntryIds"]) or doc.get("citationsDigest", "")
        text_digest = digest(op)
        consistent = (
            doc.get("statementTextDigest") == text_digest and doc.get("citationsDigest") == cited
        )
        confirmed = doc.get("claimSupport") == "human-confirmed" and consistent
        statements.append(
            {
                "statementId": op["operationId"],
                "text": review_text(op, current),
                "statementTextDigest": text_digest,
                "citationsDigest": cited,
                "assessmentRevision": doc.get("revision", 0),
                "assessmentConsistent": consistent,
                "provenanceStrength": doc.get("provenanceStrength", "contextual"),
                "limitations": list(doc.get("limitations", [])),
                "claimSupport": "human-confirmed" if confirmed else "unverified",
                "typedFact": None,
                "confirmation": "confirmed" if confirmed else "required",
                "evidence": _evidence(source, op["basedOnEntryIds"]),
            }
        )
    files = [
        {
            "targetPath": path,
            "operation": "write",
            "role": "new" if current.get(path) is None else "update",
            "targetBlobHash": _blob(current.get(path)),
            "sanitizedContentDigest": digests.sanitized_content_digest(data),
            "bytes": len(data),
            "preview": data.decode("utf-8"),
            "diff": file_diff(path, current.get(path), data),
        }
        for path, data in writes
    ] + [
        {
            "targetPath": path,
            "operation": "delete",
            "role": "delete",
            "targetBlobHash": _blob(current.get(path)),
            "sanitizedContentDigest": None,
            "bytes": 0,
            "preview": None,
            "diff": file_diff(path, current.get(path), None),
        }
        for path in deletes
    ]
    findings = lint_findings(writes)
    summary = "; ".join(
        f"{op['op'].upper()} {op['target']} {op['name']}" for op in payload["operations"]
    )
    item: dict[str, Any] = {
        "candidateId": str(row[0]),
        "revision": int(row[4]),
        "kind": "consolidation",
        "status": str(row[2]),
        "adjudication": str(row[3]),
        "updatedAt": format_instant(datetime.fromtimestamp(int(row[7]) / 1000, UTC)),
        "contentDigest": str(row[5]),
        "runId": payload["runId"],
        "taskId": payload["taskId"],
        "content": summary,
        "operations": [
            {k: v for k, v in op.items() if k != "content"} for op in payload["operations"]
        ],
        "statements": statements,
        "provenanceStrength": "contextual",
        "limitations": sorted({x for s in statements for x in s["limitations"]}),
        "claimSupport": "human-confirmed"
        if all(s["claimSupport"] == "human-confirmed" for s in statements)
        else "unverified",
        "needsConfirmation": [s["statementId"] for s in statements],
        "files": files,
        "drift": None if drift is None else drift.to_json(),
        "blocked": bool(findings) or drift is not None,
        "lintFindings": findings,
        "approveAll": {
            "offered": False,
            "reason": "generated scenes and doctrine must be confirmed operation by operation",
        },
        "prepareRequest": None,
    }
    item["approvalDigest"] = digest(item)
    return item


def review_consolidations(
    conn: sqlite3.Connection,
    identity: RepositoryIdentity,
    choose: Callable[[list[sqlite3.Row]], list[sqlite3.Row]] | None = None,
) -> list[dict[str, Any]]:
    """Review items of every quarantined consolidation candidate of the owner (read-only
    apart from the projection sync), or of those `choose` picks from their rows (in review
    order, as `promotion.queue.review_queue` takes it)."""
    owner = Owner(identity.repository_key, identity.worktree_key)
    rows = candidate_rows(conn, owner)
    if choose is not None:
        rows = choose(rows)
    if not rows:
        return []
    source: ApprovedSource | None = None
    unreadable: errors.TeamloreError | None = None
    try:
        source, baseline = sync_and_read(conn, owner, identity.worktree_root)
    except errors.TeamloreError as exc:
        if exc.code != errors.COVERAGE_INCOMPLETE.code:
            raise
        unreadable = errors.TeamloreError(
            errors.CONSOLIDATION_DRIFT, f"the memory tree no longer reads completely: {exc.message}"
        )
    items: list[dict[str, Any]] = []
    for row in rows:
        payload = orjson.loads(row[6])
        drift: errors.TeamloreError | None = unreadable
        if source is not None:
            try:
                check_unchanged(payload["binding"], source, baseline)
            except errors.TeamloreError as exc:
                drift = exc
        items.append(review_item(conn, row, source, drift, identity.worktree_root))
    return items
