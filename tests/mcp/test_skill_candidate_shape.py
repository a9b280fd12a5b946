"""A new user's agent stages a Skill from what teamlore tells it, through the real MCP server
(`--capability team`, SDK stdio client) and the real CLI:

- recall's guidance held the CandidateDraftBatch@v1 shape only (`draftShape`): nothing named a
  SkillCandidate@v1's fields, `memory stage --help` and the stage tool did not say where its
  shape was, and its refusals pointed at `guidance.draftShape`. Now `guidance.skillShape` is a
  whole SkillCandidate@v1 that stages once filled in, and its refusals point there;
- the capture prompt said to write placeholders as `<service>`, which review passed without a
  word and `memory lint` warned about once promoted (`format.raw-html`). The prompt now says
  `{service}`, which lints clean, and review shows under the SKILL.md what lint will say."""

from __future__ import annotations

import copy
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from team_mcp import TeamServer, running_team_server

from support import in_process, release_repository

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import WINDOW

SKILL_FORMAT = "threadshare-memory-skill-candidate@v1"
SKILL_DIR = ".threadshare/memory/skills"


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    return release_repository(tmp_path, home)


@pytest.fixture()
def server(repo: Path) -> Iterator[TeamServer]:
    with running_team_server(repo) as running:
        yield running


def cli(repo: Path, *args: str, stdin: dict[str, Any] | None = None) -> dict[str, Any]:
    proc = in_process(
        *args, "--format", "json", cwd=repo, input=None if stdin is None else json.dumps(stdin)
    )
    payload: dict[str, Any] = json.loads(proc.stdout)
    assert (proc.returncode != 0) == ("error" in payload), proc.stderr
    return payload


def recall_over_both(repo: Path, server: TeamServer) -> dict[str, Any]:
    (recalled,) = server.calls(("threadshare_memory_recall", {**WINDOW, "limit": 1}))
    window = ("--since", WINDOW["since"], "--until", WINDOW["until"], "-n", "1")
    assert cli(repo, "memory", "recall", *window) == recalled
    return recalled


def filled_in(recalled: dict[str, Any], body: str | None = None) -> dict[str, Any]:
    """recall's guidance.skillShape with the task's own values, as an agent fills it in."""
    task = recalled["sources"][0]
    candidate = copy.deepcopy(recalled["guidance"]["skillShape"])
    candidate.update(
        taskId=task["taskId"],
        binding=task["binding"],
        memoryContextDigest=recalled["memoryContext"]["bindingDigest"],
    )
    candidate["statements"][0]["evidenceIds"] = [task["chunk"]["turnEvidence"][0]["evidenceId"]]
    if body is not None:
        candidate["skill"]["body"] = body
    return candidate


def test_recall_shows_the_skill_shape_and_a_candidate_written_from_it_alone_stages(
    repo: Path, server: TeamServer
) -> None:
    from teamlore.contracts.skill import SkillCandidate, SkillDraft, SkillStatement

    recalled = recall_over_both(repo, server)
    guidance = recalled["guidance"]
    shape = guidance["skillShape"]
    assert shape["format"] == SKILL_FORMAT and "draftShape" in guidance
    for model, example in (
        (SkillCandidate, shape),
        (SkillDraft, shape["skill"]),
        (SkillStatement, shape["statements"][0]),
    ):
        fields = model.model_json_schema(by_alias=True)["properties"]
        assert set(fields) <= set(example), model.__name__  # every field, not only required
    assert len(json.dumps(shape, ensure_ascii=False).encode()) < 800  # recall stays compact
    assert "guidance.skillShape" in recalled["skillContext"]["capturePrompt"]["text"]

    # what the tools and the command say about staging a Skill
    tools = {tool.name: tool for tool in server.tools()}
    stage_tool = tools["threadshare_memory_stage"]
    assert "guidance.skillShape" in stage_tool.description
    assert "guidance.skillShape" in stage_tool.input_schema["properties"]["format"]["description"]
    assert "guidance.skillShape" in tools["threadshare_memory_recall"].description
    helped = in_process("memory", "stage", "--help", cwd=repo)
    assert helped.returncode == 0
    assert "SkillCandidate@v1" in helped.stdout and "guidance.skillShape" in helped.stdout

    # a refusal of a Skill's shape points at the Skill's shape, over MCP and the CLI alike
    for bare in (
        {"format": SKILL_FORMAT},
        {**filled_in(recalled), "skill": {"name": "Not A Slug"}},
    ):
        (over_mcp,) = server.calls(("threadshare_memory_stage", bare))
        over_cli = cli(repo, "memory", "stage", "--request", "-", stdin=bare)["error"]
        for refused in (over_mcp["error"], over_cli):
            assert refused["code"] == "STAGE_REQUEST_INVALID"
            assert "guidance.skillShape" in refused["next"], refused
            assert "draftShape" not in refused["next"]
        assert "`threadshare_memory_recall`" in over_mcp["error"]["next"]

    # filled in with the task's own values, the shape stages as it is
    (staged,) = server.calls(("threadshare_memory_stage", filled_in(recalled)))
    assert "error" not in staged, staged
    assert staged["status"] == "quarantined" and staged["candidates"][0]["kind"] == "skill"


BRACED = re.compile(r"\{[a-z][a-z-]*\}")
ANGLED = re.compile(r"<[a-z][a-z-]*>")


def test_a_skill_written_as_the_prompt_says_lints_clean_and_review_says_what_lint_will(
    repo: Path, server: TeamServer
) -> None:
    recalled = recall_over_both(repo, server)
    prompt = recalled["skillContext"]["capturePrompt"]["text"]
    told = prompt.split("placeholders", 1)[1].split(";", 1)[0]
    placeholders = BRACED.findall(told)
    assert placeholders == ["{service}", "{release-tag}", "{path}"], told
    assert ANGLED.findall(prompt) == []

    # a Skill as a new user's agent wrote it from the old prompt: `<service>` and `<env>`
    angled = "## Procedure\n\n1. Deploy <service> to <env>.\n2. Check the health page.\n"
    (staged,) = server.calls(("threadshare_memory_stage", filled_in(recalled, angled)))
    assert staged["status"] == "quarantined", staged
    (reviewed,) = server.calls(("threadshare_memory_review", {"kind": "skill"}))
    assert cli(repo, "memory", "review", "--kind", "skill") == reviewed
    (item,) = reviewed["items"]
    (file,) = item["files"]
    shown = [(w["rule"], w["severity"], w["line"]) for w in file["warnings"]]
    assert shown and all(rule == "format.raw-html" for rule, _, _ in shown)
    printed = in_process("memory", "review", "--kind", "skill", cwd=repo, env={"COLUMNS": "200"})
    assert "warn format.raw-html: raw HTML `<service>`: GitHub drops it" in printed.stdout

    # promoted as reviewed, `memory lint` says of the file exactly what review said
    from teamlore.memory.promotion.queue import prepare_request_from_review

    planned = cli(
        repo, "memory", "prepare", "--request", "-", stdin=prepare_request_from_review([item])
    )
    promoted = cli(repo, "memory", "promote", "--plan", planned["planId"])
    assert promoted["status"] == "applied"
    linted = in_process("memory", "lint", file["targetPath"], "--format", "json", cwd=repo)
    findings = json.loads(linted.stdout)["findings"]
    assert [(f["rule"], f["severity"], f["line"]) for f in findings] == shown
    assert [f["message"] for f in findings] == [w["message"] for w in file["warnings"]]

    # the same Skill with the prompt's own placeholders: nothing to warn about
    braced = angled.replace("<service>", placeholders[0]).replace("<env>", placeholders[2])
    written = repo / SKILL_DIR / "deploy-braced" / "SKILL.md"
    written.parent.mkdir()
    skill = '---\nname: "deploy-braced"\ndescription: "Deploy a service."\n---\n'
    written.write_text(skill + braced + f"3. Tag {placeholders[1]}.\n")
    linted = in_process("memory", "lint", str(written), "--format", "json", cwd=repo)
    assert json.loads(linted.stdout)["findings"] == [], linted.stdout
