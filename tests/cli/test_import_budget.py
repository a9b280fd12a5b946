"""What a short command's process imports (docs/architecture.md, "A short CLI process"): the
read commands and sync are dominated by interpreter start and imports, so each has a budget of
modules and a list of packages it never loads. Counts, not milliseconds: they are the same on a
loaded machine (bench/bench_cli.py measures the time, as ratios to the interpreter floor)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from test_cli import _imported_by, sources, sync_json

from support import teamlore_cli

__all__ = ["sources"]  # the fixture, shared with test_cli

# packages no listed command loads; `rich` only for text output, numpy only for a vector path
NEVER = {"typer", "click", "pygments", "tokenizers", "safetensors", "mcp", "starlette"}
TEXT_ONLY = {"rich"}
VECTOR_ONLY = {"numpy"}
# pydantic only where a pydantic model is the contract: team memory's requests and documents
# (an MCP tool's). The session operations and the config reader check by hand
# (ops/plain_request.py, core/config.py); a sync loads the `[paths]` schema only when config.toml
# has that table
PYDANTIC = {"pydantic", "pydantic_core", "annotated_types"}

# (command, the most modules its process may import, whether its vector path runs, whether it
# may load pydantic): the counts measured when the budget was set, plus about 3 %
# (docs/architecture.md, "A short CLI process")
BUDGETS: list[tuple[tuple[str, ...], int, bool, bool]] = [
    (("sessions", "search", "fixture", "--lexical", "--format", "json"), 145, False, False),
    (("sessions", "search", "fixture", "--format", "json"), 259, True, False),
    (("sessions", "list", "--format", "json"), 151, False, False),
    (("sessions", "show", "SESSION", "--format", "json"), 157, False, False),
    (("status", "--format", "json"), 151, False, False),
    (("sync", "--format", "json"), 195, False, False),
    (("memory", "search", "invoice", "--lexical", "--format", "json"), 295, False, True),
]


@pytest.fixture()
def synced(home: Path, sources: Path, tmp_path: Path) -> tuple[str, Path]:
    """The fixture sessions indexed (their vectors too), and a worktree with a memory tree."""
    sync_json(sources)
    (home / "config.toml").write_text(
        f'[sources]\nclaude = ["{sources / "claude"}"]\ncodex = ["{sources / "codex"}"]\n'
    )
    listed = teamlore_cli("sessions", "list", "--format", "json").stdout
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert teamlore_cli("memory", "init", "--repository", str(repo)).returncode == 0
    return json.loads(listed)["sessions"][0]["sessionKey"], repo


@pytest.mark.parametrize(
    ("command", "budget", "vectors", "models"),
    BUDGETS,
    ids=[" ".join(c[:3]) for c, *_ in BUDGETS],
)
def test_a_short_command_imports_within_its_budget(
    synced: tuple[str, Path], command: tuple[str, ...], budget: int, vectors: bool, models: bool
) -> None:
    key, repo = synced
    args = [key if a == "SESSION" else a for a in command]
    if command[0] == "memory":
        args += ["--repository", str(repo)]
    out, modules = _imported_by(*args)
    assert "error" not in json.loads(out)
    packages = {m.split(".")[0] for m in modules}
    assert not packages & (NEVER | TEXT_ONLY), sorted(packages & (NEVER | TEXT_ONLY))
    assert bool(packages & VECTOR_ONLY) == vectors
    assert models or not packages & PYDANTIC, sorted(packages & PYDANTIC)
    others = {m for m in modules if m.startswith("teamlore.cli.commands.")}
    assert others <= {"teamlore.cli.commands.sessions"}, others  # no other command module
    assert len(modules) <= budget, f"{len(modules)} modules (budget {budget})"


def test_text_output_on_a_terminal_may_load_rich_json_never(synced: tuple[str, Path]) -> None:
    _, with_text = _imported_by("status")
    _, with_json = _imported_by("status", "--format", "json")
    assert "rich" in with_text and "rich" not in with_json
