"""A project folder whose name is not UTF-8 (`lat\\xf3n`: `mkdir` under a latin-1 locale makes
the byte \\xf3): the commands run from inside it answer, never INTERNAL. Its keys come from the
name's real bytes, its name is shown with the byte escaped, and registering it, which the index
cannot store, is refused with PATH_NOT_UTF8; a session recorded there is indexed."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessions.records import claude_assistant, claude_record, write_jsonl
from support import LATIN1, git, in_process, skip_without_latin1_locale, teamlore_cli
from teamlore.core import keys


@pytest.fixture()
def latin1_project(tmp_path: Path, home: Path) -> Path:
    """`lat\\xf3n`: a git repository of one commit, in a folder whose name is latin-1 bytes."""
    try:
        os.mkdir(os.fsencode(tmp_path) + b"/lat\xf3n")
    except OSError as exc:  # a file system that takes UTF-8 names only
        pytest.skip(f"the file system refuses a name that is not UTF-8: {exc}")
    root = tmp_path / os.fsdecode(b"lat\xf3n")
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("demo\n")
    git(root, "add", "README.md")
    git(root, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "one")
    return root


def test_the_key_of_a_utf8_path_is_the_one_stored_before(home: Path) -> None:
    """Keys are stored: a UTF-8 name keeps the key its UTF-8 text always gave."""
    secret = keys.origin_secret(home)
    before = hmac.new(secret, b"repository\x00/src/c\xc3\xb3digo/.git", hashlib.sha256)
    key = keys.repository_key("/src/código/.git", home)
    assert key == before.hexdigest()[: keys.KEY_HEX_CHARS]
    escaped = keys.repository_key(os.fsdecode(b"/src/c\xf3digo/.git"), home)
    assert escaped != key  # other bytes, another folder


def test_commands_in_a_folder_named_in_latin1(latin1_project: Path, tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    shown_cwd = str(latin1_project).replace("\udcf3", "\ufffd")  # as Node writes the name
    write_jsonl(
        claude / "-lat-n" / "s1.jsonl",
        [
            claude_record("user", "migrate the schema", session_id="s1", uuid="u1", cwd=shown_cwd),
            claude_assistant("Migrated.", session_id="s1", uuid="a1", cwd=shown_cwd),
        ],
    )
    refused = in_process("sync", "--repository", ".", cwd=latin1_project)
    assert refused.returncode == 1 and "INTERNAL" not in refused.stderr, refused.stderr
    said = " ".join(refused.stderr.split())  # the line as wrapped at the terminal's width
    assert "PATH_NOT_UTF8" in said and "lat\\xf3n is not UTF-8" in said, said
    synced = in_process("sync", "--source", f"claude={claude}", cwd=latin1_project)
    assert synced.returncode == 0, synced.stderr
    listed = in_process("sessions", "list", "--format", "json", cwd=latin1_project)
    assert [s["turns"] for s in json.loads(listed.stdout)["sessions"]] == [1], listed.stdout
    for args in (["status"], ["memory", "init"], ["memory", "status"]):
        done = in_process(*args, cwd=latin1_project)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
    again = in_process("memory", "init", cwd=latin1_project)
    assert again.stdout.startswith("lat\\xf3n already has a team memory tree"), again.stdout


def test_a_latin1_folder_in_a_latin1_locale(latin1_project: Path) -> None:
    skip_without_latin1_locale()
    refused = teamlore_cli("sync", "--repository", ".", cwd=latin1_project, env=LATIN1)
    assert (refused.returncode, "PATH_NOT_UTF8" in refused.stderr) == (1, True), refused.stderr
    made = teamlore_cli("memory", "init", cwd=latin1_project, env=LATIN1)
    assert made.returncode == 0 and "lat\\xf3n" in made.stdout, made.stderr


def test_recall_in_a_latin1_folder_says_what_sync_would(latin1_project: Path) -> None:
    """It advised `teamlore sync --repository .`, which refuses such a folder."""
    done = in_process(
        "memory",
        "recall",
        "--since",
        "2026-01-01",
        "--until",
        "2026-02-01",
        "--format",
        "json",
        cwd=latin1_project,
    )
    assert done.returncode == 1, done.stdout
    assert json.loads(done.stdout)["error"]["code"] == "PATH_NOT_UTF8", done.stdout


def test_sessions_filtered_by_a_latin1_folder_say_it_cannot_be_registered(
    latin1_project: Path, tmp_path: Path
) -> None:
    """`sessions list --repository lat\\xf3n` advised the sync that refuses such a folder, and
    wrote the folder's raw byte into its JSON (not UTF-8)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "teamlore",
            "sessions",
            "list",
            "--format",
            "json",
            "--repository",
            os.fsdecode(os.fsencode(latin1_project)),
        ],
        capture_output=True,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    answer = json.loads(done.stdout.decode("utf-8"))  # strict: every byte UTF-8
    assert answer["error"]["code"] == "PATH_NOT_UTF8", answer


def test_a_state_dir_named_in_latin1_opens_its_databases(tmp_path: Path) -> None:
    """`TEAMLORE_HOME=~/st\\xf3te` was INTERNAL on every command (the database's URI was built
    from the name's text, which cannot be UTF-8-encoded): the databases open at the name's real
    bytes, and JSON shows the byte escaped."""
    try:
        os.mkdir(os.fsencode(tmp_path) + b"/st\xf3te")
    except OSError as exc:  # a file system that takes UTF-8 names only
        pytest.skip(f"the file system refuses a name that is not UTF-8: {exc}")
    state = os.fsdecode(os.fsencode(tmp_path) + b"/st\xf3te")
    env = {**os.environ, "TEAMLORE_HOME": state}
    done = subprocess.run(
        [sys.executable, "-m", "teamlore", "status", "--format", "json"],
        capture_output=True,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout.decode("utf-8"))  # strict: every byte UTF-8
    assert answer["stateDir"].endswith("/st\\xf3te")
    assert (Path(state) / "index.sqlite3").exists()
