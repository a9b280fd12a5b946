"""`memory.review`, `memory.prepare`, `memory.discard`: from a quarantined candidate to a plan.

- `memory.review` (read-only; capability `team`, not `team-read`: it shows private candidate
  text and transcript excerpts, while `team-read` serves approved memory only): every
  quarantined candidate of the caller's worktree with its statements, evidence, assessments,
  typed facts, the exact file preview/diff and an `approvalDigest`; drafts whose adjudication
  failed are listed apart.
- `memory.prepare` (team): a PrepareRequest@v1 — the person's per-statement confirmation, bound
  to candidate revision, statement-text and citations digests — becomes a PromotionPlan@v1 in
  the promotion journal (`generated`), ready for `memory.promote`.
- `memory.discard` (team): a draft, quarantined or adjudication-failed candidate → `discarded`.

The owner is always the worktree of the caller's directory, never a request field.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from teamlore.contracts.formats import PREPARE_REQUEST_FORMAT
from teamlore.core import errors
from teamlore.core.canonical import LONG_HEX
from teamlore.core.remedies import (
    BLOCKED_BY_LINT,
    CANNOT_BE_PROMOTED,
    MEMORY_CHANGED,
    discard_command,
)
from teamlore.core.shapes.strict import REQUEST
from teamlore.ops.owner import open_owner
from teamlore.ops.registry import OpContext, operation, parse_request

# A person types a candidate id as the text views show it, each long hex run cut to its first
# SHOWN_HEX characters (`extract-d028d5124c49-c1`), or abbreviates it further as with git's short
# hashes: every hex run of at least MIN_TYPED_HEX characters may stand for a longer one, and a
# unique prefix is enough (`extract-d028d512`: the task's only candidate). docs/extraction.md,
# "Naming a candidate".
SHOWN_HEX = 12
MIN_TYPED_HEX = 8
_TYPED_HEX = re.compile(rf"[0-9a-f]{{{MIN_TYPED_HEX},}}")


# a candidate blocked by one of these is right but drafted against memory that moved (a file it
# updates, or for a Skill the team memory it was drafted against): a discard that puts its
# turns back lets it be drafted again
_EXTRACT_AGAIN = frozenset(
    {
        errors.TARGET_DRIFT.code,
        errors.SKILL_TARGET_DRIFT.code,
        errors.MEMORY_CONTEXT_DRIFT.code,
    }
)


# the kinds drafted from session turns, whose turns `memory discard --extract-again` puts back
# (a consolidation is synthesized from approved memory: nothing to put back)
FROM_TURNS = ("entry", "skill")


def short_candidate_id(candidate_id: str) -> str:
    """The form the text views show (and `resolve_candidate_id` takes back)."""
    return LONG_HEX.sub(lambda run: run.group()[:SHOWN_HEX], candidate_id)


def short_target_id(target_id: str) -> str:
    """A skip, update or merge target as the text views show it: a draft's candidate id short,
    an approved entry's id whole (hex in its name is its name: `order-1234567890123456`)."""
    return short_candidate_id(target_id) if target_id.startswith("extract-") else target_id


def shown_to_a_person(item: dict[str, Any]) -> dict[str, Any]:
    """A review item as a screen shows it (the text view and the review page): in a candidate
    the lint blocks, each secret, session id or home path is shown by its preview
    (`ghp_…[40 chars]`), as its `blocked` finding names it, never in full on a screen, in a
    scrollback or a CI log. JSON and MCP keep the text, for the agent that staged it."""
    if not item.get("blocked"):
        return item
    from teamlore.core.secrets import scrub

    shown = {
        **item,
        "content": scrub(item["content"]),
        "statements": [
            {**s, **{k: scrub(s[k]) for k in ("text", "writtenText") if isinstance(s.get(k), str)}}
            for s in item["statements"]
        ],
        "files": [{**f, "diff": scrub(f["diff"])} for f in item["files"]],
    }
    # the scene is a front-matter field the lint judges like the text (the queue and the page
    # print it); a merged candidate's content is shown beside the one that merged it
    if isinstance(item.get("scene"), str):
        shown["scene"] = scrub(item["scene"])
    if isinstance(item.get("writtenContent"), str):  # the content as promotion writes it
        shown["writtenContent"] = scrub(item["writtenContent"])
    if item.get("mergedFrom"):
        shown["mergedFrom"] = [
            {
                k: scrub(v) if k in ("content", "title") and isinstance(v, str) else v
                for k, v in merged.items()
            }
            for merged in item["mergedFrom"]
        ]
    return shown


def what_it_replaces(item: dict[str, Any]) -> list[dict[str, str | None]]:
    """What promoting a review item does to memory that exists, in the words the text views
    and the page show before a person approves: each approved entry it updates or merges
    (its file rewritten, or marked deprecated and superseded by the result, as the item's files
    say) and each candidate it merged or replaced (discarded when this one was staged). Each is
    `{"says": sentence, "content": the merged candidate's content or None}`."""
    verb = "merges" if item.get("mergedFrom") else "updates"
    files = {str(f.get("entryId")): f for f in item.get("files", [])}
    # a consolidation item's files name no entry
    written = [f for f in item.get("files", []) if f.get("role") != "deprecate"]
    result_id = str(written[0].get("entryId") or "") if written else ""
    merged = {m.get("id"): m for m in item.get("mergedFrom", [])}
    lines: list[dict[str, str | None]] = []
    for target in item.get("supersedes", []):
        target_id = str(target.get("id", ""))
        if target.get("sourceKind") == "approved":
            says = f"{verb} approved entry {target_id}{_effect_on(target, files, result_id)}"
            lines.append({"says": says, "content": None})
            continue
        into = merged.get(target_id)
        says = (
            f"{'merges' if into else 'replaces'} candidate {short_candidate_id(target_id)}: "
            "discarded when this one was staged"
        )
        if into and into.get("statementIds"):
            says += f"; its statements are here as {', '.join(into['statementIds'])}"
        content = into.get("content") if into else None
        lines.append({"says": says, "content": content if isinstance(content, str) else None})
    return lines


def what_it_changes(item: dict[str, Any]) -> str | None:
    """What promoting a review item does to approved memory, in a few words for a line that
    lists it (the queue, the head of a candidate in the text view): `updates 1 entry`,
    `merges 2 entries`; None when it only adds to memory. `what_it_replaces` says it whole."""
    approved = [t for t in item.get("supersedes", []) if t.get("sourceKind") == "approved"]
    if not approved:
        return None
    verb = "merges" if item.get("mergedFrom") else "updates"
    return f"{verb} {len(approved)} {'entry' if len(approved) == 1 else 'entries'}"


def claim_support_shown(item: dict[str, Any], waiting: int | None = None) -> str:
    """The claim support a review item's memory carries, as a screen says it (the text view's
    summary line, the page's badge). For an entry or a Skill, `claimSupport` is what the file
    will carry once its generated statements are confirmed, so while some still wait it says so
    (`human-confirmed once 2 statements are confirmed`): read alone it looked confirmed already.
    `waiting`: how many still wait (the page counts its own decisions); by default those review
    marks `required`. A consolidation says `unverified` until every operation is confirmed."""
    support = str(item.get("claimSupport", ""))
    if waiting is None:
        waiting = sum(1 for s in item.get("statements", []) if s.get("confirmation") == "required")
    if waiting <= 0 or support == "unverified":
        return support
    statements = "statement is" if waiting == 1 else "statements are"
    return f"{support} once {waiting} {statements} confirmed"


def left_out_of_a_plan(item: dict[str, Any]) -> dict[str, str] | None:
    """Why a review item cannot go into a plan as it is, and what to do about it; None when it
    can. `memory confirm` leaves it out (naming it) and the page's Plan lists it apart, so
    neither refuses the others for it: `{candidateId, code, why, next}`."""
    short = short_candidate_id(item["candidateId"])
    if item.get("drift"):
        return {
            "candidateId": item["candidateId"],
            "code": errors.CONSOLIDATION_DRIFT.code,
            # the drift's message ends in its remedy ("; synthesize again"): said once, in next
            "why": _problem(item),
            "next": f"{discard_command(short, MEMORY_CHANGED)}, then synthesize again",
        }
    if not item.get("blocked"):
        return None
    rules = sorted({str(f["rule"]) for f in item.get("lintFindings") or []})
    lint = [rule for rule in rules if "." in rule]  # a lint rule; else a code (TARGET_DRIFT)
    code = errors.LINT_BLOCKED.code if lint or not rules else rules[0]
    reason = _reason_to_discard(code)
    out = {
        "candidateId": item["candidateId"],
        "code": code,
        "why": f"blocked by lint ({', '.join(lint)})" if lint else _problem(item),
        # the lesson is right, what it updates moved: its turns go back to be extracted
        "next": discard_command(short, reason, extract_again=code in _EXTRACT_AGAIN),
    }
    if code == errors.LINT_BLOCKED.code and item.get("kind") in FROM_TURNS:
        # a plain discard drops the lesson with it (its turns stay extracted); one drafted
        # against an older rule (a scene named `Release_Notes`) is right: its turns go back
        out["extractAgain"] = discard_command(short, reason, extract_again=True)
    return out


def _reason_to_discard(code: str) -> str:
    """The `--reason` of the discard teamlore advises for a candidate left out with `code`."""
    if code == errors.LINT_BLOCKED.code:
        return BLOCKED_BY_LINT
    return MEMORY_CHANGED if code == errors.CONSOLIDATION_DRIFT.code else CANNOT_BE_PROMOTED


def _effect_on(target: dict[str, Any], files: dict[str, Any], result_id: str) -> str:
    """What promotion does to the file of an approved entry a candidate updates or merges (a
    blocked candidate has no files)."""
    file = files.get(str(target.get("id")))
    if file is None:
        return ""
    if file["role"] == "deprecate":
        return f": marked deprecated, superseded by {result_id}"
    return ": its file is rewritten (the diff shows what it loses)"


def resolve_candidate_id(known: Sequence[str], typed: str) -> str:
    """The one id of `known` that `typed` names: itself, or its unique abbreviation. What names
    none is returned as typed (the caller refuses it as unknown); what names several is refused."""
    if typed in known:
        return typed
    wanted = typed.strip().lower()
    runs = list(_TYPED_HEX.finditer(wanted))
    if not runs:
        return typed  # no hex run long enough to abbreviate anything
    pattern, last = "", 0
    for run in runs:
        pattern += re.escape(wanted[last : run.start()]) + run.group() + "[0-9a-f]*"
        last = run.end()
    pattern += re.escape(wanted[last:])
    named = [k for k in known if re.fullmatch(pattern, k)] or [
        k for k in known if re.match(pattern, k)
    ]
    if len(named) > 1:
        shown = ", ".join(short_candidate_id(k) for k in sorted(named)[:3])
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT,
            f"{typed} names {len(named)} candidates ({shown}{', …' if len(named) > 3 else ''});"
            " give more of the id",
        )
    return named[0] if named else typed


def load_candidate_kinds() -> None:
    """Register the Skill and consolidation candidate kinds with promotion (their `kind` modules
    register on import; see `teamlore.memory.promotion.kinds`). Every operation that reviews,
    prepares, promotes, discards or resumes candidates' plans calls it first."""
    import teamlore.memory.consolidation.kind
    import teamlore.memory.skills.kind  # noqa: F401


# a review page holds this many candidates unless the request says otherwise: a review item
# carries its statements, evidence passages and the exact diff (a few KB each, more for an
# update), so the default page stays well under what a client shows an agent whole
REVIEW_PAGE = 5
MAX_REVIEW_PAGE = 50


class ReviewRequest(BaseModel):
    model_config = REQUEST

    kind: Literal["entry", "skill", "consolidation"] = Field(
        "entry",
        description="Which candidates to review: entry (L1 entries), skill (SKILL.md files) "
        "or consolidation (scene and doctrine changes from memory synthesize, shown per "
        "operation as current vs proposed).",
    )
    candidate_id: str | None = Field(
        None,
        min_length=1,
        max_length=512,
        description="Review this one candidate only: its id as review returned it, or a "
        "unique abbreviation (extract-d028d512).",
    )
    limit: int = Field(
        REVIEW_PAGE,
        ge=1,
        le=MAX_REVIEW_PAGE,
        description=f"Candidates per page (default {REVIEW_PAGE}); page.nextCursor gets the "
        "next page.",
    )
    cursor: str | None = Field(
        None,
        min_length=1,
        max_length=1024,
        description="page.nextCursor of the previous page, as it is: the page after it.",
    )


class ReviewPage:
    """Which candidates of the review queue one request shows (`ReviewRequest`): the one it
    names, else those after its cursor, at most `limit`. The queue's order is the review's
    (updated_at, candidate_id), and a cursor is the last shown candidate's place in it, so a
    candidate promoted or discarded between two pages moves none of the others off the next
    page; one that changed (a new revision) comes again later. `choose` picks the rows and
    keeps what the result's `count` and `page` say."""

    def __init__(self, request: ReviewRequest) -> None:
        self.request = request
        self.after = _cursor_place(request.cursor) if request.cursor is not None else None
        self.count = self.total = self.returned = self.remaining = 0
        self.last: tuple[int, str] | None = None

    def choose(self, rows: list[Any]) -> list[Any]:
        """`rows`: the queue's rows in review order (`candidate_id, candidate_kind, status, …,
        updated_at`); CANDIDATE_NOT_FOUND when the named candidate is none of them."""
        if self.request.candidate_id is not None:
            known = [str(row[0]) for row in rows]
            wanted = resolve_candidate_id(known, self.request.candidate_id)
            rows = [row for row in rows if row[0] == wanted]
            if not rows:
                raise _not_awaiting(self.request.candidate_id, self.request.kind)
        self.total = len(rows)
        self.count = sum(1 for row in rows if row[2] == "quarantined")
        if self.after is not None:
            rows = [row for row in rows if (int(row[7]), str(row[0])) > self.after]
        page = rows[: self.request.limit]
        self.returned, self.remaining = len(page), len(rows) - len(page)
        self.last = (int(page[-1][7]), str(page[-1][0])) if page else None
        return page

    def said(self, result: dict[str, Any]) -> dict[str, Any]:
        """The review `result` of the chosen rows, with the counts of the whole queue: `count`
        (the quarantined candidates, on every page) and `page`."""
        next_cursor = f"{self.last[0]}:{self.last[1]}" if self.remaining and self.last else None
        page = {
            "limit": self.request.limit,
            "cursor": self.request.cursor,
            "total": self.total,
            "returned": self.returned,
            "remaining": self.remaining,
            "nextCursor": next_cursor,
        }
        said = {**result, "count": self.count, "page": page}
        if next_cursor is not None:
            more = (
                f"This page shows {self.returned} of {self.total}; for the next "
                f"{min(self.remaining, self.request.limit)}, call memory review again with "
                f'cursor "{next_cursor}" (and the same kind).'
            )
            said["next"] = f"{result['next']} {more}" if result.get("next") else more
        return said


def _cursor_place(cursor: str) -> tuple[int, str]:
    """The place a cursor (`page.nextCursor`: `<updated_at ms>:<candidate id>`) names."""
    at, sep, candidate = cursor.partition(":")
    if not sep or not at.isdigit() or not at.isascii() or not candidate:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT,
            "cursor: not a cursor memory review returned (pass page.nextCursor as it is)",
        )
    return int(at), candidate


def _not_awaiting(typed: str, kind: str) -> errors.TeamloreError:
    return errors.TeamloreError(
        errors.CANDIDATE_NOT_FOUND,
        f"no candidate {typed} awaits review as {'an' if kind == 'entry' else 'a'} {kind}",
        candidateId=typed,
    )


class PrepareRequestDocument(BaseModel):
    """A PrepareRequest@v1 document, as is (validated against the contract by prepare)."""

    model_config = ConfigDict(extra="allow")

    format: str = Field(
        description=f"'{PREPARE_REQUEST_FORMAT}'; candidates: [{{candidateId, expectedRevision, "
        "statements: [{statementId, statementTextDigest, citationsDigest}]}] exactly as review "
        "returned them, for the statements the user confirmed."
    )


class DiscardRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    candidate_id: str = Field(alias="candidateId", min_length=1, max_length=512)
    expected_revision: int | None = Field(None, alias="expectedRevision", ge=1)
    reason: str | None = Field(
        None,
        max_length=2000,
        description="Why the user discards it, in their words (kept in the local state only).",
    )
    extract_again: bool = Field(
        False,
        alias="extractAgain",
        description="Put the turns it was extracted from back, so the next memory recall offers "
        "them again: for a lesson that is right but cannot be promoted as it is (an entry it "
        "updates changed, an entry saying the same arrived, the SKILL.md a Skill updates "
        "changed). Without it the turns stay extracted.",
    )

    @field_validator("reason")
    @classmethod
    def _reason(cls, value: str | None) -> str | None:
        return (" ".join(value.split()) or None) if value is not None else None


@operation(
    "memory.review",
    input_model=ReviewRequest,
    side_effect="read",
    capability="team",
    mcp_tool="threadshare_memory_review",
    description="Review quarantined team-memory candidates: per statement its text, "
    "writtenText (the text as promotion writes it: local paths and session ids become "
    "placeholders; show this to the user) with writtenNotice (what was replaced, null when "
    "nothing), statementTextDigest, citationsDigest, evidence (for a cited turn the passage "
    "that best supports the statement — user text, assistant text or a tool call with its "
    "output — with its place `session KEY · turn N · tool #M` and the `teamlore sessions "
    "show` command that opens it; public commits/paths), provenance strength, limitations, "
    "claim support and typed-fact status; per candidate its revision, writtenContent and "
    "writtenNotice likewise, the exact entry files and diff a promotion would write, lint "
    "findings and an approvalDigest. Read-only. Show it to the user before calling memory "
    f"prepare. A page holds {REVIEW_PAGE} candidates unless limit says otherwise (at most "
    f"{MAX_REVIEW_PAGE}): count says how many await review, page.remaining how many follow, "
    "and page.nextCursor, passed back as cursor, gets the next page; candidateId reviews one "
    "candidate.",
)
def memory_review(ctx: OpContext, request: ReviewRequest) -> dict[str, Any]:
    """Review the quarantined candidates of this worktree (read-only)."""
    page = ReviewPage(request)
    try:
        said = page.said(_review(ctx, request.kind, page.choose))
    except errors.TeamloreError as err:
        if err.code == errors.CANDIDATE_NOT_FOUND.code and request.candidate_id is not None:
            _refuse_another_kind(ctx, request.kind, [request.candidate_id])
            others = awaiting_other_kinds(ctx, request.kind)
            if others:
                raise err.advising(f"{_awaiting_sentence(others)}.") from None
        raise
    if said["count"] == 0 and request.cursor is None:
        others = awaiting_other_kinds(ctx, request.kind)
        if others:  # `memory review` alone reviews entries: say what else awaits, and where
            said["awaitingOtherKinds"] = others
            said["next"] = said.get("next") or f"{_awaiting_sentence(others)}."
    return said


def awaiting_other_kinds(ctx: OpContext, kind: str) -> dict[str, int]:
    """How many candidates of each kind other than `kind` await review (`entry`, `skill`,
    `consolidation`: as `--kind` names them)."""
    from teamlore.memory.promotion.review import REQUEST_KIND, awaiting_review

    with open_owner(ctx, for_read=True) as owner:
        waiting = awaiting_review(owner.state, owner.identity)
    counts: dict[str, int] = {}
    for stored in waiting.values():
        its = REQUEST_KIND.get(stored, stored)
        if its != kind:
            counts[its] = counts.get(its, 0) + 1
    return dict(sorted(counts.items()))


def waiting_now(ctx: OpContext) -> dict[str, Any]:
    """What awaits review now, cheaply (no candidate is reviewed; the review page places a
    candidate in the queue by it): `order`, the ids of every candidate waiting, each kind's in
    review's order, kinds in the order `memory.review` takes them (entry, skill,
    consolidation); `kinds`, id → kind as `--kind` names it; `confirmed`, (candidate,
    statement, statementTextDigest, citationsDigest) of each statement a person confirmed."""
    from teamlore.memory.promotion.review import REQUEST_KIND, waiting_in_order

    with open_owner(ctx, for_read=True) as owner:
        waiting, confirmed = waiting_in_order(owner.state, owner.identity)
    kinds = {cid: REQUEST_KIND.get(stored, stored) for cid, stored in waiting}
    taken = get_args(ReviewRequest.model_fields["kind"].annotation)
    rank = {kind: n for n, kind in enumerate(taken)}
    order = sorted(kinds, key=lambda cid: rank.get(kinds[cid], len(rank)))  # stable: in kind
    return {"order": order, "kinds": kinds, "confirmed": confirmed}


def _awaiting_sentence(others: dict[str, int]) -> str:
    """`1 consolidation candidate awaits review: see it with `teamlore memory review --kind
    consolidation``, for each kind."""
    said = []
    for kind, n in others.items():
        if n == 1:
            what = f"1 {kind} candidate awaits review: see it"
        else:
            what = f"{n} {kind} candidates await review: see them"
        said.append(f"{what} with `teamlore memory review --kind {kind}`")
    return "; ".join(said)


def review_everything(ctx: OpContext, kind: str) -> dict[str, Any]:
    """The review of every candidate of `kind`, on one page (no `page`); the MCP tool, the CLI
    and `memory.confirm` (the next page when the person reaches it) read it page by page."""
    return _review(ctx, kind, None)


# picks the rows of a review page from the queue's (`ReviewPage.choose`); None: every row
Choose = Callable[[list[Any]], list[Any]] | None


def _review(ctx: OpContext, kind: str, choose: Choose) -> dict[str, Any]:
    from teamlore.memory.promotion.queue import review_queue

    load_candidate_kinds()
    if kind == "consolidation":
        return _review_consolidations(ctx, choose)
    with open_owner(ctx, sessions=True) as owner:
        return review_queue(
            owner.state, owner.index, owner.identity, home=ctx.home, kind=kind, choose=choose
        )


@operation(
    "memory.prepare",
    input_model=PrepareRequestDocument,
    side_effect="state-write",
    capability="team",
    mcp_tool="threadshare_memory_prepare",
    approval_policy="canonical-write",
    description="Confirm reviewed statements and prepare a promotion: a PrepareRequest@v1 "
    "listing, per candidate, its revision and every statement's statementId, "
    "statementTextDigest and citationsDigest exactly as memory review returned them. Call it "
    "only after the user confirmed each generated statement. Returns a PromotionPlan@v1 "
    "(generated) for memory promote; any drift, unconfirmed statement or lint block refuses.",
)
def memory_prepare(ctx: OpContext, request: PrepareRequestDocument) -> dict[str, Any]:
    """Confirm statements and record a PromotionPlan@v1."""
    from teamlore.memory.promotion.prepare import prepare

    load_candidate_kinds()
    document = request.model_dump(mode="json")
    if document.get("kind") == "consolidation":  # reads the memory tree only, not sessions
        with open_owner(ctx) as owner:
            return prepare(owner.state, None, owner.identity, document, home=ctx.home)
    with open_owner(ctx, sessions=True) as owner:
        return prepare(owner.state, owner.index, owner.identity, document, home=ctx.home)


@operation(
    "memory.discard",
    input_model=DiscardRequest,
    side_effect="state-write",
    capability="team",
    mcp_tool="threadshare_memory_discard",
    destructive=True,  # a discarded candidate never comes back
    idempotent=True,
    description="Discard a team-memory candidate (a draft, a quarantined candidate or one "
    "whose adjudication failed) the user does not want; optional expectedRevision guards "
    "against discarding something that changed since review; extractAgain puts its turns back "
    "to be extracted again.",
)
def memory_discard(ctx: OpContext, request: DiscardRequest) -> dict[str, Any]:
    """Discard one candidate.

    With `ctx.confirm` and no reason (`memory discard` on a terminal without --reason), the
    person is asked why once the candidate is found to be one a discard takes: a wrong id, or a
    candidate already discarded, is refused before the question. `ctx.confirm(asked)` puts the
    answer in `asked["reason"]` and returns True, or returns False: nothing is discarded."""
    from teamlore.memory.promotion.discard import discard_candidate, discardable
    from teamlore.memory.promotion.review import candidate_ids

    load_candidate_kinds()
    reason = request.reason
    if ctx.confirm is not None and reason is None:
        with open_owner(ctx, for_read=True) as owner:
            known = candidate_ids(owner.state, owner.identity)
            found = resolve_candidate_id(known, request.candidate_id)
            row = discardable(
                owner.state,
                owner.identity,
                found,
                request.expected_revision,
                request.extract_again,
            )
        asked: dict[str, Any] = {"candidateId": found, "status": str(row[2])}
        if not ctx.confirm(asked):  # asked outside any transaction: a person takes their time
            return {"action": "discard", "candidateId": found, "status": str(row[2])}
        # the answer is read as --reason is (blanks folded, at most 2,000 characters)
        answer = {"candidateId": found, "reason": asked.get("reason")}
        reason = parse_request(DiscardRequest, answer).reason
    with open_owner(ctx) as owner:
        known = candidate_ids(owner.state, owner.identity)
        return discard_candidate(
            owner.state,
            owner.identity,
            resolve_candidate_id(known, request.candidate_id),
            expected_revision=request.expected_revision,
            reason=reason,
            extract_again=request.extract_again,
        )


def _review_consolidations(ctx: OpContext, choose: Choose = None) -> dict[str, Any]:
    from teamlore.memory.consolidation.review import review_consolidations
    from teamlore.memory.promotion.review import REVIEW_FORMAT
    from teamlore.memory.promotion.targets import public_identity_of
    from teamlore.memory.store.lint import LINT_POLICY_VERSION

    with open_owner(ctx) as owner:
        identity = owner.identity
        items = review_consolidations(owner.state, owner.identity, choose)
    return {
        "action": "review",
        "format": REVIEW_FORMAT,
        "kind": "consolidation",
        "owner": {
            "repositoryKey": identity.repository_key,
            "worktreeKey": identity.worktree_key,
            "project": public_identity_of(identity),
        },
        "policyVersion": LINT_POLICY_VERSION,
        "count": len(items),
        "items": items,
        "failed": [],
        "next": "Show the user each operation (current vs proposed) with the entries it rests "
        "on; if they confirm every one, send a PrepareRequest@v1 with kind consolidation, the "
        "candidate's revision and every operation's statementId/statementTextDigest/"
        "citationsDigest to memory prepare. Blocked items: discard them and synthesize again."
        if items
        else None,
    }


def prepare_request_from_review(
    items: list[dict[str, Any]], candidate_ids: list[str] | None = None
) -> dict[str, Any]:
    """`memory.promotion.queue.prepare_request_from_review`, for the CLI and the review UI;
    the queue loads when it is called, not when an MCP server lists this module's tools."""
    from teamlore.memory.promotion.queue import prepare_request_from_review as from_review

    return from_review(items, candidate_ids)


def _refuse_another_kind(ctx: OpContext, kind: str, unknown: list[str]) -> None:
    """A chosen candidate the review of `kind` does not hold that awaits review as another kind
    (a Skill given to confirm entries) is refused as that kind's, with the commands for it."""
    if not unknown:
        return
    from teamlore.memory.promotion.review import REQUEST_KIND, awaiting_review, of_another_kind

    with open_owner(ctx, for_read=True) as owner:
        waiting = awaiting_review(owner.state, owner.identity)
    others = {i: k for i, k in waiting.items() if REQUEST_KIND.get(k, k) != kind}
    for typed in unknown:
        try:
            found = resolve_candidate_id(list(others), typed)
        except errors.TeamloreError:  # it names several: it is refused as unknown below
            continue
        if found in others:
            raise of_another_kind(found, others[found], kind)


def _confirmable(
    items: list[dict[str, Any]], chosen: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The reviewed items to ask about — every one, or those chosen (all of them must exist) —
    and those left out with why (`left_out_of_a_plan`). A chosen candidate that is left out
    refuses the request, as `memory prepare` refuses a request naming it; so does a queue whose
    every candidate is."""
    items = [i for i in items if not chosen or i["candidateId"] in chosen]
    missing = sorted(set(chosen) - {i["candidateId"] for i in items})
    if missing:
        raise errors.TeamloreError(
            errors.CANDIDATE_NOT_FOUND, f"no reviewable candidate {', '.join(missing)}"
        )
    left_out = [out for i in items if (out := left_out_of_a_plan(i)) is not None]
    if left_out and (chosen or len(left_out) == len(items)):
        _refuse(items, left_out, chosen=bool(chosen))
    kept = {out["candidateId"] for out in left_out}
    return [i for i in items if i["candidateId"] not in kept], left_out


def _refuse(items: list[dict[str, Any]], left_out: list[dict[str, str]], *, chosen: bool) -> None:
    """Refuse with the code of the first candidate left out (`LINT_BLOCKED`, or the drift that
    blocks it: `TARGET_DRIFT`, `CONSOLIDATION_DRIFT`, …), naming each candidate left out and
    why in a person's words; `details.leftOut` lists them as `memory confirm` does."""
    first = left_out[0]
    error = errors.registered_codes()[first["code"]]
    by_id = {i["candidateId"]: i for i in items}
    if error is errors.LINT_BLOCKED:
        lead = [o for o in left_out if o["code"] == error.code]
        blocked = [by_id[o["candidateId"]] for o in lead]
        named = ", ".join(
            f"{i['candidateId']} ({', '.join(sorted({f['rule'] for f in i['lintFindings']}))})"
            for i in blocked
        )
        message = f"blocked by lint: {named}"
        details: dict[str, Any] = {
            "candidates": [
                {"candidateId": i["candidateId"], "findings": i["lintFindings"]} for i in blocked
            ]
        }
    else:
        lead = [first]
        message = f"{first['candidateId']}: {_problem(by_id[first['candidateId']])}"
        details = {"candidateId": first["candidateId"]}
    again = error.code in _EXTRACT_AGAIN
    keep = error is errors.LINT_BLOCKED and all("extractAgain" in o for o in lead)
    # one candidate: its id in the command, runnable as written
    named_id = short_candidate_id(first["candidateId"]) if len(lead) == 1 else "ID"
    command = discard_command(named_id, _reason_to_discard(error.code), extract_again=again)
    message += f"; discard it (`{command}`)"
    if keep:  # a plain discard drops its lesson: say what keeps it
        message += ", or keep its lesson: with `--extract-again` it is extracted again"
    message += f"{',' if keep else ''} or leave it out of --candidate" if chosen else ""
    message += ", then synthesize again" if error is errors.CONSOLIDATION_DRIFT else ""
    others = [o for o in left_out if o not in lead]
    if others:
        also = (f"{o['candidateId']} ({_problem(by_id[o['candidateId']])})" for o in others)
        message += f"; also left out: {', '.join(also)}"
    refusal = errors.TeamloreError(error, message, **details, leftOut=left_out)
    if again and len(lead) == 1:  # the remedy's line names no candidate
        refusal.advising(f"Discard it with `{command}`, then recall.")
    elif error is errors.CONSOLIDATION_DRIFT and len(lead) == 1:  # its line: synthesize only
        refusal.advising(f"Discard it with `{command}`, then `teamlore memory synthesize`.")
    elif keep:
        refusal.advising(  # the command is in the message: whole, it passes 80 columns here
            "Add `--extract-again` to that discard to keep its lesson (its turns are extracted "
            "again; without it the lesson is dropped), then recall."
        )
    raise refusal


def _problem(item: dict[str, Any]) -> str:
    """Why a review item cannot go into a plan, without what to do about it (a refusal's
    message is `problem; what to do`, and the refusal says what to do once)."""
    if item.get("drift"):
        return str(item["drift"]["message"]).split("; ", 1)[0]
    findings = item.get("lintFindings") or []
    lint = sorted({str(f["rule"]) for f in findings if "." in str(f["rule"])})
    if lint or not findings:
        return f"blocked by lint: {', '.join(lint)}" if lint else "blocked"
    return str(findings[0]["message"]).split("; ", 1)[0]
