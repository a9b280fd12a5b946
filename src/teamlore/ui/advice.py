"""What the person can do about a refusal, in the page's terms. The code and message come from
the operation unchanged (the same as the CLI and MCP report); this adds the next step."""

from __future__ import annotations

from teamlore.core import errors
from teamlore.core.remedies import CANNOT_BE_PROMOTED, discard_command

_REVIEW_AGAIN = (
    "The plan was voided because something it bound changed. Open the queue: the candidates and "
    "their diffs are computed afresh. Review what changed and prepare a new plan."
)

_EXTRACT_AGAIN = (
    "Open the candidate and use Discard and extract again "
    f"(`{discard_command('ID', CANNOT_BE_PROMOTED, extract_again=True)}`): its turns go back, "
    "and the agent drafts it again from the next recall."
)

ADVICE: dict[str, str] = {
    errors.PLAN_VOIDED.code: _REVIEW_AGAIN,
    errors.PROMOTION_TARGET_DRIFT.code: "A target file changed after the plan was made (git "
    "pull, an edit, another promotion). " + _REVIEW_AGAIN,
    errors.PROMOTION_CANDIDATE_DRIFT.code: _REVIEW_AGAIN,
    errors.PROMOTION_ASSESSMENT_DRIFT.code: _REVIEW_AGAIN,
    errors.PROMOTION_POLICY_DRIFT.code: "The lint policy changed, or the content no longer lints "
    "clean. " + _REVIEW_AGAIN,
    errors.PLAN_DIGEST_MISMATCH.code: "The plan under this id is not the one shown. Prepare a "
    "new plan and promote that one.",
    errors.PLAN_NOT_FOUND.code: "Prepare a new plan from the plan page.",
    errors.PLAN_STATE_INVALID.code: "This plan was already applied or voided; prepare a new one.",
    errors.CONFIRMATION_DRIFT.code: "A statement changed after you confirmed it. Open the "
    "candidate, read the statement and its evidence again and confirm it anew.",
    errors.UNVERIFIED_CLAIM.code: "Confirm every generated statement of the candidate first.",
    errors.LINT_BLOCKED.code: "The file would carry content that must not reach git (a secret, "
    "a session id, a private path). Discard the candidate, or have the agent stage it again "
    "without that text.",
    errors.CANDIDATE_STALE.code: "The candidate changed since this page was shown (staged "
    "again, discarded or promoted meanwhile). Reload it, or go back to the queue, and decide "
    "again.",
    errors.CANDIDATE_NOT_FOUND.code: "It is no longer waiting for review (promoted or discarded "
    "meanwhile). Back to the queue.",
    errors.CANDIDATE_LOCKED.code: "A plan holding this candidate was approved for promotion and "
    "is not applied yet (a promote stopped before it finished). Finish it with `teamlore memory "
    "promote --plan ID` (the message names the plan), then reload.",
    errors.TARGET_DRIFT.code: "An entry this candidate updates changed since adjudication. "
    + _EXTRACT_AGAIN,
    errors.SKILL_TARGET_DRIFT.code: "The SKILL.md this Skill creates or updates changed since it "
    "was staged. " + _EXTRACT_AGAIN,
    errors.MEMORY_CONTEXT_DRIFT.code: "The team memory changed since this Skill was drafted "
    "against it. " + _EXTRACT_AGAIN,
    errors.DUPLICATE_ENTRY.code: "An approved entry says the same as this candidate (a teammate's, "
    "arrived after adjudication); discard it.",
    errors.MEMORY_NOT_INITIALIZED.code: "Run `teamlore memory init` in the repository.",
    errors.REPOSITORY_NOT_REGISTERED.code: "Register the repository first: "
    "`teamlore sync --repository PATH`.",
    errors.OWNER_NOT_FOUND.code: "Register the repository first: "
    "`teamlore sync --repository PATH`, then run `teamlore ui` inside it.",
    errors.LOCK_BUSY.code: "Another teamlore process is working on this; try again in a moment.",
}


def advice_for(code: str) -> str | None:
    return ADVICE.get(code)
