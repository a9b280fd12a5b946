"""What `teamlore org serve` tells a token's holder (docs/org.md "Serving"): the tools' results
and refusals are the CLI's, except that the PostgreSQL server's address, which the operator
configured and a CI runner of some team has no need of, is withheld: `index` reads
`postgresql`, and a database the server cannot use is said without its address or libpq's
reason (the server's log has them). The real server process on 127.0.0.1, the MCP SDK's
Streamable HTTP client, a real PostgreSQL cluster (tests/org_support.py) or the embedded index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from test_org_http import call_tools as listing_and_calling
from typer.testing import CliRunner

from org_support import free_port, make_clone, postgres_cluster, postgres_database
from teamlore.cli.main import app

__all__ = ["postgres_cluster", "postgres_database"]  # fixtures


def org(home: Path, database: str | None, *args: str) -> dict[str, Any]:
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": database or ""}
    done = CliRunner().invoke(app, ["org", *args, "--format", "json"], env=env)
    assert done.exit_code == 0, done.output
    result: dict[str, Any] = json.loads(done.output)
    return result


def index_two_repositories(home: Path, database: str | None, root: Path) -> None:
    for name, body in (
        ("billing", "Deploy billing with the blue-green script; never during payroll runs."),
        ("web", "Use CSS modules for components, never global class names."),
    ):
        org(home, database, "add", str(make_clone(root, name, {f"{name}-rule": body})))
    org(home, database, "sync", "--lexical")


class Served:
    def __init__(self, home: Path, database: str | None) -> None:
        port = free_port()
        env = {
            **os.environ,
            "TEAMLORE_HOME": str(home),
            "TEAMLORE_ORG_DATABASE": database or "",
            "PYTHONPATH": os.pathsep.join(sys.path),
        }
        command = [sys.executable, "-m", "teamlore.cli.main", "org", "serve", "--port", str(port)]
        self.process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx2.post(self.url, timeout=1)
                return
            except httpx2.TransportError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.1)
        self.process.kill()
        raise AssertionError(f"org serve did not start: {self.process.communicate()[1]}")

    def stop(self) -> str:
        """Its log (stderr)."""
        self.process.terminate()
        return self.process.communicate(timeout=30)[1]


@pytest.fixture()
def serving() -> Iterator[list[Served]]:
    started: list[Served] = []
    yield started
    for served in started:
        if served.process.poll() is None:
            served.stop()


def serve(serving: list[Served], home: Path, database: str | None) -> Served:
    served = Served(home, database)
    serving.append(served)
    return served


async def call_tools(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    """The answers of `calls`, as a token's holder gets them (test_org_http's client)."""
    _tools, answers = await listing_and_calling(url, token, calls)
    return answers


def address_of(database: str) -> str:
    """`host:port/database` of a test cluster's URL (`postgresql://postgres@HOST:PORT/DB`)."""
    return database.rpartition("@")[2]


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("threadshare_org_status", {}),
    ("threadshare_org_search", {"query": "payroll deploy", "lexical": True}),
    ("threadshare_org_search", {"query": "deploy", "repository": ["biling"]}),
]


def test_a_token_holder_is_told_postgresql_and_never_the_servers_address(
    home: Path, postgres_database: str, tmp_path: Path, serving: list[Served]
) -> None:
    """The CLI's `org status` names the server (its operator configured it); the same status
    over HTTP reads `postgresql` and is otherwise the CLI's, as are search and its refusals."""
    index_two_repositories(home, postgres_database, tmp_path)
    token = org(home, postgres_database, "token", "create", "ci")["token"]
    served = serve(serving, home, postgres_database)

    status, search, unknown = anyio.run(call_tools, served.url, token, CALLS)

    local = org(home, postgres_database, "status")
    assert local["index"] == f"postgresql ({address_of(postgres_database)})"
    assert status == {**local, "index": "postgresql"}
    assert search == org(home, postgres_database, "search", "payroll", "deploy", "--lexical")
    assert unknown["error"]["code"] == "ORG_REPOSITORY_UNKNOWN"
    told = json.dumps([status, search, unknown])
    host, _, port_and_database = address_of(postgres_database).partition(":")
    assert port_and_database.split("/")[0] not in told and host not in told
    assert str(home) not in told and str(tmp_path) not in told


def test_a_database_the_server_cannot_use_is_said_without_its_address(
    home: Path, postgres_database: str, tmp_path: Path, serving: list[Served]
) -> None:
    """A role that may read the tokens but not the index lets a request in and then fails its
    tool: the token's holder gets ORG_DATABASE_UNAVAILABLE without the server's address, the
    privilege libpq names or any details; the server's log has the whole refusal."""
    import psycopg

    index_two_repositories(home, postgres_database, tmp_path)
    token = org(home, postgres_database, "token", "create", "ci")["token"]
    gatekeeper = f"gate_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {gatekeeper} LOGIN")  # type: ignore[arg-type]
        conn.execute(f"GRANT SELECT ON org_schema, org_tokens TO {gatekeeper}")  # type: ignore[arg-type]
    database = postgres_database.replace("postgres@", f"{gatekeeper}@", 1)
    served = serve(serving, home, database)

    answers = anyio.run(call_tools, served.url, token, CALLS)
    log = served.stop()

    for refused in answers:
        assert refused["error"] == {
            "code": "ORG_DATABASE_UNAVAILABLE",
            "message": "the org index's database cannot be used right now (the org server's "
            "log says why)",
            "problem": "the org index's database cannot be used right now (the org server's "
            "log says why)",
            "next": "Try again later; if it lasts, tell whoever runs the org server.",
        }
    lines = [line for line in log.splitlines() if "ORG_DATABASE_UNAVAILABLE" in line]
    assert len(lines) == len(CALLS) and "Traceback" not in log
    for line in lines:
        assert line.startswith(
            f"teamlore org serve: ORG_DATABASE_UNAVAILABLE: cannot use the org database at "
            f"{address_of(postgres_database)}: permission denied for table org_"
        )


def test_the_embedded_index_is_named_as_the_cli_names_it_a_file_name_and_no_path(
    home: Path, tmp_path: Path, serving: list[Served]
) -> None:
    """The embedded index's `where` names its file, which every embedded index has, and "the
    state dir", not where that is: nothing of the machine, so it is served as it is."""
    index_two_repositories(home, None, tmp_path)
    token = org(home, None, "token", "create", "ci")["token"]
    served = serve(serving, home, None)

    status, search, _ = anyio.run(call_tools, served.url, token, CALLS)

    assert status == org(home, None, "status")
    assert status["index"] == "embedded (org.sqlite3 in the state dir)"
    assert search == org(home, None, "search", "payroll", "deploy", "--lexical")
    assert str(home) not in json.dumps([status, search])
