"""What `sessions show` tells a person reading the real fixture sessions at 80 columns works as
printed: each hint is a command that runs, each refusal says what to type instead (a walk
through the fixtures laid out as a user's ~/.claude and ~/.codex found these)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from support import Cli, fixture_sources, refusal_lines
from teamlore.cli.literal import literal
from teamlore.cli.main import app
from teamlore.cli.session_view import OPEN_MEANS, open_means


class Walk(Cli):
    """`support.Cli` at 80 columns, which also runs a command that fails."""

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        self.env["COLUMNS"] = "80"

    def run(self, *args: str) -> tuple[int, str]:
        done = CliRunner().invoke(app, list(args), env=self.env)
        return done.exit_code, done.output

    def refusal(self, *args: str) -> dict[str, Any]:
        code, output = self.run(*args, "--format", "json")
        error: dict[str, Any] = json.loads(output)["error"]
        return {"exit": code, **error}


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Walk:
    cli = Walk(tmp_path_factory.mktemp("state"))
    cli.json("sync", *fixture_sources())
    return cli


def norm(text: str) -> str:
    return " ".join(text.split())


def rave_era(walk: Walk) -> dict[str, Any]:
    """The real Codex session whose first turn pastes a 5 KB spec and runs 94 tool calls
    (support.RAVE_ERA): 7 turns, the last one open."""
    listed = walk.json("sessions", "list")["sessions"]
    return next(s for s in listed if "rave" in (s.get("cwd") or "").casefold())


# `… 5 more lines: --turn 1 --tool 11 prints them`, `… 3223 more characters: --turn 1 prints
# them`: the options a cut names, to be typed after `sessions show KEY`
HINT = re.compile(r"… \d+ more (?:lines|characters): ((?:--turn \d+)(?: --tool \d+)?) prints them")


def test_every_cut_names_options_that_print_it_whole(walk: Walk) -> None:
    """A cut tool result said `--tool 2 prints them`, and `sessions show KEY --tool 2` was
    refused (INVALID_ARGUMENT, `give the turn too`); cut prose said only `use --format json`."""
    session = rave_era(walk)
    key = session["sessionKey"][:12]
    page = walk.text("sessions", "show", key)
    hints = sorted(set(HINT.findall(page)))
    assert any("--tool" not in hint for hint in hints)  # the 5 KB spec of turn 1
    assert any("--tool" in hint for hint in hints)
    assert len(hints) >= 20
    turns = {t["ordinal"]: t for t in walk.json("sessions", "show", key)["turns"]}
    for hint in hints:
        code, output = walk.run("sessions", "show", key, *shlex.split(hint))
        assert code == 0, (hint, output)
        numbers = [int(n) for n in re.findall(r"\d+", hint)]
        turn = turns[numbers[0]]
        if len(numbers) == 1:  # the turn's prose, whole
            assert norm(literal(turn["user"])) in norm(output), hint
            assert not re.search(r"more characters: --turn \d+ prints", output), hint
        else:  # the tool call, whole: its input and output as the index holds them
            [tool] = [t for t in turn["tools"] if t["seq"] == numbers[1]]
            assert norm(literal(tool["result"]["head"] or "")) in norm(output), hint


def test_the_next_page_keeps_its_size_and_the_page_says_how_many_turns(walk: Walk) -> None:
    """`sessions show KEY -n 2` ended `Next page: … --from 3`, dropping `-n 2`, and never said
    how many turns the session has."""
    key = rave_era(walk)["sessionKey"][:12]
    last = walk.text("sessions", "show", key, "-n", "2").rstrip().splitlines()[-1]
    assert last.startswith("Turns 1–2 of 7 shown. Next page:"), last
    [command] = re.findall(r"`teamlore (.+?)`", last)
    assert command == f"sessions show {key} --from 3 -n 2"
    following = walk.json(*shlex.split(command))
    assert [t["ordinal"] for t in following["turns"]] == [3, 4]
    assert "--from 3 -n" not in walk.text("sessions", "show", key, "--from", "3", "-n", "100")
    end = walk.text("sessions", "show", key, "--from", "9")
    assert end.rstrip().endswith("No turns from turn 9 on (the session has 7 turns).")


def test_a_tool_without_its_turn_is_refused_naming_the_flags(walk: Walk) -> None:
    """`error INVALID_ARGUMENT: request: tool: give the turn too`: the request's own names
    leaked into the message."""
    key = rave_era(walk)["sessionKey"][:12]
    error = walk.refusal("sessions", "show", key, "--tool", "2")
    assert error["exit"] == 2 and error["code"] == "INVALID_ARGUMENT"
    assert error["message"] == (
        "--tool: a tool call is numbered within its turn: give the turn too (--turn N --tool M)"
    )


def test_a_short_key_prefix_says_how_long_a_prefix_must_be(walk: Walk) -> None:
    """`sessions show 20f013` said only `no indexed session has key 20f013`; 8 hex characters
    or more name a session (queries.MIN_KEY_PREFIX), and neither the error nor the help said
    so."""
    key = rave_era(walk)["sessionKey"]
    for short in (key[:6], key[:7]):
        error = walk.refusal("sessions", "show", short)
        assert error["code"] == "SESSION_NOT_FOUND"
        assert error["message"] == (
            f"no indexed session has key {short}: give at least 8 characters of the key"
        )
    assert walk.json("sessions", "show", key[:8], "--turn", "1")["session"]["sessionKey"] == key
    unknown = walk.refusal("sessions", "show", "0" * 12)
    assert unknown["message"] == f"no indexed session has key {'0' * 12}"  # long enough
    for command in ("show", "exclude", "include"):
        help_text = norm(walk.text("sessions", command, "--help"))
        assert "or its first 8 or more characters" in help_text, command


def test_a_missing_turn_says_how_many_turns_the_session_has(walk: Walk) -> None:
    key = rave_era(walk)["sessionKey"][:12]
    error = walk.refusal("sessions", "show", key, "--turn", "99")
    assert error["code"] == "TURN_NOT_FOUND"
    assert error["message"] == f"session {key} has 7 turns; there is no turn 99"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("sessions", "show", "KEY", "--limit", "0"), "--limit: must be between 1 and 10000"),
        (("sessions", "show", "KEY", "-n", "-1"), "--limit: must be between 1 and 10000"),
        (("sessions", "show", "KEY", "--from", "0"), "--from: must be between 1 and"),
        (("sessions", "show", ""), "SESSION_KEY: must not be empty"),
        (("sessions", "list", "--limit", "0"), "--limit: must be between 1 and 100000"),
        (("sessions", "search", "x", "--limit", "0"), "--limit: must be between 1 and 500"),
        (("sync", "--wait", "-1"), "--wait: must be between 0 and 3600"),
    ],
)
def test_a_value_out_of_range_is_said_as_other_commands_say_it(
    walk: Walk, args: tuple[str, ...], message: str
) -> None:
    """`--limit 0` said `Input should be greater than or equal to 1` and an empty key `String
    should have at least 1 character` (pydantic's words), where `org serve --port 0` says
    `--port: must be between 1 and 65535` and `watch` `--min-interval: must be between 0 and
    3600 seconds`."""
    key = rave_era(walk)["sessionKey"][:12]
    code, output = walk.run(*(key if arg == "KEY" else arg for arg in args))
    assert code == 2
    [line] = [line for line in refusal_lines(output) if line.startswith("error ")]
    assert line.startswith(f"error INVALID_ARGUMENT: {message}"), line
    assert "should" not in line


def test_an_open_turn_is_explained_once_where_it_is_shown(walk: Walk) -> None:
    """18 of the 27 fixture sessions end in `── turn N (open)`, months-old ones that ended with
    a full answer among them, and nothing said what open means."""
    listed = walk.json("sessions", "list")["sessions"]
    shown_open = shown_sealed = 0
    for session in listed:
        key = session["sessionKey"][:12]
        shown = walk.json("sessions", "show", key)
        turns = shown["turns"]
        # a subagent's turn is never sealed by a later prompt: its note says what it is instead
        means = open_means(shown["session"])
        assert (means == OPEN_MEANS) is (not session["parentSessionKey"])
        text = walk.text("sessions", "show", key)
        lines = text.splitlines()
        opened = [i for i, line in enumerate(lines) if re.match(r"── turn \d+ \(open\)", line)]
        if not opened:
            assert "open:" not in text, key
            shown_sealed += 1
            continue
        assert len(opened) == sum(not t["sealed"] for t in turns)
        assert norm(text).count(norm(means)) == 1, key  # once, under the first
        assert norm(" ".join(lines[opened[0] + 1 : opened[0] + 4])).startswith(norm(means))
        shown_open += 1
    assert shown_open >= 10 and shown_sealed >= 1
    one = walk.text("sessions", "show", rave_era(walk)["sessionKey"][:12], "--turn", "7")
    assert "(open)" in one and norm(OPEN_MEANS) in norm(one)


def test_every_window_option_of_the_session_commands_says_utc(walk: Walk) -> None:
    """`memory recall --help` says its times are UTC; the session commands' did not, and
    `sessions list --since` selects the sessions active in the window where the table shows
    when each started."""
    for command in (("sessions", "list"), ("sessions", "search")):
        help_text = norm(walk.text(*command, "--help"))
        for flag in ("--since", "--until"):
            described = help_text[help_text.index(f"{flag} DATE") :][:160]
            assert "(UTC)" in described, (command, flag, described)
    listing = norm(walk.text("sessions", "list", "--help"))
    assert "--since/--until select the sessions active in the window" in listing
    assert "newest first (by when each started)" in listing
    # and it does: a session that started before --since and went on into it is listed
    started_before = next(
        s
        for s in walk.json("sessions", "list")["sessions"]
        if s["startedAt"][:10] < s["endedAt"][:10]
    )
    day = started_before["endedAt"][:10]
    keys = [s["sessionKey"] for s in walk.json("sessions", "list", "--since", day)["sessions"]]
    assert started_before["sessionKey"] in keys
