"""Transcripts written by the current Claude Code and Codex CLIs (tests/sessions/current_clis.py)
index as the provider meant them: the aborted and the rolled-back Codex turns are marked, Claude
Code's own API-error message is a notice and not the assistant's words, UTF-16LE tool output is
decoded and searchable, and no record type they write is unknown.

The committed fixtures (tests/fixtures/sessions/) are checked on every run; the e2e test has the
real CLIs write the same sessions afresh, so a CLI upgrade that changes the format fails here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from current_clis import FIXTURES, Written, write_sessions

from agent_clis import CLAUDE_CODE_VERSION, CODEX_VERSION, AgentClis
from support import Cli

DECODED = "Zugriff verweigert: config.toml"


def marks(turns: list[dict[str, Any]]) -> list[tuple[str, bool, bool]]:
    return [(t["user"], t["aborted"], t["rolledBack"]) for t in turns]


def check_sessions(written: Written, state: Path) -> None:
    cli = Cli(state)
    synced = cli.json(
        "sync", "--source", f"claude={written.claude}", "--source", f"codex={written.codex}"
    )
    assert synced["diagnostics"] == []  # every record type these versions write is known
    shown: dict[str, dict[str, Any]] = {}
    for session in cli.json("sessions", "list")["sessions"]:
        result = cli.json("sessions", "show", session["sessionKey"])
        first = result["turns"][0]["user"]
        shown[f"{session['provider']}: {first}"] = result
        version = CLAUDE_CODE_VERSION if session["provider"] == "claude" else CODEX_VERSION
        assert result["session"]["clientVersion"] == version
    assert sorted(shown) == [
        "claude: write the config",
        "codex: first question",
        "codex: fourth question",
        "codex: wait for the build",
        "codex: write the config",
    ]

    claude = shown["claude: write the config"]["turns"]
    assert [t["user"] for t in claude] == ["write the config", "try again"]
    assert [t["sealed"] for t in claude] == [True, True]  # `claude -p` ends with its process
    assert claude[0]["tools"][0]["result"]["head"] == DECODED
    assert claude[1]["assistant"] == ""
    [notice] = claude[1]["notices"]
    assert notice["kind"] == "api-error" and notice["text"].startswith("API Error: 500")

    codex = shown["codex: write the config"]["turns"]
    assert codex[0]["tools"][0]["result"]["head"].endswith("Output:\n" + DECODED)
    assert marks(shown["codex: wait for the build"]["turns"]) == [
        ("wait for the build", True, False)
    ]
    [interrupted] = shown["codex: wait for the build"]["turns"][0]["tools"]
    assert (interrupted["command"], interrupted["status"]) == ("sleep 60", "error")
    assert marks(shown["codex: first question"]["turns"]) == [
        ("first question", False, False),
        ("second question", False, True),
        ("third question", False, True),
    ]
    assert marks(shown["codex: fourth question"]["turns"]) == [("fourth question", False, False)]

    hits = cli.json("sessions", "search", "verweigert")["hits"]
    assert sorted(h["provider"] for h in hits) == ["claude", "codex"]
    assert all("Zugriff verweigert" in h["snippet"] for h in hits)
    reverted = _key(shown, "codex: first question")
    text = " ".join(cli.text("sessions", "show", reverted).split())
    assert "── turn 2 (rolled back)" in text and "── turn 1 (rolled back)" not in text


def _key(shown: dict[str, dict[str, Any]], name: str) -> str:
    return str(shown[name]["session"]["sessionKey"])


def test_the_committed_current_cli_fixtures_index_as_the_provider_meant_them(
    tmp_path: Path,
) -> None:
    written = Written(claude=FIXTURES / "claude", codex=FIXTURES / "codex")
    check_sessions(written, tmp_path / "state")


@pytest.mark.e2e
def test_sessions_the_current_clis_write_now_index_as_the_provider_meant_them(
    agent_clis: AgentClis, tmp_path: Path
) -> None:
    written = write_sessions(agent_clis, tmp_path / "run")
    check_sessions(written, tmp_path / "state")
