"""Turns as the provider meant them: aborted and rolled-back Codex turns, the messages Claude Code
writes in the assistant's place, and Windows tool output, as `sync` indexes them and
`sessions show` / `sessions search` present them (text and JSON)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from records import (
    claude_api_error,
    claude_assistant,
    claude_record,
    codex_event,
    codex_function_call,
    codex_function_output,
    codex_meta,
    codex_rolled_back,
    codex_turn_aborted,
    codex_user_message,
    write_jsonl,
)

import support
from teamlore.sessions.index_db import (
    CLAUDE_RETRIES_READ_AGAIN,
    MIGRATIONS,
    PARSERS_READ_AGAIN,
    index_db_path,
)

CODEX_ID = "019a0000-0000-7000-8000-0000000000c1"
CLAUDE_ID = "4f1c2d3e-0000-4000-8000-0000000000c2"


class Cli(support.Cli):
    """`support.Cli` with the two commands these tests run."""

    def sync(self, provider: str, root: Path) -> dict[str, Any]:
        return self.json("sync", "--source", f"{provider}={root}")

    def show(self, provider_session_id: str) -> dict[str, Any]:
        return self.json("sessions", "show", provider_session_id)


def codex_turn(n: int, *, end: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    at = f"2026-01-01T00:0{n}:00Z"
    return [
        codex_user_message(f"prompt {n}", at),
        codex_event("agent_message", at, message=f"answer {n}"),
        end if end is not None else codex_event("task_complete", at),
    ]


def codex_file(root: Path, *records: dict[str, Any]) -> Path:
    return write_jsonl(root / "2026" / "01" / "01" / f"rollout-{CODEX_ID}.jsonl", list(records))


def marks(turns: list[dict[str, Any]]) -> list[tuple[int, bool, bool]]:
    return [(t["ordinal"], t["aborted"], t["rolledBack"]) for t in turns]


def test_an_aborted_codex_turn_is_marked_and_shown_as_such(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "state")
    codex_file(
        tmp_path / "codex",
        codex_meta(CODEX_ID),
        *codex_turn(1),
        *codex_turn(2, end=codex_turn_aborted("2026-01-01T00:02:30Z")),
        *codex_turn(3),
    )
    result = cli.sync("codex", tmp_path / "codex")
    assert result["diagnostics"] == []
    turns = cli.show(CODEX_ID)["turns"]
    assert marks(turns) == [(1, False, False), (2, True, False), (3, False, False)]
    assert all(t["sealed"] for t in turns)
    text = cli.text("sessions", "show", CODEX_ID)
    assert "── turn 2 (aborted)" in text and "turn 1 (aborted)" not in text


def test_a_rollback_marks_the_last_turns_also_when_it_arrives_in_a_later_sync(
    tmp_path: Path,
) -> None:
    cli = Cli(tmp_path / "state")
    root = tmp_path / "codex"
    path = codex_file(root, codex_meta(CODEX_ID), *codex_turn(1), *codex_turn(2), *codex_turn(3))
    cli.sync("codex", root)
    with path.open("a") as handle:  # the user undoes two turns, then asks again
        for record in (codex_rolled_back(2), *codex_turn(4), codex_rolled_back(1)):
            handle.write(json.dumps(record) + "\n")
    assert cli.sync("codex", root)["diagnostics"] == []
    turns = cli.show(CODEX_ID)["turns"]
    # turn 4 is undone by the second rollback; turns rolled back before do not count again
    assert marks(turns) == [(1, False, False), (2, False, True), (3, False, True), (4, False, True)]
    text = cli.text("sessions", "show", CODEX_ID)
    assert "── turn 3 (rolled back)" in text and "── turn 1 (rolled back)" not in text


def test_a_reverted_thread_marks_the_undone_turns_of_its_first_file(tmp_path: Path) -> None:
    """Codex 0.171 `thread/revert`: the thread goes on in a new file whose `history_base` ends
    the first file's history before record 4 (line 5); turns from there on were undone."""
    cli = Cli(tmp_path / "state")
    root = tmp_path / "codex"
    first = [codex_meta(CODEX_ID), *codex_turn(1), *codex_turn(2), *codex_turn(3)]
    for ordinal, record in enumerate(first):
        record["ordinal"] = ordinal
    codex_file(root, *first)
    base = {"thread_id": CODEX_ID, "end_ordinal_exclusive": 4, "end_byte_offset": 999}
    write_jsonl(
        root
        / "2026"
        / "01"
        / "01"
        / f"rollout-{CODEX_ID}_019a0000-0000-7000-8000-0000000000c3.jsonl",
        [codex_meta(CODEX_ID, history_base=base), *codex_turn(4)],
    )
    assert cli.sync("codex", root)["diagnostics"] == []
    assert marks(cli.show(CODEX_ID)["turns"]) == [
        (1, False, False),
        (2, False, True),
        (3, False, True),
    ]
    continued = [s for s in cli.json("sessions", "list")["sessions"] if s["turns"] == 1]
    assert len(continued) == 1


def test_a_rollback_without_a_count_is_a_bad_record(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "state")
    codex_file(
        tmp_path / "codex",
        codex_meta(CODEX_ID),
        *codex_turn(1),
        codex_event("thread_rolled_back", num_turns=0),
    )
    result = cli.sync("codex", tmp_path / "codex")
    assert [d["code"] for d in result["diagnostics"]] == ["bad-record"]
    assert marks(cli.show(CODEX_ID)["turns"]) == [(1, False, False)]


def test_claude_api_errors_and_placeholders_are_notices_not_assistant_prose(
    tmp_path: Path,
) -> None:
    cli = Cli(tmp_path / "state")
    ids = {"session_id": CLAUDE_ID}
    error = 'API Error: 400 {"type":"error","error":{"type":"invalid_request_error"}}'
    write_jsonl(
        tmp_path / "claude" / "p" / f"{CLAUDE_ID}.jsonl",
        [
            claude_record("user", "explain the flaky export test", uuid="u1", **ids),
            claude_assistant("It races the clock.", uuid="a1", **ids),
            claude_record("user", "and now?", uuid="u2", **ids),
            claude_api_error(error, uuid="a2", **ids),
            claude_record("user", "continue", uuid="u3", **ids),
            claude_assistant("No response requested.", uuid="a3", model="<synthetic>", **ids),
        ],
    )
    assert cli.sync("claude", tmp_path / "claude")["diagnostics"] == []
    shown = cli.show(CLAUDE_ID)
    assert shown["session"]["model"] == "claude-sonnet-4-5"  # never `<synthetic>`
    turns = shown["turns"]
    assert [t["assistant"] for t in turns] == ["It races the clock.", "", ""]
    assert [t["notices"] for t in turns] == [
        [],
        [{"kind": "api-error", "text": error}],
        [{"kind": "synthetic", "text": "No response requested."}],
    ]
    text = " ".join(cli.text("sessions", "show", CLAUDE_ID).split())
    assert "assistant API Error" not in text and f"api-error {error}" in text
    assert "synthetic No response requested." in text
    hits = cli.json("sessions", "search", "invalid_request_error")["hits"]
    assert [(h["turn"], h["snippet"].split(":")[0]) for h in hits] == [(2, "api-error")]


# the shared fixture moredip-0ccf1a04.jsonl (Claude Code 2.1.15): a model call failed and was
# retried eight times in turn 1 (lines 23-30) and once in turn 2 (line 46), each retry a
# `system/api_error` record naming the connection failure (`cause.code`)
RETRIED_SESSION = "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68"
SOCKET, REFUSED = "FailedToOpenSocket", "ConnectionRefused"
RETRIED_CODES = [SOCKET, SOCKET, REFUSED, SOCKET, REFUSED, SOCKET, REFUSED, SOCKET]


def retried_session(root: Path) -> Path:
    folder = root / "-Users-pete-tmp-claude-code-sessions"
    folder.mkdir(parents=True)
    name = f"moredip-{RETRIED_SESSION[:8]}.jsonl"
    shutil.copyfile(support.shared_fixtures("sessions", "claude", name), folder / name)
    return root


def retry_notices(codes: list[str], most: int = 10) -> list[dict[str, str]]:
    return [
        {"kind": "api-error", "text": f"API Error: {code} · retry {n}/{most}"}
        for n, code in enumerate(codes, 1)
    ]


def test_claude_api_retries_are_notices_of_the_turn_they_interrupted(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "state")
    assert cli.sync("claude", retried_session(tmp_path / "claude"))["diagnostics"] == []
    turns = cli.show(RETRIED_SESSION)["turns"]
    assert turns[0]["notices"] == retry_notices(RETRIED_CODES)
    assert turns[1]["notices"] == retry_notices([REFUSED])
    assert [t["notices"] for t in turns[2:]] == [[]] * (len(turns) - 2)
    assert "API Error" not in turns[0]["assistant"] + turns[1]["assistant"]
    text = " ".join(cli.text("sessions", "show", RETRIED_SESSION).split())
    assert "api-error API Error: ConnectionRefused · retry 3/10" in text
    hits = cli.json("sessions", "search", "ConnectionRefused")["hits"]
    assert [(h["turn"], h["snippet"]) for h in hits if h["snippet"].startswith("api-error")] == [
        (1, "api-error: API Error: ConnectionRefused · retry 3/10"),
        (2, "api-error: API Error: ConnectionRefused · retry 1/10"),
    ]


def api_body(kind: str, message: str) -> str:
    """The body of an API error response, as the API writes it."""
    error = {"type": "error", "error": {"type": kind, "message": message}}
    return json.dumps(error, separators=(",", ":"))


def claude_retry(status: int, kind: str, message: str, attempt: int, uuid: str) -> dict[str, Any]:
    """A `system/api_error` record as Claude Code 2.1.332 wrote it when the scripted model
    answered HTTP `status` with `{"type":"error","error":{"type": kind, "message": message}}`
    (`CLAUDE_CODE_MAX_RETRIES=4`): its fields verbatim, ids and cwd replaced."""
    return {
        "parentUuid": "u1",
        "isSidechain": False,
        "type": "system",
        "subtype": "api_error",
        "level": "error",
        "error": {
            "message": f"{status} {api_body(kind, message)}",
            "status": status,
            "formatted": f"{status} {message}",
            "connection": None,
            "isNetworkDown": False,
            "rateLimits": None,
            "noResponse": None,
        },
        "retryInMs": 535,
        "retryAttempt": attempt,
        "maxRetries": 4,
        "source": "request_retry",
        "timestamp": "2026-12-06T23:15:47.307Z",
        "uuid": uuid,
        "userType": "external",
        "entrypoint": "sdk-cli",
        "cwd": "/w",
        "sessionId": CLAUDE_ID,
        "version": "2.1.332",
        "gitBranch": "HEAD",
    }


def test_an_overloaded_or_rate_limited_api_is_found_by_its_words(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "state")
    ids = {"session_id": CLAUDE_ID}
    limit = "Number of request tokens has exceeded your per-minute rate limit"
    write_jsonl(
        tmp_path / "claude" / "p" / f"{CLAUDE_ID}.jsonl",
        [
            claude_record("user", "say hello", uuid="u1", **ids),
            claude_retry(529, "overloaded_error", "Overloaded", 1, "s1"),
            claude_retry(529, "overloaded_error", "Overloaded", 2, "s2"),
            claude_assistant("Hello.", uuid="a1", **ids),
            claude_record("user", "and again", uuid="u2", **ids),
            claude_retry(429, "rate_limit_error", limit, 1, "s3"),
            claude_assistant("Hello again.", uuid="a2", **ids),
        ],
    )
    assert cli.sync("claude", tmp_path / "claude")["diagnostics"] == []
    turns = cli.show(CLAUDE_ID)["turns"]
    overloaded = '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    rate_limited = f"429 {api_body('rate_limit_error', limit)}"
    assert [t["notices"] for t in turns] == [
        [
            {"kind": "api-error", "text": f"API Error: {overloaded} · retry 1/4"},
            {"kind": "api-error", "text": f"API Error: {overloaded} · retry 2/4"},
        ],
        [{"kind": "api-error", "text": f"API Error: {rate_limited} · retry 1/4"}],
    ]
    assert [t["assistant"] for t in turns] == ["Hello.", "Hello again."]
    for query, turn in (("overloaded", 1), ("rate limit", 2)):
        [hit] = cli.json("sessions", "search", query, "--no-sync")["hits"][:1]
        assert (hit["turn"], hit["snippet"].split(":")[0]) == (turn, "api-error")


def test_utf16_tool_output_is_decoded_and_searchable(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "state")
    output = "Exit code: 1\nOutput:\n" + "Zugriff verweigert: Set-Content\r\n".encode(
        "utf-16-le"
    ).decode("utf-8", "replace")
    codex_file(
        tmp_path / "codex",
        codex_meta(CODEX_ID, cwd="C:\\repo"),
        codex_user_message("write the config"),
        codex_function_call("c1", "shell_command", {"command": "Set-Content cfg.txt x"}),
        codex_function_output("c1", output),
        codex_event("task_complete"),
    )
    cli.sync("codex", tmp_path / "codex")
    [tool] = cli.show(CODEX_ID)["turns"][0]["tools"]
    assert tool["result"]["head"] == "Exit code: 1\nOutput:\nZugriff verweigert: Set-Content\r\n"
    assert tool["exitCode"] == 1
    [hit] = cli.json("sessions", "search", "verweigert")["hits"]
    assert "Zugriff" in hit["snippet"]


def test_an_index_of_the_previous_schema_upgrades_and_gains_the_markings(tmp_path: Path) -> None:
    home = tmp_path / "state"
    cli = Cli(home)
    root = tmp_path / "codex"
    codex_file(
        root, codex_meta(CODEX_ID), *codex_turn(1, end=codex_turn_aborted()), codex_rolled_back(1)
    )
    cli.sync("codex", root)
    # the same index as the version before the markings left it: schema 4, the file up to date
    conn = sqlite3.connect(index_db_path(home), isolation_level=None)
    for column in ("aborted", "rolled_back", "notices"):
        conn.execute(f"ALTER TABLE turns DROP COLUMN {column}")
    for column in ("git_remote", "git_commit"):  # added by a later migration
        conn.execute(f"ALTER TABLE sessions DROP COLUMN {column}")
    # tables of later migrations
    for table in ("turn_vectors", "turn_vector_blocks", "vector_spaces", "turn_passages"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("PRAGMA user_version = 4")
    conn.close()
    upgraded = cli.sync("codex", root)  # migrates, then reads the unchanged file again
    assert upgraded["files"]["changed"] == 1
    conn = sqlite3.connect(index_db_path(home))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    conn.close()
    assert marks(cli.show(CODEX_ID)["turns"]) == [(1, True, True)]
    assert cli.sync("codex", root)["files"]["changed"] == 0


CLAUDE_P_RUNS = (
    support.REPO_ROOT / "tests" / "fixtures" / "sessions" / "claude" / "-home-dev-project"
)


def test_an_index_made_before_the_parsers_learnt_more_reads_its_files_again(
    tmp_path: Path,
) -> None:
    """An index upgraded past `PARSERS_READ_AGAIN` reads its Claude Code and Codex files again
    once, so what this version's parsers index reaches files that did not change: here the
    `claude -p` turns that `cost-state` seals (two runs of Claude Code 2.1.332), which an older
    version left open."""
    home = tmp_path / "state"
    cli = Cli(home)
    claude = tmp_path / "claude" / "projects" / "-home-dev-project"
    claude.mkdir(parents=True)
    [run] = CLAUDE_P_RUNS.glob("*.jsonl")
    (claude / run.name).write_bytes(run.read_bytes())
    codex = tmp_path / "codex"
    codex_file(codex, codex_meta(CODEX_ID), *codex_turn(1))
    cli.sync("claude", tmp_path / "claude")
    cli.sync("codex", codex)
    # the index as an older version left it: the last turn open, the schema before the migration
    conn = sqlite3.connect(index_db_path(home), isolation_level=None)
    conn.execute(
        "UPDATE turns SET sealed = 0, ended_at = NULL WHERE id = (SELECT max(id) FROM turns"
        " WHERE session_id IN (SELECT id FROM sessions WHERE provider = 'claude'))"
    )
    conn.execute(f"PRAGMA user_version = {MIGRATIONS.index(PARSERS_READ_AGAIN)}")
    conn.close()
    conn = sqlite3.connect(index_db_path(home), isolation_level=None)
    assert not all(sealed for (sealed,) in conn.execute("SELECT sealed FROM turns"))
    conn.close()

    # a search finds the files the upgrade left to be read again among those it refreshes first
    # (docs/sessions.md, "Searching what was just said"), so it searches what this version indexes
    refreshed = cli.json("sessions", "search", "config")["refreshed"]
    assert refreshed["files"] == 2 and refreshed["skipped"] is None
    assert [t["sealed"] for t in cli.show(run.stem)["turns"]] == [True, True]
    assert cli.sync("codex", codex)["files"]["changed"] == 0  # once
    assert cli.sync("claude", tmp_path / "claude")["files"]["changed"] == 0
    conn = sqlite3.connect(index_db_path(home))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    conn.close()


def test_an_index_made_before_api_retries_were_notices_reads_its_claude_files_again(
    tmp_path: Path,
) -> None:
    home = tmp_path / "state"
    cli = Cli(home)
    root = retried_session(tmp_path / "claude")
    cli.sync("claude", root)
    # the index as the version before left it: no notices, the schema before the migration
    conn = sqlite3.connect(index_db_path(home), isolation_level=None)
    conn.execute("UPDATE turns SET notices = NULL")
    conn.execute(f"PRAGMA user_version = {MIGRATIONS.index(CLAUDE_RETRIES_READ_AGAIN)}")
    conn.close()
    assert cli.sync("claude", root)["files"]["changed"] == 1
    assert cli.show(RETRIED_SESSION)["turns"][0]["notices"] == retry_notices(RETRIED_CODES)
    assert cli.sync("claude", root)["files"]["changed"] == 0  # once
