"""A legacy locale (`en_US.ISO-8859-1`, `LC_ALL=C PYTHONUTF8=0`) and a project folder whose name
is UTF-8 (`código proj`, as mkdir or git clone makes it): the repository is found and used, its
path is shown as the text it is, and a query typed as UTF-8 is searched as typed
(`teamlore.cli.in_utf8_mode`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support import LATIN1, skip_without_latin1_locale, teamlore_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))

ASCII_NO_UTF8_MODE = {"LC_ALL": "C", "PYTHONUTF8": "0"}


@pytest.fixture(scope="module")
def latin1_locale() -> None:
    skip_without_latin1_locale()


@pytest.fixture()
def project(tmp_path: Path, home: Path) -> Path:
    """`código proj/app`: a git repository of two commits, and a Codex session in it about the
    database (数据库) in codex/."""
    from recall_world import CodexSession, commit, make_repo

    root = make_repo(tmp_path / "código proj" / "app")
    commit(root, "clock.py", "reloj = 1\n", when=__import__("recall_world").BASE)
    session = CodexSession("c1", root)
    session.turn("migrate the 数据库 schema", "Migrated the 数据库 schema.")
    session.turn("rename the código folder", "Renamed it.")
    session.write(tmp_path / "codex")
    return root


def run(env: dict[str, str], cwd: Path, *args: str) -> Any:
    done = teamlore_cli(*args, "--format", "json", cwd=cwd, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def test_a_repository_synced_in_a_latin1_locale_is_found_and_used(
    latin1_locale: None, project: Path, tmp_path: Path
) -> None:
    run(LATIN1, project, "sync", "--repository", ".", "--source", f"codex={tmp_path / 'codex'}")
    for env in (LATIN1, {}):  # the same repository in the legacy locale and back in UTF-8
        (listed,) = run(env, project, "repo", "list")["repositories"]
        assert (listed["status"], listed["commits"], listed["path"]) == ("ok", 2, str(project))


def test_a_query_typed_as_utf8_in_a_latin1_locale(
    latin1_locale: None, project: Path, home: Path
) -> None:
    from recall_world import sync

    sync(home, project.parent.parent / "codex", project)
    found = run(LATIN1, project, "sessions", "search", "数据库", "--lexical")
    assert (found["query"], len(found["hits"])) == ("数据库", 1), found
    # typed on a latin-1 terminal: the byte \xf3, not UTF-8, is read in the locale's encoding
    found = run(LATIN1, project, "sessions", "search", "c\udcf3digo", "--lexical")
    assert (found["query"], len(found["hits"])) == ("código", 1), found


def test_team_memory_in_a_latin1_locale(latin1_locale: None, project: Path, home: Path) -> None:
    run(LATIN1, project, "memory", "init")
    status = run(LATIN1, project, "memory", "status")
    assert status["tree"] == "present", status


def test_an_ascii_locale_without_utf8_mode_shows_the_path(project: Path, home: Path) -> None:
    from recall_world import sync

    sync(home, project.parent.parent / "codex", project)
    (listed,) = run(ASCII_NO_UTF8_MODE, project, "repo", "list")["repositories"]
    assert (listed["status"], listed["path"]) == ("ok", str(project))
    (session,) = run(ASCII_NO_UTF8_MODE, project, "sessions", "list")["sessions"]
    shown = teamlore_cli(
        "sessions", "show", session["sessionKey"], cwd=project, env=ASCII_NO_UTF8_MODE
    )
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert "c\\xf3digo proj/app" in shown.stdout  # an ASCII terminal gets ó as an escape


def test_an_error_handler_alone_in_pythonioencoding_keeps_the_locales_encoding(
    latin1_locale: None,
) -> None:
    """`PYTHONIOENCODING=:replace` names no encoding: the re-started process wrote UTF-8 to a
    latin-1 terminal."""
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "from teamlore.cli import in_utf8_mode; in_utf8_mode(); import sys;"
            " print(sys.flags.utf8_mode, sys.stdout.encoding)",
        ],
        env={**os.environ, **LATIN1, "PYTHONIOENCODING": ":replace"},
        capture_output=True,
        text=True,
    )
    assert shown.stdout.split() == ["1", "iso8859-1"], shown.stderr


def test_teamlores_own_symbols_reach_a_latin1_terminal_as_ascii_stand_ins(
    latin1_locale: None, project: Path, home: Path
) -> None:
    """A cut column's `…` went out as `\\u2026`, six cells where one was laid out: a stand-in
    (`...`) keeps the line near its width (text the terminal cannot show is still escaped:
    `c\\xf3digo` above)."""
    from recall_world import sync

    sync(home, project.parent.parent / "codex", project)
    listed = teamlore_cli("sessions", "list", cwd=project, env={**LATIN1, "COLUMNS": "30"})
    assert listed.returncode == 0, listed.stderr
    assert "..." in listed.stdout and "\\u2026" not in listed.stdout
