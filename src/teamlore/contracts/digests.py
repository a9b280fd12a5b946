"""Digest helpers of the contracts — one function per digest the spec defines.

`digest(x)` is sha256 over canonical JSON (RFC 8785, `teamlore.core.canonical`); `sha256_hex`
hashes exact bytes. Every helper states what it covers and what it leaves out, because a digest is
only a useful CAS binding when everyone agrees on both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from teamlore.core.canonical import digest, sha256_hex

if TYPE_CHECKING:
    from teamlore.contracts._base import ContractModel, Owner


class _Normalizes(Protocol):
    """A request that normalizes itself (MemoryExtractionRequest@v1)."""

    def normalize(self) -> ContractModel: ...


__all__ = [
    "agent_adjudication_task_id",
    "assessment_digest",
    "batch_adjudication_task_id",
    "citations_digest",
    "consolidation_citations_digest",
    "content_digest",
    "draft_batch_digest",
    "entry_set_digest",
    "evidence_id",
    "extraction_task_id",
    "git_blob_oid",
    "manifest_digest",
    "plan_digest",
    "pointer_digest",
    "recall_query_digest",
    "recall_result_set_digest",
    "request_digest",
    "response_digest",
    "runner_input_digest",
    "sanitized_content_digest",
    "scene_index_digest",
    "selection_result_set_digest",
    "source_input_digest",
    "statement_text_digest",
]


def _wire(value: ContractModel | Mapping[str, Any]) -> Any:
    to_wire = getattr(value, "to_wire", None)
    return to_wire() if callable(to_wire) else dict(value)


def _wires(values: Iterable[ContractModel | Mapping[str, Any]]) -> list[Any]:
    return [_wire(v) for v in values]


# --- selection and extraction --------------------------------------------------------------------


def request_digest(request: _Normalizes, owner: Owner) -> str:
    """digest({request: <normalized request>, scope: {repositoryKey, worktreeKey}}).

    The request is normalized first (so `{}` filters and absent filters hash alike). The scope is
    the owner the host resolved from the caller's directory — the same request in two worktrees
    gives two digests. Excludes: everything not in the request (time of evaluation, snapshot).
    """
    return digest(
        {
            "request": request.normalize().to_wire(),
            "scope": {"repositoryKey": owner.repository_key, "worktreeKey": owner.worktree_key},
        }
    )


def selection_result_set_digest(request_digest_hex: str, turns: Iterable[Mapping[str, Any]]) -> str:
    """digest({requestDigest, turns: [{sessionKey, turnKey, revision, observedTimestamp}]}).

    Turns are sorted by (sessionKey, turnKey); only those four keys of each turn are hashed.
    Excludes snapshot sequence and evaluation time, so an unrelated sync leaves it unchanged.
    """
    keys = ("sessionKey", "turnKey", "revision", "observedTimestamp")
    rows = sorted(
        ({k: turn[k] for k in keys} for turn in turns),
        key=lambda row: (row["sessionKey"], row["turnKey"]),
    )
    return digest({"requestDigest": request_digest_hex, "turns": rows})


def pointer_digest(pointer: Mapping[str, Any]) -> str:
    """digest(pointer); pointer is {kind:"commit",commitHash,repository?} | {kind:"path",path} |
    {kind:"turn",turnIndex}. Covers the whole pointer, nothing else."""
    return digest(dict(pointer))


def evidence_id(position: int, pointer_digest_hex: str) -> str:
    """`ev-<n>-<pointerDigest[0:12]>`; n is the 1-based position in the sorted catalog
    (kind commit < turn < path, then pointerDigest)."""
    if position < 1:
        raise ValueError("evidence positions start at 1")
    return f"ev-{position}-{pointer_digest_hex[:12]}"


def source_input_digest(
    *,
    chunk: ContractModel,
    evidence_catalog: Sequence[ContractModel],
    session: ContractModel,
    context: ContractModel,
    selection: ContractModel,
    turn_revisions: Sequence[str],
    payload_digests: Sequence[str],
    delivery_edge_revisions: Sequence[str],
    prompt_version: str,
    schema_version: str,
    chunker_version: str,
) -> str:
    """digest({chunk:{turnRange,coverage,turnEvidence?,transcript}, evidenceCatalog, session,
    context, selection, turnRevisions, payloadDigests, deliveryEdgeRevisions, promptVersion,
    schemaVersion, chunkerVersion}).

    Excludes: taskId (derived from it), lease, provenance (snapshotSeq, evaluatedAt),
    databaseUuid and owner — identical content under two owners has one digest (the task key
    must therefore be scoped by owner in storage).
    """
    return digest(
        {
            "chunk": chunk.to_wire(),
            "evidenceCatalog": _wires(evidence_catalog),
            "session": session.to_wire(),
            "context": context.to_wire(),
            "selection": selection.to_wire(),
            "turnRevisions": list(turn_revisions),
            "payloadDigests": list(payload_digests),
            "deliveryEdgeRevisions": list(delivery_edge_revisions),
            "promptVersion": prompt_version,
            "schemaVersion": schema_version,
            "chunkerVersion": chunker_version,
        }
    )


def extraction_task_id(source_input_digest_hex: str) -> str:
    """`extract-<sourceInputDigest>`."""
    return "extract-" + source_input_digest_hex


# --- statements, citations, candidates -----------------------------------------------------------


def statement_text_digest(text: str) -> str:
    """sha256 of the exact UTF-8 bytes of a statement's text — not canonical JSON, no NFC."""
    return sha256_hex(text.encode("utf-8"))


def citations_digest(citations: Iterable[Mapping[str, Any] | ContractModel]) -> str:
    """digest([{evidenceId, pointerDigest}]) sorted by evidenceId, duplicates removed.

    Covers only those two keys of each citation; strength/limitations are not part of it.
    """
    unique: dict[str, dict[str, Any]] = {}
    for citation in citations:
        wire = _wire(citation)
        row = {"evidenceId": wire["evidenceId"], "pointerDigest": wire["pointerDigest"]}
        previous = unique.setdefault(row["evidenceId"], row)
        if previous != row:
            raise ValueError(f"evidenceId {row['evidenceId']} cited with two pointer digests")
    return digest([unique[key] for key in sorted(unique)])


def draft_batch_digest(candidates: Sequence[ContractModel | Mapping[str, Any]]) -> str:
    """digest({candidates: drafts}) — the drafts in batch order, wire form.

    Excludes the batch's format, taskId and binding (the adjudication task binds those apart).
    """
    return digest({"candidates": _wires(candidates)})


def response_digest(document: Any) -> str:
    """sha256(canonical JSON of a submitted document as received (parsed JSON, not a model)).

    Covers every key the submitter sent, including unknown ones; use for replay/conflict checks.
    """
    return digest(document)


def content_digest(payload: Any) -> str:
    """digest(candidate payload) — a candidate's content digest; covers the whole payload."""
    return digest(payload)


# --- recall and adjudication ---------------------------------------------------------------------


def recall_query_digest(
    *, k: int, owner: Owner, drafts: Iterable[Mapping[str, Any]], algorithm: str = "recall-rrf@1"
) -> str:
    """digest({algorithm, k, owner:{repositoryKey,worktreeKey}, drafts:[{draftRef,candidateId,
    queryText}]}) with drafts in request order. Excludes projection generations."""
    return digest(
        {
            "algorithm": algorithm,
            "k": k,
            "owner": {"repositoryKey": owner.repository_key, "worktreeKey": owner.worktree_key},
            "drafts": [
                {
                    "draftRef": d["draftRef"],
                    "candidateId": d["candidateId"],
                    "queryText": d["queryText"],
                }
                for d in drafts
            ],
        }
    )


def recall_result_set_digest(
    recall_sets: Sequence[Mapping[str, Any] | ContractModel],
    pool: Sequence[Mapping[str, Any] | ContractModel],
) -> str:
    """The authoritative recall resultSetDigest: digest of one flat array, drafts in request
    order, hits in rank order, one `{draftRef, rank, sourceKind, id, revision, contentDigest,
    state}` per hit (revision/contentDigest/state from the pool item).

    Excludes projection generations, analyzer versions and summaries: a sync that does not change
    what is recalled leaves it unchanged.
    """
    by_key = {}
    for item in _wires(pool):
        by_key[(item["sourceKind"], item["id"])] = item
    flat: list[dict[str, Any]] = []
    for recall_set in _wires(recall_sets):
        for hit in recall_set["ordered"]:
            item = by_key[(hit["sourceKind"], hit["id"])]
            flat.append(
                {
                    "draftRef": recall_set["draftRef"],
                    "rank": hit["rank"],
                    "sourceKind": hit["sourceKind"],
                    "id": hit["id"],
                    "revision": item["revision"],
                    "contentDigest": item["contentDigest"],
                    "state": item["state"],
                }
            )
    return digest(flat)


def agent_adjudication_task_id(
    source_task_id: str, response_digest_hex: str, result_set_digest_hex: str
) -> str:
    """`adjudicate-agent-` + digest({sourceTaskId, responseDigest, resultSetDigest})."""
    return "adjudicate-agent-" + digest(
        {
            "sourceTaskId": source_task_id,
            "responseDigest": response_digest_hex,
            "resultSetDigest": result_set_digest_hex,
        }
    )


def batch_adjudication_task_id(
    source_task_ids: Iterable[str], candidate_ids: Iterable[str], result_set_digest_hex: str
) -> str:
    """`adjudicate-batch-` + digest({sourceTaskIds, candidateIds, resultSetDigest}), ids sorted."""
    return "adjudicate-batch-" + digest(
        {
            "sourceTaskIds": sorted(source_task_ids),
            "candidateIds": sorted(candidate_ids),
            "resultSetDigest": result_set_digest_hex,
        }
    )


# --- assessment, promotion, runner ---------------------------------------------------------------

_ASSESSMENT_KEYS = (
    "candidateId",
    "statementId",
    "citationsDigest",
    "provenanceStrength",
    "limitations",
    "claimSupport",
    "assessedBy",
    "statementTextDigest",
    "revision",
)


def assessment_digest(assessments: Iterable[Mapping[str, Any] | ContractModel]) -> str:
    """digest([doc]) sorted by (candidateId, statementId), doc = {candidateId, statementId,
    citationsDigest, provenanceStrength, limitations, claimSupport, assessedBy,
    statementTextDigest, revision}.

    Accepts EvidenceAssessment models (their citations are reduced to `citations_digest`) or docs
    already in that shape. Excludes `format` and the raw citation list.
    """
    docs = []
    for assessment in assessments:
        wire = _wire(assessment)
        if "citationsDigest" not in wire:
            wire = {**wire, "citationsDigest": citations_digest(wire["citations"])}
        docs.append({key: wire[key] for key in _ASSESSMENT_KEYS})
    docs.sort(key=lambda doc: (doc["candidateId"], doc["statementId"]))
    return digest(docs)


def _without(document: Mapping[str, Any] | ContractModel, *excluded: str) -> dict[str, Any]:
    wire = _wire(document)
    return {key: value for key, value in wire.items() if key not in excluded}


def plan_digest(plan: Mapping[str, Any] | ContractModel) -> str:
    """digest(plan wire form minus {planDigest, authorization}).

    For PromotionPlan@v1 and RunnerExecutionPlan@v1: the digest never covers itself nor the
    authorization state, so approving a plan does not change its digest.
    """
    return digest(_without(plan, "planDigest", "authorization"))


def manifest_digest(manifest: Mapping[str, Any] | ContractModel) -> str:
    """digest(AuthorizationManifest wire form minus {manifestDigest, authorization})."""
    return digest(_without(manifest, "manifestDigest", "authorization"))


def runner_input_digest(stdin_bytes: bytes) -> str:
    """sha256 of the exact stdin bytes given to a runner (stdin = canonical JSON of the task)."""
    return sha256_hex(stdin_bytes)


def sanitized_content_digest(content: bytes) -> str:
    """sha256 of the exact bytes a promotion will write."""
    return sha256_hex(content)


def git_blob_oid(content: bytes) -> str:
    """git's blob object id (`git hash-object`): sha1(b"blob <len>\\0" + bytes)."""
    return hashlib.sha1(b"blob %d\x00" % len(content) + content).hexdigest()


# --- consolidation -------------------------------------------------------------------------------


def entry_set_digest(entries: Iterable[Mapping[str, Any] | ContractModel]) -> str:
    """digest([{entryId, revision, contentDigest}] sorted by entryId); other keys excluded."""
    rows = [
        {"entryId": w["entryId"], "revision": w["revision"], "contentDigest": w["contentDigest"]}
        for w in _wires(entries)
    ]
    return digest(sorted(rows, key=lambda row: row["entryId"]))


def scene_index_digest(scenes: Iterable[Mapping[str, Any] | ContractModel]) -> str:
    """digest([{name, contentDigest, heat}] sorted by name); scene content excluded."""
    rows = [
        {"name": w["name"], "contentDigest": w["contentDigest"], "heat": w["heat"]}
        for w in _wires(scenes)
    ]
    return digest(sorted(rows, key=lambda row: row["name"]))


def consolidation_citations_digest(
    based_on: Iterable[Mapping[str, Any] | ContractModel],
) -> str:
    """A consolidation operation's citationsDigest: `entry_set_digest` of its basedOnEntryIds."""
    return entry_set_digest(based_on)
