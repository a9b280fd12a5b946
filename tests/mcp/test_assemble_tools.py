"""`memory assemble` through a real MCP client (`--capability team`) and the CLI: the same
result, the same bytes on disk, the same refusal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import anyio
import pytest
from team_mcp import team_calls

from support import git, in_process

SKILL = (
    b'---\nname: "release"\ndescription: "Cut and verify a release of the shop."\n---\n'
    b"## Procedure\n\n1. Run the release tests.\n2. Push the v-prefixed tag.\n"
)


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q")
    assert in_process("memory", "init", cwd=root).returncode == 0
    skill = root / ".threadshare/memory/skills/release"
    skill.mkdir()
    (skill / "SKILL.md").write_bytes(SKILL)
    (root / "CLAUDE.md").write_text("# House rules\n\nBe brief.\n")
    return root


def cli(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    proc = in_process(*args, "--format", "json", cwd=repo)
    return proc.returncode, json.loads(proc.stdout)


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).as_posix().startswith(".git/")
    }


@pytest.mark.usefixtures("home")
def test_assemble_gives_the_same_result_and_files_over_mcp_and_cli(tmp_path: Path) -> None:
    over_cli, over_mcp = make_repo(tmp_path / "a"), make_repo(tmp_path / "b")
    results = {}
    for provider in ("claude", "codex"):
        code, first = cli(over_cli, "memory", "assemble", "--provider", provider)
        assert code == 0
        _, second = cli(over_cli, "memory", "assemble", "--provider", provider)
        results[provider] = (first, second)
    tools, mcp_results = anyio.run(
        team_calls,
        over_mcp,
        [
            ("threadshare_memory_assemble", {"provider": "claude"}),
            ("threadshare_memory_assemble", {"provider": "claude"}),
            ("threadshare_memory_assemble", {"provider": "codex"}),
            ("threadshare_memory_assemble", {"provider": "codex"}),
        ],
    )
    assert mcp_results == [*results["claude"], *results["codex"]]
    assert results["claude"][0]["changed"] is True and results["claude"][1]["changed"] is False
    assert tree(over_cli) == tree(over_mcp)
    claude_md = (over_cli / "CLAUDE.md").read_text()
    assert claude_md.startswith("# House rules\n\nBe brief.\n\n<!-- BEGIN THREADSHARE MEMORY")
    assert "- .claude/skills/release/SKILL.md — Cut and verify a release" in claude_md
    assert (over_cli / ".agents/skills/release/SKILL.md").read_bytes() == SKILL
    tool = next(t for t in tools if t.name == "threadshare_memory_assemble")
    assert tool.input_schema["required"] == ["provider"]
    assert tool.annotations.read_only_hint is False


@pytest.mark.usefixtures("home")
def test_a_bad_marker_is_the_same_refusal_over_mcp_and_cli(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "a")
    (repo / "AGENTS.md").write_text("<!-- END THREADSHARE MEMORY -->\n")
    before = tree(repo)
    code, over_cli = cli(repo, "memory", "assemble", "--provider", "codex")
    _, (over_mcp, bad_provider) = anyio.run(
        team_calls,
        repo,
        [
            ("threadshare_memory_assemble", {"provider": "codex"}),
            ("threadshare_memory_assemble", {"provider": "gemini"}),
        ],
    )
    # the same refusal; its `next` names the assemble tool beside the command over MCP
    assert code == 1 and over_mcp["error"] == {**over_cli["error"], "next": ANY}
    assert over_mcp["error"]["next"].startswith(
        "Run the tool `threadshare_memory_assemble` or `teamlore memory assemble -p codex --repair`"
    )
    assert over_cli["error"]["code"] == "ASSEMBLY_MARKERS_INVALID"
    assert bad_provider["error"]["code"] == "INVALID_ARGUMENT"
    assert tree(repo) == before


@pytest.mark.usefixtures("home")
def test_assemble_text_output_shows_the_block_and_the_projected_paths(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "a")
    proc = in_process("memory", "assemble", "--provider", "codex", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "Updated AGENTS.md" in proc.stdout
    assert "## Team memory" in proc.stdout
    assert ".agents/skills/release/SKILL.md (written)" in proc.stdout
    missing = in_process("memory", "assemble", cwd=repo)
    assert missing.returncode == 2 and "--provider" in missing.stderr


@pytest.mark.usefixtures("home")
def test_check_is_the_same_over_mcp_and_cli_and_writes_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "a")
    before = tree(repo)
    code, stale_cli = cli(repo, "memory", "assemble", "--provider", "claude", "--check")
    _, (stale_mcp,) = anyio.run(
        team_calls, repo, [("threadshare_memory_assemble", {"provider": "claude", "check": True})]
    )
    # the same refusal; its `next` names the assemble tool beside the command over MCP
    assert code == 1 and stale_mcp["error"] == {**stale_cli["error"], "next": ANY}
    assert stale_mcp["error"]["next"] == (
        "Run the tool `threadshare_memory_assemble` or `teamlore memory assemble -p claude`, "
        "then commit what it wrote."
    )
    assert stale_cli["error"]["code"] == "ASSEMBLY_STALE"
    assert [s["path"] for s in stale_cli["error"]["details"]["stale"]] == [
        "CLAUDE.md",
        ".claude/skills/release/SKILL.md",
    ]
    assert tree(repo) == before

    assert cli(repo, "memory", "assemble", "--provider", "claude")[0] == 0
    code, fresh_cli = cli(repo, "memory", "assemble", "--provider", "claude", "--check")
    _, (fresh_mcp,) = anyio.run(
        team_calls, repo, [("threadshare_memory_assemble", {"provider": "claude", "check": True})]
    )
    assert code == 0 and fresh_cli == fresh_mcp
    assert fresh_cli["checked"] == ["CLAUDE.md", ".claude/skills/release/SKILL.md"]
