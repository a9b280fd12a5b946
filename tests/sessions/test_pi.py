"""The Pi coding agent adapter: what a Pi session file becomes as normalized events."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import SHARED_FIXTURES
from teamlore.sessions.model import (
    AssistantText,
    Diagnostic,
    Event,
    SessionMeta,
    ToolCall,
    ToolResult,
    TurnEnd,
    UserTurn,
)
from teamlore.sessions.providers import get_adapter
from teamlore.sessions.providers.pi import PiAdapter
from teamlore.sessions.reader import iter_file_events, read_lines

REPO = Path(__file__).resolve().parents[2]
REAL = SHARED_FIXTURES / "sessions" / "pi"
SYNTHETIC = Path(__file__).parent / "data" / "pi" / "synthetic.jsonl"

T = TypeVar("T")


def events(path: Path) -> list[Event]:
    return list(iter_file_events(PiAdapter(), path))


def of(evs: list[Event], cls: type[T]) -> list[T]:
    return [e for e in evs if isinstance(e, cls)]


def merged_meta(evs: list[Event]) -> dict[str, Any]:
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


def test_registered_under_its_provider_name() -> None:
    assert isinstance(get_adapter("pi"), PiAdapter)


def test_session_header_gives_the_session_facts() -> None:
    assert merged_meta(events(SYNTHETIC)) == {
        "provider_session_id": "9f0e8d7c-6b5a-4321-8000-abcdefabcdef",
        "cwd": "/home/dev/tool",
        "model": "claude-sonnet-4-5",  # the header's model; a later model_change does not win
        "started_at": "2025-11-20T10:00:00.000Z",
        "title": "Parser fix",  # session_info name
    }


def test_user_messages_are_turns_with_image_placeholders() -> None:
    turns = of(events(SYNTHETIC), UserTurn)
    assert [t.text for t in turns] == [
        "run the tests and fix the parser",
        "what does this screenshot show?\n[image: image/png, 512 bytes]",
        "commit it",  # string content
    ]
    assert turns[0].at == "2025-11-20T10:00:02.000Z"


def test_assistant_text_excludes_thinking() -> None:
    texts = [t.text for t in of(events(SYNTHETIC), AssistantText)]
    assert texts == [
        "Running tests.",
        "Fixed the parser; checks pass.",
        "Committing.",
        "Committed.",
    ]


def test_tool_calls_families_and_paths() -> None:
    calls = {c.call_id: c for c in of(events(SYNTHETIC), ToolCall)}
    assert {k: c.family for k, c in calls.items()} == {
        "call_ok": "shell",
        "call_fail": "shell",
        "call_read": "read",
        "call_edit": "edit",
        "call_write": "edit",
        "call_other": "other",
        "bash:16": "shell",
        "call_commit": "shell",
    }
    assert calls["call_ok"].command == "npm test"
    assert calls["call_edit"].paths_written == ["src/parser.ts"]
    assert calls["call_write"].paths_written == ["src/new.ts"]
    assert calls["call_read"].paths_read == ["src/parser.ts"]
    assert calls["bash:16"].command == "git status --short"


def test_tool_results_exit_codes() -> None:
    results = {r.call_id: r for r in of(events(SYNTHETIC), ToolResult)}
    assert (results["call_ok"].exit_code, results["call_ok"].is_error) == (0, False)
    assert (results["call_fail"].exit_code, results["call_fail"].is_error) == (2, True)
    assert results["call_fail"].output.endswith("Command exited with code 2")
    assert (results["call_edit"].exit_code, results["call_edit"].is_error) == (None, False)
    assert results["call_other"].is_error is True
    user_command = results["bash:16"]
    assert (user_command.exit_code, user_command.is_error) == (0, False)
    assert user_command.output == " M src/parser.ts\n"
    assert "[main 1a2b3c4] fix parser" in results["call_commit"].output


def test_stop_aborted_and_error_end_the_turn() -> None:
    evs = events(SYNTHETIC)
    kinds = [type(e).__name__ for e in evs if not isinstance(e, (SessionMeta, Diagnostic))]
    # turn 1 ends at `stop`, turn 2 at `aborted`, turn 3 at `stop`; never after a `toolUse`
    assert kinds.count("TurnEnd") == 3
    ends = [i for i, k in enumerate(kinds) if k == "TurnEnd"]
    turns = [i for i, k in enumerate(kinds) if k == "UserTurn"]
    assert turns[0] < ends[0] < turns[1] < ends[1] < turns[2] < ends[2]
    assert kinds[ends[0] - 1] == "AssistantText"


def test_compaction_and_settings_entries_are_not_turns() -> None:
    evs = events(SYNTHETIC)
    assert "Context Checkpoint" not in repr(evs)
    assert [(d.code, d.line) for d in of(evs, Diagnostic)] == [
        ("unknown-record", 24),
        ("bad-record", 25),
    ]


def test_default_root_and_discovery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert PiAdapter().default_roots() == [tmp_path / ".pi" / "agent" / "sessions"]
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi"))
    assert PiAdapter().default_roots() == [tmp_path / "pi" / "sessions"]
    folder = tmp_path / "sessions" / "--home-dev-tool--"
    folder.mkdir(parents=True)
    session = folder / "2025-11-20T10-00-00-000Z_9f0e8d7c.jsonl"
    session.write_bytes(SYNTHETIC.read_bytes())
    (folder / "notes.txt").write_text("not a session")
    assert list(PiAdapter().discover(tmp_path / "sessions")) == [str(session)]
    assert list(PiAdapter().discover(session)) == [str(session)]


@pytest.mark.parametrize(
    "record",
    [
        "text",
        {"type": None},
        {"type": "session", "cwd": "/x"},
        {"type": "message", "message": "hi"},
        {"type": "message", "message": {"role": "user", "content": 3}},
        {"type": "message", "message": {"role": "assistant", "content": {"a": 1}}},
        {"type": "message", "message": {"role": "assistant", "content": [{"type": "toolCall"}]}},
        {"type": "message", "message": {"role": "toolResult", "content": []}},
        {"type": "message", "message": {"role": "bashExecution", "exitCode": 1}},
        {"type": "message", "message": {"role": "robot"}},
    ],
)
def test_malformed_records_become_bad_record_diagnostics(record: Any) -> None:
    adapter = PiAdapter()
    out = list(adapter.parse(record, 4, adapter.new_state(SYNTHETIC)))
    assert [(e.code, e.line) for e in out if isinstance(e, Diagnostic)] == [("bad-record", 4)]


def parse_in_two_parts(path: Path, split: int) -> list[Event]:
    adapter = PiAdapter()
    state = adapter.new_state(path)
    out: list[Event] = []
    with open(path, "rb") as handle:
        for line in read_lines(handle):
            if line.number == split:
                state = json.loads(json.dumps(state))
            if line.record is not None:
                out.extend(adapter.parse(line.record, line.number, state))
    return out


def test_resuming_at_any_line_gives_the_same_events() -> None:
    whole = events(SYNTHETIC)
    for split in range(1, len(SYNTHETIC.read_text().splitlines()) + 1):
        assert parse_in_two_parts(SYNTHETIC, split) == whole, f"split before line {split}"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=15,
)
blocks = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "thinking", "toolCall", "image", "x"])},
    optional={
        "text": json_values,
        "id": json_values,
        "name": st.sampled_from(["bash", "edit", "read"]) | json_values,
        "arguments": json_values,
        "data": json_values,
        "mimeType": json_values,
    },
)
messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "toolResult", "bashExecution"]) | json_values},
    optional={
        "content": st.lists(blocks, max_size=3) | json_values,
        "stopReason": st.sampled_from(["stop", "toolUse", "aborted"]) | json_values,
        "toolCallId": json_values,
        "toolName": json_values,
        "isError": json_values,
        "command": json_values,
        "exitCode": json_values,
        "model": json_values,
    },
)
records = st.fixed_dictionaries(
    {"type": st.sampled_from(["session", "message", "compaction", "model_change"]) | json_values},
    optional={
        "message": st.one_of(messages, messages, json_values),
        "id": json_values,
        "timestamp": json_values,
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(records, records, json_values), max_size=8))
def test_parse_never_raises_and_state_stays_json(stream: list[Any]) -> None:
    adapter = PiAdapter()
    state = adapter.new_state(SYNTHETIC)
    for number, record in enumerate(stream, 1):
        out = list(adapter.parse(record, number, state))
        assert not [e for e in out if isinstance(e, Diagnostic) and e.code == "adapter-error"]
        state = json.loads(json.dumps(state))


# -- the real sessions --------------------------------------------------------------------


@pytest.mark.fixtures
def test_real_branched_session_with_compactions() -> None:
    evs = events(real("pi-mono-before-compaction.jsonl"))
    facts = merged_meta(evs)
    assert facts["provider_session_id"] == "ffae836b-9420-4060-ac13-7745215f90ff"
    assert facts["cwd"] == "/Users/badlogic/workspaces/pi-mono"
    assert facts["started_at"] == "2025-12-09T00:53:29.825Z"  # header: later than the messages
    assert not of(evs, Diagnostic)
    turns = of(evs, UserTurn)
    assert len(turns) == 41
    assert turns[0].text.startswith("alright, read @packages/coding-agent/src/main.ts")
    assert "ok, i hope i haven't lobotimized you by compacting" in [t.text for t in turns]
    assert len(of(evs, TurnEnd)) == 37
    calls = {c.call_id: c for c in of(evs, ToolCall)}
    assert Counter(c.family for c in calls.values()) == {"shell": 175, "edit": 122, "read": 85}
    results = {r.call_id: r for r in of(evs, ToolResult)}
    commit = results["toolu_019dUhnGP7QCwakmDjCPB6zs"]
    assert "[refactor 1507f8b] Add refactoring plan for coding-agent" in commit.output
    assert commit.exit_code == 0
    assert "git add packages/coding-agent/docs/refa" in (calls[commit.call_id].command or "")
    check = results["toolu_01HgmTjFWJJt6P9bvygNxeKM"]
    assert (check.exit_code, check.is_error) == (2, True)
    assert calls["bash:640"].command == "ls"
    assert results["bash:640"].exit_code == 0
    assert calls["toolu_01Xt4pFeRqFqxri1aV3XLAmF"].paths_written == [
        "/Users/badlogic/workspaces/pi-mono/packages/coding-agent/docs/refactor.md"
    ]


@pytest.mark.fixtures
def test_real_large_session() -> None:
    evs = events(real("pi-mono-large-session.jsonl"))
    facts = merged_meta(evs)
    assert facts["provider_session_id"] == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    assert facts["model"] == "claude-sonnet-4-5"
    assert not of(evs, Diagnostic)
    assert len(of(evs, UserTurn)) == 88
    assert len(of(evs, TurnEnd)) == 87
    calls = {c.call_id: c for c in of(evs, ToolCall)}
    assert Counter(c.name for c in calls.values()) == {
        "bash": 192,
        "edit": 146,
        "read": 50,
        "write": 3,
    }
    results = of(evs, ToolResult)
    assert len(results) == 373
    assert sum(1 for r in results if r.is_error) == 19
    grep = next(r for r in results if r.call_id == "toolu_01XrQPnkjYXzpzFGYHBzU2vm")
    assert calls[grep.call_id].command == (
        'grep "borderColor" packages/coding-agent/src/tui/custom-editor.ts'
    )
    assert (grep.exit_code, grep.is_error) == (1, True)
    assert calls["toolu_01WuL7wXYE2pFBxf9HwRvBYq"].paths_written == [
        "packages/coding-agent/src/tui/user-message-selector.ts"
    ]


@pytest.mark.fixtures
@pytest.mark.parametrize("name", ["pi-mono-before-compaction.jsonl", "pi-mono-large-session.jsonl"])
def test_real_session_resumes_mid_file(name: str) -> None:
    path = real(name)
    count = len(path.read_bytes().splitlines())
    whole = events(path)
    for split in (2, count // 2, count - 1):
        assert parse_in_two_parts(path, split) == whole
