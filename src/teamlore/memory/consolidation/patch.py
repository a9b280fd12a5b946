"""ConsolidationPatch@v1 rules, heat and capacity, and the files a patch materializes.

Every rule is checked against the task the patch answers (its entries, the scenes and doctrine
as they are now); a broken rule refuses the whole patch with `CONSOLIDATION_INVALID` and a
stable `reason` (docs/memory.md lists them):

- batch: unique operation ids (`duplicate-operation-id`), one operation per file, merge sources
  included (`conflicting-file-operation`, `merge-source-conflict`), at most one scene create
  (`too-many-scene-creates`);
- entries: `basedOnEntryIds` name entries of the task (`unknown-entry`);
- targets: create only what is absent (`target-already-exists`), update, delete and merge only
  what exists (`target-not-found`, `unknown-merge-source`);
- capacity (scenes now = S, after the patch = F): S >= 12 → a create's rationale says why it
  cannot fit (`create-rationale-required`); S >= 14 → no create (`create-forbidden`); F > 15 →
  `scene-capacity-exceeded`; S >= 15 → the patch must merge or delete down below 15
  (`scene-reduction-required`);
- heat (`scene-heat@1`, computed here only): create 1, update old + 1, merge 1 + sum of the
  sources (`heat-overflow` past 2,147,483,647); a heat line in the agent's content is dropped;
- content: no BOM, no bare CR (`invalid-content`); CRLF → LF and trailing blanks stripped; a
  scene must be a valid scene file (`invalid-scene-content`: summary <= 40 code points, body <=
  1,500), the doctrine non-empty and <= 1,200 (`invalid-doctrine-content`).

Paths come from names only: `scenes/<name>.md`, `doctrine.md`. Files: every write (sorted by
path), then every delete (a delete op's target, a merge's sources other than its target).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from teamlore.contracts.consolidation import (
    MAX_HEAT,
    ConsolidationOperation,
    ConsolidationPatch,
    with_positional_operation_ids,
)
from teamlore.core import errors
from teamlore.core.canonical import digest
from teamlore.memory.consolidation.source import ApprovedEntry, ApprovedSource
from teamlore.memory.consolidation.task import CREATE_FORBIDDEN_AT, MAX_SCENES, MERGE_PREFERRED_AT
from teamlore.memory.store import documents
from teamlore.memory.store import frontmatter as fm
from teamlore.memory.store.layout import DOCTRINE_FILE, scene_path

CANNOT_FIT = re.compile(
    r"(?:cannot|can't|can not|unable to|does not|doesn't|won't|will not)"
    r".{0,100}?(?:fit|merge|fold|incorporat|belong)"
    r"|(?:无法|不能).{0,60}?(?:并入|合并|纳入)",
    re.IGNORECASE | re.DOTALL,
)
AGENT_META_FIELDS = ("summary", "created", "updated", "heat")
_REASON = re.compile(r"^([a-z]+(?:-[a-z]+)+): ")
# a patch's shape is in its task, not in recall's guidance.draftShape (STAGE_REQUEST_INVALID's)
PATCH_SHAPE_NEXT = (
    "Fix the field the message names; a patch's shape: the task `teamlore memory synthesize` "
    "gives, its contract.prompts.consolidation (echo its taskId and bindingDigest)."
)


def invalid(reason: str, message: str, **details: Any) -> errors.TeamloreError:
    return errors.TeamloreError(
        errors.CONSOLIDATION_INVALID, f"{reason}: {message}", reason=reason, **details
    )


# --- parsing --------------------------------------------------------------------------------


def parse_patch(document: Any) -> ConsolidationPatch:
    """The contract, with the batch rules reported under their reasons (operations without an
    operationId are numbered by position first, as the contract does)."""
    document = with_positional_operation_ids(document)
    operations = document.get("operations") if isinstance(document, dict) else None
    if isinstance(operations, list):
        seen_ids: set[Any] = set()
        seen_files: set[tuple[Any, Any]] = set()
        for op in operations:
            if not isinstance(op, dict):
                continue
            op_id, target = op.get("operationId"), (op.get("target"), op.get("name"))
            if op_id in seen_ids:
                raise invalid(
                    "duplicate-operation-id",
                    f"operationId {op_id!r} is used twice",
                    operationId=op_id,
                )
            if target in seen_files:
                raise invalid(
                    "conflicting-file-operation",
                    f"two operations change {target[0]} {target[1]!r}; one operation per file",
                    operationId=op_id,
                )
            seen_ids.add(op_id)
            seen_files.add(target)
    try:
        return ConsolidationPatch.from_wire(document)
    except ValidationError as exc:
        where, message = errors.first_problem(exc, "document")
        message = message.removeprefix("Value error, ")
        found = _REASON.match(message)
        # a name that names no scene is the contract's (as a draft's `scene` is), not a host rule
        if found and found[1] != "invalid-scene-name":
            raise invalid(found[1], f"{where}: {message[found.end() :]}", location=where) from None
        raise errors.TeamloreError(
            errors.STAGE_REQUEST_INVALID,
            f"ConsolidationPatch@v1: {where}: {message}",
            contract="ConsolidationPatch@v1",
            location=where,
            problems=exc.error_count(),
        ).advising(PATCH_SHAPE_NEXT) from None


# --- content --------------------------------------------------------------------------------


def normalize(text: str, operation_id: str) -> str:
    """CRLF → LF and trailing spaces/tabs stripped per line; a BOM or a bare CR is refused."""
    if "\ufeff" in text:
        raise invalid(
            "invalid-content",
            f"{operation_id}: newContent contains a byte order mark",
            operationId=operation_id,
        )
    text = text.replace("\r\n", "\n")
    if "\r" in text:
        raise invalid(
            "invalid-content",
            f"{operation_id}: newContent contains a bare carriage return",
            operationId=operation_id,
        )
    return "\n".join(line.rstrip(" \t") for line in text.split("\n"))


def _scene_invalid(operation_id: str, why: str, rule: str) -> errors.TeamloreError:
    return invalid(
        "invalid-scene-content", f"{operation_id}: {why}", operationId=operation_id, rule=rule
    )


def agent_scene(text: str, operation_id: str) -> tuple[str, str]:
    """(summary, body) of a scene as the agent wrote it: a META block carrying `summary`
    (created/updated/heat lines are the host's and dropped; two heat lines are refused)."""
    lines = text.split("\n")
    if lines[0] != documents.META_START:
        raise _scene_invalid(
            operation_id,
            f"a scene starts with a `{documents.META_START}` line",
            "format.missing-meta",
        )
    try:
        end = lines.index(documents.META_END, 1)
    except ValueError:
        raise _scene_invalid(
            operation_id,
            f"META is never closed by `{documents.META_END}`",
            "format.unterminated-meta",
        ) from None
    try:
        fields, _ = fm.parse_fields(lines[1:end], path=f"{operation_id}:newContent", first_line=2)
    except fm.MemoryFormatError as exc:
        raise _scene_invalid(operation_id, f"META: {exc.why}", exc.reason) from None
    unknown = sorted(set(fields) - set(AGENT_META_FIELDS))
    if unknown:
        raise _scene_invalid(
            operation_id, f"unknown META field(s) {', '.join(unknown)}", "format.meta-unknown-field"
        )
    summary = fields.get("summary")
    if not isinstance(summary, str):
        raise _scene_invalid(operation_id, "META needs a summary string", "format.missing-field")
    return summary, "\n".join(lines[end + 1 :])


def scene_bytes(
    name: str, summary: str, body: str, *, created: str, updated: str, heat: int, operation_id: str
) -> bytes:
    try:
        scene = documents.Scene(
            name=name, created=created, updated=updated, summary=summary, heat=heat, body=body
        )
        data = documents.dump_scene(scene)
        documents.load_scene(data, scene_path(name))  # what we write reads back
    except ValidationError as exc:
        error = exc.errors()[0]
        why = str(error["msg"]).removeprefix("Value error, ")
        raise _scene_invalid(operation_id, why, str(error["type"])) from None
    except fm.MemoryFormatError as exc:
        raise _scene_invalid(operation_id, exc.why, exc.reason) from None
    return data


def doctrine_bytes(text: str, operation_id: str) -> bytes:
    try:
        return documents.dump_doctrine(documents.Doctrine(text=text))
    except ValidationError as exc:
        error = exc.errors()[0]
        raise invalid(
            "invalid-doctrine-content",
            f"{operation_id}: {str(error['msg']).removeprefix('Value error, ')}",
            operationId=operation_id,
            rule=str(error["type"]),
        ) from None


# --- the patch ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Materialized:
    """A validated patch: one host-materialized operation per agent operation, the files."""

    operations: tuple[dict[str, Any], ...]
    writes: tuple[tuple[str, bytes], ...]  # (repository-relative path, exact bytes)
    deletes: tuple[str, ...]

    @property
    def target_paths(self) -> list[str]:
        return [p for p, _ in self.writes] + list(self.deletes)


def target_path(op: ConsolidationOperation) -> str:
    return DOCTRINE_FILE if op.target == "doctrine" else scene_path(op.name)


def _check_batch(patch: ConsolidationPatch) -> None:
    written: dict[str, str] = {}
    for op in patch.operations:
        written[target_path(op)] = op.operation_id
    creates = [op for op in patch.operations if op.target == "scene" and op.op == "create"]
    if len(creates) > 1:
        raise invalid(
            "too-many-scene-creates",
            f"{len(creates)} scene creates; a patch creates at most one scene",
        )
    used: dict[str, str] = {}
    for op in patch.operations:
        for source in op.merge_sources:
            path = scene_path(source)
            if source in used:
                raise invalid(
                    "merge-source-conflict",
                    f"{op.operation_id}: scene {source!r} is already merged by {used[source]}",
                    operationId=op.operation_id,
                )
            if path in written and written[path] != op.operation_id:
                raise invalid(
                    "merge-source-conflict",
                    f"{op.operation_id}: scene {source!r} is also changed by {written[path]}",
                    operationId=op.operation_id,
                )
            used[source] = op.operation_id


def _check_entries(op: ConsolidationOperation, entries: Mapping[str, ApprovedEntry]) -> None:
    unknown = [e for e in op.based_on_entry_ids if e not in entries]
    if unknown:
        raise invalid(
            "unknown-entry",
            f"{op.operation_id}: {', '.join(unknown)} not among the task's entries",
            operationId=op.operation_id,
            entryIds=unknown,
        )


def _check_target(op: ConsolidationOperation, source: ApprovedSource) -> None:
    exists = source.doctrine is not None if op.target == "doctrine" else op.name in source.scenes
    what = "the doctrine" if op.target == "doctrine" else f"scene {op.name!r}"
    if op.op == "create" and exists:
        raise invalid(
            "target-already-exists",
            f"{op.operation_id}: {what} already exists; update it",
            operationId=op.operation_id,
        )
    if op.op in ("update", "delete") and not exists:
        raise invalid(
            "target-not-found",
            f"{op.operation_id}: {what} does not exist",
            operationId=op.operation_id,
        )
    if op.op == "merge":
        missing = [s for s in op.merge_sources if s not in source.scenes]
        if missing:
            raise invalid(
                "unknown-merge-source",
                f"{op.operation_id}: merge source(s) {', '.join(missing)} do not exist",
                operationId=op.operation_id,
            )
        if exists and op.name not in op.merge_sources:
            raise invalid(
                "conflicting-file-operation",
                f"{op.operation_id}: merge target {op.name!r} exists but is not one of its sources",
                operationId=op.operation_id,
            )


def _check_capacity(patch: ConsolidationPatch, source: ApprovedSource) -> None:
    current = len(source.scenes)
    final = current
    reduces = False
    for op in patch.operations:
        if op.target != "scene":
            continue
        if op.op == "create":
            final += 1
            if current >= CREATE_FORBIDDEN_AT:
                raise invalid(
                    "create-forbidden",
                    f"{op.operation_id}: {current} scenes exist; from {CREATE_FORBIDDEN_AT} on "
                    "a patch may not create one (merge or update instead)",
                    operationId=op.operation_id,
                    scenes=current,
                )
            if current >= MERGE_PREFERRED_AT and CANNOT_FIT.search(op.rationale) is None:
                raise invalid(
                    "create-rationale-required",
                    f"{op.operation_id}: {current} scenes exist; a create must say in its "
                    "rationale why the content cannot fit into an existing scene",
                    operationId=op.operation_id,
                    scenes=current,
                )
        elif op.op == "delete":
            final -= 1
            reduces = True
        elif op.op == "merge":
            removed = sum(1 for s in op.merge_sources if s != op.name)
            final += (0 if op.name in source.scenes else 1) - removed
            reduces = True
    if final > MAX_SCENES:
        raise invalid(
            "scene-capacity-exceeded",
            f"the patch leaves {final} scenes; at most {MAX_SCENES}",
            scenes=final,
        )
    if current >= MAX_SCENES and (not reduces or final >= MAX_SCENES):
        raise invalid(
            "scene-reduction-required",
            f"{current} scenes exist; the patch must merge or delete scenes below {MAX_SCENES}",
            scenes=current,
        )


def heat_of(op: ConsolidationOperation, source: ApprovedSource) -> int:
    if op.op == "create":
        heat = 1
    elif op.op == "update":
        heat = source.scenes[op.name].heat + 1
    else:
        heat = 1 + sum(source.scenes[s].heat for s in op.merge_sources)
    if heat > MAX_HEAT:
        raise invalid(
            "heat-overflow",
            f"{op.operation_id}: heat would exceed {MAX_HEAT}",
            operationId=op.operation_id,
        )
    return heat


def _materialize_one(
    op: ConsolidationOperation, source: ApprovedSource, today: str
) -> tuple[dict[str, Any], bytes | None, list[str]]:
    path = target_path(op)
    content: bytes | None = None
    heat: int | None = None
    deletes: list[str] = [path] if op.op == "delete" else []
    if op.op != "delete":
        assert op.new_content is not None  # the contract guarantees it
        text = normalize(op.new_content, op.operation_id)
        if op.target == "doctrine":
            content = doctrine_bytes(text, op.operation_id)
        else:
            summary, body = agent_scene(text, op.operation_id)
            heat = heat_of(op, source)
            if op.op == "update":
                created = source.scenes[op.name].created
            elif op.op == "merge":
                created = min(source.scenes[s].created for s in op.merge_sources)
            else:
                created = today
            content = scene_bytes(
                op.name,
                summary,
                body,
                created=created,
                updated=today,
                heat=heat,
                operation_id=op.operation_id,
            )
        if op.op == "merge":
            deletes = sorted(scene_path(s) for s in op.merge_sources if s != op.name)
    materialized = {
        "operationId": op.operation_id,
        "op": op.op,
        "target": op.target,
        "name": op.name,
        "targetPath": path,
        "basedOnEntryIds": sorted(op.based_on_entry_ids),
        "mergeSources": sorted(op.merge_sources),
        "rationale": op.rationale,
        "heat": heat,
        "content": None if content is None else content.decode("utf-8"),
        "deletes": deletes,
    }
    return materialized, content, deletes


def materialize(
    patch: ConsolidationPatch,
    source: ApprovedSource,
    entries: Sequence[ApprovedEntry],
    *,
    today: str,
) -> Materialized:
    """Validate the patch against the task (`entries`) and the tree (`source`); the files."""
    by_id = {e.entry_id: e for e in entries}
    _check_batch(patch)
    for op in patch.operations:
        _check_entries(op, by_id)
        _check_target(op, source)
    _check_capacity(patch, source)
    operations: list[dict[str, Any]] = []
    writes: dict[str, bytes] = {}
    deletes: set[str] = set()
    for op in patch.operations:
        materialized, content, removed = _materialize_one(op, source, today)
        operations.append(materialized)
        if content is not None:
            writes[materialized["targetPath"]] = content
        deletes.update(removed)
    return Materialized(
        operations=tuple(operations),
        writes=tuple(sorted(writes.items(), key=lambda w: w[0].encode("utf-8"))),
        deletes=tuple(sorted(deletes, key=lambda p: p.encode("utf-8"))),
    )


def statement_text_digest(operation: Mapping[str, Any]) -> str:
    """What a person confirms per operation: the digest of the materialized operation."""
    return digest(dict(operation))
