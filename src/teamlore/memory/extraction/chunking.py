"""`memory-chunker@1`: whole-turn chunks of a session, with declared coverage.

- A chunk is a run of consecutive selected turns of one session, never reaching across turns
  a staged chunk holds (`runs_around_staged`). Turns are appended greedily
  while the chunk stays within the budget (an exact fit stays); a turn is never split. The
  budget is `CHUNK_BUDGET_BYTES` unless a recall asks for a smaller one (`chunkBytes`, at least
  `MIN_CHUNK_BUDGET_BYTES`), and a chunk remembers it: re-deriving the chunk needs the same.
- A turn's size is the sum of its event blocks, `<<past-{role}>>\\n{text}\\n\\n` in UTF-8 bytes
  (the `<<past-turn>>` marker line is not counted).
- A turn larger than the budget on its own is cut until it fits (`fit_turn`), each step only
  while it is still too big, so the chunk's text never exceeds its budget:
  1. its tool payloads are excerpted — the largest `tool_call`/`tool_result` text above
     `EXCERPT_MIN_BYTES` first, ties by position — to their first and last `EXCERPT_BYTES`
     bytes around a note with the full size and sha256 of the payload;
  2. the same, with smaller excerpts (`SMALLER_EXCERPTS`: 512, 256, 128 bytes each side);
  3. user and assistant text keeps its head and tail around a note `[[text cut by …]]`
     (`TEXT_EXCERPTS[0]`, 2048 bytes each side), the longest first;
  4. tool calls, each with its results, are left out from the middle of the turn outward (the
     first and the last calls are the ones kept); the first event left out carries a note
     `[[N tool events left out by …]]`, and every event left out is declared truncated (those
     after the first take no bytes and no block: `Event.omitted`);
  5. user and assistant text is cut further (1024, 512, 256, 128 bytes each side).
  A turn that fits is never touched. An excerpted tool result keeps its status line
  (`[[result: error, exit code 1]]`) whole, as the note it is. The result depends only on the
  turn and the budget.
- A payload the index itself only kept as head/tail (too large to store whole) arrives
  pre-excerpted (`truncated=True`).
- Every cut is declared: one `turn` coverage item per turn (`truncated` if any of its events is)
  and one `tool-payload` item per truncated tool event, with the payload's original byte size
  (a cut user or assistant text is declared by its turn's item).

Event text reaching the chunker is already cleaned and escaped for the transcript (see
`teamlore.memory.extraction.transcript.escape_text`), so sizes are the sizes the reader sees;
excerpt notes are added after escaping, so they are the only `[[…]]` a transcript holds.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, TypeVar

from teamlore.core.canonical import digest
from teamlore.memory.extraction.transcript import escape_text

CHUNKER_VERSION = "memory-chunker@1"
CHUNK_BUDGET_BYTES = 40_960
# the smallest budget a recall may ask for (`chunkBytes`): below it most turns with a tool call
# would be excerpted down to their head and tail
MIN_CHUNK_BUDGET_BYTES = 8_192
EXCERPT_BYTES = 1_024
EXCERPT_MIN_BYTES = 2 * EXCERPT_BYTES
SMALLER_EXCERPTS = (512, 256, 128)
TEXT_EXCERPTS = (2_048, 1_024, 512, 256, 128)

Role = Literal["user", "assistant", "tool_call", "tool_result"]
TOOL_ROLES: frozenset[str] = frozenset({"tool_call", "tool_result"})
_TEXT_ROLES: frozenset[str] = frozenset({"user", "assistant"})
# teamlore's status line on a tool result (recall._result_status): kept out of an excerpt, which
# escapes what it keeps
_STATUS_NOTE = re.compile(r"\[\[result: [^\]\n]*\]\]\n")


@dataclass(frozen=True, slots=True)
class Event:
    role: Role
    text: str  # escaped transcript text
    payload_sha256: str  # sha256 of the original payload bytes
    payload_bytes: int  # size of the original payload in bytes
    truncated: bool = False
    # left out of the transcript to fit the budget (declared in coverage, no bytes, no block)
    omitted: bool = False


@dataclass(frozen=True, slots=True)
class ChunkTurn:
    index: int  # the turn's ordinal in its session (shown as `index` in the transcript)
    revision: str
    events: tuple[Event, ...]


@dataclass(frozen=True, slots=True)
class Chunk:
    turns: tuple[ChunkTurn, ...]
    coverage: tuple[dict[str, Any], ...]
    chunk_digest: str
    bytes: int
    budget: int = CHUNK_BUDGET_BYTES

    @property
    def turn_range(self) -> dict[str, int]:
        return {"start": self.turns[0].index, "end": self.turns[-1].index}

    @property
    def turn_revisions(self) -> list[str]:
        return [turn.revision for turn in self.turns]

    @property
    def payload_digests(self) -> list[str]:
        return sorted({e.payload_sha256 for t in self.turns for e in t.events})

    def ref(self, session_key: str) -> str:
        """The chunk's key in the state DB (`chunks.chunk_ref`)."""
        return f"{session_key}:{self.turns[0].index}:{self.turns[-1].index}:{self.chunk_digest}"


Clean = Callable[[str], str]


def _keep(text: str) -> str:
    return text


def event_bytes(event: Event) -> int:
    """UTF-8 size of `<<past-{role}>>\\n{text}\\n\\n` (0 for an event left out)."""
    if event.omitted:
        return 0
    return len(event.text.encode("utf-8")) + len(event.role) + 12


def turn_bytes(turn: ChunkTurn) -> int:
    return sum(event_bytes(e) for e in turn.events)


def excerpt_text(
    text: str,
    *,
    total_bytes: int,
    sha256: str,
    keep: int = EXCERPT_BYTES,
    what: str = "tool payload truncated",
) -> str:
    """Head and tail `keep` bytes of `text` around a note naming the whole payload."""
    data = text.encode("utf-8")
    head = data[:keep].decode("utf-8", "ignore")
    tail = data[-keep:].decode("utf-8", "ignore")
    note = (
        f"[[{what} by {CHUNKER_VERSION}: total {total_bytes} bytes, "
        f"sha256={sha256}; head/tail {keep}-byte excerpts]]"
    )
    return f"{escape_text(head)}\n{note}\n{escape_text(tail)}"


def excerpt_parts(
    head: str, tail: str, *, total_bytes: int, sha256: str, clean: Clean = _keep
) -> str:
    """An excerpt built from a head and a tail kept separately (payloads stored out of line)."""
    head_part = clean(head.encode("utf-8")[:EXCERPT_BYTES].decode("utf-8", "ignore"))
    tail_part = clean(tail.encode("utf-8")[-EXCERPT_BYTES:].decode("utf-8", "ignore"))
    note = (
        f"[[tool payload truncated by {CHUNKER_VERSION}: total {total_bytes} bytes, "
        f"sha256={sha256}; head/tail {EXCERPT_BYTES}-byte excerpts]]"
    )
    return f"{escape_text(head_part)}\n{note}\n{escape_text(tail_part)}"


def payload_event(role: Role, text: str, clean: Clean = _keep) -> Event:
    """An event whose text is the whole payload, cleaned and then escaped (last)."""
    data = text.encode("utf-8", "surrogatepass")
    return Event(
        role=role,
        text=escape_text(clean(text)),
        payload_sha256=hashlib.sha256(data).hexdigest(),
        payload_bytes=len(data),
    )


def _size(events: list[Event]) -> int:
    return sum(event_bytes(e) for e in events)


def _excerpt_largest(
    events: list[Event], budget: int, roles: frozenset[str], keep: int, what: str, fresh: bool
) -> None:
    """Excerpt the largest texts of `roles` to `keep` bytes each side, largest first (ties by
    position), while the events exceed `budget`. `fresh`: only events not cut before."""
    order = sorted(
        (
            i
            for i, e in enumerate(events)
            if e.role in roles
            and not e.omitted
            and not (fresh and e.truncated)
            and len(e.text.encode("utf-8")) > 2 * keep + (0 if fresh else 256)
        ),
        key=lambda i: (-len(events[i].text.encode("utf-8")), i),
    )
    size = _size(events)
    for i in order:
        if size <= budget:
            return
        event = events[i]
        status = _STATUS_NOTE.match(event.text) if event.role == "tool_result" else None
        head = status[0] if status else ""  # the result's status stays a note, whole
        text = excerpt_text(
            event.text[len(head) :],
            total_bytes=event.payload_bytes,
            sha256=event.payload_sha256,
            keep=keep,
            what=what,
        )
        events[i] = replace(event, text=head + text, truncated=True)
        size += event_bytes(events[i]) - event_bytes(event)


def _tool_units(events: list[Event]) -> list[list[int]]:
    """The turn's tool events grouped as a call and the results after it."""
    units: list[list[int]] = []
    for i, event in enumerate(events):
        if event.role not in TOOL_ROLES or event.omitted:
            continue
        if event.role == "tool_call" or not units or units[-1][-1] != i - 1:
            units.append([i])
        else:
            units[-1].append(i)
    return units


def _leave_out_tools(events: list[Event], budget: int) -> None:
    """Leave tool calls (each with its results) out from the middle outward until the events
    fit `budget` (or none is left); the first event left out carries a note naming them all."""
    units = _tool_units(events)
    unit_sizes = [sum(event_bytes(events[i]) for i in unit) for unit in units]
    total = _size(events)
    for keep in range(len(units) - 1, -1, -1):
        head, tail = (keep + 1) // 2, keep // 2
        gone = units[head : len(units) - tail]
        run = [i for unit in gone for i in unit]
        left_out = sum(events[j].payload_bytes for j in run)
        note = (
            f"[[{len(run)} tool events left out by {CHUNKER_VERSION} to fit the chunk "
            f"budget: {left_out} payload bytes]]"
        )
        noted = replace(events[run[0]], text=note, truncated=True)
        size = total - sum(unit_sizes[head : len(units) - tail]) + event_bytes(noted)
        if size <= budget or keep == 0:
            for j in run[1:]:
                events[j] = replace(events[j], text="", truncated=True, omitted=True)
            events[run[0]] = noted
            return


def fit_turn(turn: ChunkTurn, budget: int = CHUNK_BUDGET_BYTES) -> ChunkTurn:
    """Cut the turn until it fits the budget (module doc, steps 1–5)."""
    if turn_bytes(turn) <= budget:
        return turn
    events = list(turn.events)
    _excerpt_largest(events, budget, TOOL_ROLES, EXCERPT_BYTES, "tool payload truncated", True)
    for keep in SMALLER_EXCERPTS:
        if _size(events) <= budget:
            break
        _excerpt_largest(events, budget, TOOL_ROLES, keep, "tool payload truncated", False)
    # a long request or answer says more than the middle of a run of tool calls
    _excerpt_largest(events, budget, _TEXT_ROLES, TEXT_EXCERPTS[0], "text cut", False)
    if _size(events) > budget:
        _leave_out_tools(events, budget)
    for keep in TEXT_EXCERPTS[1:]:
        if _size(events) <= budget:
            break
        _excerpt_largest(events, budget, _TEXT_ROLES, keep, "text cut", False)
    return replace(turn, events=tuple(events))


def _coverage(turns: list[ChunkTurn]) -> tuple[dict[str, Any], ...]:
    items: list[dict[str, Any]] = []
    for turn in turns:
        truncated = any(e.truncated for e in turn.events)
        items.append(
            {
                "sourceKind": "turn",
                "ref": f"turn:{turn.index}",
                "completeness": "truncated" if truncated else "full",
                "bytes": turn_bytes(turn),
            }
        )
    for turn in turns:
        for event in turn.events:
            if event.truncated and event.role in TOOL_ROLES:
                items.append(
                    {
                        "sourceKind": "tool-payload",
                        "ref": f"payload:{event.payload_sha256}",
                        "completeness": "truncated",
                        "bytes": event.payload_bytes,
                    }
                )
    return tuple(items)


def _events_json(turns: list[ChunkTurn]) -> list[dict[str, Any]]:
    return [
        {
            "turnIndex": turn.index,
            "role": e.role,
            "text": e.text,
            "truncated": e.truncated,
            "payloadSha256": e.payload_sha256,
            "payloadBytes": e.payload_bytes,
            **({"omitted": True} if e.omitted else {}),  # absent: digests of earlier chunks hold
        }
        for turn in turns
        for e in turn.events
    ]


def _make_chunk(turns: list[ChunkTurn], budget: int) -> Chunk:
    coverage = _coverage(turns)
    turn_range = {"start": turns[0].index, "end": turns[-1].index}
    chunk_digest = digest(
        {
            "chunkerVersion": CHUNKER_VERSION,
            "turnRange": turn_range,
            "coverage": list(coverage),
            "events": _events_json(turns),
        }
    )
    return Chunk(tuple(turns), coverage, chunk_digest, sum(turn_bytes(t) for t in turns), budget)


@dataclass(slots=True)
class _Open:
    turns: list[ChunkTurn] = field(default_factory=list)
    size: int = 0


def chunk_turns(turns: list[ChunkTurn], budget: int = CHUNK_BUDGET_BYTES) -> list[Chunk]:
    """Cut the turns (in order) into greedy whole-turn chunks."""
    chunks: list[Chunk] = []
    current = _Open()
    for turn in turns:
        fitted = fit_turn(turn, budget)
        size = turn_bytes(fitted)
        if current.turns and current.size + size > budget:
            chunks.append(_make_chunk(current.turns, budget))
            current = _Open()
        current.turns.append(fitted)
        current.size += size
    if current.turns:
        chunks.append(_make_chunk(current.turns, budget))
    return chunks


class _Indexed(Protocol):
    @property
    def index(self) -> int: ...


_Turn = TypeVar("_Turn", bound=_Indexed)


def runs_around_staged(turns: Sequence[_Turn], staged: list[tuple[int, int]]) -> list[list[_Turn]]:
    """The turns (in order, none of them staged) cut wherever staged turns (`staged`: first,
    last) lie between two of them. A chunk is named by its first and last turn, and one reaching
    across a staged range would be stale the moment it is recorded (`turns-already-extracted`),
    so its turns could never be extracted."""
    runs: list[list[_Turn]] = []
    for turn in turns:
        if runs and not any(
            runs[-1][-1].index < first and last < turn.index for first, last in staged
        ):
            runs[-1].append(turn)
        else:
            runs.append([turn])
    return runs
