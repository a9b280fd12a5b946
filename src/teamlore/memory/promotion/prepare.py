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

import difflib
import errno
import os
import re
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import ValidationError

from teamlore.contracts import digests
from teamlore.contracts.promotion import PREPARE_REQUEST_FORMAT, PrepareRequest, PromotionPlan
from teamlore.contracts.repository import REPOSITORY_BINDING_FORMAT
from teamlore.core import db, errors
from teamlore.core.canonical import canonical_json, sha256_hex
from teamlore.core.failpoints import failpoint
from teamlore.core.secrets import sanitize_for_name, sanitize_text
from teamlore.memory.extraction.typed_facts import COMMIT_CHANGED_PATH, parse_fact_text
from teamlore.memory.promotion.review import (
    CandidateView,
    EvidenceResolver,
    StatementView,
    assessment_docs,
    candidate_view,
    entry_claim_support,
    require_candidate,
    weakest,
)
from teamlore.memory.store import layout
from teamlore.memory.store.documents import (
    Entry,
    dump_entry,
    load_entry,
    repo_relative_path_problem,
)
from teamlore.memory.store.frontmatter import MemoryFormatError
from teamlore.memory.store.lint import (
    LINT_POLICY_VERSION,
    Finding,
    known_session_id_findings,
    lint_bytes,
)
from teamlore.memory.store.slugs import unique_entry_slug
from teamlore.repo.binding import RepositoryIdentity
from teamlore.sessions.queries import provider_session_uuids

PREPARE_RESULT_FORMAT = "threadshare-memory-prepare-result@v1"
RAW_BLOCK_RULES = ("secret.", "session.", "path.provider-local")
LOCKED_PLAN_STATES = ("approved", "applying")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_LONG_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{16,}(?![0-9A-Za-z])")
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


# -- owner ---------------------------------------------------------------------------------------


def public_identity_of(identity: RepositoryIdentity) -> str | None:
    """The sanitized origin identity (`host/org/repo`) of the worktree, or None."""
    from teamlore.memory.extraction.recall import owner_binding

    return owner_binding(identity).public_identity


def repository_binding(identity: RepositoryIdentity, public_identity: str | None) -> dict[str, Any]:
    """RepositoryBinding@v1 of the owner: keys, digests and the public identity, no path."""
    common = os.stat(identity.git_common_dir)
    return {
        "format": REPOSITORY_BINDING_FORMAT,
        "repositoryKey": identity.repository_key,
        "worktreeKey": identity.worktree_key,
        "publicRepositoryIdentity": public_identity,
        "rootRealpathDigest": sha256_hex(str(identity.worktree_root).encode("utf-8")),
        "commonDirectoryIdentity": {"device": str(common.st_dev), "inode": str(common.st_ino)},
        "memoryRoot": layout.MEMORY_ROOT,
    }


# -- reading the working tree (never through a symlink) ------------------------------------------


def read_memory_file(worktree_root: Path, target_path: str) -> bytes | None:
    """Current bytes of a memory file (None: absent). A symlink anywhere → UNSAFE_PATH."""
    relative = target_path[len(layout.MEMORY_ROOT) + 1 :]
    parts = relative.split("/")
    try:
        with layout.open_memory_root(worktree_root) as memory_fd:
            opened: list[int] = []
            try:
                parent = memory_fd
                walked = layout.MEMORY_ROOT
                for part in parts[:-1]:
                    walked = f"{walked}/{part}"
                    try:
                        parent = layout.open_dir_nofollow(parent, part, walked)
                    except FileNotFoundError:
                        return None
                    opened.append(parent)
                try:
                    fd = os.open(parts[-1], os.O_RDONLY | _O_NOFOLLOW, dir_fd=parent)
                except FileNotFoundError:
                    return None
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.EMLINK):
                        raise errors.TeamloreError(
                            errors.UNSAFE_PATH,
                            f"{target_path}: symbolic links are not allowed in the memory tree",
                            path=target_path,
                        ) from None
                    raise
                with os.fdopen(fd, "rb") as handle:
                    return handle.read()
            finally:
                for one in reversed(opened):
                    os.close(one)
    except FileNotFoundError:
        raise errors.TeamloreError(errors.MEMORY_NOT_INITIALIZED) from None


def existing_entry_ids(worktree_root: Path) -> set[str]:
    try:
        with layout.open_memory_root(worktree_root) as memory_fd:
            try:
                entries_fd = layout.open_dir_nofollow(memory_fd, "entries", layout.ENTRIES_DIR)
            except FileNotFoundError:
                return set()
            try:
                return {n[: -len(".md")] for n in os.listdir(entries_fd) if n.endswith(".md")}
            finally:
                os.close(entries_fd)
    except FileNotFoundError:
        raise errors.TeamloreError(errors.MEMORY_NOT_INITIALIZED) from None


# -- rendering -----------------------------------------------------------------------------------


@dataclass(slots=True)
class RenderContext:
    """What rendering needs from the working tree; `assigned` grows as ids are handed out."""

    worktree_root: Path
    public_identity: str | None
    existing_ids: set[str]
    # provider session ids this machine has indexed: rendered text carrying one is blocked
    known_session_ids: frozenset[str] = frozenset()
    assigned: set[str] = field(default_factory=set)

    @classmethod
    def open(
        cls, identity: RepositoryIdentity, public_identity: str | None, index: sqlite3.Connection
    ) -> RenderContext:
        root = Path(identity.worktree_root)
        return cls(root, public_identity, existing_entry_ids(root), provider_session_uuids(index))

    def fresh(self) -> RenderContext:
        return RenderContext(
            self.worktree_root,
            self.public_identity,
            set(self.existing_ids),
            self.known_session_ids,
        )

    def read(self, target_path: str) -> bytes | None:
        return read_memory_file(self.worktree_root, target_path)

    def new_id(self, text: str) -> str:
        """A fresh slug; long hex runs (commit hashes) shortened so the id stays readable and
        never looks like a high-entropy token."""
        text = _LONG_HEX.sub(lambda m: m[0][:7], text)
        slug = unique_entry_slug(text, self.existing_ids | self.assigned)
        self.assigned.add(slug)
        return slug


@dataclass(frozen=True, slots=True)
class RenderedFile:
    target_path: str
    entry_id: str
    role: str  # new | update | deprecate
    candidate_id: str
    content: bytes
    current: bytes | None
    warnings: tuple[Finding, ...] = ()

    @property
    def target_blob_hash(self) -> str | None:
        return None if self.current is None else digests.git_blob_oid(self.current)

    @property
    def sanitized_digest(self) -> str:
        return digests.sanitized_content_digest(self.content)

    def diff(self) -> str:
        old = [] if self.current is None else self.current.decode("utf-8", "replace")
        before = old.splitlines(keepends=True) if isinstance(old, str) else []
        after = self.content.decode("utf-8").splitlines(keepends=True)
        return "".join(
            difflib.unified_diff(
                before,
                after,
                fromfile="/dev/null" if self.current is None else f"a/{self.target_path}",
                tofile=f"b/{self.target_path}",
            )
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "targetPath": self.target_path,
            "entryId": self.entry_id,
            "role": self.role,
            "candidateId": self.candidate_id,
            "operation": "write",
            "targetBlobHash": self.target_blob_hash,
            "sanitizedContentDigest": self.sanitized_digest,
            "bytes": len(self.content),
            "preview": self.content.decode("utf-8"),
            "diff": self.diff(),
            "warnings": [w.model_dump() for w in self.warnings],
        }


def claim_units(statements: Sequence[StatementView]) -> list[list[StatementView]]:
    """Atomic claim units: statements resting on the same citation set form one unit (a claim
    and its restatements); a statement whose citations are all cited by another unit (a typed
    fact supporting a claim, say) joins that unit rather than become an entry of its own."""
    groups: dict[frozenset[str], list[StatementView]] = {}
    for statement in statements:
        key = frozenset(c.evidence_id for c in statement.citations)
        groups.setdefault(key, []).append(statement)
    keys = sorted(groups, key=len, reverse=True)
    units: dict[frozenset[str], list[StatementView]] = {}
    for key in keys:
        home = next((k for k in units if key <= k), None)
        units.setdefault(home if home is not None else key, []).extend(groups[key])
    order = {id(s): i for i, s in enumerate(statements)}
    return sorted(
        (sorted(u, key=lambda s: order[id(s)]) for u in units.values()),
        key=lambda u: order[id(u[0])],
    )


def statement_support(statement: StatementView) -> str:
    """The support a statement has once prepared: its typed fact, else the confirmation."""
    return "typed-fact" if statement.typed_fact is not None else "human-confirmed"


def unit_evidence(
    statements: Iterable[StatementView], public_identity: str | None
) -> tuple[dict[str, Any], list[str]]:
    """Public evidence (commits + repo-relative paths) and `occurred` dates of a claim unit."""
    commits: set[str] = set()
    paths: set[str] = set()
    occurred: set[str] = set()
    for statement in statements:
        for cited in statement.citations:
            if cited.kind == "commit" and cited.commit_hash:
                commits.add(cited.commit_hash)
            elif cited.kind == "path" and cited.path:
                paths.add(cited.path)
            elif cited.kind == "turn":
                commits.update(cited.delivered_commits)
                if cited.occurred and _DATE.fullmatch(cited.occurred):
                    occurred.add(cited.occurred)
        if statement.typed_fact == COMMIT_CHANGED_PATH:
            parsed = parse_fact_text(statement.text)
            if parsed is not None:
                paths.add(str(parsed.params["path"]))
    evidence = {
        "commits": [{"repo": public_identity, "hash": h} for h in sorted(commits)]
        if public_identity
        else [],
        "paths": sorted(p for p in paths if repo_relative_path_problem(p) is None),
    }
    return evidence, sorted(occurred)


def _one_line(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text or None


def _body(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").strip() + "\n"


def _lint_entry(
    raw: bytes, sanitized: bytes, target_path: str, known_session_ids: frozenset[str]
) -> tuple[list[Finding], tuple[Finding, ...]]:
    """(blocking findings, warnings): raw text blocks on secrets/session ids/provider paths
    (sanitizing must not hide them), the sanitized bytes block on anything."""
    blocking = [
        f
        for f in lint_bytes(raw, path=target_path, kind="entry")
        if f.severity == "block" and f.rule.startswith(RAW_BLOCK_RULES)
    ]
    blocking += known_session_id_findings(
        raw.decode("utf-8", "replace"), path=target_path, known=known_session_ids
    )
    final = lint_bytes(sanitized, path=target_path, kind="entry")
    seen = {(f.rule, f.line) for f in blocking}
    blocking += [f for f in final if f.severity == "block" and (f.rule, f.line) not in seen]
    return blocking, tuple(f for f in final if f.severity == "warn")


def _entry_bytes(fields: dict[str, Any], target_path: str) -> bytes:
    try:
        return dump_entry(Entry.model_validate(fields))
    except (ValidationError, MemoryFormatError, ValueError) as exc:
        raise errors.TeamloreError(
            errors.LINT_BLOCKED,
            f"{target_path}: the entry would not follow the format ({exc.__class__.__name__})",
            findings=[
                {
                    "rule": "format.invalid-field",
                    "severity": "block",
                    "file": target_path,
                    "line": 0,
                    "message": str(exc).splitlines()[0][:200],
                }
            ],
        ) from None


def _approved_targets(
    view: CandidateView, ctx: RenderContext
) -> list[tuple[dict[str, Any], bytes]]:
    """The approved entries the candidate updates/merges, with their current bytes, after
    checking they are exactly what adjudication saw (`TARGET_DRIFT` otherwise)."""
    found: list[tuple[dict[str, Any], bytes]] = []
    for reference in view.payload.get("supersedes", []):
        if reference.get("sourceKind") != "approved":
            continue
        target_path = f"{layout.MEMORY_ROOT}/{reference['path']}"
        current = ctx.read(target_path)
        if current is None or sha256_hex(current) != reference.get("contentDigest"):
            raise errors.TeamloreError(
                errors.TARGET_DRIFT,
                f"entry {reference['id']} changed since the candidate was adjudicated; "
                "discard the candidate and extract again",
                candidateId=view.candidate_id,
                entryId=reference["id"],
            )
        found.append(({**reference, "targetPath": target_path}, current))
    return found


def render_entry_candidate(view: CandidateView, ctx: RenderContext) -> list[RenderedFile]:
    """The exact entry files promoting `view` writes (raises LINT_BLOCKED / TARGET_DRIFT)."""
    payload = view.payload
    units = claim_units(view.statements)
    targets = _approved_targets(view, ctx)
    merge = bool(payload.get("mergedFrom"))
    files: list[RenderedFile] = []
    blocking: list[Finding] = []
    root = str(ctx.worktree_root)
    scene_raw = _one_line(payload.get("scene"))
    primary_id: str | None = None
    for number, unit in enumerate(units):
        text = payload.get("content", "") if len(units) == 1 else "\n\n".join(s.text for s in unit)
        evidence, occurred = unit_evidence(unit, ctx.public_identity)
        role = "new"
        current: bytes | None = None
        if number == 0 and targets:
            reference, current = targets[0]
            entry_id, role = str(reference["id"]), "update"
            target_path = reference["targetPath"]
            try:
                old = load_entry(current, target_path)
            except MemoryFormatError:
                old = None
            if old is not None:
                occurred = sorted({*occurred, *old.occurred})
                if merge:
                    commits = {c.hash: c.repo for c in old.evidence.commits}
                    commits.update({c["hash"]: c["repo"] for c in evidence["commits"]})
                    evidence = {
                        "commits": [{"repo": commits[h], "hash": h} for h in sorted(commits)],
                        "paths": sorted({*old.evidence.paths, *evidence["paths"]}),
                    }
        else:
            # the id reaches git as the file name: built from the sanitized text, like the body
            entry_id = ctx.new_id(sanitize_for_name(text, worktree_root=root))
            target_path = layout.entry_path(entry_id)
            current = ctx.read(target_path)
        if number == 0:
            occurred = sorted(
                {*occurred, *(d for d in payload.get("occurred") or [] if _DATE.fullmatch(str(d)))}
            )
            primary_id = entry_id
        fields = {
            "id": entry_id,
            "type": payload.get("type", "work_fact"),
            "status": "approved",
            "priority": int(payload.get("priority", 50)),
            "confidence": payload.get("confidence", "medium"),
            "provenance_strength": weakest([s.assessment["provenanceStrength"] for s in unit]),
            "claim_support": entry_claim_support([statement_support(s) for s in unit]),
            "limitations": sorted({x for s in unit for x in s.assessment["limitations"]}),
            "scope": "repo",
            "scene": scene_raw,
            "occurred": occurred,
            "evidence": evidence,
            "superseded_by": None,
        }
        raw = _entry_bytes({**fields, "body": _body(text)}, target_path)
        scene = _one_line(sanitize_text(scene_raw, worktree_root=root)) if scene_raw else None
        sanitized = _entry_bytes(
            {**fields, "scene": scene, "body": _body(sanitize_text(text, worktree_root=root))},
            target_path,
        )
        unit_blocking, warnings = _lint_entry(raw, sanitized, target_path, ctx.known_session_ids)
        blocking += unit_blocking
        files.append(
            RenderedFile(
                target_path, entry_id, role, view.candidate_id, sanitized, current, warnings
            )
        )
    for reference, current in targets[1:]:
        target_path = reference["targetPath"]
        try:
            old = load_entry(current, target_path)
        except MemoryFormatError as exc:
            raise errors.TeamloreError(
                errors.TARGET_DRIFT,
                f"entry {reference['id']} no longer parses ({exc.reason}); it cannot be deprecated",
                entryId=reference["id"],
            ) from None
        deprecated = dump_entry(
            old.model_copy(update={"status": "deprecated", "superseded_by": primary_id})
        )
        files.append(
            RenderedFile(
                target_path,
                str(reference["id"]),
                "deprecate",
                view.candidate_id,
                deprecated,
                current,
            )
        )
    if blocking:
        raise errors.TeamloreError(
            errors.LINT_BLOCKED,
            f"candidate {view.candidate_id}: {len(blocking)} blocking lint finding(s) "
            f"({', '.join(sorted({f.rule for f in blocking}))}); discard it",
            candidateId=view.candidate_id,
            findings=[f.model_dump() for f in blocking],
        )
    return files


def _render_skill(view: CandidateView, ctx: RenderContext) -> list[RenderedFile]:
    from teamlore.memory.promotion.kinds import require

    render = require("skill").render
    if render is None:  # pragma: no cover - the skills package registers one
        raise RuntimeError("the skill kind has no renderer")
    return render(view, ctx)


@dataclass(frozen=True, slots=True)
class CandidateKind:
    """A kind of candidate that review shows and prepare plans: the `candidate_kind` it is
    stored under, and the renderer of the exact files promoting it writes. A new kind of
    candidate is one entry in `CANDIDATE_KINDS` (keyed by the PrepareRequest@v1 `kind`)."""

    stored: str
    render: Callable[[CandidateView, RenderContext], list[RenderedFile]]


CANDIDATE_KINDS: dict[str, CandidateKind] = {
    "entry": CandidateKind("entry", render_entry_candidate),
    "skill": CandidateKind("skill", _render_skill),
}
# a renderer refuses with one of these when the candidate cannot be promoted as it is: review
# shows it blocked (with the reason) instead of failing
BLOCKING_CODES = frozenset(
    code.code
    for code in (
        errors.LINT_BLOCKED,
        errors.TARGET_DRIFT,
        errors.SKILL_TARGET_DRIFT,
        errors.MEMORY_CONTEXT_DRIFT,
    )
)


def candidate_kind(wire_kind: str) -> CandidateKind:
    kind = CANDIDATE_KINDS.get(wire_kind)
    if kind is None:
        raise errors.TeamloreError(
            errors.PREPARE_REQUEST_INVALID,
            f"kind {wire_kind!r} is not one of {', '.join(CANDIDATE_KINDS)}",
        )
    return kind


def wire_kind(stored: str) -> str:
    return next(wire for wire, kind in CANDIDATE_KINDS.items() if kind.stored == stored)


def render_candidate(view: CandidateView, ctx: RenderContext) -> list[RenderedFile]:
    """The exact files promoting `view` writes, by its kind."""
    return CANDIDATE_KINDS[wire_kind(view.kind)].render(view, ctx)


def preview_candidate(view: CandidateView, ctx: RenderContext) -> dict[str, Any]:
    """Review's view of `render_candidate` on a fresh id space (what a prepare of this
    candidate alone writes): files, or the blocking findings."""
    files: list[RenderedFile] = []
    findings: list[dict[str, Any]] = []
    blocked = False
    try:
        files = render_candidate(view, ctx.fresh())
    except errors.TeamloreError as exc:
        if exc.code not in BLOCKING_CODES:
            raise
        blocked = True
        findings = list(exc.details.get("findings", [])) or [
            {"rule": exc.code, "severity": "block", "file": "", "line": 0, "message": exc.message}
        ]
    evidence: dict[str, Any] = {
        "repository": ctx.public_identity,
        "commits": [],
        "paths": [],
        "occurred": [],
    }
    for unit in claim_units(view.statements):
        unit_public, occurred = unit_evidence(unit, ctx.public_identity)
        evidence["commits"] = sorted(
            {*evidence["commits"], *(c["hash"] for c in unit_public["commits"])}
        )
        evidence["paths"] = sorted({*evidence["paths"], *unit_public["paths"]})
        evidence["occurred"] = sorted({*evidence["occurred"], *occurred})
    return {
        "files": [f.to_json() for f in files],
        "blocked": blocked,
        "findings": findings,
        "publicEvidence": evidence,
    }


# -- journal helpers (shared with discard and promote) -------------------------------------------


def current_assessment_digest(conn: sqlite3.Connection, candidate_ids: Iterable[str]) -> str:
    """assessmentDigest over every stored assessment of these candidates (the plan binds it;
    promote recomputes it with this function)."""
    docs: list[dict[str, Any]] = []
    for candidate_id in candidate_ids:
        docs.extend(assessment_docs(conn, candidate_id).values())
    return digests.assessment_digest(docs)


def plans_touching(
    conn: sqlite3.Connection,
    identity: RepositoryIdentity,
    candidate_ids: Iterable[str],
    statuses: Sequence[str],
) -> list[str]:
    wanted = set(candidate_ids)
    marks = ", ".join("?" * len(statuses))
    found: list[str] = []
    for row in conn.execute(
        "SELECT plan_id, candidate_ids_json FROM promotion_journal WHERE repository_key = ? "
        f"AND worktree_key = ? AND status IN ({marks}) ORDER BY plan_id",
        (identity.repository_key, identity.worktree_key, *statuses),
    ):
        if wanted & set(orjson.loads(row[1])):
            found.append(str(row[0]))
    return found


def refuse_if_locked(
    conn: sqlite3.Connection, identity: RepositoryIdentity, candidate_ids: Sequence[str]
) -> None:
    locked = plans_touching(conn, identity, candidate_ids, LOCKED_PLAN_STATES)
    if locked:
        raise errors.TeamloreError(
            errors.CANDIDATE_LOCKED,
            f"plan {locked[0]} holding this candidate is approved; promote it (or let it be "
            "voided) first",
            planIds=locked,
        )


def void_generated_plans(
    conn: sqlite3.Connection, identity: RepositoryIdentity, candidate_ids: Sequence[str], now: int
) -> list[str]:
    """Earlier `generated` plans sharing a candidate: superseded, hence `voided`."""
    voided = plans_touching(conn, identity, candidate_ids, ("generated",))
    conn.executemany(
        "UPDATE promotion_journal SET status = 'voided', updated_at = ? "
        "WHERE plan_id = ? AND status = 'generated'",
        [(now, plan_id) for plan_id in voided],
    )
    return voided


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
        raise errors.TeamloreError(
            errors.CANDIDATE_NOT_FOUND,
            f"{view.candidate_id} is a {view.kind} candidate, not a {kind} candidate",
            candidateId=view.candidate_id,
        )
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
        ctx = RenderContext.open(identity, public_identity, index)
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


__all__ = [
    "CANDIDATE_KINDS",
    "PREPARE_REQUEST_FORMAT",
    "PlannedBytes",
    "RenderContext",
    "RenderedFile",
    "build_plan",
    "claim_units",
    "current_assessment_digest",
    "journal_plan",
    "plans_touching",
    "prepare",
    "preview_candidate",
    "read_memory_file",
    "render_candidate",
    "repository_binding",
    "void_generated_plans",
]
