"""The person's per-statement decisions while they review, before anything is written.

Confirming a generated statement in the page records the decision here, bound to what the person
saw: the candidate's revision and the statement's `statementTextDigest` and `citationsDigest`
from `memory.review`. A decision whose binding no longer matches the current review is *stale*
and counts as undecided (the page says so). Nothing reaches the state DB until the person
prepares a plan: then the confirmed statements go to `memory.prepare` as a PrepareRequest@v1,
which re-checks the same digests and records them as `human-confirmed`, as the MCP
`threadshare_memory_prepare` tool does. (`teamlore memory confirm` stores each `y` as
`human-confirmed` at once, without a plan: the page shows such a statement confirmed.)

A *rejected* statement keeps its candidate out of the plan (every generated statement of a
candidate must be confirmed for it to be promoted); the person can discard the candidate with a
reason, or leave it in the queue for the agent to re-stage. Typed facts (verified by a renderer)
need no decision.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["confirm", "reject"]
State = Literal["confirmed", "rejected", "stale", "undecided", "typed-fact"]


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    revision: int
    statement_text_digest: str
    citations_digest: str


@dataclass(frozen=True, slots=True)
class CandidateProgress:
    """Where a candidate stands: ready for a plan, rejected, blocked or still being decided."""

    generated: int
    confirmed: int
    rejected: int
    stale: int
    blocked: bool

    @property
    def undecided(self) -> int:
        return self.generated - self.confirmed - self.rejected

    @property
    def ready(self) -> bool:
        return not self.blocked and self.rejected == 0 and self.confirmed == self.generated

    @property
    def label(self) -> str:
        if self.blocked:
            return "blocked"  # by lint, or by what changed under it (`why_blocked` says)
        if self.rejected:
            return "rejected"
        if self.ready:
            return "ready"
        return "needs your decision"


@dataclass
class Decisions:
    _by_statement: dict[tuple[str, str], Decision] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, item: dict[str, Any], statement: dict[str, Any], verdict: Verdict) -> None:
        decision = Decision(
            verdict,
            int(item["revision"]),
            str(statement["statementTextDigest"]),
            str(statement["citationsDigest"]),
        )
        with self._lock:
            self._by_statement[(item["candidateId"], statement["statementId"])] = decision

    def forget(self, candidate_id: str, statement_id: str | None = None) -> None:
        with self._lock:
            for key in list(self._by_statement):
                if key[0] == candidate_id and statement_id in (None, key[1]):
                    del self._by_statement[key]

    def undoable(self, item: dict[str, Any], statement: dict[str, Any]) -> bool:
        """Whether Undo takes something back: a decision made on this page. A confirmation
        stored in the state DB — by a `y` at `memory confirm` (stored at once, no plan made) or
        by a plan prepared (`memory.prepare`, from the page or a terminal) — is taken back by no
        operation, so Undo is not offered for it (the page says how to: discard the candidate).
        Nor is it for the page's own Confirm once a plan stored it: forgetting that decision
        would leave the statement confirmed all the same."""
        with self._lock:
            decision = self._by_statement.get((item["candidateId"], statement["statementId"]))
        if decision is None:
            return False
        return not (decision.verdict == "confirm" and statement.get("confirmation") == "confirmed")

    def state(self, item: dict[str, Any], statement: dict[str, Any]) -> State:
        if statement.get("typedFact"):
            return "typed-fact"
        with self._lock:
            decision = self._by_statement.get((item["candidateId"], statement["statementId"]))
        if decision is None:
            # confirmed in the state (a `y` at memory confirm, or a plan) and unchanged since
            return "confirmed" if statement.get("confirmation") == "confirmed" else "undecided"
        if (
            decision.revision != item["revision"]
            or decision.statement_text_digest != statement["statementTextDigest"]
            or decision.citations_digest != statement["citationsDigest"]
        ):
            return "stale"
        return "confirmed" if decision.verdict == "confirm" else "rejected"

    def progress(self, item: dict[str, Any]) -> CandidateProgress:
        states = [self.state(item, s) for s in item.get("statements", [])]
        return CandidateProgress(
            generated=sum(1 for s in states if s != "typed-fact"),
            confirmed=states.count("confirmed"),
            rejected=states.count("rejected"),
            stale=states.count("stale"),
            blocked=bool(item.get("blocked")),
        )

    def next_undecided(self, item: dict[str, Any]) -> str | None:
        for statement in item.get("statements", []):
            if self.state(item, statement) in ("undecided", "stale"):
                return str(statement["statementId"])
        return None
