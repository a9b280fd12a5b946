"""The maintenance protocol `memory_maintenance_v2`: the model's answer and its validation.

The model answers `{version, request_id, decisions[1..64]}`; each decision is `retain`
(admission, lifetime, operations), `forget` or `maintain` (operations) or `ignore`, with
`applicability`, `confidence`, `evidence` (observation handles) and a `reason` that is never
persisted. Operations are `put_section` (`section: null` appends) and `remove_section`.
Validation runs in a fixed order and stops at the first problem, each with a stable code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from teamlore.core import errors
from teamlore.core.shapes.strict import STRICT_FROZEN
from teamlore.models.base import without_code_fence
from teamlore.personal import documents

PROTOCOL_VERSION = "memory_maintenance_v2"
SCHEMA_NAME = PROTOCOL_VERSION


class _Strict(BaseModel):
    model_config = STRICT_FROZEN


class PutSectionOp(_Strict):
    op: Literal["put_section"]
    target: str
    section: str | None
    title: str
    body: str


class RemoveSectionOp(_Strict):
    op: Literal["remove_section"]
    target: str
    section: str


Operation = Annotated[PutSectionOp | RemoveSectionOp, Field(discriminator="op")]


class _DecisionBase(_Strict):
    applicability: Literal["global", "project", "uncertain"]
    confidence: float = Field(ge=0, le=1)
    evidence: list[str] = Field(max_length=128)
    reason: str = Field(max_length=4000)


class Retain(_DecisionBase):
    kind: Literal["retain"]
    admission: Literal["remember", "update", "correct"]
    lifetime: Literal["stable", "until_changed"]
    operations: list[Operation] = Field(min_length=1, max_length=32)


class Forget(_DecisionBase):
    kind: Literal["forget"]
    operations: list[Operation] = Field(min_length=1, max_length=32)


class Maintain(_DecisionBase):
    kind: Literal["maintain"]
    operations: list[Operation] = Field(min_length=1, max_length=32)


class Ignore(_DecisionBase):
    kind: Literal["ignore"]


Decision = Annotated[Retain | Forget | Maintain | Ignore, Field(discriminator="kind")]


class MaintenanceResponse(_Strict):
    version: Literal["memory_maintenance_v2"]
    request_id: str
    decisions: list[Decision] = Field(min_length=1, max_length=64)


RESPONSE_SCHEMA: dict[str, Any] = MaintenanceResponse.model_json_schema()
_RESPONSE = TypeAdapter(MaintenanceResponse)


def _fail(code: errors.ErrorCode, message: str) -> errors.TeamloreError:
    return errors.TeamloreError(code, message)


@dataclass(frozen=True, slots=True)
class ValidationContext:
    request_id: str
    batch_scope: str
    evidence_refs: frozenset[str]
    documents: dict[str, documents.Document]  # the projected documents by target
    writable: frozenset[str]  # targets the Writer may change


def parse_response(raw: str) -> MaintenanceResponse:
    """Model text -> response; invalid JSON or schema -> INVALID_DECISION (no detail echoed).
    One Markdown code fence around the JSON is tolerated, as the batch runner tolerates it: an
    OpenAI-compatible endpoint that ignores `response_format` lets the model add one."""
    try:
        data = json.loads(without_code_fence(raw))
    except (json.JSONDecodeError, TypeError) as exc:
        raise _fail(errors.INVALID_DECISION, "the model answer is not JSON") from exc
    try:
        return _RESPONSE.validate_python(data)
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.errors()[0]["loc"]) or "(top level)"
        raise _fail(errors.INVALID_DECISION, f"the answer breaks the schema at {where}") from exc


def operations_of(decision: Decision) -> list[PutSectionOp | RemoveSectionOp]:
    return [] if isinstance(decision, Ignore) else list(decision.operations)


def validate_response(response: MaintenanceResponse, ctx: ValidationContext) -> None:
    """Semantic validation in the protocol's order."""
    if response.request_id != ctx.request_id:
        raise _fail(errors.INVALID_REQUEST_REFERENCE, "request_id does not match the job")
    for decision in response.decisions:
        unknown = [ref for ref in decision.evidence if ref not in ctx.evidence_refs]
        if unknown:
            raise _fail(errors.INVALID_EVIDENCE_REFERENCE, f"unknown evidence {unknown[0]!r}")
        if isinstance(decision, Retain | Forget) and not decision.evidence:
            raise _fail(errors.MISSING_EVIDENCE, f"{decision.kind} cites no evidence")
    touched: set[tuple[str, str]] = set()
    for decision in response.decisions:
        if decision.applicability == "uncertain" and not isinstance(decision, Ignore):
            raise _fail(errors.UNAUTHORIZED_SCOPE, "uncertain applicability only with ignore")
        for op in operations_of(decision):
            document = ctx.documents.get(op.target)
            if document is None:
                raise _fail(errors.INVALID_TARGET_REFERENCE, "unknown or undisclosed target")
            if op.section is not None and document.section(op.section) is None:
                raise _fail(errors.INVALID_TARGET_REFERENCE, f"{op.target} has no {op.section}")
            is_project = documents.is_project_target(op.target)
            if decision.applicability != ("project" if is_project else "global"):
                raise _fail(errors.UNAUTHORIZED_SCOPE, "applicability does not match the target")
            if is_project and op.target != ctx.batch_scope:
                raise _fail(errors.UNAUTHORIZED_SCOPE, "a batch may only write its own project")
            handle = op.section if op.section is not None else f"title:{op.title}"
            if isinstance(op, PutSectionOp) and op.section is not None:
                touched_title = (op.target, f"title:{op.title}")
                if touched_title in touched:
                    raise _fail(errors.DUPLICATE_SECTION_OPERATION, "a section is touched twice")
                touched.add(touched_title)
            if (op.target, handle) in touched:
                raise _fail(errors.DUPLICATE_SECTION_OPERATION, "a section is touched twice")
            touched.add((op.target, handle))
            if op.target not in ctx.writable:
                raise _fail(errors.UNAUTHORIZED_WRITE, f"{op.target} is not writable")
