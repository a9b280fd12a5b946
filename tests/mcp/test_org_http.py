"""`teamlore org serve` (docs/org.md "Serving"): the real server process on 127.0.0.1 over a
real PostgreSQL index, driven by the MCP SDK's Streamable HTTP client with and without a token."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from mcp import ClientSession
from org_support import (
    ClusterUnavailable,
    free_port,
    make_clone,
    postgres_cluster,
    postgres_database,
    throwaway_cluster,
)
from teamlore.cli.main import app
from teamlore.mcp.org_http import RateLimiter

__all__ = ["postgres_cluster", "postgres_database"]  # fixtures


PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
# a request's wait for a pooled connection, shorter than the 2 s default: each 503 of a
# database that is down comes sooner (the default is checked in tests/org/test_postgres_store.py)
SHORT_POOL_WAIT = {"TEAMLORE_ORG_POOL_WAIT_S": "0.5"}


def bearer(token: str) -> dict[str, str]:
    """The headers of an MCP client holding `token` (streamable HTTP)."""
    return {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}


def org(home: Path, database: str, *args: str) -> dict[str, Any]:
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": database}
    done = CliRunner().invoke(app, ["org", *args, "--format", "json"], env=env)
    assert done.exit_code == 0, done.output
    result: dict[str, Any] = json.loads(done.output)
    return result


def start_server(
    home: Path, database: str, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    env = {
        **os.environ,
        "TEAMLORE_HOME": str(home),
        "TEAMLORE_ORG_DATABASE": database,
        "PYTHONPATH": os.pathsep.join(sys.path),
        **(env or {}),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "teamlore.cli.main", "org", "serve", "--port", str(port), *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx2.post(url, timeout=1)
            return process, url
        except httpx2.TransportError:
            if process.poll() is not None:
                break
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"org serve did not start: {process.communicate()[1]}")


@pytest.fixture()
def indexed(home: Path, postgres_database: str, tmp_path: Path) -> str:
    for name, body in (
        ("billing", "Deploy billing with the blue-green script; never during payroll runs."),
        ("web", "Use CSS modules for components, never global class names."),
    ):
        org(home, postgres_database, "add", str(make_clone(tmp_path, name, {f"{name}-rule": body})))
    org(home, postgres_database, "sync", "--lexical")
    return postgres_database


@pytest.fixture()
def server(home: Path, indexed: str) -> Iterator[str]:
    process, url = start_server(home, indexed)
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


async def call_tools(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        results = [(await session.call_tool(name, args)).structured_content for name, args in calls]
        return tools, results


def test_a_request_without_a_live_token_gets_401_and_no_detail(
    home: Path, indexed: str, server: str
) -> None:
    token = org(home, indexed, "token", "create", "ci")["token"]
    for headers in (
        {},
        {"Authorization": "Bearer tlorg_wrong"},
        {"Authorization": f"Basic {token}"},
    ):
        refused = httpx2.post(server, json=PING, headers=headers, timeout=10)
        assert (refused.status_code, refused.content) == (401, b"")
        assert refused.headers["www-authenticate"] == "Bearer"
    with pytest.raises(Exception):  # noqa: B017 - the SDK client fails on the 401
        anyio.run(call_tools, server, "tlorg_wrong", [])


def test_a_client_with_a_token_searches_through_the_sdk_with_cli_parity(
    home: Path, indexed: str, server: str
) -> None:
    token = org(home, indexed, "token", "create", "ci")["token"]
    calls = [
        ("threadshare_org_search", {"query": "payroll deploy", "lexical": True}),
        ("threadshare_org_status", {}),
        ("threadshare_org_search", {"query": "x" * 2000}),
    ]
    tools, (search, status, too_long) = anyio.run(call_tools, server, token, calls)
    assert sorted(tools) == ["threadshare_org_search", "threadshare_org_status"]
    assert all(tool.annotations.read_only_hint for tool in tools.values())
    assert [(h["repository"], h["id"]) for h in search["results"]] == [("billing", "billing-rule")]
    assert search == org(home, indexed, "search", "payroll", "deploy", "--lexical")
    assert status == {**org(home, indexed, "status"), "index": "postgresql"}  # no address
    assert too_long["error"]["code"] == "INVALID_ARGUMENT"
    assert str(home) not in json.dumps(status) and "/clones" not in json.dumps(status)


def test_an_unknown_repository_names_the_tool_that_lists_them_beside_the_command(
    home: Path, indexed: str, server: str
) -> None:
    """An agent on the endpoint may have no shell: the refusal names the tool it can call."""
    token = org(home, indexed, "token", "create", "ci")["token"]
    calls = [("threadshare_org_search", {"query": "deploy", "repository": ["biling"]})]
    _, (refused,) = anyio.run(call_tools, server, token, calls)
    assert refused["error"]["code"] == "ORG_REPOSITORY_UNKNOWN"
    assert refused["error"]["next"] == (
        "See the org's repositories with the tool `threadshare_org_status` or "
        "`teamlore org status`."
    )


def test_a_revoked_token_gets_401(home: Path, indexed: str, server: str) -> None:
    token = org(home, indexed, "token", "create", "laptop")["token"]
    headers = bearer(token)
    assert httpx2.post(server, json=PING, headers=headers, timeout=10).status_code != 401
    org(home, indexed, "token", "revoke", "laptop")
    assert httpx2.post(server, json=PING, headers=headers, timeout=10).status_code == 401
    listed = org(home, indexed, "token", "list")["tokens"]
    assert [(t["name"], t["revokedAt"] is not None) for t in listed] == [("laptop", True)]
    assert token not in json.dumps(listed)


def test_each_token_is_rate_limited(home: Path, indexed: str) -> None:
    process, url = start_server(home, indexed, "--rate", "3")
    try:
        token = org(home, indexed, "token", "create", "busy")["token"]
        headers = bearer(token)
        answers = [httpx2.post(url, json=PING, headers=headers, timeout=10) for _ in range(5)]
        codes = [answer.status_code for answer in answers]
        assert codes[-1] == 429 and 429 not in codes[:3]
        # 3 a minute: the next one in about 20 s (the header said 1 whatever the rate)
        assert 15 <= int(answers[-1].headers["retry-after"]) <= 20
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_refused_request_is_told_the_whole_seconds_until_the_next_is_allowed() -> None:
    limiter = RateLimiter(per_minute=6)  # one request every 10 s once the minute's are spent
    assert [limiter.wait("ci", now=0.0) for _ in range(6)] == [0] * 6
    assert limiter.wait("ci", now=0.0) == 10
    assert limiter.wait("ci", now=4.0) == 6  # 0.4 of a request refilled: 6 s, not 7
    assert limiter.wait("ci", now=9.5) == 1  # half a second is a whole one
    assert limiter.wait("ci", now=10.0) == 0
    assert limiter.wait("other", now=10.0) == 0  # each token has its own


def test_a_database_gone_down_gets_503_and_one_log_line(home: Path, tmp_path: Path) -> None:
    try:
        with throwaway_cluster() as cluster:
            database = cluster.url()
            token = org(home, database, "token", "create", "ci")["token"]
            process, url = start_server(home, database, env=SHORT_POOL_WAIT)
            headers = bearer(token)
            assert httpx2.post(url, json=PING, headers=headers, timeout=30).status_code == 200
    except ClusterUnavailable as why:
        pytest.skip(str(why))
    try:  # the cluster is stopped and gone
        refused = httpx2.post(url, json=PING, headers=headers, timeout=60)
        assert (refused.status_code, refused.content) == (503, b"")
    finally:
        process.terminate()
        log = process.communicate(timeout=30)[1]
    assert "Traceback" not in log
    (line,) = [line for line in log.splitlines() if "ORG_DATABASE_UNAVAILABLE" in line]
    assert line.startswith("teamlore org serve: 503, ORG_DATABASE_UNAVAILABLE: cannot use")


def test_while_the_database_is_down_each_request_gets_its_503_within_2_s_and_then_answers(
    home: Path,
) -> None:
    """A request waits for a pooled connection at most the pool's wait (2 s; it waited 10 s,
    each time after the first; 0.5 s here, SHORT_POOL_WAIT), then gets the 503 and a log line
    saying so; once the server is back, the next requests are answered (the pool replaces the
    connections the restart cut). The wait is read from the log line the pool's timeout writes,
    not timed: tests never assert wall-clock. tests/org/test_postgres_store.py checks the 2 s."""
    answered: list[int] = []
    try:
        with throwaway_cluster() as cluster:
            database = cluster.url()
            token = org(home, database, "token", "create", "ci")["token"]
            process, url = start_server(home, database, env=SHORT_POOL_WAIT)
            headers = bearer(token)
            try:
                assert httpx2.post(url, json=PING, headers=headers, timeout=30).status_code == 200
                cluster.stop()
                for _ in range(3):
                    refused = httpx2.post(url, json=PING, headers=headers, timeout=60)
                    assert (refused.status_code, refused.content) == (503, b"")
                cluster.start()
                deadline = time.monotonic() + 60
                while 200 not in answered and time.monotonic() < deadline:
                    answer = httpx2.post(url, json=PING, headers=headers, timeout=60)
                    answered.append(answer.status_code)
            finally:
                process.terminate()
                log = process.communicate(timeout=30)[1]
    except ClusterUnavailable as why:
        pytest.skip(str(why))
    assert answered[-1] == 200 and set(answered) <= {200, 503}
    lines = [line for line in log.splitlines() if "ORG_DATABASE_UNAVAILABLE" in line]
    assert len(lines) == 3 + answered.count(503) and "Traceback" not in log
    for line in lines:
        assert line.startswith("teamlore org serve: 503, ORG_DATABASE_UNAVAILABLE: cannot use")
        assert line.endswith(": no connection within 0.5 s (is the server running?)")


def test_listening_beyond_loopback_needs_a_flag(home: Path, indexed: str) -> None:
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": indexed}
    done = CliRunner().invoke(app, ["org", "serve", "--host", "0.0.0.0"], env=env)
    assert done.exit_code == 2
    assert "--allow-remote" in done.output


def test_a_port_in_use_is_refused_before_it_says_it_listens(home: Path, indexed: str) -> None:
    """uvicorn alone logged the bind error and exited 0 after the 'MCP at' line."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "teamlore.cli.main", "org", "serve", "--port", str(port)],
            env={**os.environ, "TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": indexed},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1, done.stderr
    assert f"error ORG_PORT_UNAVAILABLE: cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "MCP at" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("port", ["0", "-1", "65536", "9" * 20])
def test_a_port_out_of_range_is_a_usage_error(home: Path, indexed: str, port: str) -> None:
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": indexed}
    done = CliRunner().invoke(app, ["org", "serve", "--port", port], env=env)
    assert done.exit_code == 2 and "--port" in done.output, done.output
