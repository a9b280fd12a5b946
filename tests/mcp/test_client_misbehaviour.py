"""The real MCP server against a client that behaves the way a long agent session can: it calls
tools in parallel, sends a megabyte where a name belongs, or goes away before its answer
arrives. Every call gets its real answer, refusals stay short (as the CLI's for the same request)
and the server stops quietly."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import anyio
import pytest
from team_mcp import team_session

from support import initialized_repository, teamlore_cli

# spaces keep it clear of the long-run shortening every refusal message gets (errors.one_line)
MEGABYTE_OF_WORDS = "ab " * 350_000
SHORT_ANSWER_CHARS = 2_000


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    return initialized_repository(tmp_path, home)


def test_parallel_first_calls_of_every_team_tool_all_get_their_real_answers(repo: Path) -> None:
    window = {"since": "2026-11-01T00:00:00.000Z", "until": "2026-12-01T00:00:00.000Z"}
    calls = [
        ("threadshare_memory_status", {}),
        ("threadshare_memory_search", {"query": "invoice export"}),
        ("threadshare_memory_recall", window),
        ("threadshare_memory_review", {}),
        ("threadshare_memory_synthesize", {}),
        ("threadshare_memory_assemble", {"provider": "claude", "check": True}),
    ] * 4

    async def in_parallel() -> list[str]:
        codes: list[str] = []
        async with team_session(repo) as session:

            async def one(name: str, args: dict[str, object]) -> None:
                result = await session.call_tool(name, args)
                payload = json.loads(result.content[0].text)
                codes.append(payload["error"]["code"] if result.is_error else "ok")

            async with anyio.create_task_group() as tasks:
                for name, args in calls:
                    tasks.start_soon(one, name, args)
        return codes

    # each round is a new server: the race is between modules imported on first use
    codes = [code for _ in range(4) for code in anyio.run(in_parallel)]

    assert "INTERNAL" not in codes
    assert len(codes) == 4 * len(calls)


def test_a_megabyte_stage_format_is_refused_in_a_short_answer_as_by_the_cli(
    repo: Path, tmp_path: Path
) -> None:
    async def stage() -> tuple[bool, str]:
        async with team_session(repo) as session:
            result = await session.call_tool(
                "threadshare_memory_stage", {"format": MEGABYTE_OF_WORDS}
            )
            return bool(result.is_error), result.content[0].text

    is_error, text = anyio.run(stage)
    request = tmp_path / "stage.json"
    request.write_text(json.dumps({"format": MEGABYTE_OF_WORDS}))
    cli = teamlore_cli("memory", "stage", "--request", str(request), "-f", "json", cwd=repo)

    assert is_error and len(text) < SHORT_ANSWER_CHARS
    assert len(cli.stdout) < SHORT_ANSWER_CHARS and cli.returncode == 1
    assert json.loads(text)["error"] == json.loads(cli.stdout)["error"]
    assert json.loads(text)["error"]["code"] == "STAGE_REQUEST_INVALID"


def test_a_megabyte_tool_name_is_refused_in_a_short_answer(repo: Path) -> None:
    async def unknown_tool() -> tuple[bool, str]:
        async with team_session(repo) as session:
            result = await session.call_tool(MEGABYTE_OF_WORDS, {})
            return bool(result.is_error), result.content[0].text

    is_error, text = anyio.run(unknown_tool)

    assert is_error and len(text) < SHORT_ANSWER_CHARS
    assert json.loads(text)["error"]["code"] == "USAGE"


def serving_team_server(
    repo: Path,
    *,
    stdout: int = subprocess.PIPE,
    answers: IO[bytes] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """`teamlore mcp --capability team` in a subprocess, past its initialize handshake (its
    answer read from `answers` when stdout is not the usual pipe)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "teamlore.cli.main", "mcp", "--capability", "team"],
        stdin=subprocess.PIPE,
        stdout=stdout,
        stderr=subprocess.PIPE,
        cwd=repo,
        env={**os.environ, **(env or {})},
    )
    assert server.stdin is not None
    handshake = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "leaving", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for frame in handshake:
        server.stdin.write(json.dumps(frame).encode() + b"\n")
    server.stdin.flush()
    reply = answers if answers is not None else server.stdout
    assert reply is not None
    reply.readline()  # initialized: the server is serving
    return server


def ask_for_status(server: subprocess.Popen[bytes]) -> None:
    assert server.stdin is not None
    status = {"name": "threadshare_memory_status", "arguments": {}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": status}
    server.stdin.write(json.dumps(call).encode() + b"\n")
    server.stdin.flush()


GONE = "[teamlore] the client closed the connection before the server answered; stopping"


def test_a_client_that_stops_reading_before_its_answer_ends_the_server_quietly(
    repo: Path,
) -> None:
    server = serving_team_server(repo)
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    server.stdout.close()  # the client stops reading, then asks
    ask_for_status(server)
    time.sleep(3)  # the status call answers in milliseconds: its answer meets the closed pipe
    server.stdin.close()

    exit_code = server.wait(timeout=60)
    stderr = server.stderr.read().decode()

    assert exit_code == 0
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
    assert stderr.strip().splitlines() == [GONE]


def test_a_server_that_can_no_longer_answer_stops_while_the_client_keeps_stdin_open(
    repo: Path,
) -> None:
    server = serving_team_server(repo)
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    server.stdout.close()  # the client stops reading, asks, and never closes stdin
    ask_for_status(server)

    try:
        exit_code = server.wait(timeout=10)
    finally:
        server.stdin.close()  # without the fix the server waits for this to stop
        server.wait(timeout=60)
    stderr = server.stderr.read().decode()

    assert exit_code == 0
    assert stderr.strip().splitlines() == [GONE]


def held_assemble_call(repo: Path, call_id: object) -> tuple[subprocess.Popen[bytes], Path]:
    """A team server past its handshake, with a `threadshare_memory_assemble` call (id
    `call_id`) started and held at a pause point until the returned flag file is removed."""
    flag = repo.parent / "assemble-paused"
    server = serving_team_server(repo, env={"TEAMLORE_PAUSEPOINT": f"assemble.planned={flag}"})
    assert server.stdin is not None
    assemble = {"name": "threadshare_memory_assemble", "arguments": {"provider": "claude"}}
    call = {"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": assemble}
    server.stdin.write(json.dumps(call).encode() + b"\n")
    server.stdin.flush()
    deadline = time.monotonic() + 60
    while not flag.exists():
        assert time.monotonic() < deadline and server.poll() is None, "the call never started"
        time.sleep(0.05)
    return server, flag


def last_frames_answered(repo: Path, last_frame: bytes, times: int) -> list[bool]:
    """Each time, a new server gets `last_frame` right before stdin closes: was it answered?"""
    answered = []
    for _ in range(times):
        server = serving_team_server(repo)
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(last_frame)
        server.stdin.close()
        replies = [json.loads(line) for line in server.stdout]
        server.wait(timeout=60)
        answered.append(any(reply.get("id") == 7 for reply in replies))
    return answered


def test_a_ping_sent_just_before_stdin_closes_is_answered(repo: Path) -> None:
    ping = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode() + b"\n"

    assert last_frames_answered(repo, ping, times=5) == [True] * 5


def test_a_last_frame_without_a_trailing_newline_is_answered(repo: Path) -> None:
    ping = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode()

    assert last_frames_answered(repo, ping, times=3) == [True] * 3


def test_a_server_whose_stdout_is_a_file_serves_until_stdin_closes(
    repo: Path, tmp_path: Path
) -> None:
    answers = tmp_path / "answers.jsonl"
    with answers.open("wb") as stdout:
        server = subprocess.Popen(
            [sys.executable, "-m", "teamlore.cli.main", "mcp", "--capability", "team"],
            stdin=subprocess.PIPE,
            stdout=stdout,
            stderr=subprocess.PIPE,
            cwd=repo,
        )
    assert server.stdin is not None and server.stderr is not None
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode() + b"\n")
    server.stdin.flush()
    time.sleep(2)  # long enough for a watch of stdout to fire, were there one
    still_serving = server.poll() is None
    server.stdin.close()

    assert server.wait(timeout=60) == 0 and still_serving
    assert server.stderr.read() == b""
    assert [json.loads(line)["id"] for line in answers.read_text().splitlines()] == [7]


def test_a_node_client_whose_stdout_is_a_socket_stops_the_server_when_it_stops_reading(
    repo: Path,
) -> None:
    """Node clients give a child socket pairs, not pipes, for its stdio."""
    ours, theirs = socket.socketpair()
    with ours, ours.makefile("rb") as answers:
        server = serving_team_server(repo, stdout=theirs.fileno(), answers=answers)
        theirs.close()
    assert server.stdin is not None and server.stderr is not None
    ask_for_status(server)  # ours is closed: the client stops reading and keeps stdin open

    try:
        exit_code = server.wait(timeout=10)
    finally:
        server.stdin.close()
        server.wait(timeout=60)

    assert exit_code == 0
    assert server.stderr.read().decode().strip().splitlines() == [GONE]


def test_a_call_in_flight_when_the_client_exits_finishes_and_writes(repo: Path) -> None:
    """A client that exits closes stdin and stdout together: the usual exit waits for the call
    in flight, however long it takes (here held past the stdout watch's second), and its write
    lands; its answer then meets the closed pipe, which the server says in one line."""
    server, flag = held_assemble_call(repo, call_id=2)
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None

    server.stdin.close()
    server.stdout.close()
    time.sleep(2.5)  # past the stdout watch's grace: still serving the call
    assert server.poll() is None
    flag.unlink()
    exit_code = server.wait(timeout=60)

    assert exit_code == 0
    assert (repo / "CLAUDE.md").is_file()
    assert server.stderr.read().decode().strip().splitlines() == [GONE]


def test_a_call_in_flight_when_stdin_closes_is_answered_to_a_client_still_reading(
    repo: Path,
) -> None:
    """`printf '…' | teamlore mcp` style: the client closes stdin after its last request and
    reads the answers. A call still running at end of input is answered, not cancelled."""
    server, flag = held_assemble_call(repo, call_id=2)
    assert server.stdin is not None and server.stdout is not None

    server.stdin.close()
    time.sleep(0.5)  # end of input reaches the server while the call is held
    flag.unlink()
    replies = [json.loads(line) for line in server.stdout]

    assert server.wait(timeout=60) == 0
    answer = next(reply for reply in replies if reply.get("id") == 2)
    assert answer["result"]["isError"] is False


@pytest.mark.parametrize(("call_id", "cancelled_id"), [(5, "5"), ("7", 7)])
def test_a_call_cancelled_by_an_id_written_the_other_way_does_not_hold_the_server(
    repo: Path, call_id: object, cancelled_id: object
) -> None:
    """The SDK takes `"5"` and `5` for one id and never answers a cancelled call: the end of
    input must not wait for its answer."""
    server, flag = held_assemble_call(repo, call_id=call_id)
    assert server.stdin is not None and server.stdout is not None
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": cancelled_id},
    }
    server.stdin.write(json.dumps(cancel).encode() + b"\n")
    server.stdin.close()
    time.sleep(0.5)
    flag.unlink()

    assert server.wait(timeout=60) == 0  # nothing more to read: a cancelled call has no answer
