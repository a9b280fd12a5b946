"""The Skill workflow through the real MCP server (`--capability team`, SDK stdio client) and
the CLI: recall → SkillCandidate@v1 → review --kind skill → confirm/prepare → promote →
assemble, with the same results and the same refusals on both sides."""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from team_mcp import running_team_server

from support import in_process, release_repository
from teamlore.memory.promotion.queue import prepare_request_from_review

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "skills"))
from recall_world import WINDOW
from test_skill_flow import SKILL_PATH, skill_candidate


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    return release_repository(tmp_path, home)


Calls = Callable[..., list[dict[str, Any]]]


@pytest.fixture()
def mcp(repo: Path) -> Iterator[Calls]:
    """`mcp(repo, *calls)`: the JSON payloads of those tool calls, made to the one team server
    the test keeps running while it switches between MCP and the CLI."""
    with running_team_server(repo) as server:
        yield lambda _repo, *calls: server.calls(*calls)


def cli(repo: Path, *args: str, stdin: dict[str, Any] | None = None) -> dict[str, Any]:
    proc = in_process(
        *args, "--format", "json", cwd=repo, input=json.dumps(stdin) if stdin is not None else None
    )
    payload: dict[str, Any] = json.loads(proc.stdout)
    assert (proc.returncode != 0) == ("error" in payload), proc.stderr
    return payload


def without(result: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in keys}


def test_the_skill_flow_gives_identical_results_over_mcp_and_cli(repo: Path, mcp: Calls) -> None:
    window = {"since": WINDOW["since"], "until": WINDOW["until"], "limit": 1}
    (recalled,) = mcp(repo, ("threadshare_memory_recall", window))
    over_cli = cli(
        repo, "memory", "recall", "--since", WINDOW["since"], "--until", WINDOW["until"], "-n", "1"
    )
    assert recalled == over_cli
    assert recalled["skillContext"]["skills"] == []

    candidate = skill_candidate(recalled)
    stale = copy.deepcopy(candidate)
    stale["memoryContextDigest"] = "0" * 64
    (stale_mcp,) = mcp(repo, ("threadshare_memory_stage", stale))
    stale_cli = cli(repo, "memory", "stage", "--request", "-", stdin=stale)["error"]
    # the same refusal; its `next` names the recall tool beside the command over MCP
    assert stale_mcp["error"] == {**stale_cli, "next": stale_mcp["error"]["next"]}
    assert stale_mcp["error"]["code"] == "MEMORY_CONTEXT_DRIFT"
    assert "`threadshare_memory_recall`" in stale_mcp["error"]["next"]
    (staged,) = mcp(repo, ("threadshare_memory_stage", candidate))
    replayed = cli(repo, "memory", "stage", "--request", "-", stdin=candidate)
    assert without(replayed, "idempotent") == without(staged, "idempotent")
    assert replayed["idempotent"] is True and staged["status"] == "quarantined"

    (reviewed,) = mcp(repo, ("threadshare_memory_review", {"kind": "skill"}))
    assert reviewed == cli(repo, "memory", "review", "--kind", "skill")
    assert reviewed["items"][0]["files"][0]["targetPath"] == SKILL_PATH

    # the person confirmed every statement (`memory confirm --yes` takes typed facts only)
    request = prepare_request_from_review(reviewed["items"])
    planned = cli(repo, "memory", "prepare", "--request", "-", stdin=request)
    assert [f["targetPath"] for f in planned["files"]] == [SKILL_PATH]
    promoted, assembled = mcp(
        repo,
        ("threadshare_memory_promote", {"planId": planned["planId"]}),
        ("threadshare_memory_assemble", {"provider": "codex"}),
    )
    assert promoted["status"] == "applied"
    again = cli(repo, "memory", "promote", "--plan", planned["planId"])
    assert again["status"] == "applied"
    assert [f["targetPath"] for f in again["files"]] == [f["targetPath"] for f in promoted["files"]]
    assert assembled["changed"] is True
    rerun = cli(repo, "memory", "assemble", "--provider", "codex")
    assert without(rerun, "changed", "skills", "skillsChanged") == without(
        assembled, "changed", "skills", "skillsChanged"
    )
    assert rerun["changed"] is False and rerun["skillsChanged"] == 0
    assert (repo / ".agents/skills/shop-release/SKILL.md").read_bytes() == (
        repo / SKILL_PATH
    ).read_bytes()
    (after,) = mcp(repo, ("threadshare_memory_recall", window))
    assert [s["name"] for s in after["skillContext"]["skills"]] == ["shop-release"]


def test_recall_leaves_out_a_broken_skill_and_an_invalid_scene_alike_over_mcp_and_cli(
    repo: Path, mcp: Calls
) -> None:
    """A SKILL.md that does not parse refused the whole recall on both sides; now both answer
    with the rest and the same `leftOut`."""
    memory_dir = repo / ".threadshare/memory"
    (memory_dir / "skills/broken").mkdir()
    (memory_dir / "skills/broken/SKILL.md").write_text("---\nname: [unclosed\n---\n1. Do it.\n")
    (memory_dir / "scenes/hot.md").write_text(
        "-----META-START-----\ncreated: 2026-01-01\nupdated: 2026-01-01\n"
        'summary: "Hot"\nheat: "very"\n-----META-END-----\n- a point'
    )
    window = {"since": WINDOW["since"], "until": WINDOW["until"], "limit": 1}

    (recalled,) = mcp(repo, ("threadshare_memory_recall", window))
    over_cli = cli(
        repo, "memory", "recall", "--since", WINDOW["since"], "--until", WINDOW["until"], "-n", "1"
    )

    assert recalled == over_cli
    assert len(recalled["sources"]) == 1
    skills, memory = recalled["skillContext"], recalled["memoryContext"]
    assert skills["coverage"] == memory["coverage"] == "partial"
    assert [(d["file"], d["field"]) for d in skills["leftOut"]] == [
        (".threadshare/memory/skills/broken/SKILL.md", "name")
    ]
    assert [(d["file"], d["field"]) for d in memory["leftOut"]] == [
        (".threadshare/memory/scenes/hot.md", "heat")
    ]
