"""The MCP server under hostile or broken conditions: malformed JSON-RPC frames get a JSON-RPC
error (the SDK would drop them silently), and unexpected failures reach the client as a stable
code with every absolute path redacted (no state dir, no home). Real server process over stdio.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import initialized_repository
from teamlore.core.refusals import redact_paths
from teamlore.mcp import server as mcp_server

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _converse(
    repo: Path, frames: list[bytes], last_id: int, env: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Send the handshake and `frames` to a real server, read replies until `last_id` answers."""
    process = subprocess.Popen(
        [sys.executable, "-m", "teamlore.cli.main", "mcp", "--capability", "team-read"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=repo,
        env={**os.environ, **(env or {})},
    )
    assert process.stdin is not None and process.stdout is not None
    replies: list[dict[str, Any]] = []
    try:
        for frame in [json.dumps(INIT).encode(), json.dumps(INITIALIZED).encode(), *frames]:
            process.stdin.write(frame + b"\n")
        process.stdin.flush()
        for line in process.stdout:
            replies.append(json.loads(line))
            if replies[-1].get("id") == last_id:
                break
    finally:
        process.stdin.close()
        process.wait(timeout=60)
    return replies


def _raw_session(repo: Path, frames: list[bytes]) -> list[dict[str, Any]]:
    return _converse(repo, [*frames, b'{"jsonrpc":"2.0","id":99,"method":"tools/list"}'], 99)


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    return initialized_repository(tmp_path, home)


def test_malformed_frames_are_answered_and_the_session_goes_on(repo: Path) -> None:
    frames = [b"{not json", b'{"hello": "world"}', b"[1, 2", b'"just a string"']
    replies = _raw_session(repo, frames)
    errors_ = [r for r in replies if "error" in r]
    assert [(r["id"], r["error"]["code"]) for r in errors_] == [
        (None, -32700),
        (None, -32600),
        (None, -32700),
        (None, -32600),
    ]
    listed = next(r for r in replies if r.get("id") == 99)
    assert {t["name"] for t in listed["result"]["tools"]} >= {"threadshare_memory_search"}


SEARCH = '"method":"tools/call","params":{"name":"threadshare_memory_search","arguments":'


@pytest.mark.parametrize(
    ("frame", "answer"),
    [
        (b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":[1,2]}', (2, -32602)),
        (b'{"jsonrpc":"1.0","id":3,"method":"tools/list"}', (3, -32600)),
        (b'{"jsonrpc":"2.0","id":4,' + SEARCH.encode() + b'{"query":"\\ud800"}}}', (4, -32602)),
        (b'{"jsonrpc":"2.0","id":"\\udc00","method":"tools/list"}', (None, -32602)),
        (b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"x"}', (5, -32602)),
        (b'{"jsonrpc":"2.0","id":6,"params":{}}', (6, -32600)),
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/list"', (None, -32700)),
        (b"\xff\xfe{}", (None, -32700)),
    ],
    ids=[
        "params-array",
        "jsonrpc-1.0",
        "lone-surrogate",
        "surrogate-id",
        "params-string",
        "no-method",
        "invalid-json",
        "invalid-utf8",
    ],
)
def test_each_malformed_request_gets_its_json_rpc_error_and_its_id(
    repo: Path, frame: bytes, answer: tuple[int | None, int]
) -> None:
    """Issue 27: params as an array, `"jsonrpc": "1.0"` and a lone surrogate got no answer
    (the client waited forever); each gets a JSON-RPC 2.0 error carrying the frame's id when it
    can be read, and the session goes on."""
    replies = _raw_session(repo, [frame])
    [error] = [r for r in replies if "error" in r]
    assert error["jsonrpc"] == "2.0"
    assert (error["id"], error["error"]["code"]) == answer
    assert any(r.get("id") == 99 and "result" in r for r in replies)


def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_frames_nested_too_deeply_are_refused_and_the_server_keeps_answering(repo: Path) -> None:
    """A frame nesting ~1,000 levels deep (in a tool's arguments or beside the params) made the
    server re-parse it with Python's recursive json: RecursionError, and the process died; at
    500 levels the answer blamed the params. Each gets -32700 saying it nests too deeply, with
    its id, and a real call on the same server is answered after them."""
    frames, expected = [], []
    for n, levels in enumerate([500, 1_000, 100_000]):
        arguments = '{"query":"x","deep":' + _nested(levels) + "}"
        beside = '"method":"tools/list","deep":' + _nested(levels)
        expected += [10 + n, f"top-{n}"]
        frames += [
            f'{{"jsonrpc":"2.0","id":{10 + n},{SEARCH}{arguments}}}}}'.encode(),
            f'{{"jsonrpc":"2.0",{beside},"id":"top-{n}"}}'.encode(),  # the id after the depth
        ]
    frames.append(b'{"jsonrpc":"2.0","method":"tools/list","params":' + _nested(999).encode())
    expected.append(None)  # not JSON after all (it never closes): no id to read
    search = f'{{"jsonrpc":"2.0","id":99,{SEARCH}{{"query":"release"}}}}}}'.encode()

    replies = _converse(repo, [*frames, search], 99)

    refused = [r for r in replies if "error" in r]
    assert [r["id"] for r in refused] == expected
    for reply in refused:
        assert reply["error"]["code"] == -32700
        assert "nests too deeply" in reply["error"]["message"]
    answer = next(r for r in replies if r.get("id") == 99)
    assert answer["result"]["isError"] is False


def _call(repo: Path, env: dict[str, str], tool: str, args: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": args}
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    replies = _converse(repo, [json.dumps(call).encode()], 7, env)
    return dict(replies[-1]["result"])


def test_unexpected_errors_over_mcp_carry_a_code_and_no_absolute_path(
    repo: Path, home: Path, tmp_path: Path
) -> None:
    secret_place = tmp_path / "alice-private" / "elsewhere"
    (home / "memory-state.sqlite3").symlink_to(secret_place)  # ELOOP/ENOENT with the full path
    result = _call(repo, {}, "threadshare_memory_search", {"query": "release"})
    text = json.dumps(result)
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"])["error"]["code"]
    for private in (str(home), str(tmp_path), "alice-private"):
        assert private not in text


def test_refusals_over_mcp_redact_the_state_dir_too(repo: Path, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "home-of-alice" / "state-file"
    not_a_dir.parent.mkdir()
    not_a_dir.write_text("x")
    result = _call(repo, {"TEAMLORE_HOME": str(not_a_dir)}, "threadshare_memory_status", {})
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["code"] == "STATE_DIR_UNSAFE"
    assert "home-of-alice" not in json.dumps(result)


SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=12)


@settings(max_examples=200)
@given(
    parts=st.lists(SEGMENT, min_size=2, max_size=6),
    root=st.sampled_from(["/", "~/", "C:\\", "//server/"]),
    sep=st.sampled_from(["/", "\\"]),
    quote=st.sampled_from(["", "'", '"']),
)
def test_redaction_keeps_only_the_last_part_of_any_absolute_path(
    parts: list[str], root: str, sep: str, quote: str
) -> None:
    if root.endswith("/"):
        sep = "/"
    path = root + sep.join(parts)
    redacted = redact_paths(f"failed: {quote}{path}{quote} (errno 2)")
    for private in parts[:-1]:
        assert f"{private}{sep}" not in redacted.replace("…/", "")
    assert parts[-1] in redacted


def test_the_server_module_answers_frames_through_one_helper() -> None:
    assert callable(mcp_server.answer_malformed_frames)


def _sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Values of the right JSON type for every required field (what they mean does not matter:
    the call must end in a refusal with a stable code, never INTERNAL)."""
    samples = {"string": "release", "integer": 1, "number": 1, "boolean": False, "array": []}
    properties = schema.get("properties", {})
    arguments: dict[str, Any] = {}
    for name in schema.get("required", []):
        spec = properties.get(name, {})
        kinds = [spec.get("type")] + [o.get("type") for o in spec.get("anyOf", [])]
        kind = next((k for k in kinds if k in samples), "object")
        enum = spec.get("enum")
        arguments[name] = enum[0] if enum else samples.get(kind, {})
    return arguments


async def _every_tool(root: Path, capabilities: list[str]) -> dict[str, dict[str, Any]]:
    from mcp.client.stdio import stdio_client

    from mcp import ClientSession, StdioServerParameters

    flags = [arg for c in capabilities for arg in ("--capability", c)]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "teamlore.cli.main", "mcp", *flags, "--client-id", "hostile", "--global"],
        cwd=str(root),
        env={**os.environ},
    )
    answers: dict[str, dict[str, Any]] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for tool in (await session.list_tools()).tools:
            result = await session.call_tool(tool.name, _sample_arguments(tool.input_schema))
            text = result.content[0].text
            # a tool with a text field answers plain text on success
            answers[tool.name] = json.loads(text) if result.is_error else {"text": text}
    return answers


def test_state_files_that_are_folders_never_give_internal_from_any_mcp_tool(
    repo: Path, home: Path
) -> None:
    """Issue 27: the index file being a directory gave `INTERNAL: IsADirectoryError` from
    every MCP tool. Each tool now answers normally or with a stable code."""
    import anyio

    for name in ("index.sqlite3", "memory-state.sqlite3"):
        for stale in home.glob(f"{name}*"):
            stale.unlink()
        (home / name).mkdir()
    answers = anyio.run(_every_tool, repo, ["team", "read", "init", "relay"])
    assert len(answers) >= 10
    codes = {tool: a.get("error", {}).get("code") for tool, a in answers.items()}
    assert "INTERNAL" not in codes.values(), codes
    assert codes["threadshare_memory_status"] == "STATE_INVALID"
    assert codes["threadshare_memory_search"] == "STATE_INVALID"
