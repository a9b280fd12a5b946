"""What a SkillCandidate@v1 looks like, for the agent that drafts one: recall returns it as
`guidance.skillShape`, beside the entry drafts' `draftShape` (docs/extraction.md "recall"), and
a refusal of a Skill's shape points there (`SKILL_SHAPE_NEXT`), not to the draft's."""

from __future__ import annotations

from typing import Any

from teamlore.contracts.formats import SKILL_CANDIDATE_FORMAT

# the whole SkillCandidate@v1 with every field, each a tiny example: an agent fills in the
# task's taskId, binding and evidence ids and recall's memoryContext.bindingDigest. An update
# names "update" and the Skill's contentDigest (skillContext) as expectedContentDigest
SKILL_SHAPE: dict[str, Any] = {
    "format": SKILL_CANDIDATE_FORMAT,
    "taskId": "<the task's taskId>",
    "binding": "<the task's binding object, unchanged>",
    "memoryContextDigest": "<memoryContext.bindingDigest>",
    "skill": {
        "name": "release",
        "description": "Cut a release: run the checks, tag, push. Use for every release.",
        "body": "## Procedure\n\n1. Run `make check`.\n2. Tag {release-tag} and push it.\n",
        "action": "create",
        "expectedContentDigest": None,
    },
    "statements": [
        {
            "statementId": "s1",
            "text": "Releases are tagged after `make check`.",
            "evidenceIds": ["ev-…"],
        }
    ],
}

# the `next` of a SkillCandidate@v1 refused for its shape (STAGE_REQUEST_INVALID)
SKILL_SHAPE_NEXT = (
    "Fix the field the message names; a Skill's shape: recall's guidance.skillShape "
    "(`teamlore memory recall`)."
)
