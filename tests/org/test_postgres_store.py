"""The PostgreSQL org store's connection string (docs/org.md "Storage"): whatever is wrong with
it, or with the server it names, the refusal is one line that never names the role or the
password, and nothing else is printed (psycopg_pool's own log lines included); a database
that is not UTF8 is refused before anything is written in it; without psycopg, the way to add
it fits how teamlore was installed."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from org_support import Cluster, free_port, make_clone, postgres_cluster, postgres_database
from support import refusal_lines, teamlore_cli
from teamlore.cli.main import app
from teamlore.ops.org.stores import close_stores

__all__ = ["postgres_cluster", "postgres_database"]  # fixtures


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("postgresql:/bob:hunter2@127.0.0.1/orga", "a URL starts with postgresql://"),
        ("postgresql://bob:hunter%@127.0.0.1/orga", "invalid percent-encoded token"),
        ("postgresql://bob:hunter2@127.0.0.1/orga?passwrd=hunter2", "invalid URI query parameter"),
    ],
)
def test_an_unparsable_connection_string_is_refused_at_once_without_its_credentials(
    home: Path, url: str, problem: str
) -> None:
    text = teamlore_cli("org", "status", "--database", url)
    as_json = teamlore_cli("org", "status", "--database", url, "--format", "json")
    for done in (text, as_json):
        assert done.returncode == 2, done.stderr
        assert "bob" not in done.stdout + done.stderr
        assert "hunter" not in done.stdout + done.stderr
    first, *rest = refusal_lines(text.stderr)
    assert first.startswith("error ORG_DATABASE_URL_INVALID: ") and problem in first
    assert [line.split(":")[0] for line in rest] == ["  next"]  # no log lines of the pool
    assert json.loads(as_json.stdout)["error"]["code"] == "ORG_DATABASE_URL_INVALID"


def test_a_server_that_is_down_is_named_with_its_cause_and_never_the_credentials(
    home: Path,
) -> None:
    port = free_port()  # nothing listens there
    done = teamlore_cli("org", "status", "-d", f"postgresql://bob:hunter2@127.0.0.1:{port}/orga")
    assert done.returncode == 1
    first, *rest = refusal_lines(done.stderr)
    assert first == (
        f"error ORG_DATABASE_UNAVAILABLE: cannot use the org database at 127.0.0.1:{port}/orga: "
        "Connection refused (is the server running on that host and accepting TCP/IP "
        "connections?)"
    )
    assert [line.split(":")[0] for line in rest] == ["  next"]
    assert "bob" not in done.stderr and "hunter2" not in done.stderr


def test_a_server_that_is_down_names_where_its_url_came_from(home: Path) -> None:
    """The URL in TEAMLORE_ORG_DATABASE is what to check, not a `--database` never given; the
    option, when given, is named as before."""
    url = f"postgresql://127.0.0.1:{free_port()}/orga"  # nothing listens there
    from_variable = teamlore_cli("org", "status", env={"TEAMLORE_ORG_DATABASE": url})
    as_json = teamlore_cli("org", "status", "--format", "json", env={"TEAMLORE_ORG_DATABASE": url})
    from_option = teamlore_cli("org", "status", "--database", url)

    assert from_variable.returncode == 1
    assert refusal_lines(from_variable.stderr)[1] == (
        "  next: Check the URL in TEAMLORE_ORG_DATABASE and that its server is running "
        "(unset it to use the embedded index)."
    )
    error = json.loads(as_json.stdout)["error"]
    assert error["code"] == "ORG_DATABASE_UNAVAILABLE"
    assert "TEAMLORE_ORG_DATABASE" in error["next"] and "--database" not in error["next"]
    assert refusal_lines(from_option.stderr)[1] == (
        "  next: Check the `--database` URL and that its server is running."
    )


def test_a_refused_login_never_names_the_role(home: Path, postgres_cluster: Cluster) -> None:
    url = f"postgresql://mallory:hunter2@127.0.0.1:{postgres_cluster.port}/postgres"
    done = teamlore_cli("org", "status", "-d", url, "--format", "json")
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 1 and error["code"] == "ORG_DATABASE_UNAVAILABLE"
    assert "does not exist" in error["message"]
    assert "mallory" not in done.stdout + done.stderr and "hunter2" not in done.stdout


def test_a_pool_whose_connections_are_all_held_says_busy_not_down(
    postgres_cluster: Cluster,
) -> None:
    """A running server whose every pooled connection other requests hold is not 'down': the
    refusal (`org serve`'s 503) says they are in use."""
    from teamlore.core import errors
    from teamlore.org.postgres_store import POOL_MAX, PostgresStore

    store = PostgresStore.open(postgres_cluster.url())
    held = [store.pool.getconn() for _ in range(POOL_MAX)]
    try:
        with pytest.raises(errors.TeamloreError) as refused:
            store.tokens()
    finally:
        for conn in held:
            store.pool.putconn(conn)
        store.close()
    assert refused.value.code == "ORG_DATABASE_UNAVAILABLE"
    assert f"within 2 s: all {POOL_MAX} are in use by other requests" in refused.value.message
    assert "is the server running" not in refused.value.message


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://bob:hunter/2@127.0.0.1/orga",  # libpq: host bob, port hunter
        "postgresql://bob:hun@ter2@127.0.0.1/orga",  # libpq: host ter2@127.0.0.1
        "postgresql://bob@corp:hunter2@127.0.0.1/orga",  # libpq: port hunter2@127.0.0.1
    ],
)
def test_a_bare_at_or_slash_in_the_credentials_is_refused_without_any_part_of_them(
    home: Path, url: str
) -> None:
    """libpq reads the rest of such a URL as host, port or database, which every refusal and
    `org status` show: the password (part of it) would be printed."""
    text = teamlore_cli("org", "status", "--database", url)
    as_json = teamlore_cli("org", "status", "--format", "json", env={"TEAMLORE_ORG_DATABASE": url})
    for done in (text, as_json):
        assert done.returncode == 2, done.stdout + done.stderr
        assert "hun" not in done.stdout + done.stderr and "ter2" not in done.stdout + done.stderr
    assert refusal_lines(text.stderr)[0] == (
        "error ORG_DATABASE_URL_INVALID: cannot parse the org database's URL: its user name, "
        "password or database name holds a bare '@' or '/' (percent-encode them: %40, %2F)"
    )
    assert json.loads(as_json.stdout)["error"]["code"] == "ORG_DATABASE_URL_INVALID"


def test_percent_encoded_credentials_and_a_query_holding_at_are_accepted(
    home: Path, postgres_cluster: Cluster
) -> None:
    port = postgres_cluster.port
    for url in (
        f"postgresql://postgres:pa%2Fss%40word@127.0.0.1:{port}/postgres",
        f"postgresql://127.0.0.1:{port}/postgres?user=postgres&application_name=ci@build/7",
    ):
        done = teamlore_cli("org", "status", "--database", url, "--format", "json")
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["index"] == f"postgresql (127.0.0.1:{port}/postgres)"


def test_the_server_named_is_the_one_libpq_takes_from_the_environment(home: Path) -> None:
    """A URL without host or port connects where PGHOST and PGPORT say; the refusal names that
    server, not localhost:5432."""
    port = free_port()  # nothing listens there
    env = {"PGHOST": "127.0.0.1", "PGPORT": str(port), "PGDATABASE": "orga"}
    done = teamlore_cli("org", "status", "--database", "postgresql://", env=env)
    assert done.returncode == 1
    assert refusal_lines(done.stderr)[0].startswith(
        f"error ORG_DATABASE_UNAVAILABLE: cannot use the org database at 127.0.0.1:{port}/orga: "
        "Connection refused"
    )


def test_a_role_that_may_only_read_searches_and_one_that_may_not_write_is_refused(
    home: Path, postgres_database: str, tmp_path: Path
) -> None:
    """Searching, status and `org serve` write nothing: a role with SELECT on teamlore's tables
    may run them. What the role may not do is refused with a stable code and the privilege
    libpq names, not as an internal error."""
    import psycopg

    clone = make_clone(
        tmp_path, "billing", {"deploy": "Deploy billing with the blue-green script."}
    )
    owner = {"TEAMLORE_ORG_DATABASE": postgres_database}
    assert teamlore_cli("org", "add", str(clone), env=owner).returncode == 0
    assert teamlore_cli("org", "sync", "--lexical", env=owner).returncode == 0
    reader = f"reader_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {reader} LOGIN")  # type: ignore[arg-type]
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader}")  # type: ignore[arg-type]
    reading = {"TEAMLORE_ORG_DATABASE": postgres_database.replace("postgres@", f"{reader}@", 1)}

    search = teamlore_cli("org", "search", "deploy", "--lexical", "-f", "json", env=reading)
    assert search.returncode == 0, search.stdout + search.stderr
    assert [hit["id"] for hit in json.loads(search.stdout)["results"]] == ["deploy"]
    assert teamlore_cli("org", "status", env=reading).returncode == 0

    create = teamlore_cli("org", "token", "create", "ci", "--format", "json", env=reading)
    error = json.loads(create.stdout)["error"]
    assert create.returncode == 1 and error["code"] == "ORG_DATABASE_UNAVAILABLE"
    assert error["message"].endswith(": permission denied for table org_tokens")
    assert error["next"].startswith("Use the role that owns the org database")
    assert reader not in create.stdout


def test_without_psycopg_the_next_step_is_to_install_it_not_to_check_the_server(
    home: Path, tmp_path: Path
) -> None:
    shadow = tmp_path / "no-psycopg" / "psycopg"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("psycopg is not installed")\n')
    done = teamlore_cli(
        "org", "status", "--database", "postgresql://127.0.0.1/orga", "--format", "json",
        env={"PYTHONPATH": str(shadow.parent)},
    )  # fmt: skip
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 1 and error["code"] == "ORG_DATABASE_UNAVAILABLE"
    assert error["message"] == (
        "a PostgreSQL org index needs psycopg and psycopg_pool (teamlore's `org` extra), "
        "which this teamlore was installed without"
    )
    # teamlore is installed from its clone, not from PyPI: `pip install 'teamlore[org]'` fails
    assert error["next"] == (
        "In your teamlore clone, run `pip install '.[org]'` with the environment that runs "
        "teamlore active (pipx: `pipx install --force '.[org]'`), then run the command again."
    )


def test_without_psycopg_in_pipx_s_venv_the_next_step_is_pipx_inject(tmp_path: Path) -> None:
    """`pipx install .` (the README's way) makes a venv holding pipx_metadata.json, named as
    `pipx inject` takes it; there the org extra's packages are injected."""
    shadow = tmp_path / "no-psycopg" / "psycopg"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("psycopg is not installed")\n')
    venv = tmp_path / "pipx" / "venvs" / "teamlore"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (venv / "pipx_metadata.json").write_text("{}")
    path = os.pathsep.join([str(shadow.parent), *sys.path])
    done = subprocess.run(
        [venv / "bin/python", "-m", "teamlore.cli.main", "org", "status", "--format", "json"],
        env={**os.environ, "PYTHONPATH": path, "TEAMLORE_HOME": str(tmp_path / "state"),
             "TEAMLORE_ORG_DATABASE": "postgresql://127.0.0.1/orga"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 1 and error["code"] == "ORG_DATABASE_UNAVAILABLE", done.stderr
    assert error["next"] == (
        "Run `pipx inject teamlore 'psycopg[binary]>=3.1' 'psycopg_pool>=3.2'` (or, in your "
        "teamlore clone, `pipx install --force '.[org]'`), then run the command again."
    )


def test_a_database_a_newer_teamlore_wrote_says_to_upgrade_for_it_not_for_the_state_dir(
    home: Path, postgres_database: str
) -> None:
    import psycopg

    with psycopg.connect(postgres_database) as pg:
        pg.execute("CREATE TABLE org_schema (version integer NOT NULL)")
        pg.execute("INSERT INTO org_schema VALUES (999)")
    done = teamlore_cli("org", "status", "--database", postgres_database, "--format", "json")
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 1 and error["code"] == "DB_SCHEMA_TOO_NEW"
    assert error["next"] == "Upgrade teamlore to the version that last wrote the org database."


def test_what_pipx_inject_is_told_to_add_is_pyproject_s_org_extra() -> None:
    import tomllib

    from teamlore.org.backends import ORG_EXTRA

    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    extra = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]["org"]
    assert " ".join(f"'{requirement}'" for requirement in extra) == ORG_EXTRA


# ---------------------------------------------------------------------------------------------
# a database that is not UTF8 (docs/org.md "A team server"): a cluster `initdb` made in the C
# locale makes SQL_ASCII databases, whose text psycopg hands back as bytes. Every command
# refuses one before it writes anything, naming its encoding and how to create one that works;
# a client encoding the environment sets (PGCLIENTENCODING) does not change what teamlore speaks

CLI = [sys.executable, "-m", "teamlore.cli.main"]


@pytest.fixture(scope="module")
def ascii_database(postgres_cluster: Cluster) -> Iterator[tuple[str, str]]:
    """(name, URL) of an SQL_ASCII database of the module's cluster: what `createdb NAME`
    makes in a cluster `initdb` made in the C locale."""
    name = f"org_ascii_{uuid.uuid4().hex[:8]}"
    postgres_cluster.admin(
        f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' "
        "TEMPLATE template0"
    )
    try:
        yield name, postgres_cluster.url(name)
    finally:
        close_stores()
        with contextlib.suppress(Exception):
            postgres_cluster.admin(f"DROP DATABASE {name} WITH (FORCE)")


def tables_of(url: str) -> list[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    return [str(row[0]) for row in rows]


def refused_as_not_utf8(error: dict[str, str], name: str, port: int) -> None:
    assert error["code"] == "ORG_DATABASE_UNAVAILABLE", error
    assert error["message"] == (
        f"cannot use the org database at 127.0.0.1:{port}/{name}: its encoding is SQL_ASCII; "
        f"teamlore needs a UTF8 database: create a new one "
        f"(createdb -E UTF8 -T template0 {name}_utf8) or drop this one first"
    )  # `createdb … {name}` itself fails: that database exists
    assert error["next"] == (
        "Create a new UTF8 database under another name (`createdb -E UTF8 -T template0 NAME`) "
        'and use its URL, or drop this one first (docs/org.md "A team server").'
    )


@pytest.mark.parametrize(
    "command",
    [
        ("add", "CLONE"),
        ("sync", "--lexical"),
        ("search", "how", "do", "we", "deploy", "--lexical"),
        ("status",),
        ("token", "create", "ci"),
    ],
    ids=["add", "sync", "search", "status", "token-create"],
)
def test_a_database_that_is_not_utf8_is_refused_before_anything_is_written(
    home: Path,
    tmp_path: Path,
    postgres_cluster: Cluster,
    ascii_database: tuple[str, str],
    command: tuple[str, ...],
) -> None:
    name, url = ascii_database
    clone = make_clone(tmp_path, "billing", {"deploy": "Deploy billing with the script."})
    args = [str(clone) if arg == "CLONE" else arg for arg in command]
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": url}
    done = CliRunner().invoke(app, ["org", *args, "--format", "json"], env=env)
    close_stores()
    assert done.exit_code == 1, done.output
    error = json.loads(done.output)["error"]
    refused_as_not_utf8(error, name, postgres_cluster.port)
    assert tables_of(url) == []  # no schema, no repository, no token


def test_the_refusal_is_one_line_and_its_next(home: Path, ascii_database: tuple[str, str]) -> None:
    name, url = ascii_database
    done = CliRunner().invoke(app, ["org", "status", "--database", url], env={"COLUMNS": "300"})
    close_stores()
    assert done.exit_code == 1
    first, *rest = refusal_lines(done.output)
    assert first.startswith("error ORG_DATABASE_UNAVAILABLE: cannot use the org database at ")
    assert first.endswith(
        f": its encoding is SQL_ASCII; teamlore needs a UTF8 database: create a new one "
        f"(createdb -E UTF8 -T template0 {name}_utf8) or drop this one first"
    )
    assert [line.split(":")[0] for line in rest] == ["  next"]


def test_org_serve_refuses_a_database_that_is_not_utf8_before_it_listens(
    home: Path, ascii_database: tuple[str, str]
) -> None:
    name, url = ascii_database
    done = subprocess.run(
        [*CLI, "org", "serve", "--port", str(free_port()), "--database", url],
        env={**os.environ, "TEAMLORE_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        timeout=60,  # without the refusal it serves until killed
    )
    assert done.returncode == 1, done.stderr
    first = refusal_lines(done.stderr)[0]
    assert first.startswith("error ORG_DATABASE_UNAVAILABLE: cannot use the org database at ")
    assert first.endswith(
        f"its encoding is SQL_ASCII; teamlore needs a UTF8 database: create a new one "
        f"(createdb -E UTF8 -T template0 {name}_utf8) or drop this one first"
    )
    assert "MCP at" not in done.stderr  # it never said it listens
    assert tables_of(url) == []


def test_a_client_encoding_from_the_environment_does_not_change_what_the_index_speaks(
    home: Path, tmp_path: Path, postgres_database: str
) -> None:
    """PGCLIENTENCODING=LATIN1 (or `?client_encoding=…` in the URL) would have the server
    convert to an encoding Chinese has no place in: teamlore's connections speak UTF8."""
    clone = make_clone(tmp_path, "web", {"deploy": "部署前先运行迁移脚本。"})
    env = {
        "TEAMLORE_HOME": str(home),
        "TEAMLORE_ORG_DATABASE": postgres_database,
        "PGCLIENTENCODING": "LATIN1",
    }
    for args in (("add", str(clone)), ("sync", "--lexical")):
        done = CliRunner().invoke(app, ["org", *args], env=env)
        assert done.exit_code == 0, done.output
    found = CliRunner().invoke(app, ["org", "search", "部署", "--lexical", "-f", "json"], env=env)
    close_stores()
    assert found.exit_code == 0, found.output
    assert [hit["id"] for hit in json.loads(found.output)["results"]] == ["deploy"]
