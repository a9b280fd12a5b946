"""SkillCandidate@v1: a Skill (create or update) drafted from one extraction task."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, StringConstraints, model_validator
from pydantic.json_schema import SkipJsonSchema

from teamlore.contracts._base import (
    ContractModel,
    Hex64,
    Identifier,
    unique_items,
    utf8_at_most,
)
from teamlore.contracts.extraction import ExtractionBinding
from teamlore.contracts.formats import (
    SKILL_CANDIDATE_FORMAT as SKILL_CANDIDATE_FORMAT,  # its home: formats.py
)
from teamlore.contracts.formats import (
    SLUG_WORDS_PATTERN,
)

SKILL_NAME_PATTERN = SLUG_WORDS_PATTERN
DESCRIPTION_PATTERN = r"^[^<>\r\n]+$"
MAX_SKILL_BODY_BYTES = 65_536


class SkillStatement(ContractModel):
    statement_id: Identifier
    text: Annotated[str, Field(min_length=1, max_length=65_536)]
    evidence_ids: tuple[Identifier, ...] = Field(
        min_length=1, json_schema_extra={"uniqueItems": True}
    )

    @model_validator(mode="after")
    def _unique_evidence(self) -> SkillStatement:
        unique_items(self.evidence_ids, "evidenceIds item")
        return self


class SkillDraft(ContractModel):
    """name ≤ 64 kebab-case; description 1..1024 without `<`, `>` or line breaks; body ≤ 64 KiB.
    create ⇒ expectedContentDigest null; update ⇒ the sha256 of the current SKILL.md
    with CRLF read as LF.

    `action` and `expectedContentDigest` may be left out (the seed's Skill candidate names
    neither): stage then derives them from the Skill as it is at that moment — update with its
    current digest when a Skill of that name exists, else create (docs/seed-conformance.md)."""

    _omit_when_none: ClassVar[frozenset[str]] = frozenset({"action"})
    _omit_when_unset: ClassVar[frozenset[str]] = frozenset({"expected_content_digest"})

    name: Annotated[str, StringConstraints(pattern=SKILL_NAME_PATTERN, max_length=64)]
    description: Annotated[
        str, StringConstraints(pattern=DESCRIPTION_PATTERN, min_length=1, max_length=1024)
    ]
    body: Annotated[str, Field(min_length=1, max_length=MAX_SKILL_BODY_BYTES), utf8_at_most(65_536)]
    action: Literal["create", "update"] | SkipJsonSchema[None] = None
    expected_content_digest: Hex64 | None = None

    @model_validator(mode="after")
    def _action_rules(self) -> SkillDraft:
        if self.action == "create" and self.expected_content_digest is not None:
            raise ValueError("create takes expectedContentDigest null")
        given = "expected_content_digest" in self.model_fields_set
        if self.action == "update" and given and self.expected_content_digest is None:
            raise ValueError("update needs expectedContentDigest")
        return self

    @property
    def derives_target(self) -> bool:
        """Whether stage derives the action or the expected digest from the current Skill."""
        return self.action is None or (
            self.action == "update" and "expected_content_digest" not in self.model_fields_set
        )


class SkillCandidate(ContractModel):
    """SkillCandidate@v1 — binding echoed verbatim; 1..64 statements with unique ids.

    `memoryContextDigest` may be left out: stage then binds the candidate to the team memory as
    it is at that moment instead of as recall showed it (docs/seed-conformance.md)."""

    _omit_when_none: ClassVar[frozenset[str]] = frozenset({"memory_context_digest"})

    format: Literal["threadshare-memory-skill-candidate@v1"]
    task_id: Identifier
    binding: ExtractionBinding
    memory_context_digest: Hex64 | SkipJsonSchema[None] = None
    skill: SkillDraft
    statements: tuple[SkillStatement, ...] = Field(min_length=1, max_length=64)

    @model_validator(mode="after")
    def _unique_statements(self) -> SkillCandidate:
        unique_items((s.statement_id for s in self.statements), "statements statementId")
        return self
