"""The real `teamlore` executable: JSON shapes, exit codes, stable error codes, state untouched."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support import (
    entry_file,
    fill_to_the_last_byte,
    in_process,
    refusal_lines,
    teamlore_cli,
    tmpfs,
)
from teamlore import __version__
from teamlore.core.lock import file_lock
from teamlore.models.cache import MODEL_CACHE_ENV

Run = Callable[..., subprocess.CompletedProcess[str]]
DATA = Path(__file__).resolve().parents[1] / "sessions" / "data"


@pytest.fixture()
def sources(tmp_path: Path) -> Path:
    root = tmp_path / "sources"
    shutil.copytree(DATA / "claude", root / "claude")
    shutil.copytree(DATA / "codex", root / "codex")
    return root


def sync_json(sources: Path, *extra: str, run: Run = in_process) -> tuple[int, dict]:
    """`teamlore sync --format json` of the fixture sources: in this process, or (`run`) in a
    process of its own where another process is the subject (a sync that runs meanwhile)."""
    proc = run(
        "sync",
        "--source",
        f"claude={sources / 'claude'}",
        "--source",
        f"codex={sources / 'codex'}",
        "--format",
        "json",
        *extra,
    )
    return proc.returncode, json.loads(proc.stdout)


def test_sync_json_reports_files_sessions_turns_bytes_and_diagnostics(
    home: Path, sources: Path
) -> None:
    code, result = sync_json(sources)
    assert code == 0
    assert set(result) >= {"files", "sessions", "turns", "bytesRead", "diagnostics"}
    assert set(result["files"]) >= {"seen", "changed", "failed"}
    assert result["files"]["failed"] == 0 and result["turns"] > 0 and result["bytesRead"] > 0
    for diagnostic in result["diagnostics"]:
        assert set(diagnostic) == {"code", "file", "line", "message"}
    code, again = sync_json(sources)
    assert (code, again["files"]["changed"], again["bytesRead"]) == (0, 0, 0)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_stdout_that_is_not_utf8_gets_every_character_escaped(home: Path, encoding: str) -> None:
    """A terminal or pipe in a legacy locale: what it cannot encode is printed as a backslash
    escape in the text view and as JSON's `\\u` escapes with --format json (read back as the
    same characters); nothing fails half-way with a UnicodeEncodeError."""
    personal = home / "personal"
    personal.mkdir(parents=True, mode=0o700)
    (personal / "profile.md").write_text("# Profile\n\n## Work\n用户写 Rust — 😀。\n")
    env = {"PYTHONIOENCODING": encoding}
    text = teamlore_cli("personal", "show", env=env)
    assert (text.returncode, text.stderr) == (0, "")
    assert "\\u7528\\u6237\\u5199 Rust \\u2014 \\U0001f600\\u3002" in text.stdout
    as_json = teamlore_cli("personal", "show", "--format", "json", env=env)
    assert as_json.returncode == 0 and as_json.stdout.isascii()
    profile = json.loads(as_json.stdout)["documents"][0]["content"]
    assert profile.endswith("用户写 Rust — 😀。\n")


def _imported_by(*args: str, stdin: str | None = None) -> tuple[str, set[str]]:
    """Run `teamlore ARGS` through the console entry (`stdin` its input, as a hook gets its
    payload); its stdout and the modules it imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "teamlore.cli.entry", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=os.environ,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    return proc.stdout, {line.rsplit("|", 1)[-1].strip() for line in lines}


def test_version_is_printed_without_loading_the_cli() -> None:
    """`teamlore --version` (what doctor and a person check first) took as long as any typer
    command: 0.26 s where the interpreter takes 0.04 s."""
    out, modules = _imported_by("--version")
    assert out == f"teamlore {__version__}\n"
    assert not {m.split(".")[0] for m in modules} & {"typer", "click", "rich", "pydantic"}
    assert in_process("--version").stdout == out  # typer's option, where typer parses


def _append_claude_turn(path: Path, text: str) -> None:
    envelope = {"sessionId": "99999999-2222-4333-8444-555555555555", "cwd": "/home/dev/shop"}
    lines = [
        {
            "type": "user",
            "uuid": "p-0",
            "parentUuid": None,
            "message": {"role": "user", "content": text},
            "timestamp": "2026-03-02T10:00:00.000Z",
            **envelope,
        },
        {
            "type": "assistant",
            "uuid": "p-1",
            "parentUuid": "p-0",
            "message": {
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "id": "msg_P1",
                "type": "message",
                "content": [{"type": "text", "text": "Done."}],
                "stop_reason": "end_turn",
            },
            "timestamp": "2026-03-02T10:00:01.000Z",
            **envelope,
        },
    ]
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)


def test_sync_and_search_processes_import_only_the_session_commands(
    home: Path, sources: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MODEL_CACHE_ENV)  # the tokenizer's subsets are derived into the state dir
    # a sync process then a search process is how a person checks a finished turn is findable:
    # neither imports the other command modules or memory operations (docs/cli.md)
    for args in (
        ("sync", "--source", f"claude={sources / 'claude'}", "--format", "json"),
        ("sessions", "search", "fixture", "--format", "json"),
        ("status",),
    ):
        out, modules = _imported_by(*args)
        assert out and "teamlore.ops.sessions.index" in modules
        assert not [
            m
            for m in modules
            if (m.startswith("teamlore.cli.commands.") and m != "teamlore.cli.commands.sessions")
            or m.startswith("teamlore.memory")
        ]
        # their plain arguments are parsed without typer (cli/params.py); JSON needs no rich
        assert not [m for m in modules if m.split(".")[0] in {"typer", "click"}]
        if "json" in args:
            assert not [m for m in modules if m.split(".")[0] == "rich"]
    # nothing new to embed: the embedding model and numpy stay unloaded (docs/hybrid-search.md)
    out, modules = _imported_by("sync", "--source", f"claude={sources / 'claude'}")
    assert "Embedded" not in out or " 0 turns" in out
    assert not modules & {"numpy", "tokenizers", "safetensors"}
    # no repository registered: no commit scan or delivery edges to load either
    assert not modules & {"teamlore.repo.commits", "teamlore.repo.delivery"}
    # one new turn: tokenized and embedded without `tokenizers` or numpy (models/plain_rows.py)
    _append_claude_turn(sources / "claude" / "appended.jsonl", "a turn appended just now")
    out, modules = _imported_by(
        "sync", "--source", f"claude={sources / 'claude'}", "--format", "json"
    )
    assert json.loads(out)["vectors"]["embeddedTurns"] == 1
    assert "teamlore.models.tokenizer_subsets" in modules
    assert not modules & {"numpy", "tokenizers", "safetensors"}
    # a query is embedded from memory-mapped weights, tokenized by only its merges, derived
    # once into the state dir, and a small index is scanned without numpy ("Embedding a query
    # in a fresh process"); JSON output: no rich at all (no console, progress bar or table code)
    out, modules = _imported_by("sessions", "search", "fixture", "--format", "json")
    assert json.loads(out)["paths"] == ["lexical", "vector"]
    assert "teamlore.models.tokenizer_subsets" in modules
    assert not modules & {"numpy", "tokenizers", "safetensors"}
    assert not [m for m in modules if m.split(".")[0] == "rich"]
    # nor the indexer, the turn assembler or the repository tables: they serve sync and listing
    assert not modules & {
        "teamlore.sessions.indexer",
        "teamlore.sessions.assembler",
        "teamlore.sessions.model",
        "teamlore.repo.tables",
    }
    assert list((home / "models").glob("tokenizer-subsets-*.marshal"))
    _, modules = _imported_by("sync", "--help")  # the help lists every command
    assert "teamlore.cli.commands.memory" in modules


def test_a_sync_whose_turns_the_helper_embedded_loads_no_numpy(
    home: Path, sources: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the analysis helper embeds and quantizes every turn of a bulk sync; the sync process only
    # stores the rows it sends: neither numpy nor the model loads there (docs/sessions.md)
    monkeypatch.setenv("TEAMLORE_ANALYSIS_HELPER", "on")
    args = ("sync", "--source", f"claude={sources / 'claude'}", "--format", "json")
    out, modules = _imported_by(*args)
    vectors = json.loads(out)["vectors"]
    assert vectors["status"] == "done" and vectors["embeddedTurns"] > 0
    assert vectors["turnsWithVector"] == vectors["turns"]
    assert not modules & {"numpy", "tokenizers", "safetensors"}


def test_status_names_the_file_and_line_of_each_recent_diagnostic(
    home: Path, sources: Path
) -> None:
    """As the sync that found them does: a count alone sent a person looking for the file."""
    broken = sources / "claude" / "broken.jsonl"
    broken.write_text('{"type": "user", "message": \n')
    sync_json(sources)
    status = json.loads(in_process("status", "--format", "json").stdout)["diagnostics"]
    [diagnostic] = [d for d in status["recent"] if d["file"].endswith("broken.jsonl")]
    assert diagnostic == {
        "code": "bad-json",
        "file": str(broken),  # the way display_path shows a path outside the home folder
        "line": 1,
        "message": "line is not valid JSON; skipped",
    }
    text = in_process("status", env={"COLUMNS": "80"}).stdout
    assert f"Diagnostics {status['count']}:" in text
    assert f"  bad-json  {broken}:1  line is not valid JSON; skipped" in text


def test_status_lists_its_recent_diagnostics_in_the_order_the_sync_found_them(
    home: Path, sources: Path
) -> None:
    """A file's lines in order, as the sync printed them (newest first read `:3` above `:2`);
    still the ten newest when there are more."""
    broken = sources / "claude" / "broken.jsonl"
    broken.write_text("".join(f"{{garbage {n}\n" for n in range(12)))
    sync_json(sources)
    status = json.loads(in_process("status", "--format", "json").stdout)["diagnostics"]
    lines = [d["line"] for d in status["recent"] if d["file"].endswith("broken.jsonl")]
    assert len(lines) >= 3 and lines == list(range(lines[0], lines[0] + len(lines)))
    text = in_process("status", env={"COLUMNS": "80"}).stdout
    at = [text.index(f"{broken}:{n} ") for n in lines]
    assert at == sorted(at)


def test_sessions_list_show_and_search(home: Path, sources: Path) -> None:
    sync_json(sources)
    listed = json.loads(in_process("sessions", "list", "--format", "json").stdout)["sessions"]
    assert listed and set(listed[0]) >= {
        "provider",
        "sessionKey",
        "cwd",
        "startedAt",
        "endedAt",
        "turns",
        "repository",
    }
    key = next(s["sessionKey"] for s in listed if s["turns"])
    shown = json.loads(in_process("sessions", "show", key, "--format", "json").stdout)
    assert shown["session"]["sessionKey"] == key and shown["turns"]
    hits = json.loads(in_process("sessions", "search", "cart rounding", "--format", "json").stdout)
    assert hits["hits"] and set(hits["hits"][0]) >= {
        "sessionKey",
        "turn",
        "provider",
        "snippet",
        "score",
    }


def test_sessions_list_shows_a_page_and_says_how_many_more(home: Path, sources: Path) -> None:
    sync_json(sources)
    every = json.loads(in_process("sessions", "list", "--format", "json").stdout)
    total = len(every["sessions"])
    assert total >= 3 and every["more"] == 0  # fewer than a page: all of them, nothing more
    page = json.loads(in_process("sessions", "list", "-n", "2", "--format", "json").stdout)
    assert page["sessions"] == every["sessions"][:2] and page["more"] == total - 2
    text = in_process("sessions", "list", "-n", "2").stdout
    assert f"… {total - 2} more sessions (`--limit {total}` lists them all)" in text
    assert "more session" not in in_process("sessions", "list").stdout


def test_an_empty_list_says_whether_the_index_or_the_filters_are_empty(
    home: Path, sources: Path
) -> None:
    assert "No sessions yet. `teamlore sync`" in in_process("sessions", "list").stdout
    sync_json(sources)
    later = in_process("sessions", "list", "--since", "2099-01-01").stdout
    assert later == "No sessions match these filters; `teamlore sessions list` lists every one.\n"


def test_an_unquoted_multi_word_search_is_one_query(home: Path, sources: Path) -> None:
    sync_json(sources)
    unquoted = in_process("sessions", "search", "cart", "rounding", "--format", "json")
    assert unquoted.returncode == 0, unquoted.stderr
    quoted = in_process("sessions", "search", "cart rounding", "--format", "json")
    assert json.loads(unquoted.stdout) == json.loads(quoted.stdout)
    assert json.loads(unquoted.stdout)["hits"]
    text = in_process("sessions", "search", "cart", "rounding")
    assert text.returncode == 0 and "score" in text.stdout


@pytest.mark.parametrize(
    ("args", "code", "exit_code"),
    [
        (["sessions", "show", "nope"], "SESSION_NOT_FOUND", 1),
        (["sessions", "search", "?!,"], "QUERY_EMPTY", 2),
        (["sessions", "search", ""], "QUERY_EMPTY", 2),  # was INVALID_ARGUMENT, " " QUERY_EMPTY
        (["sessions", "search", "a" * 300], "QUERY_EMPTY", 2),
        # a window with since after until matched nothing, silently: a usage error
        (
            ["sessions", "search", "x", "--since", "2026-02-01", "--until", "2026-01-01"],
            "WINDOW_INVALID",
            2,
        ),
        (
            ["sessions", "list", "--since", "2026-02-01", "--until", "2026-01-01"],
            "WINDOW_INVALID",
            2,
        ),
        (["sessions", "list", "--since", "yesterday"], "INVALID_ARGUMENT", 2),
        # past the largest integer SQLite holds: a usage error, not an internal one
        (["sessions", "show", "nope", "--turn", "9" * 20], "INVALID_ARGUMENT", 2),
        (["sessions", "show", "nope", "--turn", "1", "--tool", "9" * 20], "INVALID_ARGUMENT", 2),
        (["sync", "--source", "gemini=/tmp"], "INVALID_ARGUMENT", 2),
        # a source no file system can hold (a name too long): named, not an internal error
        (["sync", "--source", "claude=" + "x" * 5_000], "INVALID_ARGUMENT", 2),
    ],
)
def test_refusals_carry_stable_codes(
    home: Path, args: list[str], code: str, exit_code: int
) -> None:
    proc = teamlore_cli(*args, "--format", "json")
    assert proc.returncode == exit_code, proc.stderr
    assert json.loads(proc.stdout)["error"]["code"] == code


def test_a_search_refusal_says_which_value_was_wrong(home: Path, tmp_path: Path) -> None:
    """The path as given (`-r /nonexistent` named only `nonexistent`), a word too long to
    search (it said "has no searchable terms"), both ends of a reversed window (it matched
    nothing, silently)."""
    missing = tmp_path / "missing"
    for command in (["sessions", "search"], ["memory", "search"]):
        text = teamlore_cli(*command, "x", "-r", str(missing), env={"COLUMNS": "80"})
        assert text.returncode == 1 and text.stdout == ""
        assert refusal_lines(text.stderr)[0] == (
            f"error PATH_NOT_FOUND: {missing} does not exist; give the folder of a git repository"
        )
    text = teamlore_cli("sessions", "search", "a" * 300, env={"COLUMNS": "80"})
    assert text.returncode == 2
    assert refusal_lines(text.stderr)[0] == (
        f"error QUERY_EMPTY: '{'a' * 99}…[162 characters]…{'a' * 39}' is too long to search"
        " (over 64 characters)"
    )
    window = ["--since", "2026-02-01", "--until", "2026-01-01"]
    text = teamlore_cli("sessions", "search", "x", *window, env={"COLUMNS": "80"})
    assert text.returncode == 2 and text.stdout == ""
    assert refusal_lines(text.stderr) == [
        "error WINDOW_INVALID: since 2026-02-01T00:00:00.000Z is not before until"
        " 2026-01-01T00:00:00.000Z: the window is empty or reversed",
        "  next: Give `--since` before `--until` (ISO dates or instants, any span).",
    ]


def test_a_refusal_in_the_text_view_says_what_to_do_next(home: Path) -> None:
    """A person reading the text view gets the problem and then what to do about it: the same
    `next` the JSON carries."""
    text = in_process("sessions", "show", "no-such-key", env={"COLUMNS": "80"})
    assert text.returncode == 1 and text.stdout == ""
    assert text.stderr.splitlines() == [
        "error SESSION_NOT_FOUND: no indexed session has key no-such-key",
        "  next: Find the session's key with `teamlore sessions list`.",
    ]
    as_json = in_process("sessions", "show", "no-such-key", "--format", "json")
    error = json.loads(as_json.stdout)["error"]
    assert text.stderr.splitlines()[1] == f"  next: {error['next']}"


@pytest.mark.parametrize(
    "command",
    [
        "status",  # through typer
        "sessions search deploy",  # the lean path (cli/params.py)
        "memory status",  # --repository read before the operation runs
        "memory search deploy -r relative",
        "mcp --capability team-read",  # the server's own entry
    ],
)
def test_a_current_folder_deleted_under_the_shell_is_one_refusal(
    home: Path, tmp_path: Path, command: str
) -> None:
    """`git worktree remove` or `rm -rf` of the folder a shell stands in: every command died
    with a FileNotFoundError traceback or `INTERNAL`, and `teamlore mcp` with a traceback the
    agent's client showed as a server that would not start."""
    gone = tmp_path / "gone"
    gone.mkdir()
    exe = shutil.which("teamlore", path=str(Path(sys.executable).parent)) or "teamlore"
    done = subprocess.run(
        ["sh", "-c", f'cd "{gone}" && rmdir "$PWD" && exec "{exe}" {command} </dev/null'],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert done.returncode == 1, done.stderr
    assert refusal_lines(done.stderr) == [
        "error CWD_GONE: the current folder no longer exists: it was deleted or moved while"
        " your shell was in it",
        "  next: Go to a folder that exists (`cd`), then run the command again.",
    ]


def test_a_malformed_id_is_refused_by_its_flag_with_the_form_it_takes(
    home: Path, tmp_path: Path
) -> None:
    """`memory promote --plan nope`: the flag the person typed and what a plan id looks like,
    never the field's regex."""
    text = teamlore_cli("memory", "promote", "--plan", "nope", cwd=tmp_path, env={"COLUMNS": "80"})
    assert text.returncode == 2
    assert refusal_lines(text.stderr)[0] == (
        "error INVALID_ARGUMENT: --plan: 'nope' is not a whole id like "
        "0b6c8d1e-3f2a-4c5b-9d7e-1a2b3c4d5e6f"
    )


def test_a_refusal_quoting_a_huge_argument_stays_one_readable_line(home: Path) -> None:
    """A 3,000-character word as a query, session key or date: the text view shows one short
    line naming the problem, with the start and end of what was given, then what to do."""
    huge = "x" * 3_000
    for args in (
        ["sessions", "search", huge],
        ["sessions", "show", huge],
        ["sessions", "list", "--since", huge],
    ):
        proc = teamlore_cli(*args, env={"COLUMNS": "80"})
        assert proc.returncode in (1, 2), proc.stderr
        lines = refusal_lines((proc.stdout + proc.stderr).strip())
        assert len(lines) == 2 and len(lines[0]) < 240, lines
        assert lines[0].startswith("error ") and "characters]" in lines[0]
        assert lines[1].startswith("  next: ") and len(lines[1]) < 120, lines


def test_a_configured_source_no_file_can_have_is_config_invalid(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[sources]\nclaude = ["/tmp/a\\u0000b"]\n')
    proc = in_process("sync", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "CONFIG_INVALID" and "[sources] claude" in error["message"]


def test_usage_errors_exit_2(home: Path) -> None:
    assert teamlore_cli("sync", "--no-such-flag").returncode == 2
    assert teamlore_cli("sessions", "show").returncode == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["memory", "promote"], "teamlore memory promote: missing option '--plan'"),
        (["sessions", "search"], "teamlore sessions search: missing argument 'QUERY'"),
        (["sessions", "list", "--bogus"], "teamlore sessions list: no such option: --bogus"),
        (["no-such-command"], "teamlore: no such command 'no-such-command'"),
    ],
)
def test_a_usage_error_is_a_refusal_like_any_other(
    home: Path, args: list[str], message: str
) -> None:
    """What the argument parser refuses reads as every refusal does: a code, one line, what to
    do next; with `--format json` (as typed: the parse failed) the error document on stdout."""
    text = teamlore_cli(*args, env={"COLUMNS": "80"})
    assert (text.returncode, text.stdout) == (2, "")
    assert refusal_lines(text.stderr) == [
        f"error USAGE: {message}",
        "  next: Run the command with `--help` to see its arguments, then call it again.",
    ]
    for json_flag in (["--format", "json"], ["--format=json"], ["-f", "json"]):
        proc = teamlore_cli(*args, *json_flag)
        assert proc.returncode == 2 and proc.stderr == ""
        assert json.loads(proc.stdout)["error"] == {
            "code": "USAGE",
            "message": message,
            "problem": message,
            "next": "Run the command with `--help` to see its arguments, then call it again.",
        }


def test_a_value_of_the_wrong_type_names_its_flag(home: Path) -> None:
    proc = teamlore_cli("sessions", "search", "x", "--limit", "abc", "--format", "json")
    assert proc.returncode == 2
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "USAGE" and "'--limit'" in error["message"]


def test_a_group_without_a_command_shows_its_help(home: Path) -> None:
    proc = teamlore_cli("memory")
    assert proc.returncode == 2 and "Usage: teamlore memory [OPTIONS] COMMAND" in proc.stderr
    assert teamlore_cli("memory", "--help").returncode == 0


def test_registering_a_non_repository_is_refused_and_changes_nothing(
    home: Path, sources: Path, tmp_path: Path
) -> None:
    sync_json(sources)
    before = sorted(p.name for p in home.iterdir())
    config = (home / "config.toml").read_bytes() if (home / "config.toml").exists() else None
    not_repo = tmp_path / "plain"
    not_repo.mkdir()
    code, result = sync_json(sources, "--repository", str(not_repo))
    assert code == 1 and result["error"]["code"] == "NOT_A_GIT_REPOSITORY"
    assert sorted(p.name for p in home.iterdir()) == before
    after = (home / "config.toml").read_bytes() if (home / "config.toml").exists() else None
    assert after == config


def test_a_second_sync_refuses_while_one_runs(home: Path, sources: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    with file_lock(home / "sync.lock"):
        code, result = sync_json(sources, "--wait", "0", run=teamlore_cli)
    assert code == 1 and result["error"]["code"] == "LOCK_BUSY"
    code, _ = sync_json(sources, "--wait", "0", run=teamlore_cli)
    assert code == 0


def test_text_output_is_readable(home: Path, sources: Path) -> None:
    proc = in_process("sync", "--source", f"claude={sources / 'claude'}")
    assert proc.returncode == 0
    assert "Indexed" in proc.stdout and "sessions" in proc.stdout


def test_help_lists_the_command_groups() -> None:
    out = teamlore_cli("--help").stdout
    for group in ("sync", "sessions", "memory", "status", "mcp", "demo"):
        assert group in out


def test_sessions_show_accepts_a_unique_key_prefix(home: Path, sources: Path) -> None:
    sync_json(sources)
    listed = json.loads(in_process("sessions", "list", "--format", "json").stdout)["sessions"]
    key = next(s["sessionKey"] for s in listed if s["turns"])
    assert len(key) == 64
    shown = json.loads(in_process("sessions", "show", key[:12], "--format", "json").stdout)
    assert shown["session"]["sessionKey"] == key
    short = json.loads(in_process("sessions", "show", key[:5], "--format", "json").stdout)
    assert short["error"]["code"] == "SESSION_NOT_FOUND"


def test_a_turn_appended_since_the_last_sync_is_found_by_the_next_search(
    home: Path, sources: Path
) -> None:
    # append -> searchable in one process (docs/sessions.md, "Searching what was just said")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import corpus

    sync_json(sources, run=teamlore_cli)

    def search(*extra: str) -> dict:
        proc = teamlore_cli("sessions", "search", token, "--lexical", "--format", "json", *extra)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    for n, name in enumerate(("claude/synthetic-main.jsonl", "codex/envelope-0.60.jsonl")):
        token = f"zqfresh{n}"
        corpus.append_turn(sources / name, token, at_ms=1_780_000_000_000 + n)
        unsynced = search("--no-sync")
        assert unsynced["hits"] == [] and unsynced["refreshed"] is None
        found = search()
        assert found["refreshed"] == {"files": 1, "turns": 1, "skipped": None}
        assert [token in h["snippet"] for h in found["hits"]] == [True]
        assert search()["refreshed"] == {"files": 0, "turns": 0, "skipped": None}
    # a sync running: the search does not wait for it, and says it searched the index as it is
    corpus.append_turn(
        sources / "codex" / "envelope-0.60.jsonl", "zqlater", at_ms=1_790_000_000_000
    )
    token = "zqlater"
    with file_lock(home / "sync.lock"):
        busy = search()
    assert busy["hits"] == [] and "another teamlore process" in busy["refreshed"]["skipped"]
    text = teamlore_cli("sessions", "search", "zqlater", "--lexical").stdout
    assert "Indexed 1 new turn from 1 grown file first." in text and "zqlater" in text


def test_an_empty_or_blank_search_is_refused_before_it_indexes_the_grown_files(
    home: Path, sources: Path
) -> None:
    """A refusal leaves the index as it was: QUERY_EMPTY comes before the search-time refresh
    (docs/sessions.md, "Searching what was just said"), which takes the sync lock and writes."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import corpus

    sync_json(sources)
    corpus.append_turn(sources / "claude/synthetic-main.jsonl", "zqrefused", at_ms=1_780_000_000)
    for query in ("", " "):
        proc = in_process("sessions", "search", query, "--format", "json")
        assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["code"] == "QUERY_EMPTY"
    search = ("sessions", "search", "zqrefused", "--lexical", "--format", "json")
    assert json.loads(in_process(*search, "--no-sync").stdout)["hits"] == []
    found = json.loads(in_process(*search).stdout)
    assert found["refreshed"] == {"files": 1, "turns": 1, "skipped": None}


@pytest.mark.parametrize(
    ("state_file", "command"),
    [
        ("index.sqlite3", ("status",)),
        ("index.sqlite3", ("sync",)),
        ("index.sqlite3", ("sessions", "search", "release")),
        ("memory-state.sqlite3", ("memory", "status")),
        ("memory-state.sqlite3", ("memory", "search", "release")),
    ],
    ids=lambda value: value if isinstance(value, str) else " ".join(value),
)
def test_a_state_file_that_is_a_folder_is_state_invalid_not_internal(
    home: Path, tmp_path: Path, state_file: str, command: tuple[str, ...]
) -> None:
    """Issue 27: the index file being a directory gave `INTERNAL: IsADirectoryError`."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert in_process("memory", "init", cwd=repo).returncode == 0
    for name in ("index.sqlite3", "memory-state.sqlite3"):
        (home / name).unlink(missing_ok=True)
    (home / state_file).mkdir()
    result = in_process(*command, "--format", "json", cwd=repo, env={"HOME": str(tmp_path)})
    assert result.returncode == 1
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "STATE_INVALID"
    assert f"{state_file} in the state directory is a folder" in error["message"]
    assert (home / state_file).is_dir() and not list((home / state_file).iterdir())
    text = in_process(*command, cwd=repo, env={"HOME": str(tmp_path)})
    assert text.returncode == 1 and "move it aside" in text.stderr


ENTRY = entry_file("tag-before-push", "Tag the release before pushing it.")


@pytest.fixture()
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 MiB tmpfs for the state dir (real ENOSPC, not a mock): room for what the commands
    before the fill write (models, index, the state database and its WAL)."""
    with tmpfs(tmp_path / "state", "8m") as state:
        yield state


def repo_with_one_entry(
    state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, dict[str, str]]:
    """A git repository with a memory tree of one entry, and the environment of a user whose
    state dir is `state`."""
    monkeypatch.delenv(MODEL_CACHE_ENV)  # the models are derived into (and fail on) this disk
    env = {"TEAMLORE_HOME": str(state), "HOME": str(tmp_path)}
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert teamlore_cli("memory", "init", cwd=repo, env=env).returncode == 0
    (repo / ".threadshare/memory/entries/tag-before-push.md").write_text(ENTRY)
    return repo, env


def test_read_only_commands_work_on_a_full_disk_and_writes_say_what_frees_space(
    full_disk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27: `memory search`, `memory status`, `memory lint` refused with DISK_FULL."""
    repo, env = repo_with_one_entry(full_disk, tmp_path, monkeypatch)
    assert teamlore_cli("sync", "--repository", ".", cwd=repo, env=env).returncode == 0
    assert teamlore_cli("memory", "search", "tag", cwd=repo, env=env).returncode == 0
    fill_to_the_last_byte(full_disk)

    for command in [
        ("memory", "search", "tag release"),
        ("memory", "status"),
        ("memory", "lint"),
        ("sessions", "search", "release"),
        ("status",),
    ]:
        result = teamlore_cli(*command, "--format", "json", cwd=repo, env=env)
        assert result.returncode == 0, (command, result.stdout, result.stderr)
    found = teamlore_cli("memory", "search", "tag", "--format", "json", cwd=repo, env=env)
    assert "tag-before-push" in found.stdout

    write = teamlore_cli("sync", "--repository", ".", cwd=repo, env=env)
    assert write.returncode == 1
    assert "DISK_FULL" in write.stderr and "to free space" in write.stderr
    assert "filler" in write.stderr  # the biggest thing in the state dir is named
    assert str(full_disk) not in write.stderr


def test_read_commands_skip_their_derived_writes_when_the_disk_fills_under_an_open_database(
    full_disk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # another process (an MCP server) keeps the state database open, so its WAL stays and a
    # command opens it for writing as usual: the records `memory status` and search keep
    # (lint results, the tree's file identities) meet ENOSPC and are skipped, not the answer
    repo, env = repo_with_one_entry(full_disk, tmp_path, monkeypatch)
    assert teamlore_cli("memory", "search", "tag", cwd=repo, env=env).returncode == 0
    held = sqlite3.connect(full_disk / "memory-state.sqlite3")
    held.execute("SELECT count(*) FROM approved_entries").fetchone()
    try:
        fill_to_the_last_byte(full_disk)
        status = teamlore_cli("memory", "status", "--format", "json", cwd=repo, env=env)
        assert status.returncode == 0, status.stdout
        assert json.loads(status.stdout)["lint"]["files"] == 2
        found = teamlore_cli("memory", "search", "tag", "--format", "json", cwd=repo, env=env)
        assert found.returncode == 0 and "tag-before-push" in found.stdout
        assert held.execute("SELECT count(*) FROM lint_results").fetchone()[0] == 0
    finally:
        held.close()


def test_python_m_teamlore_is_the_teamlore_command(sources: Path) -> None:
    """Where the scripts folder is not on PATH, `python -m teamlore` runs the same command: the
    same answer, the same refusal, and its usage names how it was started."""
    sync_json(sources)
    listing = ("sessions", "list", "--format", "json")
    expected = teamlore_cli(*listing).stdout
    assert json.loads(expected)["sessions"]
    assert _as_module(*listing) == (0, expected, "")
    code, _, stderr = _as_module("no-such-command")
    assert (code, stderr.startswith("error USAGE: python -m teamlore: ")) == (2, True), stderr
    # a legacy locale starts the process again in UTF-8 mode: as `python -m teamlore` again
    legacy = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"}
    assert _as_module(*listing, env=legacy) == (0, expected, "")


def _as_module(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "teamlore", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr
