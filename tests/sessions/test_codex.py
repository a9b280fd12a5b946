"""The Codex CLI adapter: rollout files of every generation → normalized session events."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from records import (
    codex_event,
    codex_function_call,
    codex_function_output,
    codex_meta,
    codex_record,
    codex_rolled_back,
    codex_turn_aborted,
    codex_user_message,
    write_jsonl,
)

from support import SHARED_FIXTURES, shared_fixtures
from teamlore.sessions.model import (
    AssistantText,
    Diagnostic,
    HistoryCut,
    SessionMeta,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnsRolledBack,
    UserTurn,
)
from teamlore.sessions.providers import codex_records, get_adapter
from teamlore.sessions.providers.codex import CodexAdapter, unknown_counts
from teamlore.sessions.providers.codex_records import parse_exit_code
from teamlore.sessions.reader import ReadResult, iter_file_events, read_lines

DATA = Path(__file__).parent / "data" / "codex"
REPO = Path(__file__).resolve().parents[2]
REAL = SHARED_FIXTURES / "sessions" / "codex"
INLINE_IMAGE = re.compile(r"data:image/[\w.+-]+;base64,[A-Za-z0-9+/]{64}")


def events(path: Path) -> list[Any]:
    return list(iter_file_events(CodexAdapter(), path))


def of(kind: type, evs: list[Any]) -> list[Any]:
    return [e for e in evs if isinstance(e, kind)]


def results_by_call(evs: list[Any]) -> dict[str, ToolResult]:
    """The result that stands for each call: the last one emitted (a later one supersedes)."""
    return {e.call_id: e for e in of(ToolResult, evs)}


def call_by_command(evs: list[Any], command: str) -> ToolCall:
    matches: list[ToolCall] = [c for c in of(ToolCall, evs) if c.command == command]
    assert matches, f"no call with command {command!r}"
    return matches[0]


# ---- registry, roots, discovery ---------------------------------------------------------------


def test_registered_as_the_codex_provider() -> None:
    adapter = get_adapter("codex")
    assert isinstance(adapter, CodexAdapter)
    assert adapter.provider == "codex"


def test_default_roots_honour_codex_home_and_add_archived_sessions_when_present(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    assert CodexAdapter().default_roots() == [tmp_path / "sessions"]
    (tmp_path / "archived_sessions").mkdir()
    assert CodexAdapter().default_roots() == [tmp_path / "sessions", tmp_path / "archived_sessions"]


def test_default_root_without_codex_home_is_under_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert CodexAdapter().default_roots()[0] == tmp_path / ".codex" / "sessions"


def test_discover_finds_rollouts_recursively_and_accepts_any_jsonl_file_root(
    tmp_path: Path,
) -> None:
    day = tmp_path / "2025" / "11" / "17"
    day.mkdir(parents=True)
    rollout = day / "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
    rollout.write_text("{}\n")
    copy = day / "exported-copy.jsonl"
    copy.write_text("{}\n")
    (day / "rollout-x.json").write_text("{}\n")
    (tmp_path / "history.jsonl").write_text("{}\n")  # Codex prompt history, not a session
    adapter = CodexAdapter()
    assert list(adapter.discover(tmp_path)) == [str(copy), str(rollout)]
    exported = tmp_path / "exported-session.jsonl"
    exported.write_text("{}\n")
    assert list(adapter.discover(exported)) == [str(exported)]
    assert list(adapter.discover(tmp_path / "missing")) == []


def test_discover_lists_files_in_the_order_of_sorted_paths(tmp_path: Path) -> None:
    # component by component: `a/z` before `a-b/c` although "-" sorts before "/" as a character
    names = ["a/z.jsonl", "a-b/c.jsonl", "a.b/c.jsonl", "a/b/y.jsonl", "a/b.jsonl", "A/x.jsonl"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n")
    expected = [str(p) for p in sorted(tmp_path / name for name in names)]
    assert list(CodexAdapter().discover(tmp_path)) == expected


def test_discover_newest_first_gives_the_files_modified_last_first(tmp_path: Path) -> None:
    """What doctor's check of the index takes past its cap: the sessions a user most likely
    just wrote, whatever their paths sort as."""
    names = ["2025/11/17/a.jsonl", "2025/11/18/b.jsonl", "2024/01/01/c.jsonl", "d.jsonl"]
    for age, name in enumerate(names):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n")
        os.utime(tmp_path / name, (1_700_000_000 - age, 1_700_000_000 - age))
    (tmp_path / "history.jsonl").write_text("{}\n")  # still not a session

    found = list(CodexAdapter().discover(tmp_path, newest_first=True))

    assert found == [str(tmp_path / name) for name in names]


# ---- legacy (pre-envelope) --------------------------------------------------------------------


def test_legacy_file_header_gives_session_id_branch_and_start() -> None:
    evs = events(DATA / "legacy.jsonl")
    meta = of(SessionMeta, evs)
    assert meta[0].provider_session_id == "11111111-2222-4333-8444-555555555555"
    assert meta[0].git_branch == "feature/x"
    assert meta[0].started_at == "2025-09-10T18:58:38.331Z"
    # cwd only exists inside the injected <environment_context> message
    assert [m.cwd for m in meta if m.cwd] == ["/home/user/projects/demo"]


def test_legacy_user_turns_skip_injected_instructions_and_environment() -> None:
    evs = events(DATA / "legacy.jsonl")
    assert [t.text for t in of(UserTurn, evs)] == [
        "List the files please",
        "What is in this screenshot?\n[image: image/png, 1024 bytes]",
    ]
    assert [a.text for a in of(AssistantText, evs)] == ["I'll list them.", "A gradient."]
    assert not of(Diagnostic, evs)
    assert not of(TurnEnd, evs)  # legacy files record no turn ends


def test_legacy_shell_exit_codes_come_from_json_metadata_and_sandbox_text() -> None:
    evs = events(DATA / "legacy.jsonl")
    results = results_by_call(evs)
    listing = call_by_command(evs, "ls -la")
    assert listing.family == "shell"
    assert listing.input == {"command": ["bash", "-lc", "ls -la"], "timeout_ms": 120000}
    assert results[listing.call_id].exit_code == 0
    assert results[listing.call_id].output == "total 0\nREADME.md\n"  # unwrapped from the JSON
    assert results[listing.call_id].is_error is False
    assert results[call_by_command(evs, "cat missing.txt").call_id].exit_code == 1
    sandboxed = results[call_by_command(evs, "npm test").call_id]
    assert (sandboxed.exit_code, sandboxed.is_error) == (2, True)
    mcp = next(c for c in of(ToolCall, evs) if c.name == "memory__add_observations")
    assert mcp.family == "mcp"
    assert results[mcp.call_id].is_error is True
    assert results[mcp.call_id].exit_code is None


def test_legacy_apply_patch_through_a_shell_heredoc_is_an_edit() -> None:
    evs = events(DATA / "legacy.jsonl")
    edit = [c for c in of(ToolCall, evs) if c.family == "edit"]
    assert len(edit) == 1
    assert edit[0].name == "shell"
    assert edit[0].paths_written == ["docs/notes.md", "src/app.ts"]


def test_legacy_header_gives_the_recorded_repository_and_commit() -> None:
    (meta, *_) = of(SessionMeta, events(DATA / "legacy.jsonl"))
    assert (meta.git_remote, meta.git_commit) == ("git@example.com:x.git", "a" * 40)


def test_session_meta_git_keeps_no_credentials_and_only_full_hashes(tmp_path: Path) -> None:
    git = {
        "commit_hash": "ABCDEF0",  # not a full hash: left out
        "branch": "main",
        "repository_url": "https://ci-bot:ghp_secret@github.com/Me/Proj.git",
    }
    path = write_jsonl(tmp_path / "rollout.jsonl", [codex_meta("s-1", cwd="C:\\w", git=git)])
    (meta,) = of(SessionMeta, events(path))
    assert (meta.git_remote, meta.git_commit) == ("https://github.com/Me/Proj.git", None)
    windows = of(SessionMeta, events(DATA / "windows-0.125.jsonl"))[0]  # `git: {}`
    assert (windows.git_remote, windows.git_commit, windows.git_branch) == (None, None, None)


# ---- 0.58: envelope with JSON outputs ---------------------------------------------------------


def test_058_prompt_is_emitted_once_although_recorded_as_item_and_event() -> None:
    evs = events(DATA / "envelope-0.58.jsonl")
    assert [t.text for t in of(UserTurn, evs)] == ["switch the backend to lmstudio"]
    assert [t.at for t in of(UserTurn, evs)] == ["2025-11-17T21:32:46.911Z"]


def test_058_session_meta_and_model_from_turn_context() -> None:
    evs = events(DATA / "envelope-0.58.jsonl")
    meta = of(SessionMeta, evs)
    assert meta[0] == SessionMeta(
        provider_session_id="019a93b9-0000-7000-8000-000000000058",
        cwd="/home/user/projects/chatbot",
        git_branch="main",
        git_remote="git@example.com:c.git",
        git_commit="b" * 40,
        client_version="0.58.0",
        started_at="2025-11-17T21:30:28.608Z",
    )
    # two turn_contexts with the same model: one SessionMeta
    assert [m.model for m in meta if m.model] == ["gpt-5.1-codex"]


def test_058_reasoning_is_not_assistant_text_and_argv_is_unwrapped() -> None:
    evs = events(DATA / "envelope-0.58.jsonl")
    assert [a.text for a in of(AssistantText, evs)] == ["Switched to LM Studio."]
    search = call_by_command(evs, "rg -n OLLAMA")
    assert results_by_call(evs)[search.call_id].exit_code == 1
    plan = next(c for c in of(ToolCall, evs) if c.name == "update_plan")
    assert plan.family == "other"
    assert plan.input == {"plan": [{"step": "x", "status": "pending"}]}


# ---- 0.60: shell_command text outputs, apply_patch custom tool --------------------------------


def test_060_assistant_text_is_deduplicated_between_event_and_item() -> None:
    evs = events(DATA / "envelope-0.60.jsonl")
    assert [a.text for a in of(AssistantText, evs)] == [
        "Creating the files now.",
        "Done: the board renders.",
    ]


def test_060_exit_code_is_read_from_the_header_not_from_program_output() -> None:
    evs = events(DATA / "envelope-0.60.jsonl")
    result = results_by_call(evs)[call_by_command(evs, "node test.js").call_id]
    assert (result.exit_code, result.is_error) == (1, True)
    assert "AssertionError: Exit code: 0 expected" in result.output


def test_060_apply_patch_custom_tool_paths_and_failures() -> None:
    evs = events(DATA / "envelope-0.60.jsonl")
    patches = [c for c in of(ToolCall, evs) if c.name == "apply_patch"]
    assert [c.family for c in patches] == ["edit", "edit"]
    assert patches[0].paths_written == ["index.html", "old.js", "src/new.js", "junk.txt"]
    results = results_by_call(evs)
    assert (results["call_ap"].exit_code, results["call_ap"].is_error) == (0, False)
    assert results["call_ap2"].is_error is True
    assert results["call_ap2"].exit_code is None


def test_060_turn_aborted_ends_the_turn_and_its_marker_is_not_a_prompt() -> None:
    evs = events(DATA / "envelope-0.60.jsonl")
    assert [t.text for t in of(UserTurn, evs)] == ["make a chess variant", "now add a timer"]
    assert len(of(TurnEnd, evs)) == 1
    assert isinstance(evs[-1], TurnEnd)


# ---- 0.125 on Windows: structured exit codes, unified exec, images ----------------------------


def test_windows_session_keeps_backslash_paths_and_crlf_cyrillic_output() -> None:
    evs = events(DATA / "windows-0.125.jsonl")
    assert of(SessionMeta, evs)[0].cwd == "C:\\Users\\DEV\\proj"
    listing = call_by_command(evs, "Get-ChildItem -Force")
    result = results_by_call(evs)[listing.call_id]
    assert result.output.startswith("Каталог: C:\\Users\\DEV\\proj\r\n")
    assert result.exit_code == 0


def test_exec_command_end_comes_first_and_its_twin_output_is_not_emitted_again() -> None:
    evs = events(DATA / "windows-0.125.jsonl")
    listing = call_by_command(evs, "Get-ChildItem -Force")
    assert len([r for r in of(ToolResult, evs) if r.call_id == listing.call_id]) == 1


def test_running_process_result_is_superseded_by_the_structured_exit_code() -> None:
    evs = events(DATA / "windows-0.125.jsonl")
    build = call_by_command(evs, "npm run build")
    emitted = [r for r in of(ToolResult, evs) if r.call_id == build.call_id]
    assert [(r.exit_code, r.is_error) for r in emitted] == [(None, None), (2, True)]
    poll = next(c for c in of(ToolCall, evs) if c.name == "write_stdin")
    assert poll.family == "shell"
    assert results_by_call(evs)[poll.call_id].exit_code == 2  # "Process exited with code 2"


def test_images_become_placeholders_never_base64() -> None:
    evs = events(DATA / "windows-0.125.jsonl")
    assert of(UserTurn, evs)[0].text == "fix the gallery\n[image: image/png, 1024 bytes]"
    view = next(c for c in of(ToolCall, evs) if c.name == "view_image")
    assert view.family == "read"
    assert view.paths_read == ["C:\\Users\\DEV\\proj\\public\\hero.jpg"]
    assert results_by_call(evs)[view.call_id].output == "[image: image/jpeg, 1024 bytes]"
    assert not any(INLINE_IMAGE.search(repr(e)) for e in evs)


def test_patch_apply_end_and_its_output_give_one_result() -> None:
    evs = events(DATA / "windows-0.125.jsonl")
    fix = [c for c in of(ToolCall, evs) if c.call_id == "call_fix"]
    assert len(fix) == 1
    assert fix[0].paths_written == ["C:\\Users\\DEV\\proj\\src\\gallery.tsx"]
    assert [r.is_error for r in of(ToolResult, evs) if r.call_id == "call_fix"] == [False]


def test_web_search_end_and_item_give_one_web_call() -> None:
    evs = events(DATA / "windows-0.125.jsonl")
    web = [c for c in of(ToolCall, evs) if c.family == "web"]
    assert [(c.call_id, c.input["query"]) for c in web] == [("ws_1", "vite image cache")]


def test_task_complete_is_a_turn_end_and_last_agent_message_is_not_repeated() -> None:
    evs = events(DATA / "windows-0.125.jsonl")
    assert [a.text for a in of(AssistantText, evs)] == [
        "Fixed the gallery; the build still fails on TS2304."
    ]
    assert isinstance(evs[-1], TurnEnd)
    assert evs[-1].at == "2026-04-26T19:21:30.100Z"


# ---- 0.144 code mode, subagents, unknown and malformed records --------------------------------


def test_subagent_source_gives_the_parent_session() -> None:
    meta = of(SessionMeta, events(DATA / "code-mode-0.144.jsonl"))
    assert meta[0].provider_session_id == "019f4ceb-0000-7000-8000-000000000144"
    assert meta[0].parent_session_id == "019f4cea-0000-7000-8000-0000000000aa"
    assert [m.model for m in meta if m.model] == ["gpt-5.6-sol", "gpt-5.6-luna"]


def test_code_mode_exec_cells_are_classified_by_the_tools_they_call() -> None:
    evs = events(DATA / "code-mode-0.144.jsonl")
    calls = {c.call_id: c for c in of(ToolCall, evs)}
    assert calls["call_js1"].family == "shell"
    assert calls["call_js1"].command == "cargo test -p core"
    assert calls["call_js2"].family == "edit"
    assert calls["call_js2"].paths_written == ["crates/core/src/lib.rs", "Cargo.toml"]
    assert calls["call_js3"].family == "other"
    results = results_by_call(evs)
    assert results["call_js1"].is_error is None  # still running
    assert results["call_wait"].output.endswith("test result: ok. 3 passed\n")
    assert results["call_js3"].is_error is True  # Script failed


def test_records_with_nothing_to_index_give_nothing_and_leave_the_state_alone() -> None:
    adapter = CodexAdapter()
    state = adapter.new_state(Path("r.jsonl"))
    before = orjson.dumps(state)
    passed_over = [
        codex_event("token_count", info={"total_token_usage": {"input_tokens": 3}}),
        codex_event("agent_reasoning", text="thinking"),
        codex_record("response_item", {"type": "reasoning", "summary": []}),
        codex_record("response_item", {"type": "ghost_snapshot"}),
    ]
    for number, record in enumerate(passed_over, 1):
        assert adapter.parse(record, number, state) == []
    assert orjson.dumps(state) == before
    # settings are still read from the event that carries them
    settings = codex_event("thread_settings_applied", thread_settings={"model": "gpt-x"})
    assert [m.model for m in of(SessionMeta, adapter.parse(settings, 5, state))] == ["gpt-x"]
    # a malformed type is still a bad record, never passed over
    bad = codex_record("event_msg", {"type": ["token_count"]})
    assert [d.code for d in of(Diagnostic, adapter.parse(bad, 6, state))] == ["bad-record"]


def test_lines_passed_over_unread_are_lines_the_adapter_would_pass_over() -> None:
    """The reader skips undecoded what `CodexAdapter.unread_lines` matches (docs/sessions.md,
    "Lines passed over unread"): on every real and test rollout, each such line is one the
    adapter gives nothing for and that leaves its state alone, and they are a good share."""
    real = shared_fixtures("sessions", "codex")
    adapter = CodexAdapter()
    assert adapter.unread_lines is not None
    matched = total = 0
    for path in sorted([*real.glob("*.jsonl"), *DATA.glob("*.jsonl")]):
        state = adapter.new_state(path)
        for number, raw in enumerate(path.read_bytes().splitlines(), 1):
            total += 1
            if adapter.unread_lines.match(raw) is None:
                continue
            matched += 1
            before = orjson.dumps(state)
            assert adapter.parse(orjson.loads(raw), number, state) == [], (path.name, number)
            assert orjson.dumps(state) == before
    assert matched > total // 4


def test_a_malformed_line_is_reported_unless_it_names_a_kind_with_nothing_to_index(
    tmp_path: Path,
) -> None:
    """The price of not decoding: a broken token count is not reported (nothing would be read
    from it); a broken line of any kind the index uses still is, and numbering goes on."""
    event = b'{"timestamp":"2026-01-02T03:04:05.000Z","type":"event_msg","payload":{"type":'
    path = tmp_path / "rollout.jsonl"
    lines = [
        orjson.dumps(codex_meta("s1")),
        event + b'"token_count","info":',  # cut short
        event + b'"user_message","mess',  # cut short
        orjson.dumps(codex_user_message("after the broken lines")),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    evs = events(path)
    assert [(d.code, d.line) for d in of(Diagnostic, evs)] == [("bad-json", 3)]
    assert [u.text for u in of(UserTurn, evs)] == ["after the broken lines"]


class _DecodesEveryLine(CodexAdapter):
    unread_lines = None


def test_codex_0171_lines_with_an_ordinal_are_passed_over_as_the_older_ones_are(
    tmp_path: Path,
) -> None:
    """Codex 0.171 writes `"ordinal":N` between `timestamp` and `type`: no line was passed over
    unread (token counts, an 11 KB tool search answer), and its tool search items were each an
    `unknown-record` warning. The same events as decoding every line, from the real excerpt and
    a tool search pair in its shape."""
    real = (DATA / "mcp-0.171.jsonl").read_bytes().splitlines()
    stamp = '{"timestamp":"2026-12-06T08:50:14.642Z","ordinal":9,"type":"response_item",'
    search = [
        stamp + '"payload":{"type":"tool_search_call","id":"tsc_1","call_id":"call_0001",'
        '"status":"completed","execution":"client","arguments":{"query":"recall","limit":8}}}',
        stamp.replace(":9,", ":10,") + '"payload":{"type":"tool_search_output","id":"tso_1",'
        '"call_id":"call_0001","status":"completed","execution":"client","tools":[]}}',
    ]
    lines = [*real[:3], *(line.encode() for line in search), *real[3:]]
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    unread = CodexAdapter.unread_lines
    assert unread is not None
    passed_over = [line for line in lines if unread.match(line)]
    assert len(passed_over) >= 4 and all(b'"ordinal":' in line for line in passed_over)
    evs = events(path)
    assert not [d for d in of(Diagnostic, evs) if d.code == "unknown-record"]
    assert evs == list(iter_file_events(_DecodesEveryLine(), path))


def test_lines_of_used_kinds_are_never_passed_over_unread(tmp_path: Path) -> None:
    """Only the start of a line, as Codex writes it, can mark it unread: a used record whose
    text holds such a start, whose kind merely begins like an ignored one, or whose keys come
    in another order is read; an ignored one written with spaces is decoded and passed over.
    The events are those of decoding every line."""
    token_count = orjson.dumps(codex_event("token_count", info=None)).decode()
    reordered = {"type": "event_msg", "payload": {"type": "user_message", "message": "keys"}}
    lines = [
        orjson.dumps(codex_meta("s1")),
        # a used line quoting an ignored one, as text and as an object
        orjson.dumps(
            codex_event("user_message", message=token_count, quoted=orjson.loads(token_count))
        ),
        orjson.dumps(codex_event("token_count_v2", info=None)),  # not an ignored kind
        orjson.dumps({**reordered, "timestamp": "2026-01-02T03:04:05.000Z"}),
        orjson.dumps({"type": "reasoning_v2", "id": "r"}),  # a legacy kind unknown, not unread
        json.dumps(codex_event("token_count", info=None)).encode(),  # spaces: decoded
        token_count.encode(),
        orjson.dumps(codex_user_message("last")),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    unread = CodexAdapter.unread_lines
    assert unread is not None
    assert [unread.match(line) is not None for line in lines] == [*[False] * 6, True, False]

    evs = events(path)

    assert [u.text for u in of(UserTurn, evs)] == [token_count, "keys", "last"]
    unknown = [d.line for d in of(Diagnostic, evs) if d.code == "unknown-record"]
    assert unknown == [3, 5]
    assert evs == list(iter_file_events(_DecodesEveryLine(), path))


def test_code_mode_tool_calls_need_a_word_boundary_before_tools() -> None:
    assert codex_records._code_mode('mytools.exec_command({cmd: "ls"})')[0] == "other"
    assert codex_records._code_mode('x.tools.exec_command({cmd: "ls"})')[:2] == ("shell", "ls")
    assert codex_records._code_mode('étools.exec_command({"cmd": "ls"})')[0] == "other"
    source = 'await tools.exec_command({"cmd": "a"}); tools.exec_command({ cmd : "b\\"c" })'
    assert codex_records._code_mode(source)[:2] == ("shell", 'a\nb"c')


def test_orphan_patch_apply_end_becomes_a_synthetic_edit_call() -> None:
    evs = events(DATA / "code-mode-0.144.jsonl")
    synthetic = next(c for c in of(ToolCall, evs) if c.call_id == "exec-c4844aa4")
    assert (synthetic.name, synthetic.family) == ("apply_patch", "edit")
    assert synthetic.paths_written == [
        "/work/edge/crates/core/src/lib.rs",
        "/work/edge/old.rs",
        "/work/edge/new.rs",
    ]
    assert results_by_call(evs)["exec-c4844aa4"].is_error is False


def test_assistant_dedup_also_works_when_the_item_comes_before_the_event() -> None:
    evs = events(DATA / "code-mode-0.144.jsonl")
    assert [a.text for a in of(AssistantText, evs)] == ["Engine built."]


def test_unknown_kinds_are_one_diagnostic_each_and_counted() -> None:
    adapter = CodexAdapter()
    path = DATA / "code-mode-0.144.jsonl"
    state = adapter.new_state(path)
    diagnostics: list[Diagnostic] = []
    with path.open("rb") as handle:
        for line in read_lines(handle):
            diagnostics += of(Diagnostic, list(adapter.parse(line.record, line.number, state)))
    unknown = [d for d in diagnostics if d.code == "unknown-record"]
    assert [d.line for d in unknown] == [16, 18]
    assert unknown_counts(state) == {"event_msg:brand_new_event": 2, "mystery_type": 1}


def test_malformed_records_are_bad_record_diagnostics_and_parsing_goes_on() -> None:
    evs = events(DATA / "code-mode-0.144.jsonl")
    bad = [d for d in of(Diagnostic, evs) if d.code == "bad-record"]
    assert [d.line for d in bad] == [19, 20, 21]
    assert isinstance(evs[-1], TurnEnd)  # records after them still parse


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
record_types = st.sampled_from(
    ["session_meta", "turn_context", "response_item", "event_msg", "compacted", "other"]
)
payload_types = st.sampled_from(
    [
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
        "local_shell_call",
        "user_message",
        "agent_message",
        "exec_command_end",
        "patch_apply_end",
        "web_search_end",
        "task_complete",
    ]
)
payload_keys = st.sampled_from(
    [
        "role",
        "content",
        "call_id",
        "name",
        "arguments",
        "input",
        "output",
        "message",
        "images",
        "command",
        "changes",
        "action",
        "exit_code",
        "id",
        "cwd",
        "git",
        "source",
        "success",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            json_values,
            st.builds(
                lambda t, p, extra: {"timestamp": "t", "type": t, "payload": {"type": p, **extra}},
                record_types,
                payload_types,
                st.dictionaries(payload_keys, json_values, max_size=5),
            ),
        ),
        max_size=8,
    )
)
def test_parse_never_raises_on_arbitrary_records(records: list[Any]) -> None:
    adapter = CodexAdapter()
    state = adapter.new_state(Path("x.jsonl"))
    for number, record in enumerate(records, 1):
        for event in adapter.parse(record, number, state):
            assert not isinstance(event, Diagnostic) or event.code in (
                "bad-record",
                "unknown-record",
            )
        orjson.dumps(state)


# ---- exit-code parsing per generation ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Exit code: 1\nWall time: 0.1 seconds\nOutput:\nboom\n", 1),  # 0.60+ shell_command
        ("Exit code: 0\r\nWall time: 0.3 seconds\r\nOutput:\r\n", 0),  # CRLF
        ("Chunk ID: 8b\nWall time: 0.0 s\nProcess exited with code 101\nOutput:\n", 101),  # unified
        ("Chunk ID: 8b\nWall time: 1.0 s\nProcess running with session ID 24629\nOutput:\n", None),
        ("failed in sandbox LinuxSeccomp with execution error: denied, exit code: 2, stdout: ", 2),
        ("Output:\nExit code: 3\n", None),  # program output is not the header
        ("Wall time: 1 s\nOutput:\nProcess exited with code 4\n", None),  # nor here
        ("Wall time: 1 s\r\nProcess exited with code 5\r\nOutput:\r\n", 5),
        ("plain text mentioning exit code: 9", None),
        ("", None),
    ],
)
def test_parse_exit_code_by_generation(text: str, code: int | None) -> None:
    assert parse_exit_code(text) == code


@pytest.mark.parametrize(
    ("metadata", "code"),
    [
        ('{"exit_code": 2, "duration_seconds": 0.1}', 2),
        ('{"exit_code": 1.0}', None),  # not an integer
        # beyond 64 bits: the index keeps it as stated (the indexer then refuses the value)
        ('{"exit_code": 123456789012345678901234567890}', 123456789012345678901234567890),
        ('{"exit_code": 2, "exit_code": 7}', 7),  # a repeated key: the last one, as json reads it
        ('{"exit_code": NaN}', None),
    ],
)
def test_wrapped_outputs_read_their_metadata_exit_code(metadata: str, code: int | None) -> None:
    output = '{"output": "caf\\u00e9\\n", "metadata": ' + metadata + "}"
    text, exit_code, _ = codex_records._read_output(output)
    assert (text, exit_code) == ("café\n", code)


# ---- resumability -----------------------------------------------------------------------------


def parse_in_two_parts(path: Path, split_after_line: int) -> list[Any]:
    """Parse lines 1..split, save the state as JSON, then parse the rest from the saved offset
    with a fresh adapter and the reloaded state, the way the indexer resumes."""
    first = CodexAdapter()
    state = first.new_state(path)
    out: list[Any] = []
    offset = 0
    with path.open("rb") as handle:
        for line in read_lines(handle):
            if line.number > split_after_line:
                break
            offset = line.end
            if line.record is not None:
                out += list(first.parse(line.record, line.number, state))
            elif line.error != "blank":
                out.append(
                    Diagnostic(line.error or "", f"line {line.number}: {line.error}", line.number)
                )
    saved = orjson.dumps(state)
    second = CodexAdapter()
    restored = orjson.loads(saved)
    result = ReadResult(0, 0, 0, False)
    with path.open("rb") as handle:
        for line in read_lines(
            handle, start_offset=offset, start_line=split_after_line, result=result
        ):
            if line.record is not None:
                out += list(second.parse(line.record, line.number, restored))
            elif line.error != "blank":
                out.append(
                    Diagnostic(line.error or "", f"line {line.number}: {line.error}", line.number)
                )
    return out


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.jsonl")))
def test_two_part_parse_equals_one_pass_at_every_split(name: str) -> None:
    path = DATA / name
    whole = events(path)
    line_count = path.read_bytes().count(b"\n")
    for split in range(line_count + 1):
        assert parse_in_two_parts(path, split) == whole, f"split after line {split}"


# ---- the real rollouts in ../shared/fixtures --------------------------------------------------

# per file: session id, cwd, branch, client version, user turns, assistant texts, tool calls,
# turn ends, tool calls without a result (file exported mid-turn)
REAL_FACTS: dict[str, tuple[str, str | None, str | None, str | None, int, int, int, int, int]] = {
    "legacy-2025-09.jsonl": (
        "cf4def41-21e0-4b91-adb4-5397c1492084",
        "/home/user/projects/codex-session-viewer",
        "main",
        None,
        45,
        59,
        246,
        0,
        0,
    ),
    "acidicsoil-0.58.0.jsonl": (
        "019a93b9-f380-7600-98ff-940e6b99603c",
        "/home/user/projects/temp/chatbot-ui",
        "main",
        "0.58.0",
        1,
        0,
        39,
        0,
        0,
    ),
    "rtchess-0.60.1.jsonl": (
        "019aad50-a7e6-7422-b7a8-0b384290624f",
        "/Users/pinouchon/code/rtchess",
        None,
        "0.60.1",
        54,
        53,
        298,
        1,
        0,
    ),
    "localpush-0.104.0-sanitized-compaction.jsonl": (
        "019c8a59-e9dd-71f0-9ae3-4079fe9726a9",
        "/redacted/path/59b923df4d",
        "main",
        "0.104.0-alpha.1",
        38,
        255,
        372,
        33,
        0,
    ),
    "trezo-ai-0.120.0.jsonl": (
        "019daa66-5b7b-7b01-b9ce-b527014cc09f",
        "/Users/anmolbhardwaj",
        None,
        "0.120.0",
        2,
        11,
        45,
        1,
        3,
    ),
    "rave-era-0.125.0.jsonl": (
        "019dcb3b-804b-75e3-9f66-6f42ac6139a2",
        "C:\\Users\\YAROSLAV\\RAVE-ERA",
        None,
        "0.125.0",
        7,
        27,
        143,
        6,
        1,
    ),
    "gildore-arena-0.130.0.jsonl": (
        "019e18dc-e2f7-7550-a55a-5fd650b2dc6b",
        "/home/inspiration-gx/Documents/gildore-project/gildore-arena",
        "codex-approach",
        "0.130.0",
        6,
        22,
        95,
        5,
        5,
    ),
    "battle-cities-0.142.4.jsonl": (
        "019f15de-d815-7440-a6de-8068ba05b6b5",
        "C:\\repos\\BattleCity",
        "master",
        "0.142.4",
        1,
        5,
        13,
        0,
        5,
    ),
    "edgerunner-0.144.1.jsonl": (
        "019f4ce9-5831-7e71-ab0a-24a9d7358aab",
        "/Users/akash/Desktop/new",
        None,
        "0.144.1",
        5,
        36,
        225,
        4,
        1,
    ),
}

_real_cache: dict[str, list[Any]] = {}


def real_events(name: str) -> list[Any]:
    if not REAL.is_dir():
        pytest.skip("../shared/fixtures is not available in this checkout")
    if name not in _real_cache:
        _real_cache[name] = events(REAL / name)
    return _real_cache[name]


def test_every_real_fixture_is_covered() -> None:
    if not REAL.is_dir():
        pytest.skip("../shared/fixtures is not available in this checkout")
    assert sorted(p.name for p in REAL.glob("*.jsonl")) == sorted(REAL_FACTS)


@pytest.mark.fixtures
@pytest.mark.parametrize("name", sorted(REAL_FACTS))
def test_real_fixture_counts(name: str) -> None:
    evs = real_events(name)
    session_id, cwd, branch, version, users, texts, calls, ends, unanswered = REAL_FACTS[name]
    assert not of(Diagnostic, evs), of(Diagnostic, evs)[:3]
    meta = of(SessionMeta, evs)[0]
    assert meta.provider_session_id == session_id
    assert meta.git_branch == branch
    assert meta.client_version == version
    assert [m.cwd for m in of(SessionMeta, evs) if m.cwd][:1] == ([cwd] if cwd else [])
    counts = Counter(type(e).__name__ for e in evs)
    assert counts["UserTurn"] == users
    assert counts["AssistantText"] == texts
    assert counts["ToolCall"] == calls
    assert counts["TurnEnd"] == ends
    results = results_by_call(evs)
    assert sum(1 for c in of(ToolCall, evs) if c.call_id not in results) == unanswered
    assert len({c.call_id for c in of(ToolCall, evs)}) == calls  # no call emitted twice
    for event in evs:
        if isinstance(event, ToolResult | UserTurn | AssistantText):
            text = event.output if isinstance(event, ToolResult) else event.text
            assert not INLINE_IMAGE.search(text)


@pytest.mark.fixtures
def test_real_legacy_cwd_user_turns_and_sandbox_failures() -> None:
    evs = real_events("legacy-2025-09.jsonl")
    assert [m.cwd for m in of(SessionMeta, evs) if m.cwd] == [
        "/home/user/projects/codex-session-viewer"
    ]
    turns = of(UserTurn, evs)
    assert turns[0].text.startswith("What's the next task I should work on?")
    assert turns[-1].text == "add it as a task via task-master"
    results = results_by_call(evs)
    assert results[call_by_command(evs, "ls -la").call_id].exit_code == 0
    assert results[call_by_command(evs, "npm test -s").call_id].exit_code == 1
    edits = [p for c in of(ToolCall, evs) if c.family == "edit" for p in c.paths_written]
    assert edits[:2] == ["docs/fs-scanner.md", "README.md"]
    assert len([c for c in of(ToolCall, evs) if c.family == "mcp"]) == 41


@pytest.mark.fixtures
def test_real_058_failed_commands() -> None:
    evs = real_events("acidicsoil-0.58.0.jsonl")
    results = results_by_call(evs)
    assert results[call_by_command(evs, "ls lib/ai").call_id].exit_code == 2
    assert of(UserTurn, evs)[0].text.startswith("finish up the users work by rigging up")
    assert [m.model for m in of(SessionMeta, evs) if m.model] == ["gpt-5.1-codex"]


@pytest.mark.fixtures
def test_real_060_known_command_exit_and_first_patch() -> None:
    evs = real_events("rtchess-0.60.1.jsonl")
    results = results_by_call(evs)
    # line 167/168: shell_command `rg --pcre2 "[^\x00-\x7F]"` → "Exit code: 1"
    assert results["call_zRxde4Yi61a09Y7HyT4fQca8"].exit_code == 1
    assert call_by_command(evs, 'rg --pcre2 "[^\\x00-\\x7F]"').family == "shell"
    # line 47: the first apply_patch adds index.html
    assert results["call_QjR8c77xcoVf57foI1RoTGvR"].exit_code == 0
    first_patch = next(c for c in of(ToolCall, evs) if c.name == "apply_patch")
    assert first_patch.paths_written == ["index.html"]
    assert len([c for c in of(ToolCall, evs) if c.name == "apply_patch"]) == 173


@pytest.mark.fixtures
def test_real_120_unified_exec_exit_codes() -> None:
    evs = real_events("trezo-ai-0.120.0.jsonl")
    results = results_by_call(evs)
    assert results[call_by_command(evs, "cargo test -p cfo_oracle").call_id].exit_code == 101
    # line 22 "Process running…", line 24 exec_command_end exit_code 2: superseded
    assert results["call_GxRUt2xIu6rjP48ZVCbp5waJ"].exit_code == 2
    assert sorted({r.exit_code for r in results.values() if r.exit_code}) == [2, 101, 128]
    assert len([c for c in of(ToolCall, evs) if c.family == "web"]) == 4


@pytest.mark.fixtures
def test_real_125_windows_powershell_cyrillic_failure_and_view_image() -> None:
    evs = real_events("rave-era-0.125.0.jsonl")
    results = results_by_call(evs)
    # line 53: exec_command_end, exit_code 1, Cyrillic CRLF PowerShell error
    failed = results["call_u0IfufALf2H85EcHwMzO3WUj"]
    assert failed.exit_code == 1
    assert "Объект для указанного пути" in failed.output
    assert "\r\n" in failed.output
    view = next(c for c in of(ToolCall, evs) if c.name == "view_image")
    assert results[view.call_id].output == "[image: image/jpeg, 68739 bytes]"
    # line 214: patch_apply_end for an apply_patch call; the call's own paths are relative
    patch = next(c for c in of(ToolCall, evs) if c.call_id == "call_oa3aOPR368kme48KQPzVHch0")
    assert patch.family == "edit"
    assert "data/dashboard.ts" in patch.paths_written


@pytest.mark.fixtures
def test_real_130_and_142_facts() -> None:
    gildore = real_events("gildore-arena-0.130.0.jsonl")
    first = of(ToolCall, gildore)[0]
    assert first.name == "exec_command"
    assert results_by_call(gildore)[first.call_id].exit_code == 0  # "Process exited with code 0"
    assert len([c for c in of(ToolCall, gildore) if c.family == "web"]) == 6
    battle = real_events("battle-cities-0.142.4.jsonl")
    launch = results_by_call(battle)["call_uttM4ip5sbmZ5D07iATgDY1W"]
    assert launch.output.startswith("execution error: Io(")
    assert (launch.exit_code, launch.is_error) == (None, True)


@pytest.mark.fixtures
def test_real_144_code_mode() -> None:
    evs = real_events("edgerunner-0.144.1.jsonl")
    calls = of(ToolCall, evs)
    assert len([c for c in calls if c.name == "exec"]) == 153
    synthetic = [c for c in calls if c.call_id.startswith("exec-") and c.family == "edit"]
    assert len(synthetic) == 41  # one per patch_apply_end
    first_cell = next(c for c in calls if c.name == "exec")
    assert first_cell.family == "shell"
    assert first_cell.command is not None and first_cell.command.startswith("pwd && printf")
    assert [m.model for m in of(SessionMeta, evs) if m.model] == ["gpt-5.6-sol", "gpt-5.6-luna"]


@pytest.mark.fixtures
@pytest.mark.parametrize("name", ["rave-era-0.125.0.jsonl", "edgerunner-0.144.1.jsonl"])
def test_real_file_two_part_parse_equals_one_pass(name: str) -> None:
    whole = real_events(name)
    path = REAL / name
    line_count = path.read_bytes().count(b"\n")
    for split in (1, line_count // 3, line_count // 2, line_count - 5):
        assert parse_in_two_parts(path, split) == whole, f"split after line {split}"


@pytest.mark.fixtures
@pytest.mark.parametrize("name", sorted(REAL_FACTS))
def test_state_stays_small_and_json_serializable(name: str) -> None:
    if not REAL.is_dir():
        pytest.skip("../shared/fixtures is not available in this checkout")
    adapter = CodexAdapter()
    path = REAL / name
    state = adapter.new_state(path)
    largest = 0
    with path.open("rb") as handle:
        for line in read_lines(handle):
            if line.record is not None:
                list(adapter.parse(line.record, line.number, state))
                largest = max(largest, len(orjson.dumps(state)))
    assert largest < 24_000


def test_token_usage_records_are_skipped_without_a_diagnostic(tmp_path: Path) -> None:
    records = [
        codex_meta("019a0000-0000-7000-8000-000000000171"),
        codex_record("token_usage_record", {"input_tokens": 10}),
        {"type": "token_usage_record", "input_tokens": 10},
        codex_event("token_usage_record", input_tokens=10),
        codex_user_message("hello"),
    ]
    evs = events(write_jsonl(tmp_path / "r.jsonl", records))
    assert of(Diagnostic, evs) == []
    assert [e.text for e in of(UserTurn, evs)] == ["hello"]


def test_an_aborted_turn_ends_marked_aborted_and_a_rollback_says_how_many_turns(
    tmp_path: Path,
) -> None:
    records = [
        codex_meta("019a0000-0000-7000-8000-000000000172"),
        codex_user_message("first"),
        codex_event("task_complete"),
        codex_user_message("second"),
        codex_turn_aborted(),
        codex_rolled_back(2),
    ]
    evs = events(write_jsonl(tmp_path / "r.jsonl", records))
    assert of(Diagnostic, evs) == []
    assert [e.aborted for e in of(TurnEnd, evs)] == [False, True]
    assert [e.count for e in of(TurnsRolledBack, evs)] == [2]


def test_the_real_interrupted_turns_are_marked_aborted() -> None:
    real = shared_fixtures("sessions", "codex")
    for name, aborted in (("edgerunner-0.144.1.jsonl", 1), ("rtchess-0.60.1.jsonl", 1)):
        ends = of(TurnEnd, events(real / name))
        assert sum(e.aborted for e in ends) == aborted, name


def test_a_prompt_recorded_only_as_a_completed_user_message_item_opens_a_turn(
    tmp_path: Path,
) -> None:
    """Codex 0.171 writes no `user_message` event: the prompt is an `item_completed` UserMessage
    (with its twin, if a version writes both, skipped)."""

    def item(text: str) -> dict[str, Any]:
        content = [{"type": "text", "text": text, "text_elements": []}]
        return codex_event("item_completed", item={"type": "UserMessage", "content": content})

    records = [
        codex_meta("019a0000-0000-7000-8000-000000000173"),
        item("first"),
        codex_event("task_complete"),
        codex_user_message("second"),
        item("second"),
        codex_event("task_complete"),
        item("third"),
        codex_user_message("third"),
        codex_user_message("third"),  # typed again in the same turn: a prompt of its own
    ]
    evs = events(write_jsonl(tmp_path / "r.jsonl", records))
    assert of(Diagnostic, evs) == []
    assert [e.text for e in of(UserTurn, evs)] == ["first", "second", "third", "third"]


def test_a_file_that_continues_a_thread_from_an_earlier_record_says_so(tmp_path: Path) -> None:
    thread = "019a0000-0000-7000-8000-000000000174"
    base = {"thread_id": thread, "end_ordinal_exclusive": 14, "end_byte_offset": 35411}
    evs = events(write_jsonl(tmp_path / "r.jsonl", [codex_meta(thread, history_base=base)]))
    assert [(e.provider_session_id, e.ordinal) for e in of(HistoryCut, evs)] == [(thread, 14)]


def test_a_command_interrupted_by_the_user_is_an_error(tmp_path: Path) -> None:
    records = [
        codex_meta("019a0000-0000-7000-8000-000000000175"),
        codex_user_message("wait"),
        codex_function_call("c1", "exec_command", {"cmd": "sleep 60"}),
        codex_function_output("c1", "Wall time: 3.0 seconds\naborted by user"),
    ]
    evs = events(write_jsonl(tmp_path / "r.jsonl", records))
    assert [(e.is_error, e.exit_code) for e in of(ToolResult, evs)] == [(True, None)]


def test_0171_mcp_calls_are_named_as_claude_names_them_and_fail_as_the_item_says() -> None:
    """A real Codex 0.171 `exec` rollout, trimmed (data/codex/mcp-0.171.jsonl; the third call,
    refused by the approval policy, is the same run's other rollout, its call id renamed): an
    MCP call is `function_call{namespace: "mcp__SERVER", name: TOOL}`, its outcome is the
    `item_completed{item: McpToolCall}` written before its `function_call_output`, whose
    `Wall time: …` text states none."""
    evs = events(DATA / "mcp-0.171.jsonl")
    assert of(Diagnostic, evs) == []
    calls = of(ToolCall, evs)
    assert [(c.call_id, c.name, c.family) for c in calls] == [
        ("call_0002", "mcp__teamlore_personal__memory_init", "mcp"),
        ("call_0005", "mcp__teamlore_personal__memory_init", "mcp"),
        ("call_0012", "mcp__teamlore__threadshare_memory_recall", "mcp"),
    ]
    assert calls[0].input["importId"] == "imp-c1"
    assert len(of(ToolResult, evs)) == 3  # the outputs after the items add nothing
    ok, invalid, refused = (results_by_call(evs)[c.call_id] for c in calls)
    assert (ok.is_error, invalid.is_error, refused.is_error) == (False, True, True)
    assert ok.output.startswith('{"accepted":true')  # the server's text, no `Wall time:` header
    assert '"code":"INVALID_ARGUMENT"' in invalid.output
    assert refused.output == "MCP tool call requires approval, but approval policy is never"


def test_an_mcp_call_item_without_its_function_call_is_a_synthetic_mcp_call(
    tmp_path: Path,
) -> None:
    item = {
        "type": "McpToolCall",
        "id": "c9",
        "server": "docs",
        "tool": "lookup",
        "arguments": {"q": "x"},
        "status": "completed",
        "result": {"content": [{"type": "text", "text": "found"}], "isError": False},
    }
    running = {**item, "id": "c10", "status": "in_progress", "result": None}
    records = [
        codex_meta("019a0000-0000-7000-8000-000000000176"),
        codex_user_message("look it up"),
        codex_event("item_completed", item=item),
        codex_event("item_completed", item=running),
        codex_function_call("c11", "docs__lookup", {"q": "y"}),  # pre-0.171 naming, no namespace
    ]
    evs = events(write_jsonl(tmp_path / "r.jsonl", records))
    assert of(Diagnostic, evs) == []
    assert [(c.name, c.family, c.input) for c in of(ToolCall, evs)] == [
        ("mcp__docs__lookup", "mcp", {"q": "x"}),
        ("mcp__docs__lookup", "mcp", {"q": "x"}),
        ("docs__lookup", "mcp", {"q": "y"}),
    ]
    assert [(r.call_id, r.output, r.is_error) for r in of(ToolResult, evs)] == [
        ("c9", "found", False)
    ]
