"""`teamlore demo` drives the whole chain on bundled sample data, in its own folder only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from support import in_process, teamlore_cli
from teamlore.cli.main import app


def test_demo_runs_the_whole_chain_and_touches_nothing_else(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    outside_home = tmp_path / "untouched-state"
    proc = in_process(
        "demo", "--dir", str(target), "--format", "json", env={"TEAMLORE_HOME": str(outside_home)}
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    steps = {s["step"]: s for s in result["steps"]}
    assert list(steps) == [
        "build",
        "sync",
        "sessions-search",
        "memory-init",
        "recall",
        "stage",
        "review",
        "confirm-prepare",
        "promote",
        "memory-search",
        "skill-stage",
        "skill-promote",
        "assemble",
        "synthesize",
        "consolidation-stage",
        "consolidation-promote",
        "consolidation-assemble",
        "git-status",
    ]
    assert not outside_home.exists()  # the demo has its own state dir
    repo = Path(result["repository"])
    written = steps["promote"]["files"]
    assert len(written) == 2 and all((repo / p).is_file() for p in written)
    for query, found in steps["memory-search"]["searches"].items():
        assert found["coverage"] == "complete" and found["results"], query
    tree = "\n".join((repo / p).read_text() for p in written)
    assert str(tmp_path) not in tree and "7c4f2a9e" not in tree and "019a8d2e" not in tree
    assert "github.com/acme/acme-billing" in tree and 'occurred: ["2026-11-2' in tree
    commits = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--all", "--count"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull},
    ).stdout
    assert commits.strip() == str(len(steps["build"]["commits"]))
    assert sorted(steps["git-status"]["porcelain"].split("\n")) == [
        "?? .agents/",
        "?? .claude/",
        "?? .threadshare/",
        "?? AGENTS.md",
        "?? CLAUDE.md",
    ]
    skill = ".threadshare/memory/skills/acme-billing-release/SKILL.md"
    assert list(steps["skill-promote"]["files"]) == [skill]
    assert steps["assemble"]["skills"] == [
        ".claude/skills/acme-billing-release/SKILL.md",
        ".agents/skills/acme-billing-release/SKILL.md",
    ]
    claude_md = (repo / "CLAUDE.md").read_text()
    assert claude_md == steps["consolidation-assemble"]["block"] + "\n"
    # AGENTS.md carries the consolidation too: `assemble -p codex --check` passes after the demo
    agents_md = (repo / "AGENTS.md").read_text()
    assert agents_md == steps["consolidation-assemble"]["codex"]["block"] + "\n"
    assert "scenes/release.md (heat 1)" in agents_md
    scene, doctrine = ".threadshare/memory/scenes/release.md", ".threadshare/memory/doctrine.md"
    record = ".threadshare/memory/consolidated.json"
    assert sorted(steps["consolidation-promote"]["files"]) == [record, doctrine, scene]
    assert "\nheat: 1\n" in steps["consolidation-promote"]["files"][scene]
    assert "- .threadshare/memory/scenes/release.md (heat 1) \u2014 Releasing acme-billing" in (
        claude_md
    )
    assert "### Core principles" in claude_md
    assert "_No approved team doctrine yet._" not in claude_md
    assert "- .claude/skills/acme-billing-release/SKILL.md \u2014 Cut an acme-billing" in claude_md
    assert (repo / ".agents/skills/acme-billing-release/SKILL.md").read_bytes() == (
        repo / skill
    ).read_bytes()
    lint = in_process(
        "memory", "lint", "--format", "json", cwd=repo, env={"TEAMLORE_HOME": result["stateDir"]}
    )
    assert lint.returncode == 0, lint.stdout
    # a plain `sync` in the demo's state (what its `export TEAMLORE_HOME=…` invites next)
    # re-reads the demo's sessions only, never the person's own ~/.claude, ~/.codex, ~/.pi
    fake_home, fixtures = tmp_path / "home", Path(__file__).parents[1] / "fixtures/sessions"
    shutil.copytree(fixtures / "claude", fake_home / ".claude/projects")
    shutil.copytree(fixtures / "codex", fake_home / ".codex/sessions")
    (fake_home / ".pi/agent/sessions").mkdir(parents=True)
    clients = {
        "CLAUDE_CONFIG_DIR": ".claude",
        "CODEX_HOME": ".codex",
        "PI_CODING_AGENT_DIR": ".pi/agent",
    }
    env = {name: str(fake_home / rel) for name, rel in clients.items()}
    env |= {"HOME": str(fake_home), "TEAMLORE_HOME": result["stateDir"]}
    synced = CliRunner().invoke(app, ["sync", "--format", "json"], env=env)
    assert synced.exit_code == 0, synced.output
    read = json.loads(synced.output)
    assert [s["path"] for s in read["sources"]] == [
        str(target / "codex/sessions"),
        str(target / "claude/projects"),
    ]
    assert read["files"]["changed"] == 0 and read["totals"]["sessions"] == 3


def test_demo_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    proc = in_process("demo", "--dir", str(tmp_path), "--format", "json")
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["error"]["code"] == "INVALID_ARGUMENT"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_demo_refuses_a_place_that_cannot_be_its_folder(tmp_path: Path) -> None:
    """A file, a folder under a file, a folder the system cannot make: each a usage error that
    names what is wrong (it was STATE_INVALID about 'a file teamlore keeps', or INTERNAL)."""
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    for place, says in (
        (mine, "is not a folder"),
        (mine / "demo", "Not a directory"),
        (Path("/proc/teamlore-demo"), "cannot make the folder"),
    ):
        proc = in_process("demo", "--dir", str(place), "--format", "json")
        assert proc.returncode == 2, proc.stdout
        error = json.loads(proc.stdout)["error"]
        assert error["code"] == "INVALID_ARGUMENT" and says in error["message"]
    assert mine.read_text() == "mine"


def _search_hits(text: str) -> dict[str, str]:
    """Each query's line of the search step, with the lines its hit wraps onto (further in)
    joined back to it."""
    hits: dict[str, str] = {}
    query = ""
    for line in text.splitlines():
        if " — " in line and line.startswith("      ") and not line.startswith("        "):
            query = line.split(":")[0].strip()
            hits[query] = line
        elif query and line.startswith("        "):
            hits[query] += " " + line.strip()
        else:
            query = ""
    return hits


def test_the_demo_text_shows_each_searchs_top_hit_whole(tmp_path: Path) -> None:
    """What a newcomer reads first: no snippet cut mid-word without saying so (they were cut at
    90 characters), and counts in the right number; in a temporary folder with a space in its
    path, the lines to paste into a shell at the end still work there (they were unquoted:
    `cd /tmp/bo tmp dir/…` failed, `export` set TEAMLORE_HOME=/tmp/bo)."""
    spaced = tmp_path / "bo tmp dir"
    spaced.mkdir()
    # a real process: tempfile reads TMPDIR once per process
    proc = teamlore_cli("demo", env={"COLUMNS": "80", "HOME": str(tmp_path), "TMPDIR": str(spaced)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("teamlore demo in ~/bo tmp dir/teamlore-demo-")  # from ~
    pasted = proc.stdout.split("Explore it yourself:\n")[1].splitlines()[:2]
    shell = subprocess.run(
        ["sh", "-c", "\n".join([*pasted, 'pwd && echo "$TEAMLORE_HOME"'])],
        capture_output=True,
        text=True,
    )
    (demo,) = spaced.iterdir()
    assert shell.stdout.splitlines() == [str(demo / "acme-billing"), str(demo / "state")], shell
    lines = _search_hits(proc.stdout)
    assert lines["flaky invoice export"].endswith(
        "3 hits — user: The release job failed again: test_export is flaky because invoice"
        " export order is not stable. Find the cause."
    )
    assert lines["lock_timeout"].endswith("staging 上 alembic upgrade head 通过。")
