"""What a walk of `teamlore sessions search` found, through the real `teamlore` executable: an
emoji query's refusal says why, a query may start with `-`, a reversed window's `next` is the
command's own, a reader that goes away (`| head -1`) ends a command with 0, and an over-long
query is refused saying how to shorten it (docs/search.md, docs/cli-output.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import initialized_repository, refusal_lines, teamlore_cli

DATA = Path(__file__).resolve().parents[1] / "sessions" / "data"
NARROW = {"COLUMNS": "80"}


@pytest.fixture()
def synced(home: Path, tmp_path: Path) -> Path:
    """An index of the synthetic Claude Code and Codex sessions."""
    root = tmp_path / "sources"
    for provider in ("claude", "codex"):
        shutil.copytree(DATA / provider, root / provider)
    done = teamlore_cli(
        "sync",
        *("--source", f"claude={root / 'claude'}", "--source", f"codex={root / 'codex'}"),
    )
    assert done.returncode == 0, done.stderr
    return home


def search_json(*args: str) -> dict:
    done = teamlore_cli("sessions", "search", "--no-sync", "--format", "json", *args)
    assert done.returncode == 0, done.stderr
    result: dict = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("✅", "emoji and symbols are not searched"),
        ("⚠️ →", "emoji and symbols are not searched"),
        ("?!,", "punctuation is not searched"),
        ("✅ ?", "emoji, symbols and punctuation are not searched"),
    ],
)
def test_a_query_of_emoji_is_refused_saying_emoji_are_not_searched(
    synced: Path, query: str, why: str
) -> None:
    """It said `'✅' has no searchable terms`, as if ✅ were missing from the sessions: the index
    leaves emoji and symbols out (as FTS5's tokenizer would), so a query of nothing else has no
    term, and the refusal says so."""
    text = teamlore_cli("sessions", "search", query, env=NARROW)
    assert (text.returncode, text.stdout) == (2, "")
    assert refusal_lines(text.stderr)[0] == (
        f"error QUERY_EMPTY: {query!r} has no searchable terms: {why}"
    )


def test_an_emoji_beside_words_is_left_out_as_punctuation_is(synced: Path) -> None:
    with_emoji = search_json("✅", "cart", "--lexical")
    assert with_emoji["hits"]
    assert with_emoji["hits"] == search_json("cart", "--lexical")["hits"]


def test_a_query_that_starts_with_a_dash_is_searched(synced: Path, tmp_path: Path) -> None:
    """`sessions search -foo` was `invalid value for '--format' / '-f': 'oo'` (typer read it
    as `-f oo`). A word that is no option of the command is the query's, in either parse (the
    lean one, typer's for `-fjson`), and `--` still works; `memory search` the same."""
    dashed = search_json("-rounding", "--lexical")
    assert dashed["query"] == "-rounding" and dashed["hits"]
    assert dashed["hits"] == search_json("--lexical", "--", "-rounding")["hits"]
    assert dashed["hits"] == search_json("rounding", "--lexical")["hits"]
    # typer's parse (an attached value is not the lean form): -fjson is still the format
    typer = teamlore_cli("sessions", "search", "-fjson", "-rounding", "--lexical", "--no-sync")
    assert typer.returncode == 0, typer.stderr
    assert json.loads(typer.stdout)["hits"] == dashed["hits"]
    text = teamlore_cli("sessions", "search", "cart", "-n", "1", "-rounding", "--no-sync")
    assert text.returncode == 0 and text.stderr == "" and " turn " in text.stdout
    repo = initialized_repository(tmp_path, synced)
    memory = teamlore_cli("memory", "search", "-foo", "--format", "json", cwd=repo)
    assert memory.returncode == 0, memory.stdout
    assert json.loads(memory.stdout)["results"] == []


@pytest.mark.parametrize("command", ["sessions", "memory"])
def test_an_unknown_long_option_of_a_search_says_how_to_search_for_it(
    home: Path, command: str
) -> None:
    """A mistyped `--word` stays a usage error; its `next` says how to search for it."""
    text = teamlore_cli(command, "search", "x", "--no-verify", env={"COLUMNS": "200"})
    assert (text.returncode, text.stdout) == (2, "")
    problem, step = refusal_lines(text.stderr)
    assert problem.startswith(
        f"error USAGE: teamlore {command} search: no such option: --no-verify"
    )
    assert [step] == [
        "  next: Run the command with `--help` to see its options; to search for a word that"
        " starts with `--`, put `--` before the query:"
        f" `teamlore {command} search -- --no-verify`.",
    ]
    as_json = teamlore_cli(command, "search", "x", "--no-verify", "--format", "json")
    assert json.loads(as_json.stdout)["error"]["next"].endswith(
        f"`teamlore {command} search -- --no-verify`."
    )


@pytest.mark.parametrize("command", ["search", "list"])
def test_a_reversed_window_says_what_sessions_commands_take(home: Path, command: str) -> None:
    """The `next` was recall's (`canonical UTC, 366 days at most`): `sessions search` and
    `sessions list` take any ISO date or instant, over any span."""
    query = ["commit"] if command == "search" else []
    window = ["--since", "2026-05-01", "--until", "2026-04-01"]
    text = teamlore_cli("sessions", command, *query, *window, env=NARROW)
    assert text.returncode == 2
    lines = refusal_lines(text.stderr)
    assert lines[0].startswith("error WINDOW_INVALID: since 2026-05-01T00:00:00.000Z")
    assert lines[1] == (
        "  next: Give `--since` before `--until` (ISO dates or instants, any span)."
    )
    as_json = teamlore_cli("sessions", command, *query, *window, "--format", "json")
    assert "366" not in json.loads(as_json.stdout)["error"]["next"]


def teamlore_to_a_closed_pipe(
    *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The real `teamlore` writing to a pipe nobody reads any more (`| head -1` after its
    line): the read end is closed before the command writes."""
    exe = shutil.which("teamlore", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "teamlore.cli.main"]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*cmd, *args],
            cwd=cwd,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [
        ("sessions", "search", "cart", "--no-sync"),  # the lean parse, text
        ("sessions", "search", "cart", "-n20", "--no-sync"),  # typer's parse, text
        ("sessions", "search", "cart", "--no-sync", "--format", "json"),
        ("sessions", "list"),
        ("status",),
        ("repo", "list"),  # a command of its own module (commands.plain_invocation)
    ],
)
def test_a_reader_that_goes_away_ends_the_command_quietly_with_0(
    synced: Path, args: tuple[str, ...]
) -> None:
    """`teamlore sessions search theme | head -1` exited 1 in the text view (rich's own
    handling of a broken pipe), 0 in JSON only when the output fitted the pipe."""
    done = teamlore_to_a_closed_pipe(*args)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_pasted_stack_trace_is_refused_saying_how_to_shorten_it(synced: Path) -> None:
    """A 4.5 KB trace was `QUERY: String should have at most 4096 characters`. It is still
    refused (docs/search.md: cut at the limit, a Python trace would lose its last line, the
    error), now saying how long it is and what to keep."""
    frames = "".join(
        f'  File "/srv/app/cart/module_{n}.py", line {n}, in handler_{n}\n    total = round(x)\n'
        for n in range(60)
    )
    trace = f"Traceback (most recent call last):\n{frames}ValueError: cart rounding"
    assert 4096 < len(trace) < 5000
    text = teamlore_cli("sessions", "search", trace, "--no-sync", env=NARROW)
    assert (text.returncode, text.stdout) == (2, "")
    assert refusal_lines(text.stderr)[0] == (
        f"error INVALID_ARGUMENT: QUERY: too long to search: {len(trace):,} characters (at"
        " most 4,096); keep the words that tell it apart, such as the error line of a stack"
        " trace"
    )
    assert search_json(trace.splitlines()[-1])["hits"]
