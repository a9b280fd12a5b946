"""Discard: a person drops a candidate — a draft, a quarantined candidate, or a draft whose
adjudication failed (glossary: candidate).

One `BEGIN IMMEDIATE` transaction: the candidate must belong to the caller's worktree
(`CANDIDATE_NOT_FOUND`), be `draft` or `quarantined` and, when the caller names one, be at the
expected revision (`CANDIDATE_STALE`); it must not belong to an approved or applying promotion
plan (`CANDIDATE_LOCKED`). It becomes `discarded` (revision + 1), leaves the candidate FTS (it is
no longer in anyone's dedup pool), the candidate projection generation advances, and `generated`
plans that include it are voided; a consolidation's run becomes `stale`. Its evidence refs and
assessments stay for the record, with the person's reason when they gave one
(`candidate_discards`, local only). A refusal changes nothing.

The turns a candidate was extracted from stay extracted: a person's rejection does not offer
them again. With `extract_again` (`memory discard --extract-again`: the lesson is right but the
candidate cannot be promoted, say an entry it updates or the SKILL.md a Skill candidate updates
changed) the turns of its chunk, and of the candidates it merged, go back to be extracted
(extracted_turns.py), once per discard: the next recall offers them as a new task, adjudicated
against memory as it is then (for a Skill, with the current SKILL.md in its skillContext). A
consolidation candidate came from no turns: `INVALID_ARGUMENT`.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from teamlore.core import db, errors
from teamlore.memory.extraction.drafts import bump_candidate_generation, unindex_candidate
from teamlore.memory.extraction.extracted_turns import put_turns_back
from teamlore.memory.extraction.tasks import Owner, now_ms
from teamlore.memory.promotion import kinds
from teamlore.memory.promotion.journal import refuse_if_locked, void_generated_plans
from teamlore.memory.promotion.review import require_candidate
from teamlore.repo.binding import RepositoryIdentity

DISCARDABLE = ("draft", "quarantined")


def discard_candidate(
    state: sqlite3.Connection,
    identity: RepositoryIdentity,
    candidate_id: str,
    *,
    expected_revision: int | None = None,
    reason: str | None = None,
    extract_again: bool = False,
    now: int | None = None,
) -> dict[str, Any]:
    """Move one candidate to `discarded` (see the module doc)."""
    moment = now_ms() if now is None else now
    with db.write_tx(state):
        row = discardable(state, identity, candidate_id, expected_revision, extract_again)
        status, adjudication, revision = str(row[2]), str(row[3]), int(row[4])
        voided = void_generated_plans(state, identity, [candidate_id], moment)
        cursor = state.execute(
            "UPDATE candidates SET status = 'discarded', revision = revision + 1, updated_at = ? "
            "WHERE candidate_id = ? AND revision = ? AND status = ?",
            (moment, candidate_id, revision, status),
        )
        if cursor.rowcount != 1:  # pragma: no cover - guarded by the transaction
            raise errors.TeamloreError(errors.CANDIDATE_STALE, candidateId=candidate_id)
        unindex_candidate(state, candidate_id)
        hooks = None if row[1] == kinds.ENTRY else kinds.require(row[1])
        if hooks is not None and hooks.on_discarded is not None:
            hooks.on_discarded(state, candidate_id, moment)  # e.g. a consolidation's run ends
        if reason:
            state.execute(
                "INSERT INTO candidate_discards(candidate_id, reason, discarded_at) "
                "VALUES (?, ?, ?)",
                (candidate_id, reason, moment),
            )
        turns_back = _put_back(state, candidate_id, str(row[6])) if extract_again else []
        generation = bump_candidate_generation(
            state, Owner(identity.repository_key, identity.worktree_key)
        )
    return {
        "action": "discard",
        "candidateId": candidate_id,
        "previousStatus": status,
        "adjudication": adjudication,
        "status": "discarded",
        "revision": revision + 1,
        "candidateGeneration": generation,
        "voidedPlanIds": voided,
        "reason": reason or None,
        "turnsPutBack": turns_back,
    }


def discardable(
    state: sqlite3.Connection,
    identity: RepositoryIdentity,
    candidate_id: str,
    expected_revision: int | None = None,
    extract_again: bool = False,
) -> sqlite3.Row:
    """The candidate's row when a discard would take it, else the refusal the discard would
    give (CANDIDATE_NOT_FOUND, CANDIDATE_STALE, INVALID_ARGUMENT, CANDIDATE_LOCKED). Reads
    only: `memory discard` asks a person why before it discards, and asks about a candidate
    it can discard, never about a wrong id."""
    row = require_candidate(state, identity, candidate_id)
    status, revision = str(row[2]), int(row[4])
    if status not in DISCARDABLE:
        raise errors.TeamloreError(
            errors.CANDIDATE_STALE,
            f"{candidate_id} is already {status}; only drafts and quarantined candidates "
            "can be discarded",
            candidateId=candidate_id,
            status=status,
        )
    if expected_revision is not None and expected_revision != revision:
        raise errors.TeamloreError(
            errors.CANDIDATE_STALE,
            f"{candidate_id} is at revision {revision}, not {expected_revision}; review again",
            candidateId=candidate_id,
            revision=revision,
        )
    if extract_again and not _from_turns(state, candidate_id):
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT,
            f"{candidate_id} was not extracted from session turns (a {row[1]} candidate); "
            "discard it without --extract-again",
            candidateId=candidate_id,
        )
    refuse_if_locked(state, identity, [candidate_id])
    return row


def _from_turns(state: sqlite3.Connection, candidate_id: str) -> bool:
    """Whether the candidate was drafted from a recall chunk (an entry or a Skill; a
    consolidation's chunk_ref names its run, not a chunk)."""
    return (
        state.execute(
            "SELECT 1 FROM candidates JOIN chunks USING (chunk_ref) WHERE candidate_id = ?",
            (candidate_id,),
        ).fetchone()
        is not None
    )


def _put_back(state: sqlite3.Connection, candidate_id: str, payload_json: str) -> list[Any]:
    """Put back the turns of the candidate's chunk and of the candidates it merged."""
    merged = [
        str(reference["id"])
        for reference in json.loads(payload_json).get("supersedes", [])
        if reference.get("sourceKind") == "candidate"
    ]
    chunk_refs = [
        str(found[0])
        for one in [candidate_id, *merged]
        if (
            found := state.execute(
                "SELECT chunk_ref FROM candidates WHERE candidate_id = ?", (one,)
            ).fetchone()
        )
    ]
    return [
        turns
        for chunk_ref in dict.fromkeys(chunk_refs)
        if (turns := put_turns_back(state, chunk_ref)) is not None
    ]
