"""A new user's first mistakes, through the real `teamlore` executable: each is told as what it
is (the path typed, the option misspelled), before anything is written, in a person's words.

- a `sync --source` path that is not there: SOURCE_NOT_FOUND, where it read as "no new
  sessions" (exit 0), in the words said of a client not installed yet;
- `personal import` with a bad `--author` or a missing file: the usage error (exit 2) or
  FILE_NOT_FOUND first, where IMPORT_DISABLED (the default policy) hid both;
- a bad choice value: no pydantic `Value error, ` in the refusal;
- `memory recall --help` says the window is required.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from support import refusal_lines, teamlore_cli

DATA = Path(__file__).resolve().parents[1] / "sessions" / "data"


@pytest.fixture()
def user(tmp_path: Path) -> Path:
    """The user's home folder, with no client installed in it."""
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def run(user: Path, *args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    none = user / "not-installed"
    env = {
        "HOME": str(user),
        "COLUMNS": "80",
        "CODEX_HOME": str(none / ".codex"),
        "CLAUDE_CONFIG_DIR": str(none / ".claude"),
        "PI_CODING_AGENT_DIR": str(none / ".pi"),
    }
    done = teamlore_cli(*args, cwd=cwd, env=env)
    return done.returncode, done.stdout, done.stderr


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- 1. sync --source PATH that is not there ----------------------------------------------------


def test_a_source_path_typed_wrong_is_refused_naming_it_and_nothing_is_indexed(
    home: Path, user: Path
) -> None:
    code, out, err = run(user, "sync", "-s", f"claude={user / 'projetcs'}")
    assert (code, out) == (1, "")
    assert err.splitlines()[0] == (
        "error SOURCE_NOT_FOUND: --source claude=~/projetcs: no folder or file is there"
    )
    assert not (home / "index.sqlite3").exists()
    code, out, _ = run(user, "sync", "-s", f"claude={user / 'projetcs'}", "--format", "json")
    error = json.loads(out)["error"]
    assert (code, error["code"]) == (1, "SOURCE_NOT_FOUND")
    assert error["message"] == "--source claude=~/projetcs: no folder or file is there"
    assert not (home / "index.sqlite3").exists()


def test_with_several_sources_one_wrong_none_is_indexed(home: Path, user: Path) -> None:
    sessions = user / "sessions"
    shutil.copytree(DATA / "claude", sessions / "claude")
    shutil.copytree(DATA / "codex", sessions / "codex")
    good = f"claude={sessions / 'claude'}"
    code, out, err = run(user, "sync", "-s", good, "--format", "json")
    assert code == 0 and json.loads(out)["turns"] > 0, err
    before = digest(home / "index.sqlite3")
    typo = f"codex={user / 'sesions' / 'codex'}"  # the codex folder typed wrong
    for args in (("-s", good, "-s", typo), ("-s", typo, "-s", good, "-s", f"pi={user}")):
        code, out, err = run(user, "sync", "-s", f"codex={sessions / 'codex'}", *args)
        assert code == 1 and out == "", out
        assert "SOURCE_NOT_FOUND: --source codex=~/sesions/codex:" in err
        assert digest(home / "index.sqlite3") == before
    # only one provider asked for: the source typed wrong is still told, not skipped
    code, _, err = run(user, "sync", "-s", good, "-s", typo, "--provider", "claude")
    assert code == 1 and "SOURCE_NOT_FOUND" in err
    code, out, _ = run(user, "sync", "-s", f"codex={sessions / 'codex'}", "--format", "json")
    assert code == 0 and json.loads(out)["turns"] > 0


def test_a_source_that_is_a_file_is_read_when_it_is_a_session_file(home: Path, user: Path) -> None:
    """One transcript is a source (the session-end hook passes one); any other file is not."""
    transcript = user / "one.jsonl"
    shutil.copy(DATA / "claude" / "synthetic-main.jsonl", transcript)
    notes = user / "notes.md"
    notes.write_text("# not a session\n")
    code, _, err = run(user, "sync", "-s", f"claude={notes}")
    assert code == 1
    refusal = refusal_lines(err)[0]
    assert "SOURCE_NOT_FOUND: --source claude=~/notes.md: not a folder or a .jsonl file" in refusal
    assert not (home / "index.sqlite3").exists()
    code, out, err = run(user, "sync", "-s", f"claude={transcript}", "--format", "json")
    assert code == 0 and json.loads(out)["sessions"] == 1, err


def test_a_client_not_installed_is_only_said_as_before(home: Path, user: Path) -> None:
    """Default folders (and those config.toml names) that are not there: exit 0, one dim line
    each; Claude Code or Codex not installed yet is normal."""
    code, out, err = run(user, "sync")
    assert code == 0, err
    assert "no claude sessions at ~/not-installed/.claude/projects" in out + err
    config = home / "config.toml"
    config.write_text(f'[sources]\nclaude = ["{user / "elsewhere"}"]\n')
    code, out, err = run(user, "sync", "--provider", "claude", "--format", "json")
    assert code == 0, err
    sources = json.loads(out)["sources"]
    assert sources == [
        {"provider": "claude", "path": "~/elsewhere", "exists": False, "unreadable": None}
    ]


# -- 2. personal import: the arguments, then the file, then the policy ---------------------------


@pytest.mark.parametrize(
    ("args", "exit_code", "code"),
    [
        (["notes.md", "--author", "bogus"], 2, "INVALID_IMPORT_AUTHOR"),
        (["missing.md", "--author", "bogus"], 2, "INVALID_IMPORT_AUTHOR"),
        (["notes.md", "--label", ""], 2, "INVALID_IMPORT_LABEL"),
        (["missing.md"], 1, "FILE_NOT_FOUND"),
        (["notes.md"], 1, "IMPORT_DISABLED"),  # only a good call meets the policy
    ],
)
def test_an_import_refused_by_the_policy_is_told_its_own_mistake_first(
    home: Path, user: Path, args: list[str], exit_code: int, code: str
) -> None:
    """Document imports are off by default: a misspelled `--author` or a missing file said
    IMPORT_DISABLED, and allowing imports then only showed the real mistake."""
    (user / "notes.md").write_text("# Notes\n\nI use neovim.\n", encoding="utf-8")
    done, out, err = run(user, "personal", "import", *args, cwd=user)
    assert (done, out) == (exit_code, "")
    assert err.startswith(f"error {code}:"), err
    done, out, _ = run(user, "personal", "import", *args, "--format", "json", cwd=user)
    assert (done, json.loads(out)["error"]["code"]) == (exit_code, code)
    assert not home.exists()  # a refusal leaves no state dir behind


# -- 3. a bad choice value in a person's words ---------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("status", "--format", "xml"), "teamlore status: invalid value for '--format' / '-f'"),
        (("sessions", "list", "-f", "csv"), "teamlore sessions list: invalid value for '--format'"),
        (("memory", "status", "--format", "yaml"), "teamlore memory status: invalid value for"),
    ],
)
def test_a_bad_choice_is_refused_without_pydantics_words(
    home: Path, user: Path, args: tuple[str, ...], says: str
) -> None:
    code, out, err = run(user, *args)
    assert (code, out) == (2, "")
    first = refusal_lines(err)[0]
    assert first.startswith(f"error USAGE: {says}"), first
    bad = args[-1]
    assert first.endswith(f": {bad!r} is not one of 'text', 'json'"), first
    assert "Value error" not in err


# -- 4. memory recall --help says what it needs --------------------------------------------------


def test_recall_help_says_the_window_is_required(user: Path) -> None:
    code, out, _ = run(user, "memory", "recall", "--help")
    assert code == 0
    options = re.sub(r"\s+", " ", out)
    assert "--since DATE Window start (ISO date/time, UTC); required, as --until is, unless" in (
        options
    )
    assert "--until DATE Window end, exclusive; required unless --request." in options
