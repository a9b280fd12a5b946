"""Bearer tokens of `org serve` (docs/org.md "Serving"), through the real `teamlore org token`
commands on each backend: a token is printed alone on stdout, a revoked token's name can be
given to a new one, and a live one's cannot."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support import teamlore_cli
from teamlore.core import db


def token(home: Path, database: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": database or ""}
    return teamlore_cli("org", "token", *args, env=env)


def test_a_new_token_is_alone_on_stdout_and_the_notice_on_stderr(
    home: Path, database: str | None
) -> None:
    done = token(home, database, "create", "ci")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("tlorg_") and done.stdout.count("\n") == 1  # T=$(...) works
    assert "Shown once" in done.stderr


def listed(home: Path, database: str | None) -> list[tuple[str, str, str | None]]:
    tokens = json.loads(token(home, database, "list", "--format", "json").stdout)["tokens"]
    return [(t["name"], t["createdAt"], t["revokedAt"]) for t in tokens]


def test_a_revoked_tokens_name_can_be_given_to_a_new_token_and_the_old_ones_dates_stay(
    home: Path, database: str | None
) -> None:
    """Rotation (revoke, then create) is an audit trail: each revoked token keeps its own
    created and revoked dates, and the list shows them before the live one."""
    first = token(home, database, "create", "ci").stdout.strip()
    assert token(home, database, "revoke", "ci").returncode == 0
    [revoked] = listed(home, database)
    assert revoked[2] is not None
    again = token(home, database, "create", "ci", "--format", "json")
    assert again.returncode == 0, again.stdout
    second = json.loads(again.stdout)["token"]
    assert second != first
    rotated = listed(home, database)
    assert rotated[0] == revoked  # its dates untouched
    assert [(name, revoked_at) for name, _, revoked_at in rotated[1:]] == [("ci", None)]
    # rotated once more: both revoked tokens keep their dates, one token is live
    assert token(home, database, "revoke", "ci").returncode == 0
    assert token(home, database, "create", "ci").returncode == 0
    history = listed(home, database)
    assert len(history) == 3 and history[0] == revoked
    assert history[1][:2] == rotated[1][:2] and history[1][2] is not None
    assert history[2][2] is None


def test_tokens_of_an_index_made_before_rotation_kept_history_are_kept(
    home: Path, database: str | None
) -> None:
    """An index of schema 1 (one row per name) is migrated: its tokens stay as they were."""
    from teamlore.org import postgres_store, sqlite_store

    rows = [("ci", "a" * 64, "2024-01-02T03:04:05Z", "2024-02-03T04:05:06Z")]
    rows.append(("laptop", "b" * 64, "2024-03-04T05:06:07Z", None))
    insert = "INSERT INTO org_tokens VALUES (?, ?, ?, ?)"
    if database is None:
        home.mkdir(parents=True, exist_ok=True)
        conn = db.connect(home / "org.sqlite3", sqlite_store.MIGRATIONS[:1])
        with db.write_tx(conn):
            conn.executemany(insert, rows)
        conn.close()
    else:
        import psycopg

        with psycopg.connect(database) as pg:
            pg.execute(postgres_store.MIGRATIONS[0])
            pg.execute("CREATE TABLE org_schema (version integer NOT NULL)")
            pg.execute("INSERT INTO org_schema VALUES (1)")
            with pg.cursor() as cursor:
                cursor.executemany(insert.replace("?", "%s"), rows)
    assert listed(home, database) == [(n, c, r) for n, _, c, r in rows]
    refused = token(home, database, "create", "laptop", "--format", "json")
    assert json.loads(refused.stdout)["error"]["code"] == "ORG_TOKEN_EXISTS"
    assert token(home, database, "create", "ci").returncode == 0
    assert listed(home, database)[0] == ("ci", rows[0][2], rows[0][3])


def test_a_live_tokens_name_is_refused_with_how_to_rotate_it(
    home: Path, database: str | None
) -> None:
    token(home, database, "create", "ci")
    done = token(home, database, "create", "ci", "--format", "json")
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 1 and error["code"] == "ORG_TOKEN_EXISTS"
    assert error["message"] == "a live token is named ci already"
    assert "teamlore org token revoke" in error["next"]
    listed = json.loads(token(home, database, "list", "--format", "json").stdout)["tokens"]
    assert [(t["name"], t["revokedAt"]) for t in listed] == [("ci", None)]


def test_a_name_a_token_cannot_have_is_refused_in_words(home: Path) -> None:
    """What a token's name may be is said in words, never as the regular expression."""
    for command in ("create", "revoke"):
        done = token(home, None, command, "ci runner", "--format", "json")
        error = json.loads(done.stdout)["error"]
        assert (done.returncode, error["code"]) == (2, "INVALID_ARGUMENT")
        assert error["message"] == (
            "NAME: 'ci runner' is not a name of 1–64 ASCII letters, digits, '.', '-' or '_' "
            "that starts with a letter or digit"
        )
