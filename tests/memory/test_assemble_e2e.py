"""What `memory assemble` writes reaches the real agents with no tool call: after
`assemble --provider claude` the request `claude -p` sends to the (scripted) model carries the
managed block and lists the projected Skill; after `assemble --provider codex` the request
`codex exec` sends carries the AGENTS.md block and the Skill's name and description."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from agent_clis import AgentClis, Scenario, ScriptedModel, run_claude, run_codex
from support import git, shared_fixtures, teamlore_cli

SKILL_NAME = "shop-release"
SKILL_DESCRIPTION = "Release the shop: run the release tests, then push a v-prefixed tag."
SKILL = (
    f'---\nname: "{SKILL_NAME}"\ndescription: "{SKILL_DESCRIPTION}"\n---\n'
    "## Procedure\n\n1. Run pytest tests/test_release.py.\n2. Push the v-prefixed tag.\n"
)
SCENE_LINE = (
    "- .threadshare/memory/scenes/team-memory-design.md (heat 1) \u2014 Threadshare memory pipeline"
)


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    """A git repository holding the reference tree plus one team Skill."""
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q")
    memory = root / ".threadshare" / "memory"
    shutil.copytree(
        shared_fixtures("threadshare-memory"), memory, ignore=shutil.ignore_patterns("SOURCE.md")
    )
    for path in [memory, *memory.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    (memory / "skills" / SKILL_NAME).mkdir(parents=True)
    (memory / "skills" / SKILL_NAME / "SKILL.md").write_text(SKILL)
    return root


def assemble(repo: Path, provider: str) -> dict[str, object]:
    done = teamlore_cli("memory", "assemble", "--provider", provider, "--format", "json", cwd=repo)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.e2e
def test_claude_p_sends_the_claude_md_block_and_lists_the_projected_skill(
    agent_clis: AgentClis, repo: Path, tmp_path: Path
) -> None:
    result = assemble(repo, "claude")
    block = str(result["block"])
    assert (repo / ".claude/skills" / SKILL_NAME / "SKILL.md").read_text() == SKILL
    with ScriptedModel(Scenario(final_text="ok"), log_path=tmp_path / "requests.jsonl") as model:
        run = run_claude(
            agent_clis,
            "Say ok.",
            cwd=repo,
            home=tmp_path / "home",
            model=model,
            allowed_tools=(),
        )
    assert not run.is_error, run.describe()
    sent = model.request_text()
    # Claude Code drops HTML comments from CLAUDE.md: everything between the markers arrives
    inside = "\n".join(block.split("\n")[1:-1]).strip()
    assert inside.startswith("## Team memory") and inside in sent
    assert f".claude/skills/{SKILL_NAME}/SKILL.md \u2014 {SKILL_DESCRIPTION}" in sent
    # and the projected Skill is offered to the Skill tool
    assert f"- {SKILL_NAME}: {SKILL_DESCRIPTION}" in sent
    assert model.errors == []


@pytest.mark.e2e
def test_codex_exec_sends_the_agents_md_block_and_the_skill(
    agent_clis: AgentClis, repo: Path, tmp_path: Path
) -> None:
    result = assemble(repo, "codex")
    block = str(result["block"])
    assert SCENE_LINE in block
    assert (repo / ".agents/skills" / SKILL_NAME / "SKILL.md").read_text() == SKILL
    with ScriptedModel(Scenario(final_text="ok"), log_path=tmp_path / "requests.jsonl") as model:
        run = run_codex(agent_clis, "Say ok.", cwd=repo, home=tmp_path / "home", model=model)
    assert run.returncode == 0, run.describe()
    sent = model.request_text()
    assert block in sent  # Codex sends AGENTS.md as is, markers included
    assert f"- {SKILL_NAME}: {SKILL_DESCRIPTION}" in sent  # Codex's own list of Skills
    assert model.errors == []
    assert not (repo / "CLAUDE.md").exists()
