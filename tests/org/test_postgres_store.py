"""The PostgreSQL org store's connection string (docs/org.md "Storage"): whatever is wrong with
it, or with the server it names, the refusal is one line that never names the role or the
password, and nothing else is printed (psycopg_pool's own log lines included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from org_support import Cluster, free_port, postgres_cluster
from support import teamlore_cli

__all__ = ["postgres_cluster"]  # fixture


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
    first, *rest = text.stderr.splitlines()
    assert first.startswith("error ORG_DATABASE_URL_INVALID: ") and problem in first
    assert [line.split(":")[0] for line in rest] == ["  next"]  # no log lines of the pool
    assert json.loads(as_json.stdout)["error"]["code"] == "ORG_DATABASE_URL_INVALID"


def test_a_server_that_is_down_is_named_with_its_cause_and_never_the_credentials(
    home: Path,
) -> None:
    port = free_port()  # nothing listens there
    done = teamlore_cli("org", "status", "-d", f"postgresql://bob:hunter2@127.0.0.1:{port}/orga")
    assert done.returncode == 1
    first, *rest = done.stderr.splitlines()
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
    assert from_variable.stderr.splitlines()[1] == (
        "  next: Check the URL in TEAMLORE_ORG_DATABASE and that its server is running "
        "(unset it to use the embedded index)."
    )
    error = json.loads(as_json.stdout)["error"]
    assert error["code"] == "ORG_DATABASE_UNAVAILABLE"
    assert "TEAMLORE_ORG_DATABASE" in error["next"] and "--database" not in error["next"]
    assert from_option.stderr.splitlines()[1] == (
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
