"""The evidence catalog of an extraction task, and provenance-strength derivation.

A task carries an opaque catalog: `{evidenceId, kind, pointerDigest, display}` per item. The
agent cites evidence ids only; everything that says *how* an item is linked (relation, strength,
limitations) and the private pointer itself stay on the host (`EvidenceRecord`).

Catalog sources, for the turns of one chunk:
- `turn`   one per turn: relation `session-contains-turn`, limitation `source-local-only` (a
           transcript is local; a claim resting on it cannot be checked by a teammate), and
           the strength of the turn's strongest `direct` or `observed` delivery edge, with
           that edge's limitations — `unknown` when it delivered none (`turn_strength`).
           Pointer `{kind, sessionKey, turnIndex, revision}`. A strength is the delivery
           trace's link to a commit (docs/sessions.md: `direct` is a full hash a commit
           command printed in that turn; the seed derives provenance strength from the
           delivery trace only), and the entry a cited turn goes into names exactly those
           commits (promotion/rendering.py `unit_evidence`); a turn that delivered nothing
           links the claim to no commit, as citing nothing does.
- `commit` one per commit linked to a turn of the chunk by a `direct` or `observed` delivery
           edge (`candidate`/`contextual` edges are not offered as evidence). Strength and
           limitations come from the edge; several edges to one commit merge (strongest wins,
           relations and limitations are unioned). Pointer `{kind, repositoryKey, commitHash}`.
- `path`   one per repo-relative path a turn of the chunk wrote: relation `turn-wrote-path`,
           strength `observed`, limitations `not-causality` + `path-only-context` (the session
           recorded a write there; that says nothing about what ended up committed).
           Pointer `{kind, worktreeKey, path}`.

Every pointer also carries `salt`, a keyed digest (local origin secret) of the task scope
(`task_scope`: owner, session, chunk digest and, for turns put back, the extraction round), so
`pointerDigest = digest(pointer)` is random-looking, stable for the same task inputs and
meaningless to anyone else. `evidenceId = ev-<n>-<pointerDigest[:12]>`
(the ExtractionTask@v1 contract form), n = 1-based position after sorting the catalog by kind
(commit < turn < path) then pointerDigest. `display` holds public-safe text only:
`turn N @ <time>`, `commit <full hash>[ @ <public repo identity>]`, `path <repo-relative path>`.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from teamlore.core.canonical import digest
from teamlore.core.keys import origin_secret

EvidenceKind = Literal["commit", "turn", "path"]
Strength = Literal["direct", "observed", "candidate", "contextual", "unknown"]

STRENGTH_ORDER: tuple[str, ...] = ("direct", "observed", "candidate", "contextual", "unknown")
STRENGTH_RANK: dict[str, int] = {name: rank for rank, name in enumerate(STRENGTH_ORDER)}
KIND_ORDER: dict[str, int] = {"commit": 0, "turn": 1, "path": 2}

SOURCE_LOCAL_ONLY = "source-local-only"
TURN_RELATION = "session-contains-turn"
PATH_RELATION = "turn-wrote-path"
PATH_LIMITATIONS = ("not-causality", "path-only-context")
CATALOG_EDGE_STRENGTHS = frozenset({"direct", "observed"})
NO_DELIVERY = "unknown"  # the strength of a turn that delivered no commit (module docstring)


@dataclass(slots=True)
class EvidenceRecord:
    """One catalog item with its private side (never leaves the host)."""

    evidence_id: str
    kind: EvidenceKind
    pointer: dict[str, Any]
    pointer_digest: str
    display: str
    strength: str
    relations: list[str]
    limitations: list[str]
    session_key: str | None = None
    turn_index: int | None = None
    turn_revision: str | None = None
    edge_revisions: list[str] = field(default_factory=list)

    def public(self) -> dict[str, Any]:
        return {
            "evidenceId": self.evidence_id,
            "kind": self.kind,
            "pointerDigest": self.pointer_digest,
            "display": self.display,
        }

    def private(self) -> dict[str, Any]:
        """The host-side record (for the state DB's evidence refs)."""
        return {
            "evidenceId": self.evidence_id,
            "kind": self.kind,
            "pointer": self.pointer,
            "pointerDigest": self.pointer_digest,
            "relation": self.relations[0],
            "relations": self.relations,
            "strength": self.strength,
            "limitations": self.limitations,
            "sessionKey": self.session_key,
            "turnIndex": self.turn_index,
            "turnRevision": self.turn_revision,
            "edgeRevisions": self.edge_revisions,
        }


@dataclass(frozen=True, slots=True)
class CatalogTurn:
    """What the catalog needs to know about one turn of the chunk."""

    session_key: str
    index: int
    revision: str
    observed_at: str | None
    written_paths: tuple[str, ...]  # repo-relative
    edges: tuple[CatalogEdge, ...]


@dataclass(frozen=True, slots=True)
class CatalogEdge:
    commit_hash: str
    strength: str
    reasons: tuple[str, ...]
    limitations: tuple[str, ...]
    revision: str


@dataclass(slots=True)
class Catalog:
    records: list[EvidenceRecord]
    turn_evidence: dict[int, str]  # turn index -> evidence id
    delivery_edge_revisions: list[str]

    def public(self) -> list[dict[str, Any]]:
        return [r.public() for r in self.records]

    def by_id(self) -> dict[str, EvidenceRecord]:
        return {r.evidence_id: r for r in self.records}


def pointer_digest(pointer: dict[str, Any]) -> str:
    return digest(pointer)


def task_scope(
    owner: dict[str, str], session_key: str, chunk_digest: str, extraction_round: int = 0
) -> str:
    """The scope a task's pointer salt is keyed on: its owner, session and chunk digest, and
    the chunk's extraction round when a person put its turns back (extracted_turns.py), so the
    task cut from them gets new evidence ids and a new task id. Round 0 leaves the round out:
    the evidence ids of every task cut before rounds existed stay as they were. Recall (when it
    cuts a task) and review (when it resolves a citation) both key on this scope."""
    scoped: dict[str, Any] = {"owner": owner, "sessionKey": session_key, "chunk": chunk_digest}
    if extraction_round:
        scoped["round"] = extraction_round
    return digest(scoped)


def pointer_salt(scope: str, home: Path | None = None) -> str:
    """Keyed digest of a task scope: makes pointer digests unguessable and task-specific."""
    mac = hmac.new(origin_secret(home), digestmod=hashlib.sha256)
    mac.update(b"memory-evidence-salt\x00" + scope.encode("utf-8"))
    return mac.hexdigest()


def evidence_id(position: int, pointer_digest_hex: str) -> str:
    """`ev-<n>-<pointerDigest[:12]>` (n is 1-based)."""
    return f"ev-{position}-{pointer_digest_hex[:12]}"


def _clean_display(text: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def _merge_into(records: dict[str, EvidenceRecord], record: EvidenceRecord) -> None:
    existing = records.get(record.pointer_digest)
    if existing is None:
        records[record.pointer_digest] = record
        return
    if STRENGTH_RANK[record.strength] < STRENGTH_RANK[existing.strength]:
        existing.strength = record.strength
        existing.relations = [*record.relations, *existing.relations]
    else:
        existing.relations = [*existing.relations, *record.relations]
    existing.relations = list(dict.fromkeys(existing.relations))
    existing.limitations = sorted({*existing.limitations, *record.limitations})
    existing.edge_revisions = sorted({*existing.edge_revisions, *record.edge_revisions})


def build_catalog(
    turns: Iterable[CatalogTurn],
    *,
    repository_key: str,
    worktree_key: str,
    public_identity: str | None,
    scope: str,
    home: Path | None = None,
) -> Catalog:
    """The evidence catalog of a chunk's turns (sorted by kind, then pointer digest)."""
    salt = pointer_salt(scope, home)
    records: dict[str, EvidenceRecord] = {}
    turn_pointer_digest: dict[int, str] = {}
    edge_revisions: set[str] = set()
    for turn in turns:
        pointer = {
            "kind": "turn",
            "sessionKey": turn.session_key,
            "turnIndex": turn.index,
            "revision": turn.revision,
            "salt": salt,
        }
        pd = pointer_digest(pointer)
        turn_pointer_digest[turn.index] = pd
        when = f" @ {turn.observed_at}" if turn.observed_at else ""
        _merge_into(
            records,
            EvidenceRecord(
                evidence_id="",
                kind="turn",
                pointer=pointer,
                pointer_digest=pd,
                display=f"turn {turn.index}{when}",
                strength=turn_strength(e.strength for e in turn.edges),
                relations=[TURN_RELATION],
                limitations=sorted(
                    {SOURCE_LOCAL_ONLY}.union(
                        *(e.limitations for e in turn.edges if e.strength in CATALOG_EDGE_STRENGTHS)
                    )
                ),
                session_key=turn.session_key,
                turn_index=turn.index,
                turn_revision=turn.revision,
            ),
        )
        for edge in turn.edges:
            if edge.strength not in CATALOG_EDGE_STRENGTHS:
                continue
            edge_revisions.add(edge.revision)
            pointer = {
                "kind": "commit",
                "repositoryKey": repository_key,
                "commitHash": edge.commit_hash,
                "salt": salt,
            }
            at = f" @ {public_identity}" if public_identity else ""
            relation = edge.reasons[0].split(":", 1)[0] if edge.reasons else "delivery-edge"
            _merge_into(
                records,
                EvidenceRecord(
                    evidence_id="",
                    kind="commit",
                    pointer=pointer,
                    pointer_digest=pointer_digest(pointer),
                    display=f"commit {edge.commit_hash}{at}",
                    strength=edge.strength,
                    relations=[relation],
                    limitations=sorted(edge.limitations),
                    edge_revisions=[edge.revision],
                ),
            )
        for path in turn.written_paths:
            pointer = {"kind": "path", "worktreeKey": worktree_key, "path": path, "salt": salt}
            _merge_into(
                records,
                EvidenceRecord(
                    evidence_id="",
                    kind="path",
                    pointer=pointer,
                    pointer_digest=pointer_digest(pointer),
                    display=_clean_display(f"path {path}"),
                    strength="observed",
                    relations=[PATH_RELATION],
                    limitations=list(PATH_LIMITATIONS),
                ),
            )
    ordered = sorted(records.values(), key=lambda r: (KIND_ORDER[r.kind], r.pointer_digest))
    for position, record in enumerate(ordered, start=1):
        record.evidence_id = evidence_id(position, record.pointer_digest)
    by_digest = {r.pointer_digest: r.evidence_id for r in ordered}
    return Catalog(
        records=ordered,
        turn_evidence={index: by_digest[pd] for index, pd in turn_pointer_digest.items()},
        delivery_edge_revisions=sorted(edge_revisions),
    )


# -- derivation helpers for stage ------------------------------------------------------------


def turn_strength(edge_strengths: Iterable[str]) -> str:
    """A turn's provenance strength: its strongest delivery edge the catalog offers (`direct`,
    `observed`: the commits an entry citing the turn names), else `unknown`."""
    delivered = [s for s in edge_strengths if s in CATALOG_EDGE_STRENGTHS]
    return min(delivered, key=STRENGTH_RANK.__getitem__, default=NO_DELIVERY)


@dataclass(frozen=True, slots=True)
class StatementProvenance:
    citations: list[dict[str, str]]  # [{evidenceId, pointerDigest}] sorted by evidenceId, unique
    provenance_strength: str
    limitations: list[str]


class UnknownEvidenceError(KeyError):
    """A statement cites an evidence id its task did not issue."""

    def __init__(self, evidence_ids: list[str]) -> None:
        super().__init__(", ".join(evidence_ids))
        self.evidence_ids = evidence_ids


def statement_provenance(
    cited_ids: Iterable[str], index: dict[str, EvidenceRecord]
) -> StatementProvenance:
    """Provenance of one statement: the strongest cited strength (none cited: `unknown`) and
    the union of the cited limitations. Raises UnknownEvidenceError for ids not in `index`."""
    ids = sorted(set(cited_ids))
    unknown = [i for i in ids if i not in index]
    if unknown:
        raise UnknownEvidenceError(unknown)
    cited = [index[i] for i in ids]
    strength = min((r.strength for r in cited), key=STRENGTH_RANK.__getitem__, default="unknown")
    limitations = sorted({lim for r in cited for lim in r.limitations})
    citations = [{"evidenceId": r.evidence_id, "pointerDigest": r.pointer_digest} for r in cited]
    return StatementProvenance(citations, strength, limitations)


def citations_digest(citations: list[dict[str, str]]) -> str:
    unique = {c["evidenceId"]: c for c in citations}
    return digest([unique[k] for k in sorted(unique)])


def entry_strength(statement_strengths: Iterable[str]) -> str:
    """An entry's provenance strength: the weakest of its statements (none: `unknown`)."""
    return max(statement_strengths, key=STRENGTH_RANK.__getitem__, default="unknown")


def entry_limitations(statement_limitations: Iterable[Iterable[str]]) -> list[str]:
    return sorted({lim for limits in statement_limitations for lim in limits})
