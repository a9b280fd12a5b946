"""Stage a SkillCandidate@v1: a Skill (create or update) drafted from one recall task.

Checks, in order, each refusing with nothing written:
1. the document follows the contract (`STAGE_REQUEST_INVALID`), its binding is the one recall
   issued with the task (`BINDING_MISMATCH`);
2. `memoryContextDigest` is the digest of the team memory as it is now
   (`MEMORY_CONTEXT_DRIFT`: entries, scenes or doctrine changed since the recall);
3. the target: `create` needs no Skill of that name, `update` needs the current SKILL.md's
   digest (CRLF read as LF) to equal `expectedContentDigest` (`SKILL_TARGET_DRIFT`);
   a seed-shaped candidate that leaves out `memoryContextDigest`, `action` or
   `expectedContentDigest` gets them from the team memory as it is now (`resolve_target`), so
   checks 2 and 3 bind it to what stage read rather than to what recall showed;
4. the SKILL.md it would write passes the Skill lint gate, including the provider session ids
   this machine indexed (`LINT_BLOCKED`);
5. in one transaction (as for entry drafts): identical replays return the recorded outcome, a
   different document for the same task is refused (`SUBMISSION_CONFLICT`), a task whose bound
   inputs changed goes stale (`TASK_STALE`), every statement cites evidence this task issued
   (`EVIDENCE_NOT_IN_TASK`); then the candidate (kind `skill`) is quarantined at once, with one
   EvidenceAssessment@v1 per statement, and the chunk is `extracted`. No adjudication: the
   review shows the exact SKILL.md diff instead.

One recall task is consumed by either an entry draft batch or one SkillCandidate, not both.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from teamlore.contracts import digests
from teamlore.contracts.formats import STAGE_FORMAT
from teamlore.contracts.skill import SKILL_CANDIDATE_FORMAT, SkillCandidate
from teamlore.core import errors
from teamlore.core.remedies import CANNOT_BE_PROMOTED, discard_command
from teamlore.memory.extraction import tasks
from teamlore.memory.extraction.drafts import (
    TaskSources,
    assess_statement,
    bump_candidate_generation,
    candidate_id,
    check_statement_citations,
    contract_error,
    insert_assessment,
    insert_candidate,
    stale_task_error,
    weakest,
)
from teamlore.memory.extraction.tasks import Owner
from teamlore.memory.skills.context import TeamMemory, read_team_memory
from teamlore.memory.skills.shape import SKILL_SHAPE_NEXT
from teamlore.memory.skills.source import require_lint_clean
from teamlore.memory.store.documents import Skill, dump_skill
from teamlore.memory.store.layout import skill_path


def parse_skill_candidate(document: Any) -> SkillCandidate:
    try:
        return SkillCandidate.from_wire(document)
    except ValidationError as exc:
        # its shape is recall's guidance.skillShape, not the entry drafts' draftShape
        raise contract_error(exc, SKILL_CANDIDATE_FORMAT).advising(SKILL_SHAPE_NEXT) from None


def skill_bytes(candidate: SkillCandidate) -> bytes:
    """The SKILL.md the candidate writes (canonical form: name and description quoted)."""
    draft = candidate.skill
    skill = Skill(name=draft.name, description=draft.description.strip(), body=draft.body)
    return dump_skill(skill)


def resolve_target(candidate: SkillCandidate, memory: TeamMemory) -> SkillCandidate:
    """`candidate` with the fields a seed-shaped one may leave out taken from `memory` now:
    memoryContextDigest, action (update when the Skill exists, else create) and, for an update,
    expectedContentDigest (the current SKILL.md's sha256, with CRLF read as LF)."""
    draft = candidate.skill
    if draft.derives_target:
        existing = memory.skill(draft.name)
        action = draft.action or ("create" if existing is None else "update")
        current = None if existing is None else existing.content_digest
        expected = current if action == "update" else draft.expected_content_digest
        draft = draft.model_copy(update={"action": action, "expected_content_digest": expected})
    context = candidate.memory_context_digest or memory.binding_digest()
    return candidate.model_copy(update={"skill": draft, "memory_context_digest": context})


def check_memory_context(
    memory: TeamMemory, expected: str | None, *, staged_as: str | None = None
) -> None:
    """MEMORY_CONTEXT_DRIFT when the team memory is not the one the Skill was drafted against.
    `staged_as`: the candidate already staged, whose turns are extracted (as for
    `check_skill_target`), so recalling again offers nothing: it is discarded with
    --extract-again and drafted again."""
    current = memory.binding_digest()
    if expected == current:
        return
    if staged_as is None:  # nothing staged yet: its task is still open
        raise errors.TeamloreError(
            errors.MEMORY_CONTEXT_DRIFT,
            "the team memory changed since the recall this Skill was drafted from; recall "
            "again and redraft against the current memoryContext",
            expected=expected,
            current=current,
        ).advising("Recall again (`teamlore memory recall`): team memory changed since.")
    raise errors.TeamloreError(
        errors.MEMORY_CONTEXT_DRIFT,
        "the team memory (entries, scenes, doctrine) changed since the candidate was staged; "
        "discard it and draft it again "
        f"(`{discard_command(staged_as, CANNOT_BE_PROMOTED, extract_again=True)}`, then recall)",
        expected=expected,
        current=current,
        candidateId=staged_as,
    ).advising(discard_again(staged_as))


def discard_again(candidate_id: str) -> str:
    """The `next` of a staged Skill that cannot be promoted as it is: the command, runnable as
    written (its turns go back to be extracted)."""
    command = discard_command(candidate_id, CANNOT_BE_PROMOTED, extract_again=True)
    return f"Discard it with `{command}`, then recall."


def check_skill_target(
    memory: TeamMemory,
    name: str,
    action: str,
    expected_digest: str | None,
    *,
    staged_as: str | None = None,
) -> str | None:
    """The current SKILL.md digest of `name` (None: absent) after checking the action fits.
    `staged_as`: the candidate already staged (review, prepare), whose recall task is consumed
    and whose turns are extracted, so only a discard with --extract-again lets it be redrafted."""
    existing = memory.skill(name)
    current = None if existing is None else existing.content_digest
    if action == "create" and current is not None:
        problem = (
            f"Skill {name!r} already exists; stage an update with its contentDigest"
            if staged_as is None
            else f"Skill {name!r} was created since the candidate was staged"
        )
    elif action == "update" and (existing is None or not existing.has_digest(expected_digest)):
        if staged_as is not None:
            why = "was deleted" if current is None else "changed"
            problem = f"Skill {name!r} {why} since the candidate was staged"
        else:
            why = "does not exist" if current is None else "changed since it was recalled"
            problem = f"Skill {name!r} {why}; recall again and redraft the update"
    else:
        return current
    if staged_as is None:  # nothing staged yet: its task is still open
        raise errors.TeamloreError(errors.SKILL_TARGET_DRIFT, problem, skill=name).advising(
            "Recall again and write the Skill against the current SKILL.md."
        )
    raise errors.TeamloreError(
        errors.SKILL_TARGET_DRIFT,
        f"{problem}; discard it and draft it again "
        f"(`{discard_command(staged_as, CANNOT_BE_PROMOTED, extract_again=True)}`, then recall)",
        skill=name,
        candidateId=staged_as,
    ).advising(discard_again(staged_as))


def candidate_payload(candidate: SkillCandidate) -> dict[str, Any]:
    wire = candidate.to_wire()
    skill = {**wire["skill"], "description": candidate.skill.description.strip()}
    return {
        "candidateKind": "skill",
        "content": candidate.skill.body,
        "type": "work_method",
        "priority": 50,
        "confidence": "medium",
        "scene": None,
        "skill": skill,
        "memoryContextDigest": candidate.memory_context_digest,
        "statements": wire["statements"],
    }


def stage_skill_candidate(
    conn: sqlite3.Connection,
    document: Any,
    *,
    owner: Owner,
    sources: TaskSources,
    worktree_root: Path,
    known_session_ids: AbstractSet[str] = frozenset(),
    claim_token: str | None = None,
    now: int | None = None,
) -> dict[str, Any]:
    """Stage a SkillCandidate@v1 (see module doc); the stage response."""
    candidate = parse_skill_candidate(document)
    response_digest = digests.response_digest(document)
    moment = tasks.now_ms() if now is None else now
    task = tasks.load_bound_task(
        conn,
        candidate.task_id,
        candidate.binding.to_wire(),
        owner=owner,
        kind="extraction",
        mismatch="the candidate's binding is not the binding recall issued with this task",
    )
    with tasks.write_tx_committing_refusal(conn):
        tasks.check_token(conn, task.task_id, claim_token)
        replay = tasks.check_replay(conn, task.task_id, response_digest, now=moment)
        if replay is not None:
            return {**replay.outcome, "idempotent": True}
        memory = read_team_memory(worktree_root)
        candidate = resolve_target(candidate, memory)
        check_memory_context(memory, candidate.memory_context_digest)
        draft = candidate.skill
        check_skill_target(memory, draft.name, str(draft.action), draft.expected_content_digest)
        target = skill_path(draft.name)
        require_lint_clean(
            skill_bytes(candidate),
            path=target,
            kind="skill",
            known_session_ids=known_session_ids,
        )
        drifted = sources.drifted_inputs(task)
        if drifted:
            tasks.mark_stale(conn, task.task_id, lease_epoch=task.lease_epoch)
            raise tasks.CommitThenRaise(stale_task_error(task.task_id, drifted))
        index = sources.evidence_index(task)
        check_statement_citations(1, candidate.statements, index)
        claim = tasks.acquire(conn, task.task_id, claim_token=claim_token, now=moment)
        outcome = _write_candidate(conn, owner, task, candidate, index, moment, target)
        tasks.record_submission(conn, claim, response_digest, outcome, now=moment)
    return {**outcome, "idempotent": False}


def _write_candidate(
    conn: sqlite3.Connection,
    owner: Owner,
    task: tasks.Task,
    candidate: SkillCandidate,
    index: Any,
    now: int,
    target: str,
) -> dict[str, Any]:
    assert task.chunk_ref is not None
    cand_id = candidate_id(task.task_id, 1)
    payload = candidate_payload(candidate)
    insert_candidate(
        conn,
        cand_id=cand_id,
        owner=owner,
        chunk_ref=task.chunk_ref,
        payload=payload,
        now=now,
        kind="skill",
    )
    assessments = [assess_statement(cand_id, s, index) for s in payload["statements"]]
    for assessment in assessments:
        insert_assessment(conn, assessment, index, task_id=task.task_id)
    bump_candidate_generation(conn, owner)
    conn.execute("UPDATE chunks SET status = 'extracted' WHERE chunk_ref = ?", (task.chunk_ref,))
    return {
        "action": "stage",
        "format": STAGE_FORMAT,
        "taskId": task.task_id,
        "status": "quarantined",
        "noOp": False,
        "adjudicationTaskId": None,
        "candidates": [
            {
                "candidateId": cand_id,
                "kind": "skill",
                "revision": 1,
                "contentDigest": digests.content_digest(payload),
                "status": "quarantined",
                "skill": candidate.skill.name,
                "action": candidate.skill.action,
                "targetPath": target,
                "provenanceStrength": weakest([a["provenanceStrength"] for a in assessments]),
                "limitations": sorted({x for a in assessments for x in a["limitations"]}),
            }
        ],
        "assessments": assessments,
        "adjudicationTask": None,
        "recallComparison": None,
        "next": "Show the Skill, its statements and evidence to the user: "
        "teamlore memory review --kind skill (threadshare_memory_review {kind: 'skill'}).",
    }
