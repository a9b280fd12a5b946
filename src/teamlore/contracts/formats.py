"""The contracts' format strings and id patterns that operations modules name when they load
(`ops/memory/stage.py`, `promote.py`, `review.py`): here, apart from the pydantic models, so an
MCP server's `team` tier starts without importing every contract (docs/architecture.md, "A
short CLI process"). Each contract module imports its own from here."""

from __future__ import annotations

HEX64_PATTERN = r"^[0-9a-f]{64}$"
UUID4_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
PREPARE_REQUEST_FORMAT = "threadshare-memory-prepare-request@v1"
ADJUDICATION_RESULT_FORMAT = "threadshare-memory-adjudication-result@v1"
CONSOLIDATION_PATCH_FORMAT = "threadshare-memory-consolidation-patch@v1"
DRAFT_BATCH_FORMAT = "threadshare-memory-candidate-draft-batch@v1"
SKILL_CANDIDATE_FORMAT = "threadshare-memory-skill-candidate@v1"
