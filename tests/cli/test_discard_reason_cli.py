"""`memory discard` at a terminal without --reason asks why, as the review page does ("Say why
you discard it"): a discard cannot be undone, so Enter alone keeps the candidate and Ctrl-C or
Ctrl-D stops as `memory confirm` does (exit 130). Without a terminal (a script, stdin closed,
`--format json`) nobody can be asked: it needs --reason, as `memory confirm` needs --yes."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from support import draft_batch, release_repository, store_all, teamlore_cli, teamlore_in_pty
from teamlore.ops.registry import OpContext, load_operations


def op(name: str, repo: Path, payload: dict[str, Any]) -> dict[str, Any]:
    return load_operations().get(name).run(OpContext(cwd=repo), payload)


@pytest.fixture()
def quarantined(tmp_path: Path, home: Path) -> tuple[Path, str]:
    """A repository with one drafted claim of the release session waiting for review: (the
    repository, the candidate as `memory review` shows it)."""
    repo = release_repository(tmp_path, home)
    from recall_world import WINDOW

    task = op("memory.recall", repo, {"since": WINDOW["since"], "until": WINDOW["until"]})
    staged = op("memory.stage", repo, draft_batch(task["sources"][0]))
    op("memory.stage", repo, store_all(staged["adjudicationTask"]))
    [candidate] = [c["candidateId"] for c in staged["candidates"]]
    return repo, f"{candidate[:20]}{candidate[-3:]}"


def waiting(repo: Path) -> int:
    proc = teamlore_cli("memory", "review", "--format", "json", cwd=repo)
    return len(json.loads(proc.stdout)["items"])


def reasons(home: Path) -> list[str | None]:
    with sqlite3.connect(home / "memory-state.sqlite3") as db:
        return [r[0] for r in db.execute("SELECT reason FROM candidate_discards")]


def plain(printed: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", printed).replace("^C", "").replace("^D", "")


def test_at_a_terminal_it_asks_why_and_keeps_the_reason(
    quarantined: tuple[Path, str], home: Path
) -> None:
    """It discarded at once with no reason, and there is no un-discard."""
    repo, candidate = quarantined
    code, printed = teamlore_in_pty(
        "memory", "discard", "--candidate", candidate, answers=["a one-off staging value"], cwd=repo
    )
    assert code == 0, printed
    # asked within the terminal's 80 columns, the answer typed after the question's last line
    asked = plain(printed).replace("\r\n", "\n").split("a one-off staging value")[0]
    lines = asked.splitlines()[-2:]
    assert max(map(len, lines)) <= 80 and lines[-1].endswith("keeps it]: ")
    question = f"Say why you discard {candidate}; it cannot be undone [Enter alone keeps it]:"
    assert " ".join(" ".join(lines).split()) == question
    assert f"Discarded {candidate} (was quarantined)." in plain(printed)
    assert reasons(home) == ["a one-off staging value"]
    assert waiting(repo) == 0


def test_enter_alone_keeps_the_candidate(quarantined: tuple[Path, str], home: Path) -> None:
    repo, candidate = quarantined
    code, printed = teamlore_in_pty(
        "memory", "discard", "--candidate", candidate, answers=["  "], cwd=repo
    )
    assert code == 0, printed
    assert plain(printed).rstrip().endswith("Not discarded: no reason given."), printed
    assert "Discarded" not in printed
    assert reasons(home) == [] and waiting(repo) == 1


@pytest.mark.parametrize("key", [b"\x03", b"\x04"], ids=["ctrl-c", "ctrl-d"])
def test_ctrl_c_or_ctrl_d_stops_it_as_an_interrupted_command(
    quarantined: tuple[Path, str], home: Path, key: bytes
) -> None:
    repo, candidate = quarantined
    code, printed = teamlore_in_pty(
        "memory", "discard", "--candidate", candidate, answers=[key], cwd=repo, controlling=True
    )
    assert code == 130, printed
    assert "Discarded" not in printed and "Traceback" not in printed, printed
    assert reasons(home) == [] and waiting(repo) == 1


def test_without_a_terminal_it_needs_a_reason(quarantined: tuple[Path, str], home: Path) -> None:
    """A script's `memory discard` (stdin not a terminal) discarded at once with no reason, where
    a person at a terminal is asked and Enter alone keeps the candidate; `memory confirm`
    refuses there the same way (USAGE, exit 2)."""
    repo, candidate = quarantined
    done = teamlore_cli("memory", "discard", "--candidate", candidate, cwd=repo, input="")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error USAGE: discarding {candidate} needs a reason")
    assert "--reason" in done.stderr and "Traceback" not in done.stderr
    done = teamlore_cli("memory", "discard", "--candidate", candidate, "--format", "json", cwd=repo)
    assert (done.returncode, json.loads(done.stdout)["error"]["code"]) == (2, "USAGE")
    assert reasons(home) == []  # nothing discarded
    for blank in ("", "　 "):  # an empty reason, or a full-width space: no reason at all
        done = teamlore_cli(
            "memory", "discard", "--candidate", candidate, "--reason", blank, cwd=repo, input=""
        )
        assert done.returncode == 2 and done.stderr.startswith("error USAGE: --reason is empty")
    assert reasons(home) == []
    done = teamlore_cli(
        "memory", "discard", "--candidate", candidate, "--reason", "a one-off", cwd=repo, input=""
    )
    assert done.returncode == 0, done.stderr
    assert "Say why" not in done.stdout and f"Discarded {candidate}" in done.stdout
    assert reasons(home) == ["a one-off"]


def test_at_a_terminal_with_a_reason_it_does_not_ask(
    quarantined: tuple[Path, str], home: Path
) -> None:
    repo, candidate = quarantined
    code, printed = teamlore_in_pty(
        "memory", "discard", "--candidate", candidate, "--reason", "wrong", answers=[], cwd=repo
    )
    assert code == 0, printed
    assert "Say why" not in printed and f"Discarded {candidate}" in printed
    assert reasons(home) == ["wrong"]


@pytest.mark.parametrize("wrong", ["unknown", "discarded already"])
def test_a_wrong_candidate_is_refused_before_the_question(
    quarantined: tuple[Path, str], home: Path, wrong: str
) -> None:
    """It asked why first and refused the id only after the person had typed a reason."""
    repo, candidate = quarantined
    if wrong == "unknown":
        named, code = "extract-0123456789ab-c9", "CANDIDATE_NOT_FOUND"
    else:
        done = teamlore_cli(
            "memory", "discard", "--candidate", candidate, "--reason", "x", cwd=repo
        )
        assert done.returncode == 0, done.stderr
        named, code = candidate, "CANDIDATE_STALE"
    exit_code, printed = teamlore_in_pty(
        "memory", "discard", "--candidate", named, answers=["typed for nothing"], cwd=repo
    )
    assert exit_code == 1, printed
    assert "Say why" not in printed, printed
    assert plain(printed).startswith(f"error {code}: "), printed
    assert reasons(home) == ([] if wrong == "unknown" else ["x"])
