"""Extraction through a real MCP client (`--capability team`) and the CLI: recall, stage,
adjudicate, with the same results and the same refusals on both sides."""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from team_mcp import running_team_server

from support import draft_batch, in_process, release_repository, store_all

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import WINDOW


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    return release_repository(tmp_path, home)


Calls = Callable[[Path, list[tuple[str, dict[str, Any]]]], tuple[list, list]]


@pytest.fixture()
def mcp(repo: Path) -> Iterator[Calls]:
    """`mcp(repo, calls)`: (tools listed, one JSON payload per call), made to the one team
    server the test keeps running while it switches between MCP and the CLI."""
    with running_team_server(repo) as server:
        yield lambda _repo, calls: (server.tools(), server.calls(*calls))


def cli(repo: Path, *args: str, stdin: dict[str, Any] | None = None) -> dict[str, Any]:
    proc = in_process(
        *args, "--format", "json", cwd=repo, input=json.dumps(stdin) if stdin is not None else None
    )
    payload: dict[str, Any] = json.loads(proc.stdout)
    assert (proc.returncode != 0) == ("error" in payload)
    return payload


def test_team_capability_adds_the_extraction_tools(repo: Path, mcp: Calls) -> None:
    tools, _ = mcp(repo, [])
    by_name = {t.name: t for t in tools}
    assert {
        "threadshare_memory_recall",
        "threadshare_memory_stage",
        "threadshare_memory_search",
        "threadshare_memory_status",
    } <= set(by_name)
    assert by_name["threadshare_memory_recall"].annotations.read_only_hint is False
    assert by_name["threadshare_memory_stage"].annotations.read_only_hint is False


def test_recall_gives_the_same_tasks_and_refusals_through_cli_and_mcp(
    repo: Path, mcp: Calls
) -> None:
    window = {"since": WINDOW["since"], "until": WINDOW["until"]}
    reversed_window = {"since": WINDOW["until"], "until": WINDOW["since"]}
    _, (over_mcp, reversed_mcp) = mcp(
        repo,
        [("threadshare_memory_recall", window), ("threadshare_memory_recall", reversed_window)],
    )
    over_cli = cli(repo, "memory", "recall", "--since", window["since"], "--until", window["until"])
    assert over_mcp["sources"] and over_mcp == over_cli
    reversed_cli = cli(
        repo, "memory", "recall", "--since", WINDOW["until"], "--until", WINDOW["since"]
    )
    assert reversed_mcp == reversed_cli
    assert reversed_mcp["error"]["code"] == "WINDOW_INVALID"
    text = json.dumps(over_mcp)
    assert str(repo) not in text and "019aad50-0000-7000-8000-" not in text


def test_drafts_reach_quarantine_through_mcp_and_refusals_match_the_cli(
    repo: Path, mcp: Calls
) -> None:
    window = {"since": WINDOW["since"], "until": WINDOW["until"]}
    _, (recalled,) = mcp(repo, [("threadshare_memory_recall", window)])
    task = recalled["sources"][0]
    foreign = draft_batch(task)
    foreign["candidates"][0]["statements"][0]["evidenceIds"] = ["ev-99-000000000000"]
    too_many = draft_batch(task)
    too_many["candidates"] = too_many["candidates"] * 9
    _, (foreign_mcp, too_many_mcp) = mcp(
        repo, [("threadshare_memory_stage", foreign), ("threadshare_memory_stage", too_many)]
    )
    assert foreign_mcp == cli(repo, "memory", "stage", "--request", "-", stdin=foreign)
    assert too_many_mcp == cli(repo, "memory", "stage", "--request", "-", stdin=too_many)
    assert foreign_mcp["error"]["code"] == "EVIDENCE_NOT_IN_TASK"
    assert too_many_mcp["error"]["code"] in {"BATCH_TOO_LARGE", "STAGE_REQUEST_INVALID"}
    _, (staged,) = mcp(repo, [("threadshare_memory_stage", draft_batch(task))])
    assert staged["status"] == "adjudication-required"
    adjudication_task = staged["adjudicationTask"]
    decision = store_all(adjudication_task)
    _, (stored,) = mcp(repo, [("threadshare_memory_stage", copy.deepcopy(decision))])
    assert stored["status"] == "staged"
    assert [c["candidateStatus"] for c in stored["candidates"]] == ["quarantined"]
    again = cli(repo, "memory", "stage", "--request", "-", stdin=decision)
    assert again["candidates"] == stored["candidates"]  # the recorded outcome, not a second store
    status = cli(repo, "memory", "status")
    assert status["candidates"]["quarantined"] == 1


def test_a_missing_or_bad_window_is_named_as_the_arguments_are_on_both_sides(
    repo: Path, mcp: Calls
) -> None:
    """Walk defect: over MCP (arguments `since`, `until`) recall said `give both --since and
    --until` and `window.after (--since) must be…`: the CLI's flags. The shared message names
    the window by the arguments' names, which are also the flags' (`--since`)."""
    reversed_window = {"since": WINDOW["until"], "until": WINDOW["since"]}
    _, (missing_mcp, reversed_mcp, bad_mcp) = mcp(
        repo,
        [
            ("threadshare_memory_recall", {}),
            ("threadshare_memory_recall", reversed_window),
            ("threadshare_memory_recall", {"since": "yesterday", "until": WINDOW["until"]}),
        ],
    )
    missing_cli = cli(repo, "memory", "recall")
    reversed_cli = cli(
        repo, "memory", "recall", "--since", WINDOW["until"], "--until", WINDOW["since"]
    )
    bad_cli = cli(repo, "memory", "recall", "--since", "yesterday", "--until", WINDOW["until"])
    assert (missing_mcp, reversed_mcp) == (missing_cli, reversed_cli)
    for refused in (missing_mcp, reversed_mcp):
        error = refused["error"]
        assert error["code"] == "WINDOW_INVALID"
        assert "--" not in error["message"] + error["next"], error
        assert "`since` and `until`" in error["next"]
    assert "give both `since` and `until`" in missing_mcp["error"]["message"]
    assert "`since` must be before `until`" in reversed_mcp["error"]["message"]
    # a value that is no date is refused as `--since` refuses it (the parameters take any ISO
    # date or instant, as the flag does)
    said = "'yesterday' is not an ISO-8601 date or date-time"
    for refused in (bad_mcp, bad_cli):
        assert (refused["error"]["code"], refused["error"]["message"]) == ("INVALID_ARGUMENT", said)


def test_a_draft_written_from_the_recall_guidance_alone_stages(repo: Path, mcp: Calls) -> None:
    """Walk defect: nothing a recall returns named `statementId` (nor the other statement
    fields), so a draft written from it was refused `statementId: Field required`, with a
    `next` promising that the guidance had the shape. `guidance.draftShape` shows every field
    the contract requires; filled in with the task's own values, it stages."""
    from teamlore.contracts.extraction import CandidateDraft, CandidateDraftBatch, DraftStatement

    window = {"since": WINDOW["since"], "until": WINDOW["until"]}
    _, (recalled,) = mcp(repo, [("threadshare_memory_recall", window)])
    shape = recalled["guidance"]["draftShape"]
    candidate, statement = shape["candidates"][0], shape["candidates"][0]["statements"][0]
    for model, example in (
        (CandidateDraftBatch, shape),
        (CandidateDraft, candidate),
        (DraftStatement, statement),
    ):
        schema = model.model_json_schema(by_alias=True)
        assert set(schema["required"]) <= set(example), model.__name__

    task = recalled["sources"][0]
    draft = copy.deepcopy(shape)
    draft.update(taskId=task["taskId"], binding=task["binding"])
    statement = draft["candidates"][0]["statements"][0]
    statement["evidenceIds"] = [task["chunk"]["turnEvidence"][0]["evidenceId"]]
    _, (staged,) = mcp(repo, [("threadshare_memory_stage", draft)])
    assert "error" not in staged, staged
    assert len(staged["adjudicationTask"]["drafts"]) == 1


def test_the_guidance_and_the_stage_tool_list_the_draft_types_its_refusal_lists(
    repo: Path, mcp: Calls
) -> None:
    """Walk defect: a draft of `type: lesson` was refused with the four types the contract
    takes, which neither recall's guidance (its draftShape rule) nor the stage tool named: an
    agent learnt them from a refusal. Both now list the contract's own."""
    from typing import get_args

    from teamlore.contracts.extraction import CandidateType
    from teamlore.mcp.server import tools_for

    types = ", ".join(get_args(CandidateType))
    window = {"since": WINDOW["since"], "until": WINDOW["until"]}
    _, (recalled,) = mcp(repo, [("threadshare_memory_recall", window)])
    [rule] = [r for r in recalled["guidance"]["rules"] if "shaped as draftShape" in r]
    assert f"type is one of {types})" in rule
    [stage] = [tool for tool in tools_for(["team"]) if tool.name == "threadshare_memory_stage"]
    assert (
        f"a draft's type is one of {types})"
        in stage.input_schema["properties"]["format"]["description"]
    )

    task = recalled["sources"][0]
    draft = draft_batch(task)
    draft["candidates"][0]["type"] = "lesson"
    _, (refused,) = mcp(repo, [("threadshare_memory_stage", draft)])
    assert refused["error"]["code"] == "STAGE_REQUEST_INVALID"
    assert all(f"'{name}'" in refused["error"]["message"] for name in get_args(CandidateType))


def test_a_refusal_names_the_tool_beside_the_command_over_mcp_and_only_the_command_in_the_cli(
    repo: Path, mcp: Calls
) -> None:
    """A tool's caller is connected to the server: the `next` of its refusal names the tool
    that does what the CLI command does (and the command, for an agent with a shell)."""
    plan = "00000000-0000-4000-8000-000000000000"
    _, (discarded, promoted) = mcp(
        repo,
        [
            ("threadshare_memory_discard", {"candidateId": "nope"}),
            ("threadshare_memory_promote", {"planId": plan}),
        ],
    )
    assert discarded["error"]["code"] == "CANDIDATE_NOT_FOUND"
    assert discarded["error"]["next"] == (
        "See what awaits review with the tool `threadshare_memory_review` or "
        "`teamlore memory review`."
    )
    assert promoted["error"]["code"] == "PLAN_NOT_FOUND"
    assert promoted["error"]["next"] == (
        "Make a plan with `teamlore memory confirm` (from a request: the tool "
        "`threadshare_memory_prepare` or `teamlore memory prepare`)."
    )
    over_cli = cli(repo, "memory", "discard", "--candidate", "nope")["error"]
    assert over_cli["next"] == "See what awaits review with `teamlore memory review`."
    assert {**over_cli, "next": discarded["error"]["next"]} == discarded["error"]
    over_cli = cli(repo, "memory", "promote", "--plan", plan)["error"]
    assert (
        over_cli["next"]
        == "Make a plan with `teamlore memory confirm` (from a request: `memory prepare`)."
    )
