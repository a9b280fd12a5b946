"""teamlore's own words at a given width (docs/cli-output.md, "teamlore's own words fit the
width"), from two walks at 80 columns: a width that holds no text, widths counted in terminal
cells (Chinese takes two), sentences that were never wrapped, and paths with a space in them.
In-process (typer's CliRunner) where it can be: each run makes its consoles again, as a process
does, so each reads the COLUMNS it is given."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from rich.cells import cell_len

from support import entry_file, git, teamlore_cli, teamlore_in_pty
from teamlore.cli import output
from teamlore.core import errors


@pytest.fixture(autouse=True)
def user_home(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A person's home folder (paths shown from `~`), TEAMLORE_HOME inside the test's folder;
    the consoles made again after the test, for the next one's COLUMNS."""
    user = tmp_path / "home" / "ana"
    user.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.chdir(user)
    output.forget_consoles()
    yield user
    output.forget_consoles()


def cli(*args: str, columns: str = "80") -> tuple[int, str, str]:
    """`teamlore ARGS` in this process at COLUMNS=`columns`: (exit code, stdout, stderr)."""
    from typer.testing import CliRunner

    from teamlore.cli.main import app

    output.forget_consoles()
    try:
        done = CliRunner().invoke(app, list(args), env={"COLUMNS": columns})
    finally:
        output.forget_consoles()
    return done.exit_code, done.stdout, done.stderr


def printed(render: object, *args: object, columns: str = "80") -> str:
    """What a text renderer prints (stdout and stderr) at COLUMNS=`columns`."""
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", columns)
        output.forget_consoles()
        with redirect_stdout(out), redirect_stderr(out):
            render(*args)  # type: ignore[operator]
        output.forget_consoles()
    return out.getvalue()


def past(width: int, text: str) -> list[str]:
    """The lines of `text` wider than `width` terminal cells, but for a line that is one word
    (a path, an id) under its indent, which stays whole for the terminal to wrap."""
    return [line for line in text.splitlines() if cell_len(line) > width and len(line.split()) > 1]


# -- 1. a width that holds no text -------------------------------------------------------------


def test_a_width_that_holds_no_text_is_taken_as_80_columns() -> None:
    """`COLUMNS=0` printed nothing and exited 0; `COLUMNS=1` printed blank lines."""
    code, at_80, _ = cli("status")
    assert code == 0 and at_80.startswith("State dir   ")
    for columns in ("0", "1", "19"):
        assert cli("status", columns=columns) == (0, at_80, ""), columns
    code, shown, said = cli("status", "--format", "json", columns="0")
    assert code == 0 and shown.startswith("{") and said == ""


def test_an_unknown_command_is_refused_in_words_at_columns_0() -> None:
    done = teamlore_cli("nosuch", env={"COLUMNS": "0"})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error USAGE: teamlore: no such command 'nosuch'\n"), done.stderr


def test_a_narrow_width_is_laid_out_at_40_columns(tmp_path: Path, user_home: Path) -> None:
    """At COLUMNS=20 `repo list` broke its path every 2 characters."""
    shop = user_home / "src" / "shop"
    shop.mkdir(parents=True)
    git(shop, "init", "-q")
    assert cli("sync", "--repository", str(shop))[0] == 0
    code, at_40, _ = cli("repo", "list", columns="40")
    assert code == 0 and at_40.splitlines()[1].endswith("  ~/src/"), at_40
    assert cli("repo", "list", columns="20") == (0, at_40, "")
    assert cli("repo", "list", columns="39") == (0, at_40, "")


# -- 2. widths in terminal cells ---------------------------------------------------------------


def test_a_refusal_quoting_chinese_is_wrapped_at_80_cells(user_home: Path) -> None:
    """103 columns on the first line: the wrapper counted characters, not cells."""
    folder = "~/src/这是一个并不存在的很长的目录名称这是一个并不存在的"  # 50 cells
    code, _, said = cli("sync", "--repository", folder)
    assert code == 1 and said.startswith(f"error PATH_NOT_FOUND: {folder}\n"), said
    assert past(80, said) == [], said


def test_a_model_profile_name_says_ascii_and_fits_80_cells() -> None:
    """81 columns; "1-64 letters" where only ASCII letters are taken."""
    code, _, said = cli("personal", "config", "--model-profile", "默认")
    assert code == 2 and "1-64 ASCII letters" in said, said
    assert past(80, said) == [], said


def test_an_import_of_a_chinese_file_name_fits_80_cells(user_home: Path) -> None:
    """`file: 我的偏好.md (…); label: 我的偏好.md; declared author: unknown;` was 84 columns."""
    assert cli("personal", "config", "--allow", "document_import")[0] == 0
    notes = user_home / "notes"
    notes.mkdir()
    (notes / "我的偏好我的偏好我的偏好.md").write_text("I prefer short commit messages.\n")
    code, shown, _ = cli("personal", "import", str(notes / "我的偏好我的偏好我的偏好.md"))
    assert code == 1 and shown.startswith("file: 我的偏好我的偏好我的偏好.md (32 bytes"), shown
    assert past(80, shown) == [], shown


def test_the_note_on_a_masked_secret_wraps_at_the_terminal_s_cells(home: Path) -> None:
    """It was wrapped by `textwrap` at a fixed 80 characters."""
    personal = home / "personal"
    personal.mkdir(parents=True, mode=0o700)
    home.chmod(0o700)
    (personal / "profile.md").write_text(
        "# 偏好\n\ntoken ghp_abcdefghijklmnopqrstuvwxyz0123456789AB here\n"
    )
    code, _, said = cli("personal", "show", columns="50")
    assert code == 0 and said.startswith("note: profile.md:3 holds a secret\n"), said
    assert len(said.splitlines()) > 2 and past(50, said) == [], said


# -- 3. sentences that were never wrapped ------------------------------------------------------


def test_synthesize_wraps_its_sentences(user_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 162-column `Consolidation task consolidate-…` line and a 139-column `Next: …`."""
    repo = user_home / "acme"
    repo.mkdir()
    git(repo, "init", "-q")
    monkeypatch.chdir(repo)
    assert cli("memory", "init")[0] == 0
    (repo / ".threadshare" / "memory" / "entries" / "sort-rows.md").write_text(
        entry_file("sort-rows", "Sort rows.")
    )
    code, shown, _ = cli("memory", "synthesize", "--full")
    assert code == 0, shown
    assert past(80, shown) == [], shown
    assert re.search(r"^  consolidate-[0-9a-f]{64}$", shown, re.MULTILINE), shown
    assert "\nNext: Consolidate the entries into scenes and doctrine as the task's\n" in shown
    assert "\n      instructions say, then stage the ConsolidationPatch@v1" in shown


def test_personal_show_at_a_terminal_wraps_what_agents_get(home: Path, tmp_path: Path) -> None:
    """`Agents reading personal memory for context(s) …` was one 158-column line."""
    personal = home / "personal"
    personal.mkdir(parents=True, mode=0o700)
    home.chmod(0o700)
    (personal / "profile.md").write_text("# Profile\n\nI like tabs.\n")
    code, shown = teamlore_in_pty("personal", "show", answers=[], cwd=tmp_path)
    assert code == 0 and "Agents reading personal memory" in shown, shown
    assert past(80, shown) == [], shown


def test_recall_wraps_its_note() -> None:
    """A 225-column `note: Turns matching: 4, but no session has enough…`."""
    from teamlore.cli.commands.memory import _render_recall

    note = (
        "Turns matching: 4, but no session has enough of them or every matching turn was"
        " already extracted. Sessions excluded from extraction: 1 (`teamlore sessions include"
        " KEY` takes one back)."
    )
    shown = printed(_render_recall, {"sources": [], "note": note})
    assert past(80, shown) == [], shown
    assert shown.startswith("0 extraction tasks\nnote: Turns matching: 4, but no session")
    assert "`teamlore sessions include KEY`" in shown  # a command stays whole on its line


def test_confirm_yes_wraps_what_it_skipped() -> None:
    """`skipped …: 1 statement (s1) needs a person; run …` was one 130-character line."""
    from teamlore.cli.commands.review import _typed_facts_only

    item = {
        "candidateId": "extract-" + "d028d5124c49" * 5 + "abcd" + "-c1",
        "statements": [{"statementId": "s1", "confirmation": "required"}],
    }
    said = printed(_typed_facts_only, item)
    assert said.splitlines() == [
        "skipped extract-d028d5124c49-c1: 1 statement (s1) needs a person; run",
        "  `teamlore memory confirm` on a terminal or use `teamlore ui`",
    ]


# -- 4. a path with a space stays whole --------------------------------------------------------


def test_doctor_keeps_a_project_path_with_a_space_whole(user_home: Path) -> None:
    """`mcpServers.teamlore_personal in ~/código` / `proj/app/.mcp.json (project scope)`: the
    checks as doctor words them for a project in `~/código proj/app` (a whole `doctor` run
    takes seconds)."""
    from teamlore.cli.commands.integrations import _render_doctor

    checks = [
        ("mcpServers.teamlore_personal in ~/código proj/app/.mcp.json (project scope)"),
        ("SessionStart hook in ~/código proj/app/.claude/settings.json (project scope)"),
    ]
    result = {
        "checks": [{"status": "ok", "check": "claude.config", "message": m} for m in checks],
        "counts": {"ok": 2, "warn": 0, "fail": 0},
    }
    assert printed(_render_doctor, result).splitlines() == [
        "ok   claude.config      mcpServers.teamlore_personal in",
        "                        ~/código proj/app/.mcp.json (project scope)",
        "ok   claude.config      SessionStart hook in",
        "                        ~/código proj/app/.claude/settings.json (project scope)",
        "2 ok, 0 warn, 0 fail",
    ]
    # and a finding quoting Chinese, 84 columns: the wrapper counted characters, not cells
    invalid = (
        "PERSONAL_DOCUMENT_INVALID: preferences.md:9: '# 工作习惯' is a title; a section starts"
        " with '## ' (edit the file by hand)"
    )
    result = {
        "checks": [{"status": "fail", "check": "personal", "message": invalid}],
        "counts": {"ok": 0, "warn": 0, "fail": 1},
    }
    shown = printed(_render_doctor, result)
    assert shown.startswith("fail personal           PERSONAL_DOCUMENT_INVALID: preferences.md:9:")
    assert past(80, shown) == [], shown


def test_a_refusal_keeps_a_path_with_a_space_whole() -> None:
    """NOTHING_INSTALLED split `~/código\n proj/app/.claude/settings.json` the same way."""
    err = errors.TeamloreError(
        errors.NOTHING_INSTALLED,
        "teamlore is not installed for claude (project scope);"
        " ~/código proj/app/.claude/settings.json: holds teamlore's hooks",
    )

    def refuse() -> None:
        with pytest.raises(SystemExit):
            output.fail(err, output.OutputFormat.text)

    assert printed(refuse, columns="60").splitlines() == [
        "error NOTHING_INSTALLED: teamlore is not installed for",
        "      claude (project scope);",
        "      ~/código proj/app/.claude/settings.json: holds",
        "      teamlore's hooks",
        "  next: Check what is installed with `teamlore doctor`.",
    ]


def test_a_file_whose_name_holds_a_space_stays_whole_when_it_is_there(user_home: Path) -> None:
    """No `/` follows the space in `read me.md`: the file on disk says where the path ends."""
    said = "x" * 30 + " ~/código proj/my notes/read me.md is there"

    def say_it() -> None:
        output.say_wrapped(said)

    assert printed(say_it, columns="60").splitlines()[:2] == [
        "x" * 30 + " ~/código proj/my notes/read",
        "  me.md is there",
    ]
    (user_home / "código proj" / "my notes").mkdir(parents=True)
    (user_home / "código proj" / "my notes" / "read me.md").write_text("")
    assert printed(say_it, columns="60").splitlines() == [
        "x" * 30,
        "  ~/código proj/my notes/read me.md is there",
    ]


def test_the_watch_log_is_wrapped_at_the_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """`teamlore watch` started with a 120-column line a terminal cut mid-word (in a pipe too:
    tests/cli/test_watch.py)."""
    from teamlore.cli.watch import event_lines

    monkeypatch.setenv("COLUMNS", "80")
    output.forget_consoles()
    on_screen = event_lines("started", {"folders": 2})
    assert len(on_screen) > 1 and past(80, "\n".join(on_screen)) == []


def test_a_control_character_in_a_wrapped_sentence_is_shown_not_broken_at(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`say_wrapped` split at `\\x1f` (str.split takes it for a space) and measured ESC as no
    width, so a line of escapes ran past the width: the text is wrapped as it is printed."""
    monkeypatch.setenv("COLUMNS", "40")
    output.forget_consoles()
    try:
        output.say_wrapped("Removed re\x1fpo from the org index, with" + " \x1b" * 12 + ".")
    finally:
        output.forget_consoles()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Removed re\\x1fpo from the org index,"), lines
    assert max(cell_len(line) for line in lines) <= 40, lines
