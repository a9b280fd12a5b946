"""`memory.confirm` (CLI only): review, ask the person at the terminal about each candidate, and
prepare a plan of those they confirm.

The queue is reviewed a page at a time, the next page when the person reaches it, so the first
question waits for one page rather than the whole queue. Each answer is kept as it is given,
not only at the end: a statement the person says is true is stored as confirmed
(`memory.promotion.prepare.record_confirmations`), and a candidate they discard is discarded
before the next is shown. So Ctrl-C loses nothing already answered, and `stop` (the `q` answer)
ends the questions with a plan of what was confirmed so far (docs/memory.md, "Confirming a
page at a time").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from teamlore.core import errors
from teamlore.ops.memory.review import (
    REVIEW_PAGE,
    DiscardRequest,
    PrepareRequestDocument,
    ReviewPage,
    ReviewRequest,
    _awaiting_sentence,
    _confirmable,
    _refuse,
    _refuse_another_kind,
    _review,
    awaiting_other_kinds,
    left_out_of_a_plan,
    memory_discard,
    memory_prepare,
    prepare_request_from_review,
    resolve_candidate_id,
)
from teamlore.ops.owner import open_owner
from teamlore.ops.registry import OpContext, operation, parse_request

# each review item `memory.confirm` hands `ctx.confirm` may come back holding the person's
# answers, kept at once: the ids of the statements they said are true, `discard` (the whole
# candidate), `stop` (ask nothing more)
CONFIRMED = "confirmedStatements"


class ConfirmRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kind: Literal["entry", "skill", "consolidation"] = Field(
        "entry", description="Candidate kind to confirm: entry, skill or consolidation."
    )
    candidate_ids: list[str] = Field(
        default_factory=list,
        alias="candidateIds",
        description="Candidates to confirm (default: every one reviewed).",
    )


@operation("memory.confirm", input_model=ConfirmRequest, side_effect="state-write")
def memory_confirm(ctx: OpContext, request: ConfirmRequest) -> dict[str, Any]:
    """Review, let the person confirm each candidate, then prepare a plan (CLI only).

    The person at the terminal answers through `ctx.confirm` (one call per candidate, shown the
    review item); without it every reviewed candidate is confirmed (`--yes`). What the asker
    puts in the item is kept as it is given, before the next candidate is shown and when the
    asker is interrupted (`_asked`): `confirmedStatements` (stored as confirmed), `discard`
    (discarded: `discarded` lists them), `stop` (no more questions: the plan is of what was
    confirmed so far, and `stopped` says where and how many candidates after it were not
    shown). A candidate changed elsewhere while it was asked about (discarded, promoted or
    staged again: CANDIDATE_STALE, CONFIRMATION_DRIFT when its answer is kept) is skipped and
    named in `skipped`; the questions go on. A candidate that cannot go into a plan (blocked by
    lint, a drifted consolidation) is left out and named in `leftOut` with what to do; nothing
    is confirmed when a chosen candidate is unknown or left out, or when every candidate is."""
    ready: list[dict[str, Any]] = []
    left_out: list[dict[str, str]] = []
    apart: list[dict[str, Any]] = []  # the items left out, for a refusal naming them
    discarded: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    stopped: dict[str, Any] | None = None
    asked = 0
    for page, after in _pages(ctx, request):
        out = {o["candidateId"]: o for i in page if (o := left_out_of_a_plan(i)) is not None}
        left_out += out.values()
        apart += [i for i in page if i["candidateId"] in out]
        items = [i for i in page if i["candidateId"] not in out]
        for at, item in enumerate(items, 1):
            asked += 1
            if _asked(ctx, item, discarded, skipped):
                ready.append(item)
            if item.get("stop"):
                # `items` leaves out what `leftOut` names: those are not "not shown"
                stopped = {"candidateId": item["candidateId"], "notShown": len(items) - at + after}
                break
        if stopped:
            break
    if not asked and left_out:  # every candidate waiting is left out
        _refuse(apart, left_out, chosen=False)
    done: dict[str, Any] = {"leftOut": left_out}
    done |= {"discarded": discarded} if discarded else {}
    done |= {"skipped": skipped} if skipped else {}
    done |= {"stopped": stopped} if stopped else {}
    if not asked:
        nothing = {"status": "nothing-to-confirm", "planId": None, **done}
        others = awaiting_other_kinds(ctx, request.kind)
        if others:  # `memory confirm` alone confirms entries: say what does await, and where
            waiting = {"kind": request.kind, "awaitingOtherKinds": others}
            return {**nothing, **waiting, "next": _awaiting_sentence(others)}
        return nothing
    if not ready:
        return {"status": "nothing-confirmed", "planId": None, **done}
    document = prepare_request_from_review(ready)
    prepared = memory_prepare(ctx, PrepareRequestDocument.model_validate(document))
    return {**prepared, **done}


def _pages(ctx: OpContext, request: ConfirmRequest) -> Iterator[tuple[list[dict[str, Any]], int]]:
    """The review items to ask about, a page at a time, each with how many candidates of the
    queue follow it: the candidates chosen (only those are reviewed; one unknown, of another
    kind or left out is refused before anything is asked), else the whole queue, each page
    reviewed when the person reaches it."""
    if request.candidate_ids:
        chosen: list[str] = []

        def pick(rows: list[Any]) -> list[Any]:
            known = [str(row[0]) for row in rows if row[2] == "quarantined"]
            chosen.extend(resolve_candidate_id(known, typed) for typed in request.candidate_ids)
            return [row for row in rows if row[0] in chosen and row[2] == "quarantined"]

        items = _review(ctx, request.kind, pick)["items"]
        found = {item["candidateId"] for item in items}
        _refuse_another_kind(ctx, request.kind, [c for c in chosen if c not in found])
        _confirmable(items, chosen)  # refuses a chosen candidate unknown or left out
        yield items, 0
        return
    cursor: str | None = None
    while True:
        wanted = {"kind": request.kind, "limit": REVIEW_PAGE, "cursor": cursor}
        page = ReviewPage(parse_request(ReviewRequest, wanted))
        said = page.said(_review(ctx, request.kind, page.choose))
        yield said["items"], said["page"]["remaining"]
        cursor = said["page"]["nextCursor"]
        if cursor is None:
            return


def _asked(
    ctx: OpContext,
    item: dict[str, Any],
    discarded: list[dict[str, Any]],
    skipped: list[dict[str, Any]],
) -> bool:
    """Whether the person confirmed `item` (`ctx.confirm`) and it can go into the plan. What
    they answered is kept at once, even when they stop with Ctrl-C half-way through its
    statements: the statements they confirmed (then in `item["recorded"]`) or the discard (then
    in `item["discarded"]`). A candidate that changed elsewhere while it was asked about is not
    kept and not planned: it is skipped (then in `item["skipped"]` and `skipped`)."""
    if ctx.confirm is None:
        return True
    confirmed = False
    try:
        confirmed = ctx.confirm(item)
    finally:
        kept = _keep_answers(ctx, item, discarded)
        if not kept:
            skipped.append(item["skipped"])
    return confirmed and kept


# what a candidate changed elsewhere while it was asked about is refused with when its answer is
# kept: it is skipped, not the end of the questions
# discarded, promoted or staged again elsewhere, or put in a plan approved elsewhere (locked)
_CHANGED_MEANWHILE = (
    errors.CANDIDATE_STALE.code,
    errors.CONFIRMATION_DRIFT.code,
    errors.CANDIDATE_LOCKED.code,
)


def _keep_answers(ctx: OpContext, item: dict[str, Any], discarded: list[dict[str, Any]]) -> bool:
    """Keep what the person answered about `item`; False when it changed elsewhere since it was
    shown (discarded, promoted or staged again): nothing of it is kept, and `item["skipped"]`
    says so."""
    try:
        _keep(ctx, item, discarded)
    except errors.TeamloreError as err:
        if err.code not in _CHANGED_MEANWHILE:
            raise
        item["skipped"] = {
            "candidateId": item["candidateId"],
            "code": err.code,
            "why": "changed meanwhile; review it again",
        }
        return False
    return True


def _keep(ctx: OpContext, item: dict[str, Any], discarded: list[dict[str, Any]]) -> None:
    from teamlore.memory.promotion.prepare import record_confirmations

    if item.get("discard"):  # the candidate goes whole: what was said of its statements too
        asked = {"candidateId": item["candidateId"], "expectedRevision": item["revision"]}
        asked["reason"] = "discarded at memory confirm"
        item["discarded"] = memory_discard(ctx, parse_request(DiscardRequest, asked))
        discarded.append(item["discarded"])
        return
    said = set(item.get(CONFIRMED) or [])
    if not said:
        return
    statements = [s for s in item["statements"] if s["statementId"] in said]
    with open_owner(ctx) as owner:
        item["recorded"] = record_confirmations(
            owner.state, owner.identity, item["candidateId"], item["revision"], statements
        )
