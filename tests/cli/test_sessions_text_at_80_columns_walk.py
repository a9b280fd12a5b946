"""`sync`, `sessions list` and `sessions show` at 80 columns, as a user reads them: a walk with
real session fixtures (and a repository their sessions map to by a `[paths]` alias) found
subagent rows that did not say they were subagents, a note on a subagent's open turn that could
never come true, teamlore's own sentences past the width, folders cut with no word of where to
read them whole, and an apply_patch's lines flush left under its call (docs/cli-output.md)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from support import Cli, fixture_sources, in_process, listed_labels, teamlore_in_pty

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import CodexSession, make_repo

AT_80 = {"COLUMNS": "80"}
MOREDIP = "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68"  # claude/moredip-0ccf1a04.jsonl: 5 subagents
_STYLE = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    cli = Cli(tmp_path_factory.mktemp("state"))
    cli.json("sync", *fixture_sources())
    return cli


def listed(cli: Cli) -> list[dict[str, Any]]:
    sessions: list[dict[str, Any]] = cli.json("sessions", "list")["sessions"]
    return sessions


def subagent(cli: Cli) -> tuple[str, str]:
    """The key of moredip's `Poem about Thai yellow curry` started by its turn 2 (one turn,
    open), and its parent's."""
    parent = cli.json("sessions", "show", MOREDIP)["session"]["sessionKey"]
    [poem] = [
        s
        for s in listed(cli)
        if (s["subagent"] or {}).get("description") == "Poem about Thai yellow curry"
        and s["parentSessionKey"] == parent
        and s["subagent"]["turn"] == 2
    ]
    return poem["sessionKey"], parent


def compaction(cli: Cli) -> dict[str, Any]:
    """claude/spotter's compaction summariser: no turns, no end time recorded."""
    [session] = [s for s in listed(cli) if (s["subagent"] or {}).get("kind") == "compaction"]
    return session


def at_80(cli: Cli, *args: str) -> str:
    done = in_process(*args, env={**cli.env, **AT_80})
    assert done.returncode == 0, done.stderr
    return done.stdout


def too_wide(text: str) -> list[str]:
    return [line for line in text.splitlines() if cell_len(line) > 80]


def test_a_subagents_title_says_so_where_it_starts(walk: Cli) -> None:
    sessions = listed(walk)
    labels = listed_labels(at_80(walk, "sessions", "list"))
    assert len(labels) == len(sessions) and any(s["parentSessionKey"] for s in sessions)
    for s in sessions:
        label = labels[s["sessionKey"][:12]]
        assert label.startswith("↳ ") is bool(s["parentSessionKey"]), label
    summariser = compaction(walk)
    assert labels[summariser["sessionKey"][:12]] == (
        f"↳ compaction summary of {summariser['parentSessionKey'][:12]}"
    )


def test_a_subagents_open_turn_says_what_it_is_and_where_its_result_lives(walk: Cli) -> None:
    poem, parent = subagent(walk)
    text = at_80(walk, "sessions", "show", poem[:12])
    assert "── turn 1 (open)" in text
    note = " ".join(text.split("(open)", 1)[1].split("\nuser ", 1)[0].split()[1:])
    assert "a later prompt" not in note and "seals it" not in note
    assert note == (
        "open: a subagent's transcript gets no later prompt to seal it. Extraction reads main"
        " sessions, not subagents: this one's result is the output of the call of its parent"
        " that started it (the command above shows it)."
    )
    # a main session's open turn still says what seals it
    main = at_80(walk, "sessions", "show", parent[:12], "--from", "6")
    assert "a later prompt or the client's end-of-turn record seals it" in " ".join(main.split())


# the times under a `sessions show` header too wide for them on its first line
_TIMES_LINE = re.compile(r"  [0-9]{4}-[0-9]{2}-[0-9]{2}T")


def under_the_header(text: str) -> list[str]:
    """The lines of `sessions show` text under its header (key, provider, folder, times: one
    line, or two where the times did not fit)."""
    lines = text.splitlines()
    return lines[2:] if len(lines) > 1 and _TIMES_LINE.match(lines[1]) else lines[1:]


def test_sessions_show_headers_fit_80_columns_with_the_command_whole(walk: Cli) -> None:
    poem, parent = subagent(walk)
    head = at_80(walk, "sessions", "show", poem[:12]).split("\n\n", 1)[0]
    command = f"`teamlore sessions show {parent[:12]} --turn 2 --tool 3`"
    assert too_wide(head) == [] and any(command in line for line in head.splitlines())
    assert " ".join(" ".join(under_the_header(head)).split()) == (
        f"subagent of {parent[:12]}, started by its turn 2 call #3: Poem about Thai yellow curry"
        f" ({command})"
    )

    summariser = compaction(walk)
    assert summariser["endedAt"] is None
    shown = at_80(walk, "sessions", "show", summariser["sessionKey"][:12])
    assert "→" not in shown.splitlines()[0]  # no end recorded: none said
    rest = under_the_header(shown)
    assert too_wide(shown) == [] and len(rest) >= 2
    parent = summariser["parentSessionKey"][:12]
    assert rest[0].startswith(f"compaction summariser of {parent}:")

    # titled by its first prompt, Chinese and a path: 80 characters, 91 columns
    [chinese] = [s for s in listed(walk) if (s["derivedTitle"] or "").startswith("請閱讀")]
    title = under_the_header(at_80(walk, "sessions", "show", chinese["sessionKey"][:12]))[0]
    assert title.startswith("請閱讀") and title.endswith("…") and cell_len(title) <= 80


@pytest.mark.parametrize("columns", ["40", "50", "60"])
def test_a_narrow_listing_keeps_the_key_sessions_show_takes(walk: Cli, columns: str) -> None:
    """`sessions show` takes a key's first 8 characters or more: a narrow terminal cuts the
    other columns, never the key below the 12 characters a wide listing shows."""
    keys = [s["sessionKey"][:12] for s in listed(walk)]
    narrow = in_process("sessions", "list", env={**walk.env, "COLUMNS": columns}).stdout
    assert list(listed_labels(narrow)) == keys


def test_a_cut_folder_says_where_to_read_it_whole(walk: Cli) -> None:
    text = at_80(walk, "sessions", "list", "--unmapped")
    assert "  …/" in text
    command = "`teamlore sessions list --unmapped --format json`"
    note = f"A folder cut at its start (…/) is whole in {command}."
    assert " ".join(" ".join(text.splitlines()[-2:]).split()) == note
    assert any(command in line for line in text.splitlines())  # whole on a line, to be copied
    wide = in_process("sessions", "list", "--unmapped", env={**walk.env, "COLUMNS": "300"})
    assert "…/" not in wide.stdout and "is whole in" not in wide.stdout  # nothing cut


def test_sync_says_its_summary_within_80_columns_on_a_terminal(tmp_path: Path, home: Path) -> None:
    src = tmp_path / "src"
    repo = make_repo(src / "shop")
    codex = tmp_path / "codex"
    # recorded on another machine: mapped by the alias below; and one mapped to nothing
    CodexSession("a1", Path("/Users/me/code/shop")).turn("fix the release script").write(codex)
    CodexSession("a2", Path("/Users/me/elsewhere/tools")).turn("tidy up").write(codex)
    first = in_process("sync", "--source", f"codex={codex}", "--repository", str(repo))
    assert first.returncode == 0, first.stderr
    config = home / "config.toml"
    config.write_text(
        config.read_text() + f'\n[paths]\naliases = {{ "/Users/me/code" = "{src}" }}\n'
    )

    code, printed = teamlore_in_pty("sync", "--source", f"codex={codex}", answers=[], cwd=tmp_path)

    assert code == 0, printed
    # what stays on the screen once the progress bar (on stderr) is gone
    text = _STYLE.sub("", printed[printed.rindex("Indexed ") :].replace("\r\n", "\n"))
    assert too_wide(text) == [], text
    said = " ".join(text.split())
    assert "Index holds 2 sessions, 2 turns." in said
    assert "1 repository: 1 session mapped (1 by path alias)," in said
    unmapped = "`teamlore sessions list --unmapped`"
    assert any(unmapped in line for line in text.splitlines())  # the command whole on a line
    assert f"1 session could not be mapped to a registered repository; {unmapped} shows" in said


def test_an_apply_patch_goes_on_under_its_call(tmp_path: Path, home: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    session = CodexSession("b1", repo).user("add a changelog")
    session.patch("CHANGELOG.md", "first entry").answer("Added it.")
    session.write(tmp_path / "codex")
    cli = Cli(home)
    cli.json("sync", "--source", f"codex={tmp_path / 'codex'}")

    [listed_session] = listed(cli)
    lines = at_80(cli, "sessions", "show", listed_session["sessionKey"][:12]).splitlines()

    call = next(i for i, line in enumerate(lines) if "#1 apply_patch" in line)
    assert lines[call].startswith("  #1 apply_patch") and lines[call].endswith("*** Begin Patch")
    assert lines[call + 1 : call + 4] == [
        "    *** Add File: CHANGELOG.md",
        "    +first entry",
        "    *** End Patch",
    ]


@pytest.mark.parametrize(
    ("started", "ended", "header"),
    [
        (None, None, ["abcdef012345 codex ~/p/" + "x" * 40]),
        (
            None,
            "2026-01-02T00:00:00.000Z",
            ["abcdef012345 codex ~/p/" + "x" * 40, "  → 2026-01-02T00:00:00.000Z"],
        ),
    ],
)
def test_a_header_without_times_has_no_empty_line_or_trailing_space(
    started: str | None,
    ended: str | None,
    header: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """At 40 columns a session with no times printed a line of two spaces under its header,
    and one with an end but no start `codex ` then `   → …`."""
    from teamlore.cli import output
    from teamlore.cli.session_view import render_show

    monkeypatch.setenv("COLUMNS", "40")
    session = {
        "sessionKey": "abcdef012345" + "0" * 52,
        "provider": "codex",
        "cwd": "~/p/" + "x" * 40,
        "startedAt": started,
        "endedAt": ended,
        "turns": 0,
    }
    output.forget_consoles()
    try:
        render_show({"session": session, "turns": [], "page": {"next": None, "from": 1}})
    finally:
        output.forget_consoles()
    lines = capsys.readouterr().out.splitlines()
    assert lines[: len(header)] == header, lines
