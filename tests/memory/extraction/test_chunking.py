"""memory-chunker@1: greedy whole-turn chunks, excerpts only when a turn alone is too big."""

from __future__ import annotations

import hashlib

from teamlore.memory.extraction.chunking import (
    CHUNK_BUDGET_BYTES,
    EXCERPT_BYTES,
    ChunkTurn,
    Event,
    chunk_turns,
    event_bytes,
    payload_event,
    turn_bytes,
)


def turn(index: int, *events: Event) -> ChunkTurn:
    return ChunkTurn(index=index, revision=f"{index:064x}", events=events)


def user(size: int) -> Event:
    return payload_event("user", "u" * size)


def test_a_one_user_event_turn_costs_text_plus_16_bytes() -> None:
    assert turn_bytes(turn(1, user(100))) == 116
    assert event_bytes(payload_event("tool_result", "abc")) == 3 + len("tool_result") + 12


def test_greedy_packing_keeps_an_exact_fit_and_never_splits_a_turn() -> None:
    half = CHUNK_BUDGET_BYTES // 2 - 16
    chunks = chunk_turns([turn(1, user(half)), turn(2, user(half)), turn(3, user(10))])
    assert [c.turn_range for c in chunks] == [{"start": 1, "end": 2}, {"start": 3, "end": 3}]
    assert chunks[0].bytes == CHUNK_BUDGET_BYTES
    assert all(c["completeness"] == "full" for c in chunks[0].coverage)


def test_an_oversized_turn_gets_its_largest_payload_excerpted_and_declared() -> None:
    small = payload_event("tool_result", "s" * 5_000)
    big_text = "HEAD" + "b" * 60_000 + "TAIL"
    big = payload_event("tool_result", big_text)
    chunks = chunk_turns(
        [turn(1, user(20), small), turn(2, user(10), big, small), turn(3, user(5))]
    )
    assert [c.turn_range for c in chunks] == [{"start": 1, "end": 3}]  # fits once excerpted
    second = chunks[0]
    events = second.turns[1].events
    assert events[1].truncated and not events[2].truncated  # only the largest one was needed
    assert events[1].text.startswith("HEAD") and events[1].text.endswith("TAIL")
    sha = hashlib.sha256(big_text.encode()).hexdigest()
    assert f"total {len(big_text)} bytes, sha256={sha}" in events[1].text
    assert len(events[1].text.encode()) < 2 * EXCERPT_BYTES + 200
    assert {
        "sourceKind": "tool-payload",
        "ref": f"payload:{sha}",
        "completeness": "truncated",
        "bytes": len(big_text),
    } in second.coverage
    assert [c["completeness"] for c in second.coverage[:3]] == ["full", "truncated", "full"]


def test_user_text_alone_too_big_keeps_its_head_and_tail_and_the_chunk_its_budget() -> None:
    """A turn is never split and a chunk never exceeds its budget: text nothing else can make
    fit keeps its first and last 2048 bytes around a note naming the whole text."""
    huge_user = payload_event("user", "HEAD" + "u" * CHUNK_BUDGET_BYTES * 2 + "TAIL")
    chunks = chunk_turns([turn(1, user(10)), turn(2, huge_user), turn(3, user(10))])
    assert [c.turn_range for c in chunks] == [{"start": 1, "end": 3}]
    (chunk,) = chunks
    assert chunk.bytes <= CHUNK_BUDGET_BYTES
    cut = chunk.turns[1].events[0]
    assert cut.truncated and cut.text.startswith("HEAD") and cut.text.endswith("TAIL")
    assert f"[[text cut by memory-chunker@1: total {huge_user.payload_bytes} bytes" in cut.text
    assert "head/tail 2048-byte excerpts]]" in cut.text
    assert [c["completeness"] for c in chunk.coverage] == ["full", "truncated", "full"]


def test_pre_truncated_payloads_are_declared_without_being_touched() -> None:
    stored = Event("tool_result", "head...tail", "f" * 64, 999_999, truncated=True)
    (chunk,) = chunk_turns([turn(4, user(3), stored)])
    assert chunk.coverage[-1] == {
        "sourceKind": "tool-payload",
        "ref": "payload:" + "f" * 64,
        "completeness": "truncated",
        "bytes": 999_999,
    }
    assert chunk.turns[0].events[1].text == "head...tail"


def test_the_chunk_digest_depends_on_content_only() -> None:
    a = chunk_turns([turn(1, user(10)), turn(2, user(20))])[0]
    b = chunk_turns([turn(1, user(10)), turn(2, user(20))])[0]
    c = chunk_turns([turn(1, user(10)), turn(2, user(21))])[0]
    assert a.chunk_digest == b.chunk_digest != c.chunk_digest
    assert a.payload_digests == sorted(set(a.payload_digests))
    assert a.turn_revisions == [f"{1:064x}", f"{2:064x}"]
