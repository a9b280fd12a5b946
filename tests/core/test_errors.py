"""Refusals on the wire: ours (`code`, `message`) and the seed's (`problem`, `next`) side by
side (docs/seed-conformance.md)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from teamlore.core import errors, refusals


def test_a_refusal_carries_the_seeds_problem_and_next_beside_code_and_message() -> None:
    wire = errors.TeamloreError(errors.MEMORY_NOT_INITIALIZED).to_json()
    assert wire["code"] == "MEMORY_NOT_INITIALIZED"
    assert wire["message"] == wire["problem"] == errors.MEMORY_NOT_INITIALIZED.summary
    # the message states the problem and `next` the step, each once
    assert "memory init" not in wire["message"]
    assert wire["next"] == "Run `teamlore memory init` in this worktree, then run this again."


def test_every_code_has_a_one_line_next_step() -> None:
    for error in errors.registered_codes().values():
        step = errors.next_step(error)
        assert step and "\n" not in step and step[0].isupper() and step.endswith("."), error.code
    assert "`--help`" in errors.next_step(errors.USAGE)
    assert errors.next_step(errors.INTERNAL) == errors.INTERNAL_NEXT
    # a summary that ends in its remedy gives it, when remedies.py has no line for the code
    assert (
        errors.next_step(errors.PROMOTION_OWNER_MISMATCH) == "Run promote from the plan's worktree."
    )


def test_the_window_summary_fits_every_command_that_refuses_a_window() -> None:
    """WINDOW_INVALID is recall's (canonical UTC instants, 366 days at most) and sessions
    search|list's (ISO dates, since before until): its summary spoke of recall alone."""
    summary = errors.WINDOW_INVALID.summary
    assert not summary.startswith("the recall window")
    assert summary == (
        "the time window must start before it ends (recall's: canonical UTC instants, at most"
        " 366 days apart)"
    )


def test_details_stay_where_they_were() -> None:
    wire = errors.TeamloreError(errors.QUERY_TOO_BROAD, "201 turns", limit=200).to_json()
    assert wire["details"] == {"limit": 200}
    assert set(wire) == {"code", "message", "problem", "next", "details"}


def test_a_value_echoed_back_is_cut_to_a_readable_line() -> None:
    """A refusal quoting what it was given (a 3,000-character query, session key or date) keeps
    the value's start and end and says how much it left out; shorter runs stay whole."""
    value = "q" + "x" * 2_998 + "z"
    message = errors.TeamloreError(errors.QUERY_EMPTY, f"{value!r} has no searchable terms").message
    assert message.startswith("'qxx") and message.endswith("xxz' has no searchable terms")
    assert "…[2,862 characters]…" in message and len(message) < 200
    path = "/home/mei/" + "a" * 140 + "/notes.md"  # a long path is still shown whole
    assert errors.TeamloreError(errors.INVALID_ARGUMENT, f"cannot read {path}").message.endswith(
        path
    )
    assert errors.TeamloreError(errors.INVALID_ARGUMENT, "two\nlines").message == "two lines"


def test_a_value_refused_by_a_pattern_is_told_what_it_should_look_like() -> None:
    """A person is told the form a value takes, not the regex it failed; a pattern with no
    name keeps pydantic's words."""
    from pydantic import BaseModel, Field, ValidationError

    from teamlore.contracts.formats import PATTERN_NAMES, UUID4_PATTERN

    class Request(BaseModel):
        plan_id: str = Field(alias="planId", pattern=UUID4_PATTERN)
        slug: str = Field(default="a", pattern=r"^[a-z]+$")

    def refusal(payload: dict[str, str]) -> str:
        with pytest.raises(ValidationError) as refused:
            Request.model_validate(payload)
        return errors.from_validation_error(
            refused.value, errors.INVALID_ARGUMENT, plain=True, patterns=PATTERN_NAMES
        ).message

    named = refusal({"planId": "nope"})
    assert named == "planId: 'nope' is not a whole id like 0b6c8d1e-3f2a-4c5b-9d7e-1a2b3c4d5e6f"
    unnamed = refusal({"planId": "0b6c8d1e-3f2a-4c5b-9d7e-1a2b3c4d5e6f", "slug": "A"})
    assert unnamed == "slug: String should match pattern '^[a-z]+$'"


def test_a_permission_refusal_names_a_path_under_home_from_home_and_cuts_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PERMISSION_DENIED's next step is to look at the folder the message names (`ls -ld`):
    under the home folder it is named from `~`, as the CLI names paths; any other absolute
    path keeps only its last part, and MCP's `redacted` cuts both."""
    monkeypatch.setenv("HOME", "/home/mei")
    under_home = refusals.refusal_for(
        PermissionError(13, "Permission denied", "/home/mei/.codex/archived_sessions")
    )
    assert under_home.code == "PERMISSION_DENIED"
    assert "(~/.codex/archived_sessions: Permission denied)" in under_home.message
    elsewhere = refusals.refusal_for(
        PermissionError(13, "Permission denied", "/home/meister/.codex/sessions")
    )
    assert "(…/sessions: Permission denied)" in elsewhere.message
    assert "meister" not in elsewhere.message
    assert "(…/archived_sessions: Permission denied)" in refusals.redacted(under_home).message


def test_permission_and_full_disk_refusals_name_the_file_and_why_in_words(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """PERMISSION_DENIED and DISK_FULL quoted Python's `[Errno 13] Permission denied: '~/…'`
    after STATE_READ_ONLY stopped doing so: all three say the file and the reason as a person
    reads it, both files of a rename, and the reason alone when no file is named."""
    monkeypatch.setenv("HOME", "/home/mei")
    monkeypatch.setenv("TEAMLORE_HOME", str(tmp_path / "state"))
    denied = refusals.refusal_for(
        PermissionError(errno.EACCES, "Permission denied", "/home/mei/app/.threadshare/memory")
    )
    assert (denied.code, denied.message) == (
        "PERMISSION_DENIED",
        f"{errors.PERMISSION_DENIED.summary} (~/app/.threadshare/memory: Permission denied)",
    )
    moved = refusals.refusal_for(
        PermissionError(errno.EACCES, "Permission denied", "/home/mei/a.md", None, "/home/mei/b.md")
    )
    assert moved.message.endswith("(~/a.md -> ~/b.md: Permission denied)")
    state = tmp_path / "state"
    state.mkdir()
    full = OSError(errno.ENOSPC, "No space left on device", str(state / "index.sqlite3"))
    refusal = refusals.refusal_for(full)
    assert refusal.code == "DISK_FULL"
    assert refusal.message.startswith(
        f"{errors.DISK_FULL.summary} (…/index.sqlite3: No space left on device); "
    )
    unnamed = refusals.refusal_for(OSError(errno.ENOSPC, "No space left on device"))
    assert "(No space left on device)" in unnamed.message and "Errno" not in unnamed.message


def test_a_read_only_state_dir_names_the_file_and_why_in_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Walk defect: STATE_READ_ONLY quoted Python's words, `([Errno 30] Read-only file system:
    '~/.local/state/teamlore/watch.lock')`. It names the file from `~` and says why, as a person
    reads it."""
    monkeypatch.setenv("HOME", "/home/mei")
    lock = "/home/mei/.local/state/teamlore/watch.lock"
    refusal = refusals.refusal_for(OSError(errno.EROFS, "Read-only file system", lock))
    assert (refusal.code, refusal.message) == (
        "STATE_READ_ONLY",
        "the state directory is read-only and this command needs to write to it"
        " (~/.local/state/teamlore/watch.lock: Read-only file system)",
    )


def test_a_path_not_utf8_in_a_refusal_shows_its_bytes_escaped_so_json_and_mcp_replies_encode(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder whose name is not UTF-8 (Python holds its bytes as lone surrogates) made the
    `--format json` refusal invalid UTF-8 and the MCP server's reply raise. The byte shows as
    `\\xff`, as sync's diagnostics show it."""
    from teamlore.cli.output import OutputFormat, fail_unexpected
    from teamlore.mcp.server import _result

    monkeypatch.setenv("HOME", "/home/mei")
    monkeypatch.delenv("TEAMLORE_DEBUG", raising=False)
    denied = PermissionError(
        errno.EACCES, "Permission denied", os.fsdecode(b"/home/mei/r\xffepo/.threadshare/memory")
    )
    with pytest.raises(SystemExit):
        fail_unexpected(denied, OutputFormat.json)
    shown = json.loads(capsys.readouterr().out.encode("utf-8"))
    assert shown["error"]["message"].endswith(
        "(~/r\\xffepo/.threadshare/memory: Permission denied)"
    )
    failure = refusals.redacted(refusals.refusal_for(denied))
    reply = _result({"error": failure.to_json(for_tool=True)}, is_error=True)
    assert "…/memory: Permission denied" in reply.content[0].text
