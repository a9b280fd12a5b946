"""What `sessions list` and `sessions show` say of where a session and its turns came from,
over the real fixture sessions (docs/sessions.md, "Titles, subagents and turns without a
prompt"). A walk through them laid out as a user's ~/.claude and ~/.codex found 20 of 27 rows
named by their folder, subagents told apart only by key, a Task call that did not name its
subagent, and turns that began with `assistant …` and nothing saying what started them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from test_sessions_text_at_80_columns_walk import under_the_header
from typer.testing import CliRunner

from support import Cli, fixture_sources, listed_labels, shared_fixtures
from teamlore.cli.main import app

MOREDIP = "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68"  # claude/moredip-0ccf1a04.jsonl: 5 subagents
SPOTTER = "ae4a77f8"  # claude/spotter-ae4a77f8: a Task subagent and the compaction summariser
TOKEN = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5z"  # the shape of a GitHub token, made up


class Walk(Cli):
    """`support.Cli` at 80 columns."""

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        self.env["COLUMNS"] = "80"


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Walk:
    cli = Walk(tmp_path_factory.mktemp("state"))
    cli.json("sync", *fixture_sources())
    return cli


def listed(walk: Walk) -> list[dict[str, Any]]:
    sessions: list[dict[str, Any]] = walk.json("sessions", "list")["sessions"]
    return sessions


def session(walk: Walk, provider_id: str) -> dict[str, Any]:
    shown: dict[str, Any] = walk.json("sessions", "show", provider_id)
    return shown


def test_every_session_with_a_prompt_is_named_by_it_not_by_its_folder(walk: Walk) -> None:
    sessions = listed(walk)
    labels = listed_labels(walk.text("sessions", "list"))
    for s in sessions:
        # `title` stays the provider's own
        assert s["derivedTitle"] is None if s["title"] else s["derivedTitle"], s
        label = labels[s["sessionKey"][:12]]
        name = (s["cwd"] or "").rstrip("/\\").rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
        assert not label.endswith(name), label  # no session is named by its folder
        derived = s["derivedTitle"] or ""
        # Codex's injected context and Claude Code's command records are not prompts
        assert not derived.startswith("<") and "\n" not in derived and len(derived) <= 80
    by_folder = {s["cwd"]: s for s in sessions if not s["parentSessionKey"]}
    # the legacy Codex file opens with `<user_instructions>` and `<environment_context>`
    legacy = by_folder["/home/user/projects/codex-session-viewer"]
    assert legacy["derivedTitle"].startswith("What's the next task I should work on?")
    # a Pi session whose first prompt is a bare `/mode` is named by the next one
    pi = [s for s in sessions if s["provider"] == "pi"]
    assert len({s["derivedTitle"] for s in pi}) == 2
    assert all(not s["derivedTitle"].startswith("/") for s in pi)
    # an image placeholder alone says nothing of the prompt: a Claude Code 2.1.112 session
    # started in the user's home is named by its prompt's first line
    home = by_folder["/Users/linhungfan"]
    assert home["derivedTitle"].startswith("請閱讀/Users/linhungfan/personal_project/weave/doc.md")


def test_sibling_subagents_are_named_by_the_call_that_started_them(walk: Walk) -> None:
    sessions = listed(walk)
    parent = session(walk, MOREDIP)["session"]["sessionKey"]
    children = [s for s in sessions if s["parentSessionKey"] == parent]
    assert len(children) == 5
    titles = sorted(s["derivedTitle"] for s in children)
    assert titles == sorted(
        f"subagent of {parent[:12]}: Poem about Thai {kind} curry"
        for kind in ("green", "green", "yellow", "yellow", "red")
    )
    # at 80 columns the mark of a subagent, then the description (what tells the siblings
    # apart) and its parent, whole on the line under its row
    labels = listed_labels(walk.text("sessions", "list"))
    for s in children:
        label = labels[s["sessionKey"][:12]]
        assert label == f"↳ {s['subagent']['description']} (subagent of {parent[:12]})"


def test_status_says_how_many_of_its_sessions_are_subagents(walk: Walk) -> None:
    """`status` said `Sessions 27` beside a `sessions list` whose subagent rows carry `↳`: a
    person counted fewer sessions of their own and wondered where the rest came from."""
    subagents = [s for s in listed(walk) if s["subagent"]]
    status = walk.json("status")
    assert status["subagentSessions"] == len(subagents) > 0
    [line] = [line for line in walk.text("status").splitlines() if line.startswith("Sessions")]
    assert line.startswith(
        f"Sessions    {status['sessions']} ({len(subagents)} of them subagents)  turns "
    )
    assert len(line) <= 80


def test_a_task_call_and_its_subagent_name_each_other(walk: Walk) -> None:
    """Each Task call whose result names an agent id the index holds names that session; the
    session names the call, as the command that shows it."""
    linked = 0
    for parent in (MOREDIP, SPOTTER):
        shown = session(walk, parent) if len(parent) > 8 else _by_key_start(walk, parent)
        key = shown["session"]["sessionKey"]
        text = walk.text("sessions", "show", key)
        for turn in shown["turns"]:
            for tool in turn["tools"]:
                child_key = tool.get("subagentSessionKey")
                if tool["name"] != "Task" or child_key is None:
                    continue
                linked += 1
                assert f"#{tool['seq']} Task" in text and f"subagent {child_key[:12]}" in text
                child = walk.json("sessions", "show", child_key)["session"]
                assert child["parentSessionKey"] == key
                assert (child["subagent"]["turn"], child["subagent"]["tool"]) == (
                    turn["ordinal"],
                    tool["seq"],
                )
                assert child["subagent"]["description"] == tool["input"]["description"]
                # the lines under the first, wrapped at words at 80 columns, the command whole
                head = walk.text("sessions", "show", child_key).split("\n\n", 1)[0]
                header = " ".join(under_the_header(head))
                command = re.search(r"`teamlore (sessions show [^`]+)`", header)
                assert header.startswith(f"subagent of {key[:12]}") and command
                # the command printed works and shows that call
                call = walk.json(*shlex.split(command.group(1)))
                assert call["turns"][0]["tools"][0]["subagentSessionKey"] == child_key
    assert linked == 6  # moredip's five, spotter's one


def _by_key_start(walk: Walk, folder_part: str) -> dict[str, Any]:
    """The main session of the spotter fixture (its file name is the session id, shortened in
    the fixture's name: the folder tells it)."""
    for s in listed(walk):
        if "spotter" in (s["cwd"] or "") and not s["parentSessionKey"]:
            return session(walk, s["sessionKey"])
    raise AssertionError(folder_part)


def test_the_compaction_summariser_says_what_it_is(walk: Walk) -> None:
    parent = _by_key_start(walk, SPOTTER)["session"]["sessionKey"]
    [summariser] = [
        s
        for s in listed(walk)
        if s["parentSessionKey"] == parent and s["subagent"]["kind"] == "compaction"
    ]
    assert summariser["derivedTitle"] == f"compaction summary of {parent[:12]}"
    text = walk.text("sessions", "show", summariser["sessionKey"])
    assert f"compaction summariser of {parent[:12]}" in text
    assert "No turns from turn 1 on" not in text


def test_a_turn_without_a_prompt_says_what_started_it(walk: Walk) -> None:
    shown = session(walk, MOREDIP)
    started = {t["ordinal"]: t.get("startedBy") for t in shown["turns"]}
    assert started == {
        1: None,
        2: ["/plugin", "/publish-session"],
        3: ['task notification: Agent "Poem about Thai yellow curry" completed'],
        4: None,
        5: None,
        6: ["[Request interrupted by user]"],
    }
    text = walk.text("sessions", "show", MOREDIP)
    turns = re.split(r"^── turn ", text, flags=re.MULTILINE)[1:]
    assert "(no prompt; after /plugin, /publish-session)" in turns[1]
    assert "task notification: Agent" in turns[2] and "[Request interrupted" in turns[5]
    # a Claude Code 2.1.112 turn a Monitor's notification woke
    home = next(s for s in listed(walk) if s["cwd"] == "/Users/linhungfan")
    turn = walk.json("sessions", "show", home["sessionKey"], "--turn", "5")["turns"][0]
    assert turn["startedBy"] == ['task notification: Monitor event: "Search-based PostHog fetch"']


def test_a_title_from_a_prompt_has_its_secrets_masked(tmp_path: Path) -> None:
    """The real legacy Codex session with a token pasted into its first prompt."""
    source = shared_fixtures("sessions", "codex", "legacy-2025-09.jsonl")
    folder = tmp_path / "codex"
    folder.mkdir()
    prompt = "What's the next task I should work on?"
    text = source.read_text(encoding="utf-8")
    assert prompt in text
    (folder / "legacy.jsonl").write_text(
        text.replace(prompt, f"use {TOKEN} and tell me the next task", 1), encoding="utf-8"
    )
    cli = Cli(tmp_path / "state")
    cli.json("sync", "--source", f"codex={folder}")
    [s] = cli.json("sessions", "list")["sessions"]
    assert s["derivedTitle"].startswith("use ") and "next task" in s["derivedTitle"]
    assert TOKEN not in s["derivedTitle"] and TOKEN[-6:] not in s["derivedTitle"]
    done = CliRunner().invoke(app, ["sessions", "list"], env={**cli.env, "COLUMNS": "200"})
    assert TOKEN[:12] not in done.output and TOKEN[-6:] not in done.output
