"""The contracts' format strings and id patterns that operations modules name when they load
(`ops/memory/stage.py`, `promote.py`, `review.py`): here, apart from the pydantic models, so an
MCP server's `team` tier starts without importing every contract (docs/architecture.md, "A
short CLI process"). Each contract module imports its own from here."""

from __future__ import annotations

from typing import Literal, get_args

HEX64_PATTERN = r"^[0-9a-f]{64}$"
UUID4_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
# the name of a repository in the org index, and of a token of `org serve` (docs/org.md)
ORG_REPOSITORY_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"
ORG_TOKEN_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
_NAME_OF = "a name of {} ASCII letters, digits, '.', '-' or '_' that starts with a letter or digit"
# what a refusal tells a person a value of these patterns looks like (never the regex itself)
# a Skill's name, a limitation's id: the seeds' slug (contracts/skill.py, contracts/_base.py)
SLUG_WORDS_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
PATTERN_NAMES = {
    SLUG_WORDS_PATTERN: "lowercase ASCII letters and digits, words joined by '-' (release-checks)",
    HEX64_PATTERN: "64 lowercase hex digits",
    UUID4_PATTERN: "a whole id like 0b6c8d1e-3f2a-4c5b-9d7e-1a2b3c4d5e6f",
    ORG_REPOSITORY_NAME_PATTERN: _NAME_OF.format("1–100"),
    ORG_TOKEN_NAME_PATTERN: _NAME_OF.format("1–64"),
}
PREPARE_REQUEST_FORMAT = "threadshare-memory-prepare-request@v1"
ADJUDICATION_RESULT_FORMAT = "threadshare-memory-adjudication-result@v1"
CONSOLIDATION_PATCH_FORMAT = "threadshare-memory-consolidation-patch@v1"
DRAFT_BATCH_FORMAT = "threadshare-memory-candidate-draft-batch@v1"
# a draft's `type`: what the contract accepts, and what the stage tool and recall's guidance list
CandidateType = Literal["work_fact", "work_task", "work_method", "work_artifact"]
CANDIDATE_TYPES: tuple[str, ...] = get_args(CandidateType)
SKILL_CANDIDATE_FORMAT = "threadshare-memory-skill-candidate@v1"
# what staging answers: an extraction's, adjudication's, consolidation's or Skill's stage
STAGE_FORMAT = "threadshare-memory-agent-stage@v1"
