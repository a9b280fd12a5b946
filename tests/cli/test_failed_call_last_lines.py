"""`sessions show` prints a failed call's last lines too: errors print last (a traceback's
exception, a build's summary), on the real fixture sessions synced as `teamlore sync` does."""

from __future__ import annotations

import pytest

from support import Cli, fixture_sources


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    cli = Cli(tmp_path_factory.mktemp("state"))
    cli.env["COLUMNS"] = "80"
    cli.text("sync", *fixture_sources())
    return cli


def _session(cli: Cli, cwd_ends: str, started: str) -> str:
    listed = cli.json("sessions", "list", "--limit", "100")["sessions"]
    return next(
        s["sessionKey"][:12]
        for s in listed
        if (s.get("cwd") or "").endswith(cwd_ends) and s["startedAt"].startswith(started)
    )


def _call(page: str, seq: int) -> list[str]:
    lines = page.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(f"  #{seq} "))
    rest = lines[first + 1 :]
    end = next((i for i, line in enumerate(rest) if not line.startswith("    ")), len(rest))
    return [lines[first], *rest[:end]]


def test_a_failed_python_call_shows_its_exception(cli: Cli) -> None:
    """rtchess's turn 53, tool #5: `python3 export_development_history.py …` exited 1 with a
    traceback. The turn view showed its top six lines and `… 6 more lines: --turn 53 --tool 5
    prints them`; the hidden ones held `NameError: name 'write_exported_from_events' is not
    defined`, the line that says what went wrong."""
    key = _session(cli, "/rtchess", "2025-11-22T20:45")
    call = _call(cli.text("sessions", "show", key, "--from", "53", "-n", "2"), 5)
    assert "(shell, error exit 1)" in call[0]
    assert call[1:] == [
        "    … 4 more lines before the error: --turn 53 --tool 5 prints them",
        "    Traceback (most recent call last):",
        '      File "/Users/pinouchon/code/rtchess/export_development_history.py", line 228, in'
        " <module>",
        "        main()",
        "        ~~~~^^",
        '      File "/Users/pinouchon/code/rtchess/export_development_history.py", line 214, in'
        " main",
        "        write_exported_from_events(session_id, events)",
        "        ^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "    NameError: name 'write_exported_from_events' is not defined",
    ]


def test_a_long_failed_output_shows_its_head_and_tail_and_counts_the_lines_between(
    cli: Cli,
) -> None:
    """rave-era's turn 1, tool #79: `npm.cmd run build` failed; its last line (`Next.js build
    worker exited with code: 1 …`) is shown under the first lines of the error, with how many
    lines lie between."""
    key = _session(cli, "RAVE-ERA", "2026-04-26T19:19")
    call = _call(cli.text("sessions", "show", key, "--turn", "1"), 79)
    assert call[2] == "    Failed to compile."
    assert call[4] == "    Type error: Cannot find name 'useEffect'."
    assert call[8] == "    … 2 more lines: --turn 1 --tool 79 prints them"
    assert call[-1] == "    Next.js build worker exited with code: 1 and signal: null"
    assert len(call) == 12  # the call, the lines before the error, 6 + 3 lines and the cut


def test_a_successful_call_shows_no_output(cli: Cli) -> None:
    key = _session(cli, "/rtchess", "2025-11-22T20:45")
    page = cli.text("sessions", "show", key, "--from", "53", "-n", "2")
    assert _call(page, 7) == [
        "  #7 shell_command (shell, ok exit 0) python3 export_development_history.py"
        " 019aad50-a7e6-7422-b7a8-0b384290624f"
    ]
