"""`threadshare_memory_review` / `teamlore memory review` a page at a time: the real MCP server
over stdio (the official SDK client) against the real CLI, on a queue of eight quarantined
candidates. With 45 candidates one review was 165 KB, which a client cut in the middle."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from team_mcp import TeamServer, running_team_server

from support import teamlore_cli
from teamlore.core import errors
from teamlore.core.errors import naming_tools
from teamlore.ops.memory.review import short_candidate_id

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "promotion"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from test_review import Flow, candidate

REVIEW = "threadshare_memory_review"
QUEUED = 8  # one extraction task's batch at most


@pytest.fixture()
def queue(tmp_path: Path, home: Path) -> tuple[Flow, list[str]]:
    """A worktree with eight quarantined entry candidates, in review order."""
    flow = Flow(tmp_path, home)
    drafts = [
        candidate(
            f"Release step {n}: tag v{n}.0 only after the release tests for step {n} pass.",
            [(f"Step {n} of the release waits for its tests.", [flow.turn_ev(1)])],
        )
        for n in range(1, QUEUED + 1)
    ]
    flow.quarantine(drafts)
    with contextlib.closing(flow.state()) as state:
        rows = state.execute(
            "SELECT candidate_id FROM candidates WHERE status = 'quarantined' "
            "ORDER BY updated_at, candidate_id"
        ).fetchall()
    assert len(rows) == QUEUED
    return flow, [str(row[0]) for row in rows]


@pytest.fixture()
def server(queue: tuple[Flow, list[str]]) -> Iterator[TeamServer]:
    with running_team_server(queue[0].repo) as running:
        yield running


def cli(flow: Flow, *args: str, fmt: str = "json") -> Any:
    done = teamlore_cli(
        "memory", "review", *args, "--format", fmt, cwd=flow.repo, env={"COLUMNS": "200"}
    )
    if fmt != "json":
        assert done.returncode == 0, done.stderr
        return done.stdout
    payload = json.loads(done.stdout)
    assert (done.returncode != 0) == ("error" in payload)
    return payload


def ids(page: dict[str, Any]) -> list[str]:
    return [item["candidateId"] for item in page["items"]]


def test_a_default_review_is_a_page_that_says_how_many_and_how_to_get_the_next(
    queue: tuple[Flow, list[str]], server: TeamServer
) -> None:
    flow, queued = queue
    (first,) = server.calls((REVIEW, {}))
    assert ids(first) == queued[:5] and first["count"] == QUEUED
    assert first["page"] == {
        "limit": 5,
        "cursor": None,
        "total": QUEUED,
        "returned": 5,
        "remaining": 3,
        "nextCursor": first["page"]["nextCursor"],
    }
    cursor = first["page"]["nextCursor"]
    assert f'cursor "{cursor}"' in first["next"]
    assert len(json.dumps(first).encode()) < 40_000  # whole in any client, well under 40 KB

    (second,) = server.calls((REVIEW, {"cursor": cursor}))
    assert ids(second) == queued[5:] and second["count"] == QUEUED
    assert second["page"]["remaining"] == 0 and second["page"]["nextCursor"] is None
    # the CLI's JSON is the operation's page, as the tool gives it
    assert cli(flow) == first
    assert cli(flow, "--cursor", cursor) == second


def test_a_page_after_a_discard_loses_none_of_the_others(
    queue: tuple[Flow, list[str]], server: TeamServer
) -> None:
    """The cursor is a place in the queue's order, not an offset: the candidate discarded
    between two pages moves none of the others off the next page."""
    _, queued = queue
    (first,) = server.calls((REVIEW, {"limit": 3}))
    assert ids(first) == queued[:3]
    (discarded,) = server.calls(
        ("threadshare_memory_discard", {"candidateId": queued[0], "reason": "said twice"})
    )
    assert discarded["previousStatus"] == "quarantined"
    (second,) = server.calls((REVIEW, {"limit": 3, "cursor": first["page"]["nextCursor"]}))
    assert ids(second) == queued[3:6]
    assert second["count"] == QUEUED - 1 and second["page"]["remaining"] == 2


def test_one_candidate_is_reviewed_by_its_id_or_an_abbreviation(
    queue: tuple[Flow, list[str]], server: TeamServer
) -> None:
    flow, queued = queue
    (whole,) = [
        item
        for item in flow.op("memory.review", {"limit": QUEUED})["items"]
        if item["candidateId"] == queued[6]
    ]
    short = re.sub(r"[0-9a-f]{64}", lambda hex_run: hex_run.group()[:8], queued[6])
    by_id, by_abbreviation = server.calls(
        (REVIEW, {"candidateId": queued[6]}), (REVIEW, {"candidateId": short})
    )
    assert by_id["items"] == by_abbreviation["items"] == [whole]
    assert by_id["page"]["total"] == 1 and by_id["page"]["nextCursor"] is None
    assert cli(flow, "--candidate", short) == by_abbreviation


def as_the_tool_says_it(payload: dict[str, Any]) -> dict[str, Any]:
    """A CLI refusal as the tool words it: the CLI names a refused field by its flag
    (`--limit:`), and its next step names the command where the tool's names the tool too
    (`errors.naming_tools`); everything else is the same."""
    error = payload.get("error")
    if not error:
        return payload
    message = re.sub(r"^--([a-z]+):", r"\1:", error["message"])
    message = message.replace("candidate:", "candidateId:", 1)
    next_step = errors.tool_next_step(errors.registered_codes()[error["code"]])
    if error["next"] != errors.next_step(errors.registered_codes()[error["code"]]):
        next_step = error["next"]  # the refusal's own remedy
    tool = {**error, "message": message, "problem": message, "next": naming_tools(next_step)}
    return {"error": tool}


ARGUMENTS: list[tuple[dict[str, Any], list[str], str]] = [
    ({"limit": 2}, ["--limit", "2"], ""),
    ({"limit": 2, "kind": "skill"}, ["--limit", "2", "--kind", "skill"], ""),
    ({"candidateId": "extract-00000000"}, ["--candidate", "extract-00000000"], "NOT_FOUND"),
    ({"limit": 0}, ["--limit", "0"], "INVALID_ARGUMENT"),
    ({"limit": 51}, ["--limit", "51"], "INVALID_ARGUMENT"),
    ({"cursor": "page two"}, ["--cursor", "page two"], "INVALID_ARGUMENT"),
    ({"kind": "consolidation", "limit": 1}, ["--kind", "consolidation", "--limit", "1"], ""),
]


def test_the_cli_and_the_tool_give_the_same_page_and_the_same_refusals(
    queue: tuple[Flow, list[str]], server: TeamServer
) -> None:
    flow, queued = queue
    answers = server.calls(*((REVIEW, arguments) for arguments, _, _ in ARGUMENTS))
    for (arguments, flags, code), answer in zip(ARGUMENTS, answers, strict=True):
        assert as_the_tool_says_it(cli(flow, *flags)) == answer, arguments
        assert code in answer.get("error", {}).get("code", ""), (arguments, answer)
    limited, skills, unknown, *_ = answers
    assert ids(limited) == queued[:2] and limited["page"]["remaining"] == QUEUED - 2
    assert skills["items"] == [] and skills["page"]["total"] == 0
    assert unknown["error"]["code"] == "CANDIDATE_NOT_FOUND"
    prefix = "cursor: not a cursor memory review returned"
    assert answers[5]["error"]["message"].startswith(prefix)


def test_the_text_view_shows_every_candidate_unless_a_page_is_asked_for(
    queue: tuple[Flow, list[str]],
) -> None:
    """A person at the terminal sees the whole queue by default (page after page); with
    --limit one page, ending with the command for the next."""
    flow, queued = queue

    def heads(text: str) -> list[str]:
        return [c for c in queued if f"Candidate {short_candidate_id(c)} " in text]

    shown = cli(flow, fmt="text")
    assert heads(shown) == queued
    assert "--cursor" not in shown

    page = cli(flow, "--limit", "3", fmt="text")
    assert heads(page) == queued[:3]
    (command,) = re.findall(r"`(teamlore memory review --limit 3 --cursor \S+)`", page)
    assert "3 of 8 candidates shown; the next page:" in " ".join(page.split())
    assert heads(cli(flow, *command.split()[3:], fmt="text")) == queued[3:6]
