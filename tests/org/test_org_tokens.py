"""Bearer tokens of `org serve` (docs/org.md "Serving"), through the real `teamlore org token`
commands on each backend: a token is printed alone on stdout, a revoked token's name can be
given to a new one, and a live one's cannot."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support import teamlore_cli


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


def test_a_revoked_tokens_name_can_be_given_to_a_new_token(
    home: Path, database: str | None
) -> None:
    first = token(home, database, "create", "ci").stdout.strip()
    assert token(home, database, "revoke", "ci").returncode == 0
    again = token(home, database, "create", "ci", "--format", "json")
    assert again.returncode == 0, again.stdout
    second = json.loads(again.stdout)["token"]
    assert second != first
    listed = json.loads(token(home, database, "list", "--format", "json").stdout)["tokens"]
    assert [(t["name"], t["revokedAt"]) for t in listed] == [("ci", None)]


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
