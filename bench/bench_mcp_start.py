"""The MCP server's start, whole process, as ratios to the interpreter floor.

    .venv/bin/python bench/bench_mcp_start.py [--rounds 10] [--versus ../main/src]

Claude Code and Codex start teamlore's MCP servers at every session start (`teamlore doctor`
times the same thing). For each capability `teamlore install` registers (team-read, team, read,
init) every round spawns the server exactly as installed (`python -m teamlore.cli.main mcp
--capability …`), drives it with the official SDK client over stdio and times

- spawn → `initialize` → `list_tools` answered (the process then exits), and
- spawn → the first tool result: `threadshare_memory_search` (team tiers), `memory_read`
  (read), `memory_status` (init).

Beside wall time it takes the server's CPU seconds (user + sys, `RUSAGE_CHILDREN` around the
spawn: the figure to quote on a loaded machine). Floors, in the same rounds: the interpreter
(`python -c "import sqlite3, json"`, spawned the same way but without a client) and the SDK
floor, a lowlevel SDK server listing one tool (`bench/mcp_floor_server.py`): what any server
built on the `mcp` package costs. With `--versus SRC` another checkout's servers run interleaved
with ours. See bench/README.md, "The MCP server's start".
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp.client.stdio import stdio_client

from bench_cli import fixture_memory_repository
from mcp import ClientSession, StdioServerParameters

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
PROFILE = "# Profile\n\n## Work\nThe user writes Rust at work.\n"

# (capability, launch flags after `mcp`, the first call's tool and arguments)
LAUNCHES: list[tuple[str, list[str], str, dict[str, Any]]] = [
    ("team-read", ["--capability", "team-read"], "threadshare_memory_search", {"query": "export"}),
    ("team", ["--capability", "team"], "threadshare_memory_search", {"query": "export"}),
    ("read", ["--capability", "read", "--client-id", "bench", "--global"], "memory_read", {}),
    ("init", ["--capability", "init", "--client-id", "bench", "--global"], "memory_status", {}),
]


@dataclass
class Sample:
    name: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    tools: int = 0


def say(text: str = "") -> None:
    print(text, flush=True)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def drive(params: StdioServerParameters, call: tuple[str, dict[str, Any]] | None) -> int:
    """Initialize, list the tools, make `call` if given; the number of tools listed. Leaving
    the client's context closes stdin and reaps the server."""
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = (await session.list_tools()).tools
            if call is not None:
                result = await session.call_tool(*call)
                if result.is_error:
                    raise RuntimeError(f"{call[0]} failed: {result.content}")
            return len(tools)


def timed_server(
    sample: Sample, params: StdioServerParameters, call: tuple[str, dict[str, Any]] | None
) -> None:
    cpu, started = children_cpu(), time.perf_counter()
    answered: list[float] = []

    async def run() -> None:
        sample.tools = await drive(params, call)
        answered.append(time.perf_counter())

    anyio.run(run)
    sample.wall.append(answered[0] - started)
    sample.cpu.append(children_cpu() - cpu)


def timed_floor(sample: Sample, env: dict[str, str], cwd: Path) -> None:
    cpu, started = children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-c", "import sqlite3, json"], env=env, cwd=cwd, check=True)
    sample.wall.append(time.perf_counter() - started)
    sample.cpu.append(children_cpu() - cpu)


def prepare(work: Path, env: dict[str, str]) -> Path:
    """A git worktree holding the team-memory fixture (indexed once) and a personal profile."""
    repo = fixture_memory_repository(work / "repo")
    seed_state(repo, env)
    return repo


def seed_state(repo: Path, env: dict[str, str]) -> None:
    """The state dir of `env`: a personal profile, and `repo`'s memory indexed once."""
    personal = Path(env["TEAMLORE_HOME"]) / "personal"
    personal.mkdir(mode=0o700, parents=True, exist_ok=True)
    (personal / "profile.md").write_text(PROFILE)
    exe = [sys.executable, "-m", "teamlore.cli.main"]
    search = [*exe, "memory", "search", "export", "--format", "json"]
    subprocess.run(search, env=env, cwd=repo, check=True, stdout=subprocess.DEVNULL)


def child_env(work: Path, src: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    (work / "home").mkdir(parents=True, exist_ok=True)
    env.update(
        TEAMLORE_HOME=str(work / "state"),
        HOME=str(work / "home"),
        PYTHONPATH=str(src),
        PYTHONPYCACHEPREFIX=str(work / "pycache"),
    )
    return env


def pct(values: list[float], q: int) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[q - 1]


def report(floor: Sample, samples: list[Sample]) -> None:
    wall0, cpu0 = statistics.median(floor.wall), statistics.median(floor.cpu)
    say(
        f"  {'process':<44}{'tools':>6}{'p50 ms':>8}{'p95 ms':>8}{'CPU ms':>8}"
        f"{'wall/floor':>11}{'CPU/floor':>10}"
    )
    for s in [floor, *samples]:
        wall, cpu = statistics.median(s.wall), statistics.median(s.cpu)
        say(
            f"  {s.name:<44}{s.tools or '':>6}{wall * 1000:8.0f}{pct(s.wall, 95) * 1000:8.0f}"
            f"{cpu * 1000:8.0f}{wall / wall0:11.1f}{cpu / max(cpu0, 1e-3):10.1f}"
        )
    by_name = {s.name: s for s in samples}
    sdk = statistics.median(samples[0].cpu)
    for s in samples[1:]:
        if s.name.endswith("[versus]"):
            continue
        line = f"  {s.name}: CPU {statistics.median(s.cpu) / sdk:.2f}x the SDK floor's"
        versus = by_name.get(f"{s.name} [versus]")
        if versus is not None:
            ratio = statistics.median(s.cpu) / statistics.median(versus.cpu)
            line += f", {ratio:.2f}x [versus]'s"
        say(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--capabilities", default="", help="comma-separated (default: all)")
    parser.add_argument("--src", type=Path, default=REPO / "src", help="the src/ to measure")
    parser.add_argument("--versus", type=Path, help="another checkout's src/, interleaved")
    parser.add_argument("--work", type=Path, default=REPO / ".bench" / "mcp-start")
    args = parser.parse_args(argv)
    work: Path = args.work.resolve()
    env = child_env(work, args.src.resolve())
    load = os.getloadavg()
    say(
        f"bench_mcp_start: {args.rounds} rounds, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
        f" on {os.cpu_count()} CPUs, python {sys.version.split()[0]}"
    )
    repo = prepare(work, env)
    trees = [("", env)]
    if args.versus:
        # its own derived model copies, as bench_cli.py's (models/multilingual.py, `CACHE_FORMAT`),
        # and its own state dir, made afresh: a newer tree migrates the state it opens to a
        # schema an older one refuses (DB_SCHEMA_TOO_NEW)
        shutil.rmtree(work / "state-versus", ignore_errors=True)
        versus_env = {
            **env,
            "PYTHONPATH": str(args.versus.resolve()),
            "TEAMLORE_HOME": str(work / "state-versus"),
            "TEAMLORE_MODEL_CACHE": str(work / "models-versus"),
        }
        seed_state(repo, versus_env)
        trees.append((" [versus]", versus_env))
    wanted = set(filter(None, args.capabilities.split(",")))
    runs: list[tuple[Sample, StdioServerParameters, tuple[str, dict[str, Any]] | None]] = []
    floor_server = [str(BENCH_DIR / "mcp_floor_server.py")]
    runs.append((Sample("SDK floor: list_tools"), params(floor_server, repo, env), None))
    for capability, flags, tool, arguments in LAUNCHES:
        if wanted and capability not in wanted:
            continue
        launch = ["-m", "teamlore.cli.main", "mcp", *flags]
        for suffix, tree_env in trees:
            server = params(launch, repo, tree_env)
            runs.append((Sample(f"{capability}: list_tools{suffix}"), server, None))
            runs.append((Sample(f"{capability}: first {tool}{suffix}"), server, (tool, arguments)))
    floor = Sample("interpreter floor")
    for sample, server, call in runs:  # warm the byte-code cache and the page cache
        timed_server(Sample(sample.name), server, call)
    for _ in range(args.rounds):
        timed_floor(floor, env, repo)
        for sample, server, call in runs:
            timed_server(sample, server, call)
    report(floor, [sample for sample, _, _ in runs])
    say("  each server, as run (python = this interpreter; cwd the team-memory worktree):")
    say(f"    SDK floor: python {floor_server[0]}")
    for capability, flags, tool, arguments in LAUNCHES:
        if wanted and capability not in wanted:
            continue
        first = f"{tool} {json.dumps(arguments)}"
        say(f"    {capability}: python -m teamlore.cli.main mcp {' '.join(flags)}; then {first}")
    return 0


def params(args: list[str], repo: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=args, cwd=str(repo), env=env)


if __name__ == "__main__":
    raise SystemExit(main())
