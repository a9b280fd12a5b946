"""`chunkBytes` holds for a single big turn: the real rave-era session's first turn (a 5 KB brief
and 94 tool calls, 152 KB of transcript) is cut to the budget — smaller tool excerpts, then
tool events left out from the middle with a note, then the middle of long text — the same way
every time, and stage re-derives the very same task."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support import RAVE_ERA_WINDOW, rave_era_synced
from teamlore.memory.extraction.chunking import (
    ChunkTurn,
    Event,
    chunk_turns,
    payload_event,
    turn_bytes,
)
from teamlore.memory.extraction.prompts.extraction import TRANSCRIPT_PREAMBLE
from teamlore.memory.extraction.recall import load_task_source
from teamlore.memory.store.state_db import open_state_db
from teamlore.ops.registry import OpContext, load_operations
from teamlore.repo.binding import resolve_repository
from teamlore.sessions.index_db import open_index

_MARKER = re.compile(r'<<past-turn index="\d+" evidence-id="[^"]+">>\n\n')


def _recall(repo: Path, home: Path, chunk_bytes: int) -> dict:
    ctx = OpContext(cwd=repo, home=home)
    request = {**RAVE_ERA_WINDOW, "chunkBytes": chunk_bytes}
    return load_operations().get("memory.recall").run(ctx, request)  # type: ignore[no-any-return]


def _turn_text_bytes(transcript: str) -> int:
    """The transcript's bytes the budget counts: its event blocks, without the preamble, the
    `<<past-turn>>` marker lines and the end anchor (chunking.py)."""
    body = transcript.removeprefix(TRANSCRIPT_PREAMBLE + "\n\n")
    body = body.removesuffix("\n\n<<end-of-transcript>>") + "\n\n"
    return len(_MARKER.sub("", body).encode("utf-8"))


@pytest.mark.parametrize("chunk_bytes", [8_192, 16_384])
def test_the_big_real_turn_fits_its_budget_and_stage_re_derives_it(
    tmp_path: Path, home: Path, chunk_bytes: int
) -> None:
    repo = rave_era_synced(tmp_path, home)
    recalled = _recall(repo, home, chunk_bytes)
    first = next(s for s in recalled["sources"] if s["chunk"]["turnRange"]["start"] == 1)
    assert first["chunk"]["turnRange"] == {"start": 1, "end": 1}
    for task in recalled["sources"]:
        turns = [c for c in task["chunk"]["coverage"] if c["sourceKind"] == "turn"]
        assert sum(c["bytes"] for c in turns) <= chunk_bytes
        assert _turn_text_bytes(task["chunk"]["transcript"]) <= chunk_bytes
    transcript = first["chunk"]["transcript"]
    assert "tool events left out by memory-chunker@1 to fit the chunk budget" in transcript
    assert "Raveera is NOT a rave-only platform." in transcript  # the brief's head is kept
    assert "run npm.cmd run build" in transcript  # and its tail
    assert "<<past-assistant>>" in transcript
    # every result shown, whole or excerpted, opens with teamlore's status note
    blocks = [b for s in recalled["sources"] for b in s["chunk"]["transcript"].split("<<past-")]
    results = [b for b in blocks if b.startswith("tool_result>>\n")]
    assert results and all(b.split("\n")[1].startswith("[[result: ") for b in results)
    cut = [c for c in first["chunk"]["coverage"] if c["sourceKind"] == "tool-payload"]
    assert len(cut) > 100 and {c["completeness"] for c in cut} == {"truncated"}

    again = _recall(repo, home, chunk_bytes)
    assert again["sources"] == recalled["sources"]  # deterministic: same chunks, same task ids
    index, state = open_index(home), open_state_db(home)
    try:
        owner = resolve_repository(repo, home=home)
        window = {"start": RAVE_ERA_WINDOW["since"], "end": RAVE_ERA_WINDOW["until"]}
        source = load_task_source(
            index, state, owner, first["taskId"], home=home, time_window=window
        )
        assert not source.stale, source.stale_reasons
        assert source.task == first  # byte for byte what recall issued
    finally:
        index.close()
        state.close()
    batch = {
        "format": "threadshare-memory-candidate-draft-batch@v1",
        "taskId": first["taskId"],
        "binding": first["binding"],
        "candidates": [],
    }
    staged = load_operations().get("memory.stage").run(OpContext(cwd=repo, home=home), batch)
    assert staged["taskId"] == first["taskId"]


def _turn(*events: Event) -> ChunkTurn:
    return ChunkTurn(index=1, revision="0" * 64, events=events)


def test_a_turn_of_many_small_tool_calls_keeps_its_ends_and_names_what_it_left_out() -> None:
    events = [payload_event("user", "fix the build " * 10)]
    for i in range(150):
        events.append(payload_event("tool_call", f"npm run build --step {i} " + "x" * 300))
        events.append(payload_event("tool_result", f"step {i} ok\n" + "y" * 400))
    events.append(payload_event("assistant", "The build passes now."))
    (chunk,) = chunk_turns([_turn(*events)], 8_192)
    assert chunk.bytes == turn_bytes(chunk.turns[0]) <= 8_192
    kept = chunk.turns[0].events
    assert kept[0] == events[0] and kept[-1] == events[-1]  # request and answer whole
    assert kept[1] == events[1] and kept[-2] == events[-2]  # the first and last tool events
    notes = [e for e in kept if "tool events left out" in e.text]
    assert len(notes) == 1
    left_out = [e for e in kept if e.omitted]
    assert notes[0].text.startswith(f"[[{len(left_out) + 1} tool events left out")
    # every payload stays bound and declared, left out or not
    assert chunk.payload_digests == sorted({e.payload_sha256 for e in events})
    declared = {c["ref"] for c in chunk.coverage if c["sourceKind"] == "tool-payload"}
    assert {f"payload:{e.payload_sha256}" for e in [*left_out, *notes]} <= declared
    assert chunk_turns([_turn(*events)], 8_192) == [chunk]


def test_an_excerpted_tool_result_keeps_its_status_note() -> None:
    status = "[[result: error, exit code 1]]"
    result = Event("tool_result", f"{status}\n" + "e" * 60_000, "a" * 64, 60_000)
    (chunk,) = chunk_turns([_turn(payload_event("user", "why"), result)], 8_192)
    cut = chunk.turns[0].events[1]
    assert cut.truncated and cut.text.startswith(f"{status}\neee")
    assert "[\\[result" not in cut.text


def test_a_turn_that_fit_after_the_first_excerpts_is_cut_as_before() -> None:
    big = payload_event("tool_result", "HEAD" + "b" * 60_000 + "TAIL")
    (chunk,) = chunk_turns([_turn(payload_event("user", "why"), big)])
    (_, result) = chunk.turns[0].events
    assert result.truncated and result.text.startswith("HEAD") and result.text.endswith("TAIL")
    assert "head/tail 1024-byte excerpts" in result.text
