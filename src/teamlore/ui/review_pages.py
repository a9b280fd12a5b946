"""Queue, candidate, plan: review → confirm or reject per statement → prepare → promote.

Reads go through `memory.review` (one call per candidate kind the operation accepts, so a new
kind shows up here as soon as the operation reviews it; its page part is one template,
`templates/kinds/<kind>.html`, with a generic fallback). Writes go through `memory.discard`,
`memory.prepare` and `memory.promote` with the payloads the CLI sends. A prepared plan is shown
with its status now, from the promotion journal (`ops.memory.promote.current_plan_states`, what
`memory status` lists plans to promote by), never the status it had when it was prepared.

A candidate's page and a decision on it review that one candidate (`memory.review` with its
`candidateId`): a click costs one candidate's review, not the queue's. The page's place in the
queue (n of N, previous, next waiting for a decision) comes from the queue as the queue or plan
page last loaded it (`UiState.shown_queue`, loaded once when no page has yet), brought up to
date from the state's candidates and assessments tables (`waiting_now`, no review): what was
discarded or promoted elsewhere (`memory confirm`, `memory discard`) leaves it, what was staged
since joins it, and a statement confirmed at the terminal since counts as confirmed.
"""

from __future__ import annotations

from typing import Any, get_args

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from teamlore.core import errors
from teamlore.core.remedies import BLOCKED_BY_LINT, CONFIRMATION_TAKEN_BACK, discard_command
from teamlore.ops.memory.promote import current_plan_states, pending_plans
from teamlore.ops.memory.review import (
    FROM_TURNS,
    MAX_REVIEW_PAGE,
    ReviewRequest,
    left_out_of_a_plan,
    prepare_request_from_review,
    short_candidate_id,
    shown_to_a_person,
    waiting_now,
)
from teamlore.ops.registry import OpContext
from teamlore.ui.pages import (
    UiState,
    checked_form,
    error_page,
    form_text,
    page,
    redirect,
    refusal,
    ui_state,
)
from teamlore.ui.render import candidate_title

QUEUE_STATES = ("needs your decision", "ready", "rejected", "blocked")


def review_kinds() -> tuple[str, ...]:
    """The candidate kinds `memory.review` accepts (entry; skill, consolidation, … as added)."""
    return tuple(get_args(ReviewRequest.model_fields["kind"].annotation)) or ("entry",)


async def load_review(state: UiState) -> dict[str, Any]:
    """Every kind's review. A kind whose review is refused (e.g. entry review needs a registered
    repository, consolidation review does not) is reported beside the others; when every kind
    is refused, the first refusal is raised."""
    items: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    refused: list[tuple[str, errors.TeamloreError]] = []
    for kind in review_kinds():
        try:
            pages = await _every_page(state, kind)
        except errors.TeamloreError as err:
            refused.append((kind, err))
            continue
        for result in pages:
            items += map(shown_to_a_person, result["items"])
            failed += [{**f, "kind": kind} for f in result["failed"]]
    if refused and len(refused) == len(review_kinds()):
        raise refused[0][1]
    notices = [{"kind": kind, **refusal(err)} for kind, err in refused]
    state.shown_queue = items
    return {"items": items, "failed": failed, "refused": notices}


async def load_one(state: UiState, candidate_id: str) -> dict[str, Any]:
    """The review of one candidate, of whichever kind it is: `{"item": …}` (as a screen shows
    it), `{"failed": …}` (its adjudication failed) or `{}` (nothing by that id awaits review).
    Refused as `load_review` is: when every kind's review is refused, the first refusal."""
    refused: list[errors.TeamloreError] = []
    for kind in review_kinds():
        payload = {"kind": kind, "candidateId": candidate_id, "limit": 1}
        try:
            result = await state.arun("memory.review", payload)
        except errors.TeamloreError as err:
            # not of this kind (or an id the page never links: several ids it abbreviates)
            if err.code not in (errors.CANDIDATE_NOT_FOUND.code, errors.INVALID_ARGUMENT.code):
                refused.append(err)
            continue
        # the id as the page links it: an abbreviation the operation would take is not one
        item = _find(result["items"], candidate_id)
        if item is not None:
            return {"item": shown_to_a_person(item)}
        failed = _find(result["failed"], candidate_id)
        if failed is not None:
            return {"failed": {**failed, "kind": kind}}
    if refused and len(refused) == len(review_kinds()):
        raise refused[0]
    return {}


async def queue_with(state: UiState, item: dict[str, Any]) -> list[dict[str, Any]]:
    """The queue as it stands now with `item` as just reviewed in its place: the queue as last
    loaded (loaded when no page loaded it yet) less what left it since, wherever it was
    discarded or promoted, plus what was staged since (reviewed when its page is shown), in
    review's order, each statement a person confirmed since (`memory confirm`'s `y`) shown
    confirmed. Read from the candidates and assessments tables (`waiting_now`), not by
    reviewing the queue again: a page costs one candidate's review."""
    items = state.shown_queue
    if items is None:
        items = (await load_review(state))["items"]
    ctx = OpContext(cwd=state.repository, home=state.home)
    now = await run_in_threadpool(waiting_now, ctx)
    shown = {i["candidateId"]: i for i in items}
    shown[item["candidateId"]] = item
    queue = [
        _confirmed_since(shown[cid], now["confirmed"])
        if cid in shown
        else {"candidateId": cid, "kind": now["kinds"][cid], "notReviewed": True}
        for cid in now["order"]
        if cid in shown or now["kinds"][cid] in review_kinds()
    ]
    if item["candidateId"] not in now["order"]:  # reviewed, then left: its page still shows it
        queue.append(item)
    state.shown_queue = queue
    return queue


def _confirmed_since(
    item: dict[str, Any], confirmed: set[tuple[str, str, str, str]]
) -> dict[str, Any]:
    """`item` with each statement a person confirmed since it was reviewed shown confirmed."""
    if item.get("notReviewed"):
        return item
    now = [
        {**s, "confirmation": "confirmed"}
        if s.get("confirmation") == "required"
        and (item["candidateId"], s["statementId"], s["statementTextDigest"], s["citationsDigest"])
        in confirmed
        else s
        for s in item.get("statements", [])
    ]
    return item if now == item.get("statements", []) else {**item, "statements": now}


def _waiting_for_a_decision(state: UiState, item: dict[str, Any]) -> bool:
    """Whether the page's next link takes the person to `item`: it needs their decision (one
    staged since this page last reviewed the queue does, until its page says otherwise)."""
    return bool(item.get("notReviewed")) or (
        state.decisions.progress(item).label == "needs your decision"
    )


def _leaves_queue(state: UiState, candidate_ids: list[str]) -> None:
    """Candidates discarded or promoted here are no longer in the queue the pages place by."""
    if state.shown_queue is not None:
        state.shown_queue = [i for i in state.shown_queue if i["candidateId"] not in candidate_ids]


async def _every_page(state: UiState, kind: str) -> list[dict[str, Any]]:
    """Every page of the review of `kind` (the page shows the whole queue)."""
    payload: dict[str, Any] = {"kind": kind, "limit": MAX_REVIEW_PAGE}
    pages = [await state.arun("memory.review", payload)]
    while pages[-1]["page"]["nextCursor"] is not None:
        payload["cursor"] = pages[-1]["page"]["nextCursor"]
        pages.append(await state.arun("memory.review", payload))
    return pages


def _find(items: list[dict[str, Any]], candidate_id: str) -> dict[str, Any] | None:
    return next((i for i in items if i["candidateId"] == candidate_id), None)


async def queue(request: Request) -> Response:
    state = ui_state(request)
    try:
        review = await load_review(state)
    except errors.TeamloreError as err:
        return error_page(request, err, "Review queue")
    kind = request.query_params.get("kind", "")
    wanted = request.query_params.get("state", "")
    rows = []
    for item in review["items"]:
        progress = state.decisions.progress(item)
        if (kind and item["kind"] != kind) or (wanted and progress.label != wanted):
            continue
        rows.append({"item": item, "progress": progress})
    counts = {k: sum(1 for i in review["items"] if i["kind"] == k) for k in review_kinds()}
    return page(
        request,
        "queue.html",
        title="Review queue",
        rows=rows,
        failed=[f for f in review["failed"] if not kind or f["kind"] == kind],
        kinds=review_kinds(),
        counts=counts,
        states=QUEUE_STATES,
        kind=kind,
        wanted=wanted,
        total=len(review["items"]),
        refused=review["refused"],
    )


async def candidate(request: Request) -> Response:
    state = ui_state(request)
    candidate_id = request.path_params["candidate_id"]
    try:
        one = await load_one(state, candidate_id)
        item = one.get("item")
        items = await queue_with(state, item) if item is not None else []
    except errors.TeamloreError as err:
        return error_page(request, err, "Candidate")
    if item is None:
        _leaves_queue(state, [candidate_id])  # no page links it now
        failed = one.get("failed")
        if failed is not None:
            return page(request, "failed.html", title="Adjudication failed", item=failed)
        return error_page(
            request,
            errors.TeamloreError(
                errors.CANDIDATE_NOT_FOUND, f"{candidate_id} is not waiting for review"
            ),
            "Candidate",
        )
    ids = [i["candidateId"] for i in items]
    at = ids.index(candidate_id)
    pending = [
        i["candidateId"] for i in items[at + 1 :] + items[:at] if _waiting_for_a_decision(state, i)
    ]
    return page(
        request,
        "candidate.html",
        title=f"Candidate {short_candidate_id(candidate_id)}",
        item=item,
        from_turns=item["kind"] in FROM_TURNS,
        states={s["statementId"]: state.decisions.state(item, s) for s in item["statements"]},
        undoable={s["statementId"]: state.decisions.undoable(item, s) for s in item["statements"]},
        progress=state.decisions.progress(item),
        focus=state.decisions.next_undecided(item),
        position=at + 1,
        total=len(ids),
        previous_id=ids[at - 1] if at > 0 else None,
        next_id=pending[0] if pending else (ids[at + 1] if at + 1 < len(ids) else None),
    )


# Undo on a statement whose confirmation is stored (by a `y` at `memory confirm`, which makes no
# plan, or by a plan prepared): no operation takes a stored confirmation back
_NOT_UNDOABLE = (
    "Nothing was undone: this statement's confirmation is stored (a `y` to `teamlore memory "
    "confirm` stores it at once, a plan prepared here or in a terminal stores it too). To take "
    "it back, discard the candidate (Discard below, or `{0}`): that voids any plan it is in."
)


async def decide(request: Request) -> Response:
    """Confirm, reject or undo one statement, bound to the revision and digests shown."""
    form = await checked_form(request)
    state = ui_state(request)
    candidate_id = request.path_params["candidate_id"]
    statement_id = form_text(form, "statement")
    verdict = form_text(form, "verdict")
    back = f"/candidate/{candidate_id}"
    if verdict not in ("confirm", "reject", "undo"):
        state.flash(request, "error", "Unknown decision.")
        return redirect(back)
    try:
        item = (await load_one(state, candidate_id)).get("item")
    except errors.TeamloreError as err:
        return error_page(request, err, "Candidate")
    statement = next(
        (s for s in (item or {}).get("statements", []) if s["statementId"] == statement_id), None
    )
    if item is None or statement is None:  # the page was shown before it changed or left
        if item is None:
            _leaves_queue(state, [candidate_id])
        where = "is no longer waiting for review" if item is None else "has no such statement now"
        stale = errors.TeamloreError(
            errors.CANDIDATE_STALE,
            f"{short_candidate_id(candidate_id)} {where} (statement {statement_id}): it was "
            "discarded, promoted or staged again since this page was shown",
            candidateId=candidate_id,
            statementId=statement_id,
        )
        return error_page(request, stale, "Candidate")
    shown = (
        form_text(form, "revision"),
        form_text(form, "statementTextDigest"),
        form_text(form, "citationsDigest"),
    )
    current = (
        str(item["revision"]),
        statement["statementTextDigest"],
        statement["citationsDigest"],
    )
    if shown != current:
        state.flash(
            request,
            "error",
            f"{errors.CONFIRMATION_DRIFT.code}: statement {statement_id} changed since the page "
            "was shown; read it again and decide anew.",
        )
        return redirect(back)
    if statement.get("typedFact"):
        state.flash(request, "info", "A typed fact is verified by teamlore; nothing to decide.")
        return redirect(back)
    if item.get("blocked") and verdict != "undo":  # the page offers no Confirm for it
        return error_page(request, _blocked(item, statement_id), "Candidate")
    if verdict == "undo" and not state.decisions.undoable(item, statement):
        state.flash(
            request,
            "error",
            _NOT_UNDOABLE.format(
                discard_command(short_candidate_id(candidate_id), CONFIRMATION_TAKEN_BACK)
            ),
        )
        return redirect(f"{back}#s-{statement_id}")
    if verdict == "undo":
        state.decisions.forget(candidate_id, statement_id)
    else:
        state.decisions.record(item, statement, verdict)  # type: ignore[arg-type]
    following = state.decisions.next_undecided(item)
    if following is None:
        progress = state.decisions.progress(item)
        state.flash(
            request,
            "ok" if progress.ready else "info",
            "Every statement is decided: "
            + ("ready for the plan." if progress.ready else f"{progress.label}."),
        )
    return redirect(back + (f"#s-{following}" if following else "#decided"))


def _blocked(item: dict[str, Any], statement_id: str) -> errors.TeamloreError:
    """A decision on a blocked candidate, refused with the code `memory confirm` refuses it
    with (`LINT_BLOCKED`, or the drift that blocks it): it cannot be promoted, so confirming
    any of it would put nothing into a plan."""
    short = short_candidate_id(item["candidateId"])
    out = left_out_of_a_plan(item) or {
        "code": errors.LINT_BLOCKED.code,
        "why": "blocked",
        "next": discard_command(short, BLOCKED_BY_LINT),
    }
    return errors.TeamloreError(
        errors.registered_codes()[out["code"]],
        f"{short}: {out['why']}; a blocked candidate cannot be promoted, so statement "
        f"{statement_id} is not confirmed; discard it (`{out['next']}`)",
        candidateId=item["candidateId"],
        statementId=statement_id,
    )


async def discard(request: Request) -> Response:
    """Discard a candidate with the person's reason; **Discard and extract again** sends
    `extractAgain` as `memory discard --extract-again` does (the lesson is right, what blocks it
    moved: no reason needed) and says which turns went back, as the CLI does."""
    form = await checked_form(request)
    state = ui_state(request)
    candidate_id = request.path_params["candidate_id"]
    reason = " ".join(form_text(form, "reason").split())
    extract_again = form_text(form, "extractAgain") == "1"
    if not reason and not extract_again:
        state.flash(request, "error", "Say why you discard it (the reason stays on this machine).")
        return redirect(f"/candidate/{candidate_id}#discard")
    revision = form_text(form, "revision")
    payload: dict[str, Any] = {"candidateId": candidate_id, "reason": reason or None}
    if extract_again:
        payload["extractAgain"] = True
    if revision.isdigit():
        payload["expectedRevision"] = int(revision)
    try:
        result = await state.arun("memory.discard", payload)
    except errors.TeamloreError as err:
        return error_page(request, err, "Discard refused")
    state.decisions.forget(candidate_id)
    _leaves_queue(state, [candidate_id])
    state.flash(
        request,
        "ok",
        f"Discarded {short_candidate_id(candidate_id)} (was {result['previousStatus']}).",
    )
    for turns in result.get("turnsPutBack") or []:
        span = turns["turnRange"]
        state.flash(
            request,
            "ok",
            f"Turns {span['start']}-{span['end']} of session {turns['sessionKey'][:12]} go back "
            "to be extracted: the next `teamlore memory recall` offers them again.",
        )
    return redirect("/queue")


async def evidence_commit(request: Request) -> Response:
    state = ui_state(request)
    try:
        shown = await state.arun("repo.show", {"commit": request.path_params["commit"]})
    except errors.TeamloreError as err:
        return error_page(request, err, "Commit")
    return page(request, "git_show.html", title=f"commit {shown['commit'][:12]}", shown=shown)


async def evidence_path(request: Request) -> Response:
    state = ui_state(request)
    try:
        shown = await state.arun("repo.show", {"path": request.query_params.get("path", "")})
    except errors.TeamloreError as err:
        return error_page(request, err, "Path history")
    return page(request, "git_show.html", title=f"history of {shown['path']}", shown=shown)


def _plan_groups(state: UiState, items: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {label: [] for label in QUEUE_STATES}
    for item in items:
        progress = state.decisions.progress(item)
        groups[progress.label].append({"item": item, "progress": progress})
    return groups


async def plan(request: Request) -> Response:
    state = ui_state(request)
    try:
        review = await load_review(state)
    except errors.TeamloreError as err:
        return error_page(request, err, "Plan")
    return await _plan_page(request, state, review["items"])


async def current_plans(state: UiState) -> dict[str, dict[str, Any]]:
    """planId → the plan's status now (and why promote voided it), read from the journal as
    `memory status` reads it: a plan prepared here may since have been voided (a discard, a newer
    plan, a changed target) or promoted elsewhere."""
    ctx = OpContext(cwd=state.repository, home=state.home)
    return await run_in_threadpool(current_plan_states, ctx)


async def stored_plans(state: UiState) -> dict[str, dict[str, Any]]:
    """planId → every plan waiting to be promoted, from the state (`memory status`'s plans to
    promote), whoever prepared it: this page, before it restarted, or a terminal."""
    ctx = OpContext(cwd=state.repository, home=state.home)
    return {p["planId"]: {**p, "contents": {}} for p in await run_in_threadpool(pending_plans, ctx)}


async def _plan_page(
    request: Request,
    state: UiState,
    items: list[dict[str, Any]],
    error: dict[str, Any] | None = None,
) -> Response:
    pending = await stored_plans(state)
    titles = {i["candidateId"]: candidate_title(i) for i in items}
    groups = _plan_groups(state, items)
    ready = {row["item"]["candidateId"] for row in groups["ready"]}
    return page(
        request,
        "plan.html",
        status=409 if error else 200,
        title="Plan",
        groups=groups,
        pending=list(pending.values()),
        # a newer plan voids every pending plan that shares a candidate with it (memory.prepare)
        voided_by_prepare=[
            p for p in pending.values() if ready.intersection(p["plan"]["candidateIds"])
        ],
        titles=titles,
        plans=[p for p in reversed(state.plans.values()) if p["planId"] not in pending],
        outcomes=state.outcomes,
        current=await current_plans(state),
        error=error,
    )


async def prepare(request: Request) -> Response:
    """Prepare one plan per candidate kind from the candidates whose every generated statement
    the person confirmed (memory.prepare re-checks each digest)."""
    await checked_form(request)
    state = ui_state(request)
    try:
        review = await load_review(state)
    except errors.TeamloreError as err:
        return error_page(request, err, "Plan")
    ready = [i for i in review["items"] if state.decisions.progress(i).ready]
    if not ready:
        state.flash(request, "error", "No candidate is ready: confirm its statements first.")
        return redirect("/plan")
    last_plan = ""
    for kind in dict.fromkeys(i["kind"] for i in ready):
        chosen = [i for i in ready if i["kind"] == kind]
        document = prepare_request_from_review(chosen, [i["candidateId"] for i in chosen])
        document["kind"] = kind
        try:
            result = await state.arun("memory.prepare", document)
        except errors.TeamloreError as err:
            return await _plan_page(request, state, review["items"], refusal(err))
        result["kindReviewed"] = kind
        result["contents"] = {i["candidateId"]: candidate_title(i) for i in chosen}
        state.plans[result["planId"]] = result
        last_plan = result["planId"]
        for voided in result.get("voidedPlanIds") or []:
            state.flash(
                request,
                "info",
                f"Plan {voided} was voided: this newer plan replaces it (they share a "
                "candidate); it can no longer be promoted.",
            )
    return redirect(f"/plan/{last_plan}")


async def _known_plan(state: UiState, plan_id: str) -> dict[str, Any] | None:
    """A plan prepared on this page, else one waiting to be promoted in the state (prepared
    with `memory confirm`/`memory prepare`, or here before the page restarted)."""
    return state.plans.get(plan_id) or (await stored_plans(state)).get(plan_id)


async def plan_detail(request: Request) -> Response:
    state = ui_state(request)
    plan_id = request.path_params["plan_id"]
    prepared = await _known_plan(state, plan_id)
    if prepared is None:
        return error_page(
            request,
            errors.TeamloreError(
                errors.PLAN_NOT_FOUND,
                f"plan {plan_id} was not prepared on this page and is not waiting to be promoted",
            ),
            "Plan",
        )
    return page(
        request,
        "plan_detail.html",
        title=f"Plan {plan_id[:8]}",
        prepared=prepared,
        outcome=state.outcomes.get(plan_id),
        current=(await current_plans(state)).get(plan_id, {"status": "unknown"}),
    )


async def promote(request: Request) -> Response:
    form = await checked_form(request)
    state = ui_state(request)
    plan_id = request.path_params["plan_id"]
    prepared = await _known_plan(state, plan_id)
    if prepared is None:
        state.flash(request, "error", f"{errors.PLAN_NOT_FOUND.code}: prepare a plan first.")
        return redirect("/plan")
    payload = {"planId": plan_id, "planDigest": form_text(form, "planDigest") or None}
    try:
        outcome = await state.arun("memory.promote", payload)
    except errors.TeamloreError as err:
        return page(
            request,
            "plan_detail.html",
            status=409,
            title=f"Plan {plan_id[:8]}",
            prepared=prepared,
            outcome=None,
            current=(await current_plans(state)).get(plan_id, {"status": "unknown"}),
            error=refusal(err),
        )
    state.outcomes[plan_id] = outcome
    state.plans.setdefault(plan_id, prepared)  # promoted here: its page stays readable
    for candidate_id in prepared["plan"]["candidateIds"]:
        state.decisions.forget(candidate_id)
    _leaves_queue(state, list(prepared["plan"]["candidateIds"]))
    written = sum(1 for f in outcome["files"] if f.get("outcome") == "written")
    state.flash(request, "ok", f"Promoted: {written} file(s) written to the working tree.")
    return redirect(f"/plan/{plan_id}")


def routes() -> list[Route]:
    return [
        Route("/queue", queue),
        Route("/candidate/{candidate_id:str}", candidate),
        Route("/candidate/{candidate_id:str}/decide", decide, methods=["POST"]),
        Route("/candidate/{candidate_id:str}/discard", discard, methods=["POST"]),
        Route("/evidence/commit/{commit:str}", evidence_commit),
        Route("/evidence/path", evidence_path),
        Route("/plan", plan),
        Route("/plan/prepare", prepare, methods=["POST"]),
        Route("/plan/{plan_id:str}", plan_detail),
        Route("/plan/{plan_id:str}/promote", promote, methods=["POST"]),
    ]
