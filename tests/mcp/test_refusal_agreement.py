"""Refusals that must agree with each other: every team tool outside a git worktree answers the
same code (over MCP and in the CLI), and recall's query bound is the one its schema states.
Real server over stdio (the official SDK client) and the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from team_mcp import team_calls

from support import in_process, initialized_repository, refusal_lines, teamlore_cli

WINDOW = {"since": "2026-03-01T00:00:00.000Z", "until": "2026-03-08T00:00:00.000Z"}


def _cli_code(cwd: Path, *args: str) -> str:
    proc = teamlore_cli(*args, "--format", "json", cwd=cwd)
    assert proc.returncode != 0, proc.stdout
    code: str = json.loads(proc.stdout)["error"]["code"]
    return code


def test_outside_a_git_worktree_every_team_tool_refuses_with_the_same_code(
    tmp_path: Path, home: Path
) -> None:
    """recall and review answered OWNER_NOT_FOUND where status, search and assemble answered
    NOT_A_GIT_REPOSITORY, for the same condition (no worktree here, none registered below)."""
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    calls: list[tuple[str, dict[str, Any]]] = [
        ("threadshare_memory_status", {}),
        ("threadshare_memory_search", {"query": "release"}),
        ("threadshare_memory_assemble", {"provider": "claude", "check": True}),
        ("threadshare_memory_recall", WINDOW),
        ("threadshare_memory_review", {}),
    ]
    _, answers = anyio.run(team_calls, nowhere, calls)
    codes = {
        name: answer["error"]["code"] for (name, _), answer in zip(calls, answers, strict=True)
    }
    assert set(codes.values()) == {"NOT_A_GIT_REPOSITORY"}, codes

    window = ["--since", WINDOW["since"], "--until", WINDOW["until"]]
    assert _cli_code(nowhere, "memory", "recall", *window) == "NOT_A_GIT_REPOSITORY"
    assert _cli_code(nowhere, "memory", "review") == "NOT_A_GIT_REPOSITORY"
    assert _cli_code(nowhere, "memory", "status") == "NOT_A_GIT_REPOSITORY"


def test_recall_bounds_its_query_in_utf8_bytes_as_its_schema_says(
    tmp_path: Path, home: Path
) -> None:
    """The schema said `maxLength 8192` and nothing more, so a 2,800-character Chinese query
    (8,400 bytes) passed it and was refused later as RECALL_REQUEST_INVALID. The schema now
    says the bound is UTF-8 bytes, and an over-long query is refused at the argument check with
    the code an over-long ASCII query gets."""
    repo = initialized_repository(tmp_path, home)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("threadshare_memory_recall", {**WINDOW, "query": "中" * 2_800}),  # 8,400 bytes
        ("threadshare_memory_recall", {**WINDOW, "query": "a" * 8_193}),
        ("threadshare_memory_recall", {**WINDOW, "query": "中" * 2_730}),  # 8,190 bytes
    ]
    tools, (chinese, ascii_, fits) = anyio.run(team_calls, repo, calls)

    assert chinese["error"]["code"] == ascii_["error"]["code"] == "INVALID_ARGUMENT"
    assert "8400 UTF-8 bytes" in chinese["error"]["message"]
    assert fits["error"]["code"] == "REPOSITORY_NOT_REGISTERED"  # past the bound: the owner
    [recall] = [t for t in tools if t.name == "threadshare_memory_recall"]
    query = recall.input_schema["properties"]["query"]
    assert "8192 UTF-8 bytes" in query["description"]
    window = ["--since", WINDOW["since"], "--until", WINDOW["until"]]
    cli = _cli_code(repo, "memory", "recall", *window, "--query", "中" * 2_800)
    assert cli == "INVALID_ARGUMENT"


def test_a_limit_out_of_range_or_a_wrong_choice_is_said_in_our_words_on_cli_and_mcp(
    tmp_path: Path, home: Path
) -> None:
    """`--limit 0` said pydantic's `Input should be greater than or equal to 1` and `--kind x`
    its `Input should be 'entry', 'skill' or 'consolidation'`: neither said the whole range.
    Now both say it in teamlore's words, the flag on the CLI and the field over MCP."""
    repo = initialized_repository(tmp_path, home)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("threadshare_memory_search", {"query": "release", "limit": 0}),
        ("threadshare_memory_search", {"query": "release", "limit": 100_000}),
        ("threadshare_memory_review", {"kind": "entries"}),
    ]
    _, answers = anyio.run(team_calls, repo, calls)
    between = "must be between 1 and 100"
    choices = "'entries' is not one of 'entry', 'skill', 'consolidation'"
    assert [(a["error"]["code"], a["error"]["message"]) for a in answers] == [
        ("INVALID_ARGUMENT", f"limit: {between}"),
        ("INVALID_ARGUMENT", f"limit: {between}"),
        ("INVALID_ARGUMENT", f"kind: {choices}"),
    ]

    for args, said in [
        (("memory", "search", "release", "--limit", "-1"), f"--limit: {between}"),
        (("memory", "review", "--kind", "entries"), f"--kind: {choices}"),
    ]:
        text = in_process(*args, cwd=repo, env={"COLUMNS": "200"})
        assert text.returncode == 2
        assert refusal_lines(text.stderr)[0] == f"error INVALID_ARGUMENT: {said}"
        as_json = in_process(*args, "--format", "json", cwd=repo)
        assert as_json.returncode == 2
        error = json.loads(as_json.stdout)["error"]
        assert (error["code"], error["message"]) == ("INVALID_ARGUMENT", said)


def test_a_consolidation_patch_refusal_points_to_the_patch_shape_not_the_draft_shape(
    tmp_path: Path, home: Path
) -> None:
    repo = initialized_repository(tmp_path, home)
    patch = {"format": "threadshare-memory-consolidation-patch@v1"}
    _, [answer] = anyio.run(team_calls, repo, [("threadshare_memory_stage", patch)])
    assert answer["error"]["code"] == "STAGE_REQUEST_INVALID"
    assert "draftShape" not in answer["error"]["next"]
    assert "threadshare_memory_synthesize" in answer["error"]["next"]


def test_a_request_file_nested_too_deeply_is_refused_as_the_server_refuses_such_a_frame(
    tmp_path: Path, home: Path
) -> None:
    """Over MCP a frame this deep gets -32700 (test_hostile_input); `--request` read it and
    failed writing it back (pydantic and orjson stop at ~255 levels): INTERNAL."""
    repo = initialized_repository(tmp_path, home)
    for levels in (300, 2_000):  # orjson itself refuses past 1,024 levels, as "not JSON"
        request = tmp_path / f"deep-{levels}.json"
        nested = "[" * levels + "]" * levels
        request.write_text(
            '{"format":"threadshare-memory-consolidation-patch@v1","x":' + nested + "}"
        )
        proc = teamlore_cli("memory", "stage", "--request", str(request), "-f", "json", cwd=repo)
        error = json.loads(proc.stdout)["error"]
        assert error["code"] == "INVALID_ARGUMENT", error
        assert "nests too deeply" in error["message"]


def test_the_recall_tool_bounds_its_query_as_the_extraction_contract_does() -> None:
    """The operation checks the contract's bound without importing the contracts."""
    from teamlore.contracts.extraction import MAX_QUERY_BYTES
    from teamlore.ops.memory import recall

    assert recall.MAX_QUERY_BYTES == MAX_QUERY_BYTES
