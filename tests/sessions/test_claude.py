"""The Claude Code adapter: what a transcript becomes as normalized events."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from records import AT, claude_api_error, claude_assistant, claude_record, write_jsonl

from support import SHARED_FIXTURES
from teamlore.sessions.model import (
    AssistantText,
    Diagnostic,
    Event,
    ProviderNotice,
    SessionMeta,
    ToolCall,
    ToolResult,
    TurnEnd,
    UserTurn,
)
from teamlore.sessions.providers import get_adapter
from teamlore.sessions.providers.claude import ClaudeAdapter, _Parser
from teamlore.sessions.providers.common import parse_guarded
from teamlore.sessions.reader import ReadResult, iter_file_events, read_lines

REPO = Path(__file__).resolve().parents[2]
REAL = SHARED_FIXTURES / "sessions" / "claude"
DATA = Path(__file__).parent / "data" / "claude"
MAIN = DATA / "synthetic-main.jsonl"
SUBAGENT = DATA / "synthetic-main" / "subagents" / "agent-a1b2c3d.jsonl"
COMPACT_AGENT = DATA / "synthetic-main" / "subagents" / "agent-acompact-0f0f0f.jsonl"
SID = "11111111-2222-4333-8444-555555555555"


def events(path: Path) -> list[Event]:
    return list(iter_file_events(ClaudeAdapter(), path))


T = TypeVar("T")


def of(evs: list[Event], cls: type[T]) -> list[T]:
    return [e for e in evs if isinstance(e, cls)]


def merged_meta(evs: list[Event]) -> dict[str, Any]:
    """Session facts as the indexer keeps them: the first non-None value of each field."""
    facts: dict[str, Any] = {}
    for meta in of(evs, SessionMeta):
        for name in SessionMeta.__slots__:
            value = getattr(meta, name)
            if value is not None:
                facts.setdefault(name, value)
    return facts


def real(name: str) -> Path:
    path = REAL / name
    if not path.exists():
        pytest.skip(f"real fixtures not present at {path}")
    return path


def results_by_call(evs: list[Event]) -> dict[str, ToolResult]:
    return {r.call_id: r for r in of(evs, ToolResult)}


def calls_by_id(evs: list[Event]) -> dict[str, ToolCall]:
    return {c.call_id: c for c in of(evs, ToolCall)}


# -- synthetic transcript: one record of every kind ---------------------------------------


def test_registered_under_its_provider_name() -> None:
    assert isinstance(get_adapter("claude"), ClaudeAdapter)
    assert ClaudeAdapter.provider == "claude"


def test_session_facts_come_from_the_records() -> None:
    facts = merged_meta(events(MAIN))
    assert facts == {
        "provider_session_id": SID,
        "cwd": "/home/dev/shop",
        "git_branch": "feature/cart",
        "client_version": "2.1.112",
        "started_at": "2026-03-01T10:00:00.000Z",
        "model": "claude-opus-4-7",
        "title": "Fix cart rounding",
    }


def test_only_human_prompts_open_turns() -> None:
    turns = of(events(MAIN), UserTurn)
    assert [t.text for t in turns] == [
        "Fix the cart total rounding bug",  # system reminder stripped
        "[image: image/png, 1032 bytes]\nDoes this screenshot show the new total?",  # IDE context
        "Now also update the changelog",
    ]
    assert turns[0].at == "2026-03-01T10:00:00.000Z"


def test_assistant_text_skips_thinking_and_is_never_duplicated() -> None:
    texts = [t.text for t in of(events(MAIN), AssistantText)]
    assert texts == [
        "I'll run the tests first.",
        "Rounding fixed in cart.py.",
        "The background job finished.",
        "Yes: the total reads 10.99.",  # also re-logged later under the same message id
    ]


def test_tool_calls_are_classified_by_family() -> None:
    calls = calls_by_id(events(MAIN))
    assert {c.name: c.family for c in calls.values()} == {
        "Bash": "shell",
        "Edit": "edit",
        "Write": "edit",
        "Read": "read",
        "Grep": "search",
        "WebFetch": "web",
        "mcp__tracker__get_issue": "mcp",
        "mcp__browser__screenshot": "mcp",
        "Task": "agent",
        "TodoWrite": "other",
    }
    assert calls["toolu_bash_ok"].command == "pytest -q tests/test_cart.py"
    assert calls["toolu_edit"].paths_written == ["/home/dev/shop/cart.py"]
    assert calls["toolu_write"].paths_written == ["/home/dev/shop/CHANGELOG.md"]
    assert calls["toolu_read"].paths_read == ["/home/dev/shop/README.md"]
    assert calls["toolu_read"].paths_written == []
    assert calls["toolu_task"].input["subagent_type"] == "general-purpose"


def test_bash_exit_codes_and_errors() -> None:
    results = results_by_call(events(MAIN))
    ok, failed = results["toolu_bash_ok"], results["toolu_bash_fail"]
    assert (ok.output, ok.exit_code, ok.is_error) == ("3 passed in 0.10s", 0, False)
    assert (failed.exit_code, failed.is_error) == (2, True)
    assert failed.output.startswith("Exit code 2\n")
    interrupted = results["toolu_write"]
    assert (interrupted.is_error, interrupted.exit_code) == (True, None)
    assert results["toolu_fetch"].is_error is True
    assert results["toolu_grep"].is_error is False  # an absent flag means success (§1.5)
    assert results["toolu_read"].exit_code is None  # only Bash has exit codes


def test_results_are_text_never_whole_files_or_image_data() -> None:
    evs = events(MAIN)
    results = results_by_call(evs)
    assert results["toolu_edit"].output == "The file /home/dev/shop/cart.py has been updated."
    assert results["toolu_task"].output.startswith(
        "Found round_money() in money.py\nagentId: a1b2c3d"
    )
    assert results["toolu_mcp"].output == "Issue 42: rounding"
    assert results["toolu_shot"].output == "[image: image/png, 1032 bytes]"
    screenshot = json.loads(
        next(x for x in MAIN.read_text().splitlines() if "toolu_shot" in x and "tool_result" in x)
    )
    image_data = screenshot["message"]["content"][0]["content"][0]["source"]["data"]
    everything = repr(evs)
    assert image_data[:64] not in everything
    assert "ORIGINAL-FILE-BODY" not in everything


def test_turn_ends_follow_the_recorded_end_of_turn() -> None:
    evs = events(MAIN)
    assert len(of(evs, TurnEnd)) == 4  # stop hook + duration once, woken turn, deferred, interrupt
    # turn_duration was written before the last text block of its response: the end waits for it
    final = next(
        i for i, e in enumerate(evs) if getattr(e, "text", "") == "Yes: the total reads 10.99."
    )
    ends = [i for i, e in enumerate(evs) if isinstance(e, TurnEnd)]
    assert ends[2] == final + 1
    # the interrupt marker ends the last turn
    last_turn = max(i for i, e in enumerate(evs) if isinstance(e, UserTurn))
    assert ends[3] > last_turn


def test_one_turn_end_for_a_stop_hook_followed_by_turn_duration() -> None:
    evs = events(MAIN)
    first_end = next(i for i, e in enumerate(evs) if isinstance(e, TurnEnd))
    assert getattr(evs[first_end - 1], "text", None) == "Rounding fixed in cart.py."
    assert of(evs, TurnEnd)[0].at == "2026-03-01T10:00:12.000Z"
    assert not isinstance(evs[first_end + 1], TurnEnd)


def test_unknown_record_types_are_diagnosed() -> None:
    diagnostics = of(events(MAIN), Diagnostic)
    assert [(d.code, d.line) for d in diagnostics] == [("unknown-record", 53)]
    assert "brand-new-kind" in diagnostics[0].message


def test_inline_sidechain_records_do_not_enter_the_main_session() -> None:
    assert "SIDECHAIN TEXT" not in repr(events(MAIN))


def test_subagent_file_is_its_own_session_linked_to_its_parent() -> None:
    evs = events(SUBAGENT)
    facts = merged_meta(evs)
    assert facts["provider_session_id"] == f"{SID}/agent-a1b2c3d"
    assert facts["parent_session_id"] == SID
    assert facts["agent_id"] == "a1b2c3d"
    assert facts["model"] == "claude-sonnet-4-5"
    assert [t.text for t in of(evs, UserTurn)] == ["Find rounding helpers"]
    assert [c.family for c in of(evs, ToolCall)] == ["search"]
    assert [t.text for t in of(evs, AssistantText)] == ["Found round_money() in money.py"]


def test_compaction_summariser_file_yields_only_session_facts() -> None:
    evs = events(COMPACT_AGENT)
    assert all(isinstance(e, SessionMeta) for e in evs)
    assert merged_meta(evs)["agent_id"] == "acompact-0f0f0f"


def test_prompt_split_over_records_with_one_timestamp_is_one_turn(tmp_path: Path) -> None:
    path = tmp_path / "split.jsonl"
    lines = MAIN.read_text().splitlines()
    # the split image + text records alone, without the combined record before them
    path.write_text("\n".join([lines[2], lines[44], lines[45]]) + "\n")
    turns = of(events(path), UserTurn)
    assert [t.text for t in turns] == [
        "Fix the cart total rounding bug",
        "[image: image/png, 1032 bytes]\nDoes this screenshot show the new total?",
    ]


def test_discover_finds_main_and_subagent_transcripts(tmp_path: Path) -> None:
    adapter = ClaudeAdapter()
    found = list(adapter.discover(DATA))
    assert found == [str(SUBAGENT), str(COMPACT_AGENT), str(MAIN)]
    assert list(adapter.discover(MAIN)) == [str(MAIN)]
    assert list(adapter.discover(tmp_path / "missing")) == []


def test_default_root_honours_claude_config_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert ClaudeAdapter().default_roots() == [tmp_path / "cfg" / "projects"]
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert ClaudeAdapter().default_roots() == [tmp_path / "home" / ".claude" / "projects"]


@pytest.mark.parametrize(
    "record",
    [
        5,
        ["user"],
        {"message": {}},
        {"type": 7},
        {"type": "user", "sessionId": SID},
        {"type": "user", "message": {"role": "user", "content": 5}},
        {"type": "assistant", "message": {"content": {"type": "text"}}},
        {
            "type": "assistant",
            "message": {"id": "m", "content": [{"type": "tool_use", "input": {}}]},
        },
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": "x"}]}},
    ],
)
def test_malformed_records_become_bad_record_diagnostics(record: Any) -> None:
    adapter = ClaudeAdapter()
    out = list(adapter.parse(record, 9, adapter.new_state(MAIN)))
    assert [(e.code, e.line) for e in out if isinstance(e, Diagnostic)] == [("bad-record", 9)]


# -- resumability -------------------------------------------------------------------------


def parse_in_two_parts(path: Path, split: int) -> list[Event]:
    """Lines before `split` in one pass, then the state goes through JSON, then the rest."""
    adapter = ClaudeAdapter()
    state = adapter.new_state(path)
    out: list[Event] = []
    with open(path, "rb") as handle:
        for line in read_lines(handle):
            if line.number == split:
                state = json.loads(json.dumps(state))
            if line.record is not None:
                out.extend(adapter.parse(line.record, line.number, state))
            elif line.error not in (None, "blank"):
                out.append(Diagnostic(line.error, f"line {line.number}: {line.error}", line.number))
    return out


def test_resuming_at_any_line_gives_the_same_events() -> None:
    whole = events(MAIN)
    for split in range(1, len(MAIN.read_text().splitlines()) + 1):
        assert parse_in_two_parts(MAIN, split) == whole, f"split before line {split}"


def test_appended_lines_parse_alone_with_the_saved_state(tmp_path: Path) -> None:
    """The indexer's path: read to the end, save offset + state, the file grows, read on."""
    data = MAIN.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    live = tmp_path / "live.jsonl"
    live.write_bytes(data[:cut] + data[cut : cut + 40])  # a partial line at the end
    adapter = ClaudeAdapter()
    state = adapter.new_state(live)
    out: list[Event] = []
    done = ReadResult(0, 0, 0, False)
    with open(live, "rb") as handle:
        for line in read_lines(handle, result=done):
            out.extend(adapter.parse(line.record, line.number, state))
    assert done.pending_partial and done.resume_offset == cut
    saved = json.dumps(state)
    assert len(saved) < 4096
    live.write_bytes(data)
    state = json.loads(saved)
    with open(live, "rb") as handle:
        for line in read_lines(
            handle, start_offset=done.resume_offset, start_line=done.resume_line
        ):
            out.extend(adapter.parse(line.record, line.number, state))
    assert out == events(MAIN)


# -- property: parse never raises ---------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
block_types = st.sampled_from(["text", "image", "tool_use", "tool_result", "thinking", "x"])
blocks = st.fixed_dictionaries(
    {"type": block_types},
    optional={
        "text": json_values,
        "id": st.sampled_from(["t1", "t2"]) | json_values,
        "name": st.sampled_from(["Bash", "Edit", "Read", "mcp__a__b"]) | json_values,
        "input": json_values,
        "tool_use_id": st.sampled_from(["t1", "t2"]) | json_values,
        "content": json_values | st.lists(st.fixed_dictionaries({"type": block_types}), max_size=2),
        "is_error": json_values,
        "source": json_values,
    },
)
records = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "system", "summary", "progress", "zzz"])},
    optional={
        "message": st.fixed_dictionaries(
            {},
            optional={
                "id": json_values,
                "model": json_values,
                "content": json_values | st.lists(blocks, max_size=3),
            },
        )
        | json_values,
        "timestamp": st.sampled_from(["2026-01-01T00:00:00.000Z"]) | json_values,
        "sessionId": json_values,
        "isSidechain": json_values,
        "agentId": json_values,
        "isMeta": json_values,
        "subtype": st.sampled_from(["turn_duration", "stop_hook_summary"]) | json_values,
        "toolUseResult": json_values,
        "summary": json_values,
        "cwd": json_values,
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(records, records, json_values), max_size=8))
def test_parse_never_raises_and_state_stays_json(stream: list[Any]) -> None:
    adapter = ClaudeAdapter()
    state = adapter.new_state(SUBAGENT)
    for number, record in enumerate(stream, 1):
        out = list(adapter.parse(record, number, state))
        assert not [e for e in out if isinstance(e, Diagnostic) and e.code == "adapter-error"]
        state = json.loads(json.dumps(state))


# -- property: records told apart early are those the parser passes over -------------------

# a record that sends every session fact a conversation record repeats
ENVELOPE = claude_record(
    "progress", None, session_id=SID, uuid="u0", gitBranch="main", version="2.1.0", data={}
)
quiet_records = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                *("progress", "attachment", "queue-operation", "file-history-snapshot"),
                *("last-prompt", "summary", "ai-title", "api-request"),
            ]
        )
    },
    optional={
        "isSidechain": st.booleans(),
        "sessionId": json_values,
        "timestamp": st.sampled_from(["2026-01-01T00:00:00.000Z"]) | json_values,
        "summary": json_values,
    },
)


# records that leave a prompt or a turn end waiting for the next record, and what follows them
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
turn_records = st.sampled_from(
    [
        claude_record("user", "a prompt", session_id=SID, uuid="p1"),
        claude_record("user", [IMAGE], session_id=SID, uuid="p2"),
        {**claude_record("user", [IMAGE], session_id=SID, uuid="p3"), "timestamp": None},
        {"type": "system", "subtype": "turn_duration", "sessionId": SID, "timestamp": AT},
        claude_record(
            "assistant", [{"type": "thinking", "thinking": "hm"}], session_id=SID, uuid="a1"
        ),
        claude_assistant("an answer", session_id=SID, uuid="a2", message_id="m1"),
    ]
)


def _same_as_the_parser(stream: list[Any], path: Path) -> None:
    adapter = ClaudeAdapter()
    fast, general = adapter.new_state(path), adapter.new_state(path)
    for number, record in enumerate(stream, 1):
        expected = parse_guarded(_Parser, record, number, general)
        assert adapter.parse(record, number, fast) == expected, f"record {number}"
        assert fast == general, f"state after record {number}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(records, turn_records, quiet_records, quiet_records), max_size=12),
    st.sampled_from([MAIN, SUBAGENT, COMPACT_AGENT]),
    st.booleans(),
)
def test_records_told_apart_early_yield_what_the_parser_yields(
    stream: list[Any], path: Path, enveloped: bool
) -> None:
    _same_as_the_parser([ENVELOPE, *stream] if enveloped else stream, path)


@pytest.mark.parametrize(
    "path", [MAIN, SUBAGENT, COMPACT_AGENT, *sorted(REAL.glob("*.jsonl"))], ids=lambda p: p.name
)
def test_fixtures_told_apart_early_yield_what_the_parser_yields(path: Path) -> None:
    with open(path, "rb") as handle:
        _same_as_the_parser(
            [line.record for line in read_lines(handle) if line.error is None], path
        )


# -- the real transcripts -----------------------------------------------------------------

REAL_FACTS = {
    # file: (session id, cwd, user turns, turn ends, shell calls)
    "entire-cli-2.0.64.jsonl": (
        "cde341db-b80a-44f5-b0f2-94db2ef7a164",
        "/Users/paul/src/entireio/cli",
        2,
        1,
        36,
    ),
    "entire-cli-2.0.76.jsonl": (
        "f6833005-7be4-4178-bb37-a0e9feadc36b",
        "/Users/soph/Work/entire/devenv/cli",
        4,
        2,
        54,
    ),
    "entire-cli-2.1.12.jsonl": (
        "85cc202e-0e74-46ce-a485-e5fcd11f7a8c",
        "/Users/alex/workspace/cli",
        2,
        1,
        13,
    ),
    "fundwise-2.1.121.jsonl": (
        "d4c1bac0-628a-48b6-983e-425faf07a208",
        "/Users/sarthiborkar/Build/FundWise",
        3,
        2,
        36,
    ),
    "moredip-0ccf1a04.jsonl": (
        "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68",
        "/Users/pete/tmp/claude-code-sessions",
        3,
        3,
        1,
    ),
    "moredip-images-in-user-messages.jsonl": (
        "47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c",
        "/Users/pete/git/moredip/session-share",
        2,
        0,
        2,
    ),
    "posthog-dashboard-2.1.112.jsonl": (
        "0c182e15-59de-4856-8a94-00f26880354c",
        "/Users/linhungfan",
        15,
        11,
        69,
    ),
    "spotter-ae4a77f8.jsonl": (
        "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
        "/home/USER/projects/spotter-worktrees/spotter-4te",
        2,
        1,
        95,
    ),
}


@pytest.mark.fixtures
@pytest.mark.parametrize("name", sorted(REAL_FACTS))
def test_real_transcript_parses_cleanly(name: str) -> None:
    evs = events(real(name))
    session_id, cwd, turns, ends, shell = REAL_FACTS[name]
    facts = merged_meta(evs)
    assert (facts["provider_session_id"], facts["cwd"]) == (session_id, cwd)
    assert "parent_session_id" not in facts
    assert len(of(evs, UserTurn)) == turns
    assert len(of(evs, TurnEnd)) == ends
    assert sum(1 for c in of(evs, ToolCall) if c.family == "shell") == shell
    codes = Counter(d.code for d in of(evs, Diagnostic))
    expected = {"bad-json": 2} if name.startswith("moredip-images") else {}
    assert dict(codes) == expected  # the two `//` comment lines, reported by the reader
    assert all(t.text.strip() for t in of(evs, UserTurn))
    assert not [t for t in of(evs, UserTurn) if t.text.startswith(("<", "[Request interrupted"))]


@pytest.mark.fixtures
def test_real_commit_command_and_its_exit_code() -> None:
    evs = events(real("entire-cli-2.1.12.jsonl"))
    calls = calls_by_id(evs)
    commit = next(r for r in of(evs, ToolResult) if "[fix-resume-test-hanging a7129d7]" in r.output)
    command = calls[commit.call_id].command or ""
    assert command.startswith("git add -A && git commit -m")
    assert (commit.exit_code, commit.is_error) == (0, False)
    edits = [c for c in calls.values() if c.name == "Edit"]
    assert edits[0].paths_written == [
        "/Users/alex/workspace/cli/cmd/entire/cli/integration_test/testenv.go"
    ]
    assert [t.text for t in of(evs, UserTurn)][1] == "push and create a PR"


@pytest.mark.fixtures
def test_real_failed_commands_carry_their_exit_code() -> None:
    evs = events(real("entire-cli-2.0.64.jsonl"))
    calls = calls_by_id(evs)
    failed = {calls[r.call_id].command: r.exit_code for r in of(evs, ToolResult) if r.exit_code}
    assert failed["mise run fmt && mise run lint"] == 1
    assert len([r for r in of(evs, ToolResult) if r.is_error]) == 8
    missing = [r for r in of(evs, ToolResult) if "File does not exist." in r.output]
    assert missing and missing[0].is_error and missing[0].exit_code is None


@pytest.mark.fixtures
def test_real_edit_results_never_carry_the_original_file() -> None:
    path = real("entire-cli-2.1.12.jsonl")
    originals = []
    for raw in path.read_bytes().splitlines():
        structured = orjson.loads(raw).get("toolUseResult")
        if isinstance(structured, dict) and isinstance(structured.get("originalFile"), str):
            originals.append(structured["originalFile"])
    assert len(originals) >= 5
    outputs = [r.output for r in of(events(path), ToolResult)]
    for original in originals:
        assert not any(original[:2000] in out for out in outputs)


@pytest.mark.fixtures
def test_real_pasted_image_becomes_a_placeholder() -> None:
    path = real("moredip-images-in-user-messages.jsonl")
    evs = events(path)
    assert [t.text for t in of(evs, UserTurn)] == [
        "[image: image/png, 24021 bytes]\nwhat's this an image of?",
        "what's the session iD?",
    ]
    raw = orjson.loads(path.read_bytes().splitlines()[4])
    data = raw["message"]["content"][1]["source"]["data"]
    assert data[:64] not in repr(evs)
    # the exchange is re-logged in the file; its text appears once
    assert len(of(evs, AssistantText)) == 3
    assert merged_meta(evs)["title"] == "Friendly Robot Icon Identification"


@pytest.mark.fixtures
def test_real_final_answer_stays_in_its_turn() -> None:
    """posthog writes turn_duration before the final text block of the response."""
    evs = events(real("posthog-dashboard-2.1.112.jsonl"))
    first_end = next(i for i, e in enumerate(evs) if isinstance(e, TurnEnd))
    answer = next(
        i for i, e in enumerate(evs) if isinstance(e, AssistantText) and "我讀完了 doc.md" in e.text
    )
    assert answer < first_end
    assert of(evs, UserTurn)[0].text.startswith(
        "請閱讀/Users/linhungfan/personal_project/weave/doc.md"
    )


@pytest.mark.fixtures
def test_real_task_subagent_links_to_its_parent() -> None:
    main = events(real("spotter-ae4a77f8.jsonl"))
    task = calls_by_id(main)["toolu_01Hf8v1Za7y4af8VUwSR4CXU"]
    assert (task.name, task.family) == ("Task", "agent")
    assert "agentId: aac57f5" in results_by_call(main)[task.call_id].output
    sub = events(real("spotter-ae4a77f8/subagents/agent-aac57f5.jsonl"))
    facts = merged_meta(sub)
    assert facts["provider_session_id"] == "ae4a77f8-aedd-4bc1-888f-c94edc91af04/agent-aac57f5"
    assert facts["parent_session_id"] == "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    assert facts["model"] == "claude-sonnet-4-5-20250929"
    assert len(of(sub, UserTurn)) == 1
    assert Counter(c.family for c in of(sub, ToolCall)) == {"web": 12}
    assert not of(sub, Diagnostic)
    compact = events(real("spotter-ae4a77f8/subagents/agent-acompact-946d2b.jsonl"))
    assert all(isinstance(e, SessionMeta) for e in compact)


@pytest.mark.fixtures
@pytest.mark.parametrize("agent", ["a5bdbc1", "a9cad17", "aa5ef13", "ac27727", "afbbf75"])
def test_real_background_subagents(agent: str) -> None:
    evs = events(real(f"moredip-0ccf1a04/subagents/agent-{agent}.jsonl"))
    facts = merged_meta(evs)
    assert facts["provider_session_id"] == f"0ccf1a04-1b4c-43b6-8aa5-79e41db43a68/agent-{agent}"
    assert facts["agent_id"] == agent
    assert len(of(evs, UserTurn)) == 1
    assert [c.name for c in of(evs, ToolCall)] == ["WebSearch"]
    assert not of(evs, Diagnostic)


@pytest.mark.fixtures
@pytest.mark.parametrize("name", ["posthog-dashboard-2.1.112.jsonl", "spotter-ae4a77f8.jsonl"])
def test_real_transcript_resumes_mid_file(name: str) -> None:
    path = real(name)
    count = len(path.read_bytes().splitlines())
    whole = events(path)
    for split in (2, count // 3, count // 2, count - 1):
        assert parse_in_two_parts(path, split) == whole


def test_bookkeeping_records_of_current_versions_are_skipped_without_a_diagnostic(
    tmp_path: Path,
) -> None:
    ids = {"session_id": "4f1c2d3e-0000-4000-8000-000000000003"}
    records = [
        claude_record("user", "hello", uuid="u1", **ids),
        *(
            {"type": kind, "sessionId": ids["session_id"], "timestamp": "2026-01-01T00:00:01Z"}
            for kind in (
                "atis-latch",
                "api-request",
                "api-request-shape",
                "api-request-blob",
                "tools-used",
                "cost-state",
                "mode",
            )
        ),
        claude_record("assistant", [{"type": "text", "text": "hi"}], uuid="a1", **ids),
    ]
    evs = events(write_jsonl(tmp_path / "s.jsonl", records))
    assert of(evs, Diagnostic) == []
    assert [e.text for e in of(evs, UserTurn)] == ["hello"]


def test_messages_the_client_writes_itself_are_notices_not_assistant_text(tmp_path: Path) -> None:
    ids = {"session_id": "4f1c2d3e-0000-4000-8000-000000000004"}
    records = [
        claude_record("user", "hello", uuid="u1", **ids),
        claude_api_error("API Error: 529 Overloaded", uuid="a1", **ids),
        claude_assistant("No response requested.", uuid="a2", model="<synthetic>", **ids),
        claude_assistant("Real words.", uuid="a3", **ids),
    ]
    evs = events(write_jsonl(tmp_path / "s.jsonl", records))
    assert [(e.kind, e.text) for e in of(evs, ProviderNotice)] == [
        ("api-error", "API Error: 529 Overloaded"),
        ("synthetic", "No response requested."),
    ]
    assert [e.text for e in of(evs, AssistantText)] == ["Real words."]
    assert [e.model for e in of(evs, SessionMeta) if e.model] == ["claude-sonnet-4-5"]


CURRENT_CLI = REPO / "tests" / "fixtures" / "sessions" / "claude" / "-home-dev-project"


def test_a_claude_p_turn_ends_when_its_process_ends() -> None:
    """`claude -p` without a Stop hook writes no end record: its turn ends at `cost-state`, which
    the client writes as its process ends (the committed fixture: two `claude -p` runs of
    2.1.332, an answer ending `end_turn`, then a resumed run whose API call failed)."""
    [path] = CURRENT_CLI.glob("*.jsonl")
    evs = events(path)
    kinds = [type(e).__name__ for e in evs if isinstance(e, UserTurn | TurnEnd | ProviderNotice)]
    assert kinds == ["UserTurn", "TurnEnd", "UserTurn", "ProviderNotice", "TurnEnd"]


def _end_turn(text: str, uuid: str, **ids: Any) -> dict[str, Any]:
    record = claude_assistant(text, uuid=uuid, **ids)
    record["message"]["stop_reason"] = "end_turn"
    return record


def test_an_end_turn_answer_alone_does_not_end_the_turn(tmp_path: Path) -> None:
    """Interactive sessions go on after an `end_turn` answer: a background task's notification
    wakes the agent in the same turn (posthog-dashboard-2.1.112 holds 77). Only the process
    ending (`cost-state`) after such an answer ends it; not after a call left waiting."""
    ids = {"session_id": "4f1c2d3e-0000-4000-8000-000000000005"}
    side = {"sessionId": ids["session_id"]}
    calling = claude_record(
        "assistant",
        [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}],
        uuid="a3",
        **ids,
    )
    calling["message"].update({"id": "m3", "stop_reason": "tool_use"})
    records = [
        claude_record("user", "watch the build", uuid="u1", **ids),
        _end_turn("Started it in the background.", "a1", **ids),
        {"type": "last-prompt", "lastPrompt": "watch the build", **side},
        {"type": "queue-operation", "operation": "enqueue", **side},
        claude_record("user", "<task-notification>\n<task-id>b1</task-id>", uuid="u2", **ids),
        _end_turn("The build passed.", "a2", **ids),
        {"type": "cost-state", "totalCostUSD": 0.1, **side},
        claude_record("user", "now deploy", uuid="u3", **ids),
        calling,
        {"type": "cost-state", "totalCostUSD": 0.2, **side},  # cut off: the call has no result
    ]
    evs = events(write_jsonl(tmp_path / "s.jsonl", records))
    assert of(evs, Diagnostic) == []
    kinds = [type(e).__name__ for e in evs if not isinstance(e, SessionMeta)]
    assert kinds == [
        "UserTurn",
        "AssistantText",
        "AssistantText",
        "TurnEnd",
        "UserTurn",
        "ToolCall",
    ]
