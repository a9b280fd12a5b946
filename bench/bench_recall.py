"""Benchmark: `memory.recall` over 200 sealed turns with large tool payloads.

Builds a real git repository and 10 Codex sessions x 20 turns about it (every turn runs a shell
command whose output is 2 KiB, 30 KiB or 100 KiB — the last stored by the index as head/tail
only), indexes them with the real indexer, then times recall end to end (select, chunk, catalog,
transcript, record) cold and warm (same request again: idempotent), and `load_task_source`
(what stage calls to re-check a task's bound inputs).

    python bench/bench_recall.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from teamlore.memory.extraction.recall import load_task_source
from teamlore.memory.store.state_db import open_state_db
from teamlore.ops.memory.recall import RecallRequest, memory_recall
from teamlore.ops.owner import resolve_owner
from teamlore.ops.registry import OpContext, run_operation
from teamlore.sessions.index_db import open_index

BASE = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
SESSIONS, TURNS = 10, 20
SIZES = (2 * 1024, 30 * 1024, 100 * 1024)
WINDOW = {"since": "2026-03-01T00:00:00.000Z", "until": "2026-03-08T00:00:00.000Z"}


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent)}
    subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)


def _session(root: Path, repo: Path, number: int) -> None:
    start = BASE + timedelta(hours=number)
    clock = [start]

    def rec(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        clock[0] += timedelta(seconds=1)
        return {"timestamp": _iso(clock[0]), "type": kind, "payload": payload}

    sid = f"019aad50-0000-7000-8000-{number:012d}"
    lines = [
        rec(
            "session_meta",
            {
                "id": sid,
                "timestamp": _iso(start),
                "cwd": str(repo),
                "cli_version": "0.60.1",
                "source": "cli",
            },
        )
    ]
    for turn in range(TURNS):
        text = f"session {number} turn {turn}: investigate the release pipeline step {turn}"
        lines.append(rec("event_msg", {"type": "user_message", "message": text, "images": []}))
        lines.append(
            rec(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                },
            )
        )
        size = SIZES[(number + turn) % len(SIZES)]
        body = "".join(f"log line {i:06d} build step ok\n" for i in range(size // 29 + 1))[:size]
        call = f"c{turn}"
        lines.append(
            rec(
                "response_item",
                {
                    "type": "function_call",
                    "name": "shell_command",
                    "arguments": json.dumps({"command": "make release"}),
                    "call_id": call,
                },
            )
        )
        lines.append(
            rec(
                "response_item",
                {
                    "type": "function_call_output",
                    "call_id": call,
                    "output": f"Exit code: {turn % 2}\nOutput:\n{body}",
                },
            )
        )
        lines.append(rec("event_msg", {"type": "agent_message", "message": f"step {turn} ok"}))
        lines.append(rec("event_msg", {"type": "task_complete"}))
    path = root / "sessions" / "2026" / "03" / "02" / f"rollout-2026-03-02T09-00-00-{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):7.1f} ms   p95 {p95:7.1f} ms   (n={len(ordered)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = root / "repo"
        repo.mkdir()
        _git(repo, "init", "-q", "-b", "main")
        (repo / "README.md").write_text("bench\n")
        _git(repo, "add", "README.md")
        _git(repo, "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "-m", "init")
        for number in range(SESSIONS):
            _session(root / "codex", repo, number)
        payload_bytes = sum(p.stat().st_size for p in (root / "codex").rglob("*.jsonl"))
        cold: list[float] = []
        warm: list[float] = []
        result: dict[str, Any] = {}
        for run in range(args.runs):
            home = root / f"state-{run}"
            ctx = OpContext(cwd=repo, home=home)
            run_operation(
                "sync", ctx, {"sources": [f"codex={root / 'codex'}"], "repository": str(repo)}
            )
            request = RecallRequest.model_validate(WINDOW)
            started = time.perf_counter()
            result = memory_recall(ctx, request)
            cold.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            memory_recall(ctx, request)
            warm.append((time.perf_counter() - started) * 1000)
        index, state = open_index(home), open_state_db(home)
        rebind: list[float] = []
        try:
            owner = resolve_owner(ctx, registered=True, index=index)
            for source in result["sources"]:
                started = time.perf_counter()
                assert not load_task_source(index, state, owner, source["taskId"], home=home).stale
                rebind.append((time.perf_counter() - started) * 1000)
        finally:
            index.close()
            state.close()
        coverage = result["coverage"]
        truncated = coverage["truncatedItems"]
        print(
            f"corpus: {SESSIONS} sessions x {TURNS} turns = {result['selection']['matchedTurns']}"
            f" matched turns, {payload_bytes / 2**20:.1f} MiB of session files"
        )
        print(
            f"chunks: {coverage['chunks']} built, {coverage['returned']} returned, "
            f"{len(coverage['deferred'])} deferred; {truncated} truncated coverage items "
            "in the returned tasks"
        )
        print(f"recall cold (select+chunk+catalog+record): {_ms(cold)}")
        print(f"recall warm (same request, idempotent):    {_ms(warm)}")
        print(f"load_task_source per task (stage rebind):  {_ms(rebind)}")


if __name__ == "__main__":
    main()
