"""The text view never lies: what `--format json` holds is what a person reads.

Every string that comes from a transcript or a memory file is printed literally (no Rich markup,
no emoji codes, control characters made visible by `literal`); long text is cut only with the
declared `… N more characters (use --format json)` marker. Compared with whitespace runs made
one space (terminals expand tabs; the view indents).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from typer.testing import CliRunner

from support import (
    entry_file,
    fixture_sources,
    git,
    listed_labels,
    shared_fixtures,
    teamlore_cli,
)
from teamlore.cli.literal import literal
from teamlore.cli.literal_console import LiteralConsole
from teamlore.cli.main import app
from teamlore.cli.output import CLIP_CHARS, clip, say, styled
from teamlore.cli.session_view import TOOL_CLIP_CHARS, main_argument, speech_and_tools
from teamlore.core.text.hidden import HIDDEN
from teamlore.ops.sessions.titles import listed_title

CURRENT = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"


def norm(text: str) -> str:
    return " ".join(text.split())


def shown(value: str, limit: int = CLIP_CHARS, whole: str | None = None) -> str:
    """What the text view must print for a JSON string: literal, cut only with the marker
    (`whole`: the `sessions show` options that print it whole, which the marker names)."""
    how = f": {whole} prints them" if whole else " (use --format json)"
    return norm(literal(clip(value, limit, how)))


class Cli:
    def __init__(self, home: Path) -> None:
        self.env = {"TEAMLORE_HOME": str(home)}
        self.runner = CliRunner()

    def text(self, *args: str) -> str:
        done = self.runner.invoke(app, list(args), env=self.env)
        assert done.exit_code == 0, done.output
        return done.output

    def json(self, *args: str) -> dict[str, Any]:
        done = self.runner.invoke(app, [*args, "--format", "json"], env=self.env)
        assert done.exit_code == 0, done.output
        result: dict[str, Any] = json.loads(done.output)
        return result


@pytest.fixture(scope="module")
def fixtures_cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    cli = Cli(tmp_path_factory.mktemp("state"))
    sources = fixture_sources()
    # and the sessions the current CLIs wrote (aborted, rolled back, API-error notices)
    sources += [arg for p in ("claude", "codex") for arg in ("--source", f"{p}={CURRENT / p}")]
    cli.json("sync", *sources)
    return cli


def sessions(cli: Cli) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = cli.json("sessions", "list")["sessions"]
    assert len(listed) >= 20
    return listed


def test_an_untitled_subagent_session_is_listed_as_its_parents(fixtures_cli: Cli) -> None:
    """Claude Code writes a subagent's turns to a file of their own, in the parent's folder: the
    listing names the call that started it and the parent instead of repeating that folder."""
    listed = sessions(fixtures_cli)
    subagents = [s for s in listed if s["parentSessionKey"] and not s["title"]]
    assert subagents
    text = fixtures_cli.text("sessions", "list", "--limit", str(len(listed)))
    labels = listed_labels(text)
    for session in subagents:
        line = labels[session["sessionKey"][:12]]
        named = f" of {session['parentSessionKey'][:12]}"  # subagent of, compaction summary of
        assert (
            line.endswith((named, f"{named})"))
            or (session["subagent"]["description"] or "…")[:20] in line
        )
    titled = next(s for s in listed if s["title"] and not s["parentSessionKey"])
    assert "subagent" not in labels[titled["sessionKey"][:12]]


def test_sessions_show_prints_every_fixture_turn_as_json_holds_it(fixtures_cli: Cli) -> None:
    for session in sessions(fixtures_cli):
        key = session["sessionKey"]
        result = fixtures_cli.json("sessions", "show", key)
        text = norm(fixtures_cli.text("sessions", "show", key))
        position = 0
        for turn in result["turns"]:
            marks = [("aborted", "(aborted)"), ("rolledBack", "(rolled back)")]
            expected = [f"── turn {turn['ordinal']}", *(m for k, m in marks if turn[k])]
            here = f"--turn {turn['ordinal']}"  # a page's cut prose: the turn prints it whole
            if turn["user"]:
                expected.append("user " + shown(turn["user"], whole=here))
            for kind, item in speech_and_tools(turn):
                if kind == "assistant":
                    expected.append("assistant " + shown(item, whole=here))
                else:
                    what = main_argument(item)
                    expected.append(f"#{item['seq']} {norm(literal(item['name']))}")
                    call = f"{here} --tool {item['seq']}"
                    expected.append(shown(what or "", TOOL_CLIP_CHARS, call))
            expected += [f"{n['kind']} {shown(n['text'], whole=here)}" for n in turn["notices"]]
            for piece in expected:  # in order: speech and tool calls as they happened
                found = text.find(piece, position)
                assert found >= 0, (key, turn["ordinal"], piece[:200])
                position = found + len(piece)


def _session_with(cli: Cli, tool_name: str) -> tuple[str, dict[str, Any]]:
    """The first fixture session and turn holding a call of `tool_name`."""
    for session in sessions(cli):
        result = cli.json("sessions", "show", session["sessionKey"])
        for turn in result["turns"]:
            if any(t["name"] == tool_name for t in turn["tools"]):
                return session["sessionKey"], turn
    raise AssertionError(f"no fixture session calls {tool_name}")


@pytest.mark.parametrize(("tool_name", "field"), [("Glob", "pattern"), ("WebFetch", "url")])
def test_every_tool_row_shows_its_main_argument(
    fixtures_cli: Cli, tool_name: str, field: str
) -> None:
    key, turn = _session_with(fixtures_cli, tool_name)
    text = norm(fixtures_cli.text("sessions", "show", key, "--turn", str(turn["ordinal"])))
    for tool in (t for t in turn["tools"] if t["name"] == tool_name):
        assert f"#{tool['seq']} {tool_name}" in text
        assert norm(f"{field}={tool['input'][field]}") in text


def test_a_failed_call_shows_the_lines_of_its_error(fixtures_cli: Cli) -> None:
    key = next(
        s["sessionKey"] for s in sessions(fixtures_cli) if "rave" in (s.get("cwd") or "").casefold()
    )
    text = fixtures_cli.text("sessions", "show", key, "--turn", "1")
    build = text[text.index("#79 shell_command") :]
    build = build[: build.index("#80 ")]
    assert "npm.cmd run build" in build
    assert "Type error: Cannot find name 'useEffect'." in build
    assert "more lines: --turn 1 --tool 79 prints them" in norm(build)


def test_one_tool_call_prints_whole(fixtures_cli: Cli) -> None:
    key = next(
        s["sessionKey"] for s in sessions(fixtures_cli) if "rave" in (s.get("cwd") or "").casefold()
    )
    whole = fixtures_cli.json("sessions", "show", key, "--turn", "1", "--tool", "79")
    [tool] = whole["turns"][0]["tools"]
    assert tool["seq"] == 79
    text = fixtures_cli.text("sessions", "show", key, "--turn", "1", "--tool", "79")
    assert norm(literal(tool["result"]["head"])) in norm(text)
    assert "#78 " not in text and "#80 " not in text
    runner = CliRunner()
    missing = runner.invoke(
        app, ["sessions", "show", key, "--turn", "1", "--tool", "999"], env=fixtures_cli.env
    )
    assert missing.exit_code == 1 and "TOOL_NOT_FOUND" in missing.output
    alone = runner.invoke(app, ["sessions", "show", key, "--tool", "3"], env=fixtures_cli.env)
    assert alone.exit_code == 2 and "--turn" in alone.output


def test_sessions_search_prints_every_hit_as_json_holds_it(fixtures_cli: Cli) -> None:
    queries = {"release", "test", "theme", "image", "commit", "refactor", "存活率", "[id]", "grant"}
    for session in [s for s in sessions(fixtures_cli) if s["turns"]]:  # every fixture session
        first = fixtures_cli.json("sessions", "show", session["sessionKey"], "--turn", "1")
        turn = first["turns"][0] if first["turns"] else {"user": "", "assistant": ""}
        words = (turn["user"] or turn["assistant"]).split()[:6]
        queries.add(" ".join(words))
    for query in sorted(q for q in queries if q.strip()):
        result = fixtures_cli.json("sessions", "search", query)
        text = norm(fixtures_cli.text("sessions", "search", query))
        assert text.count(" turn ") >= len(result["hits"])  # one line per hit, none dropped
        for hit in result["hits"]:
            labels = {"lexical": "words", "translation": "translated words", "vector": "meaning"}
            by = " + ".join(labels[p] for p in hit["matchedBy"])
            line = f"turn {hit['turn']} ({hit['provider']}, score {hit['score']:.2f}, by {by})"
            assert line in text
            assert shown(hit["snippet"]) in text, (query, hit["snippet"])
            assert 0 < hit["score"] < 100 and "e-" not in str(hit["score"])


def test_memory_search_prints_every_hit_as_json_holds_it(fixtures_cli: Cli, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    fixtures_cli.json("memory", "init", "-r", str(repo))
    entries = repo / ".threadshare/memory/entries"
    for number, session in enumerate(sessions(fixtures_cli)):
        turns = fixtures_cli.json("sessions", "show", session["sessionKey"])["turns"]
        body = "\n".join(t["user"] + "\n" + t["assistant"] for t in turns[:2])[:1500]
        (entries / f"fixture-{number}.md").write_text(entry(f"fixture-{number}", body))
    every = fixtures_cli.json("memory", "search", "fixture", "-r", str(repo), "-n", "100")
    assert len(every["results"]) == len(sessions(fixtures_cli))  # every fixture's entry is shown
    for query in ("fixture", "image", "theme", "test", "commit", "[id]", "[bold]x[/]"):
        result = fixtures_cli.json("memory", "search", query, "-r", str(repo), "-n", "100")
        text = norm(fixtures_cli.text("memory", "search", query, "-r", str(repo), "-n", "100"))
        for hit in result["results"]:
            labels = {"lexical": "words", "translation": "translated words", "vector": "meaning"}
            by = " + ".join(labels[p] for p in hit["matchedBy"])
            header = f"{hit['id']}  {hit['type']}, score {hit['score']:.2f}, by {by}"
            assert norm(f"{header}\n  {hit['path']}\n") + " " in text
            assert shown(hit["snippet"]) in text, (query, hit["snippet"])
        assert ("words + meaning" in text) == ("vector" in result["paths"])


def test_a_search_without_hits_says_so_under_its_header(fixtures_cli: Cli, tmp_path: Path) -> None:
    """The header (which rankings ran) comes first, then the hint, for both searches (sessions
    search printed the hint above it); memory search sends a person to promote only when the
    memory holds nothing (it did so beside 18 approved entries)."""
    lines = fixtures_cli.text("sessions", "search", "--lexical", "--no-sync", "xyzzyplugh")
    assert lines.splitlines() == [
        "words only (lexical search only was asked for)",
        "No matching turns. Try other words, or `teamlore sync` to index new sessions.",
    ]
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    fixtures_cli.json("memory", "init", "-r", str(repo))
    search = ("memory", "search", "--lexical", "xyzzyplugh", "-r", str(repo))
    empty = fixtures_cli.text(*search).splitlines()
    assert empty[0].startswith("generation ") and empty[1:] == [
        "No reviewed memory yet: entries appear here after `teamlore memory promote`."
    ]
    for number in range(2):
        (repo / f".threadshare/memory/entries/note-{number}.md").write_text(
            entry(f"note-{number}", "release notes")
        )
    held = fixtures_cli.text(*search).splitlines()
    assert held[0].startswith("generation ")
    assert held[1:] == ["No matching memory among 2 documents. Try other words."]
    assert fixtures_cli.json(*search)["documents"] == 2
    assert all(len(line) <= 80 for line in [*lines.splitlines(), *empty, *held])


def test_hits_found_by_meaning_alone_say_no_turn_or_document_holds_the_words(
    fixtures_cli: Cli, tmp_path: Path
) -> None:
    """A meaning is found for any query, nonsense too, and a score alone does not tell a near
    answer from none: the text view says when no hit holds a word of the query."""
    nonsense = fixtures_cli.text("sessions", "search", "--no-sync", "-n", "2", "xyzzyplughqwerty")
    lines = nonsense.splitlines()
    assert lines[1] == "No turn holds these words; the nearest by meaning:"
    assert "by meaning)" in lines[2]
    found = fixtures_cli.text("sessions", "search", "--no-sync", "-n", "2", "fixture")
    assert "No turn holds these words" not in found and "by words" in found
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    fixtures_cli.json("memory", "init", "-r", str(repo))
    (repo / ".threadshare/memory/entries/note-0.md").write_text(entry("note-0", "release notes"))
    # shares no word with the entry, and is near it in meaning
    memory = fixtures_cli.text("memory", "search", "changelog", "-r", str(repo)).splitlines()
    assert memory[1] == "No document holds these words; the nearest by meaning:"
    release = fixtures_cli.text("memory", "search", "release", "-r", str(repo))
    assert "No document holds these words" not in release


def entry(entry_id: str, body: str) -> str:
    body = "".join(c for c in body if c not in "\x00") or "empty"
    return entry_file(
        entry_id, f"{entry_id} {body}", kind="work_fact", limitations='["source-local-only"]'
    )


# -- the one helper, property-tested ---------------------------------------------------------

PIECES = [
    *"[]/\\#:=@ab _-.()",
    "[bold]",
    "[/]",
    "[id]",
    ":warning:",
    "\x1b",
    "\x07",
    "\r",
    "\u202e",
    "\t",
    "\n",
    "\x9b",
    "é",
    "数",
]
MARKUPISH = st.lists(st.sampled_from(PIECES), max_size=30).map("".join) | st.text(max_size=40)


SGR = re.compile(r"\x1b\[[0-9;]*m")


def printed(*parts: Any) -> str:
    """What a colour terminal receives, minus the style codes the view itself emits: any other
    escape sequence left would come from the text."""
    buffer = io.StringIO()
    console = LiteralConsole(file=buffer, width=60, force_terminal=True, color_system="standard")
    say(*parts, console=console)
    return SGR.sub("", buffer.getvalue())


@given(MARKUPISH)
def test_literal_leaves_no_terminal_control_character(text: str) -> None:
    out = literal(text)
    assert not any(ord(c) < 32 and c not in "\t\n" for c in out)
    assert not any(0x7F <= ord(c) <= 0x9F or 0x202A <= ord(c) <= 0x202E for c in out)
    assert literal(out) == out  # idempotent: visible escapes are plain text
    assert not HIDDEN.search(out)
    if not HIDDEN.search(text):
        assert out == text  # ordinary text, brackets and all, is untouched


@given(MARKUPISH, MARKUPISH)
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_every_piece_of_a_line_prints_exactly_as_given(plain: str, bold: str) -> None:
    out = printed(plain, styled(bold, "bold"))
    assert norm(out) == norm(literal(plain) + literal(bold))
    assert "\x1b" not in out and "\x07" not in out


def test_the_view_never_eats_brackets_emoji_codes_or_backslashes() -> None:
    for text in [
        "split(/[/\\]/)",
        "app/[id]/page.tsx",
        "from-[#0f172a]",
        "[image: 1]",
        ":warning:",
        "C:\\Users\\me\\",
        "[bold]not bold[/]",
        "a\\[b]",
    ]:
        assert printed(text) == text + "\n"


def test_long_text_is_cut_with_a_visible_marker() -> None:
    assert clip("x" * 2500) == "x" * 2000 + "… 500 more characters (use --format json)"
    assert clip("short") == "short"


def test_help_texts_print_literally(fixtures_cli: Cli) -> None:
    assert "[models.<name>]" in fixtures_cli.text("personal", "config", "--help")


def test_a_transcript_cannot_restyle_the_terminal(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "state")
    source = tmp_path / "claude" / "p"
    source.mkdir(parents=True)
    record = {
        "type": "user",
        "sessionId": "4f1c2d3e-0000-4000-8000-000000000001",
        "uuid": "u1",
        "timestamp": "2026-01-01T00:00:00Z",
        "cwd": "/w",
        "message": {
            "role": "user",
            "content": "title \x1b]0;pwned\x07 clear \x1b[2J osc52 "
            "\x1b]52;c;ZXZpbA==\x07 [bold]x[/] done",
        },
    }
    (source / "s.jsonl").write_text(json.dumps(record) + "\n")
    cli.json("sync", "--source", f"claude={tmp_path / 'claude'}")
    [session] = cli.json("sessions", "list")["sessions"]
    out = cli.text("sessions", "show", session["sessionKey"])
    assert "\x1b" not in out and "\x07" not in out
    assert (
        "title \\x1b]0;pwned\\x07 clear \\x1b[2J osc52 \\x1b]52;c;ZXZpbA==\\x07 [bold]x[/] done"
        in out
    )
    assert os.environ.get("TEAMLORE_HOME") != str(tmp_path / "state")


def test_sessions_show_keeps_the_order_of_speech_and_tool_calls(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "state")
    project = tmp_path / "claude" / "p"
    project.mkdir(parents=True)
    base = {"sessionId": "4f1c2d3e-0000-4000-8000-000000000002", "cwd": "/w"}

    def record(n: int, kind: str, content: Any) -> str:
        message = {"role": "assistant" if kind == "assistant" else "user", "content": content}
        at = f"2026-01-01T00:00:0{n}Z"
        return json.dumps(
            {**base, "type": kind, "uuid": f"u{n}", "timestamp": at, "message": message}
        )

    lines = [
        record(1, "user", "look, then fix"),
        record(2, "assistant", [{"type": "text", "text": "First I look at [id]."}]),
        record(
            3,
            "assistant",
            [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls app"}}],
        ),
        record(4, "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "[id]"}]),
        record(5, "assistant", [{"type": "text", "text": "Then I fix it."}]),
    ]
    (project / "s.jsonl").write_text("\n".join(lines) + "\n")
    cli.json("sync", "--source", f"claude={tmp_path / 'claude'}")
    [session] = cli.json("sessions", "list")["sessions"]
    out = norm(cli.text("sessions", "show", session["sessionKey"]))
    first, tool, then = (
        out.find(s) for s in ("First I look at [id].", "#1 Bash", "Then I fix it.")
    )
    assert 0 <= first < tool < then, out


def test_sessions_show_takes_the_provider_session_id_and_list_shows_titles(
    fixtures_cli: Cli,
) -> None:
    listed = sessions(fixtures_cli)
    by_key = {s["sessionKey"]: s for s in listed}
    # the UUID a Claude Code file carries is what `claude --resume` takes
    result = fixtures_cli.json("sessions", "show", "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68")
    assert by_key[result["session"]["sessionKey"]]["provider"] == "claude"
    assert result["session"]["parentSessionKey"] is None  # the main session, not a subagent
    titled = [s for s in listed if s["title"]]
    text = norm(fixtures_cli.text("sessions", "list"))
    assert titled and all(norm(literal(s["title"]))[:20] in text for s in titled)


def _listed(listing: str, sessions: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Each session's row of a `sessions list` text view and its title or folder (the row's
    last column, or the line under the row where the row had no room for it), once every line
    is checked to fit 80 columns (none wrapped onto another line)."""
    lines = listing.rstrip("\n").splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80, listing
    # under the table: where a folder cut at its start is whole
    end = next((i for i, line in enumerate(lines) if line.startswith("A folder cut")), len(lines))
    below = lines[1].strip() in ("title / cwd", "cwd")
    if below:
        rows, labels = lines[2:end:2], [line.removeprefix("  ") for line in lines[3:end:2]]
        assert all(line.startswith("  ") and line[2] != " " for line in lines[3:end:2]), listing
    else:
        rows = lines[1:end]
        labels = [row.split(maxsplit=5)[5].strip() for row in rows]
    assert [row.split()[0] for row in rows] == [s["sessionKey"][:12] for s in sessions], listing
    return list(zip(rows, labels, strict=True))


def test_sessions_list_at_80_columns_gives_a_title_a_line_of_its_own(fixtures_cli: Cli) -> None:
    """Where a row has no room for its title, each title goes on the line under its row, with
    the width of the terminal (the row left a title some 22 characters at 80 columns); a title
    is cut at its end, a folder at its start (its last folders tell sessions apart), each
    marked with `…`; JSON keeps them whole."""
    listed = sessions(fixtures_cli)
    done = teamlore_cli("sessions", "list", env={**fixtures_cli.env, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr

    assert done.stdout.splitlines()[1] == "  title / cwd"
    shown = _listed(done.stdout, listed)
    for (row, last), s in zip(shown, listed, strict=True):
        title = listed_title(s)
        whole = title or s["cwd"]
        assert len(row.split()) == 5, row  # session, provider, day, minute, turns
        if last.endswith("…"):  # a cut title: 78 columns of it
            assert title and norm(literal(title)).startswith(last[:-1].rstrip())
            assert cell_len(last) >= 70, last
        elif last.startswith("…"):  # a cut folder: its end, from a separator on
            assert not title and s["cwd"].endswith(last[1:]) and last[1] in "/\\"
        else:
            assert last.removesuffix(" (file gone)") in (norm(literal(whole)), whole)
    assert any(last.endswith("…") for _, last in shown)
    assert "help me apply for the agentic engineering grant by Superteam" in [
        last for _, last in shown
    ]  # 60 characters, whole

    # and the folders to map (`--unmapped`: no fixture session is mapped), each once on a line
    # with how many sessions it holds, most first
    done = teamlore_cli("sessions", "list", "--unmapped", env={**fixtures_cli.env, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.rstrip("\n").splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80, done.stdout
    end = next(i for i, line in enumerate(lines) if line.startswith("A folder cut"))
    counts = Counter(s["cwd"] for s in listed)
    folders = [row.split(maxsplit=3) for row in lines[1:end]]
    assert len(folders) == len(counts) and [int(n) for n, *_ in folders] == sorted(
        counts.values(), reverse=True
    )
    for n, _day, _minute, folder in folders:
        if folder.startswith("…"):  # a cut folder: its end, from a separator on
            assert folder[1] in "/\\"
            (folder,) = [cwd for cwd in counts if cwd.endswith(folder[1:])]
        assert counts[folder] == int(n)
    assert any("  …/" in line for line in lines[1:end])


def test_sessions_list_cuts_a_long_title_not_the_mark_of_a_gone_file(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "claude" / "p"
    project.mkdir(parents=True)
    transcript = project / "47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c.jsonl"
    # titled "Friendly Robot Icon Identification": longer than a 40-column line leaves it
    shutil.copyfile(
        shared_fixtures("sessions", "claude", "moredip-images-in-user-messages.jsonl"), transcript
    )
    cli = Cli(home)
    cli.json("sync", "--source", f"claude={tmp_path / 'claude'}")
    transcript.unlink()
    cli.json("sync", "--source", f"claude={tmp_path / 'claude'}")

    done = teamlore_cli("sessions", "list", env={**cli.env, "COLUMNS": "40"})

    ((_, label),) = _listed(done.stdout, cli.json("sessions", "list")["sessions"])
    cut = label.removesuffix("… (file gone)")
    assert label.endswith("… (file gone)") and "Friendly Robot Icon Identification".startswith(cut)


def test_sessions_list_pads_no_line_with_trailing_spaces(fixtures_cli: Cli) -> None:
    """Each row ended in the spaces rich pads its last column with: a copy or a pipe got them."""
    done = teamlore_cli("sessions", "list", env={**fixtures_cli.env, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    padded = [line for line in done.stdout.splitlines() if line != line.rstrip()]
    assert padded == []


def test_sessions_list_at_80_columns_with_a_repository_column(tmp_path: Path, home: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
    from recall_world import CodexSession, make_repo, sync

    repo = make_repo(tmp_path / "services" / "a-rather-long-checkout-name" / "shop-backend-api")
    session = CodexSession("a1", repo)
    session.turn("fix the release script", "Fixed the tag check.")
    session.write(tmp_path / "codex")
    sync(home, tmp_path / "codex", repo)
    env = {"TEAMLORE_HOME": str(home), "COLUMNS": "80"}
    listed = json.loads(teamlore_cli("sessions", "list", "-f", "json", env=env).stdout)
    done = teamlore_cli("sessions", "list", env=env)
    assert done.returncode == 0, done.stderr

    ((row, title),) = _listed(done.stdout, listed["sessions"])

    _, provider, day, minute, turns, repository = row.split()
    assert (provider, day, minute, turns) == ("codex", "2026-03-02", "09:00", "1")
    assert repository == "shop-backend-…"  # a long repository name is cut
    # the session's first prompt names it (its provider gave it no title), whole on its line
    assert title == "fix the release script"


def test_provider_is_checked_alike_everywhere_and_errors_name_the_flag(
    fixtures_cli: Cli,
) -> None:
    for args in (["sessions", "list"], ["sessions", "search", "x"], ["sync"]):
        done = fixtures_cli.runner.invoke(
            app, [*args, "--provider", "nope", "-f", "json"], env=fixtures_cli.env
        )
        error = json.loads(done.output)["error"]
        assert done.exit_code == 2, args
        message = "--provider: unknown provider 'nope' (one of: claude, codex, pi)"
        assert (error["code"], error["message"], error["problem"]) == (
            "INVALID_ARGUMENT",
            message,
            message,
        )
    done = fixtures_cli.runner.invoke(
        app, ["sessions", "search", "x", "--limit", "0"], env=fixtures_cli.env
    )
    assert "--limit: " in done.output and "Value error" not in done.output


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_sees_the_progress_bar_of_a_long_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the consoles are made on first use (a JSON run never loads rich); a live progress display
    # takes the console itself, on the terminal stderr is
    from teamlore.cli.output import OutputFormat, progress_for

    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress_for(OutputFormat.text, "Indexing sessions") as update:
        assert update is not None
        update(1, 2, "one.jsonl")
    assert terminal.getvalue().startswith("\x1b[?25l")  # the live display took the terminal


def test_a_command_that_reports_no_progress_shows_no_bar_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # a bar that can never move (`status 0/?`) is only noise before the answer
    from teamlore.cli.output import OutputFormat, run

    monkeypatch.setenv("TEAMLORE_HOME", str(tmp_path / "state"))
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    shown: list[dict[str, object]] = []
    run("status", {}, OutputFormat.text, shown.append, cwd=tmp_path)
    assert shown and terminal.getvalue() == ""
