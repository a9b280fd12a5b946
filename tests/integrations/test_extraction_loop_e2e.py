"""The agent-native extraction loop driven by the real `claude -p` after
`teamlore install --client claude --team`: the scripted model (standing in for the paid model's
judgement) calls `threadshare_memory_recall`, stages drafts citing the evidence ids the recall
returned, then stores them with its adjudication; the candidates are then in
`teamlore memory review`, as a person sees it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_install_e2e import client_env, teamlore_in

from agent_clis import AgentClis, Scenario, ScriptedModel, ToolStep, Turn, run_claude
from support import RELEASE_CLAIM, draft_batch, release_repository, store_all, teamlore_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import WINDOW


def drafts_from_recall(turn: Turn) -> dict:
    return draft_batch(turn.json(0)["sources"][0])  # cites the recall's own evidence ids


def store_every_draft(turn: Turn) -> dict:
    return store_all(turn.json(1)["adjudicationTask"])


def summary(turn: Turn) -> str:
    stored = turn.json(2)
    return f"{stored['status']}: " + ", ".join(c["candidateStatus"] for c in stored["candidates"])


@pytest.mark.e2e
def test_claude_runs_recall_stage_adjudicate_and_the_candidate_is_in_review(
    agent_clis: AgentClis, tmp_path: Path, home: Path
) -> None:
    repo = release_repository(tmp_path, home)
    user_home = tmp_path / "user-home"
    env = client_env(agent_clis, user_home, str(home))
    teamlore_in(user_home, env, "install", "--client", "claude", "--team", cwd=repo)
    scenario = Scenario(
        steps=[
            ToolStep("threadshare_memory_recall", {k: WINDOW[k] for k in ("since", "until")}),
            ToolStep("threadshare_memory_stage", drafts_from_recall),
            ToolStep("threadshare_memory_stage", store_every_draft),
        ],
        final_text=summary,
    )
    with ScriptedModel(scenario) as model:
        run = run_claude(
            agent_clis,
            "Turn last week's release failures into team knowledge.",
            cwd=repo,
            home=user_home,
            model=model,
            env=env,
            allowed_tools=("mcp__teamlore",),
        )
    assert not run.is_error, run.describe()
    assert model.errors == [] and run.permission_denials == []
    assert [name for name, _ in model.tool_calls()] == [
        "mcp__teamlore__threadshare_memory_recall",
        "mcp__teamlore__threadshare_memory_stage",
        "mcp__teamlore__threadshare_memory_stage",
    ]
    assert run.result == "staged: quarantined"
    [cited] = model.tool_calls()[1][1]["candidates"][0]["statements"][0]["evidenceIds"]
    after_recall = next(
        r for r in model.requests if (r.answer or {}).get("name", "").endswith("stage")
    )
    # the request answered with the first stage call holds the recall result and nothing the
    # model wrote later: the id the draft cites came from the real recall
    assert cited in json.dumps(after_recall.body["messages"])

    review = teamlore_cli("memory", "review", cwd=repo)
    assert review.returncode == 0, review.stderr
    # the text view wraps at the terminal's width: the claim is whole, across lines
    assert RELEASE_CLAIM in " ".join(review.stdout.split())
