"""Benchmark: `memory synthesize` and ConsolidationPatch@v1 staging over a large approved tree.

Builds a git worktree with `--entries` approved entries (default 4,096, the task's cap), 15
scenes and a doctrine, then prints: the first synthesize (cold projection sync included), a
repeated synthesize of the unchanged tree (p50/p95 of `--reps`), the task's size, and staging a
patch that updates three scenes and the doctrine (validation, materialization, one transaction;
p50/p95 over fresh tasks), its size and staging time when it echoes the binding and when it
echoes the task's bindingDigest. A script, not a test:

    .venv/bin/python bench/bench_consolidation.py [--entries 4096] [--reps 10]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from teamlore.memory.consolidation.staging import stage_patch
from teamlore.memory.consolidation.synthesize import synthesize
from teamlore.memory.consolidation.task import TASK_CONTENT_BUDGET, budgeted_bytes
from teamlore.memory.store import documents
from teamlore.memory.store.layout import init_tree
from teamlore.memory.store.state_db import open_state_db
from teamlore.repo.binding import resolve_repository

WORDS = [
    "release",
    "migration",
    "staging",
    "export",
    "invoice",
    "lock",
    "timeout",
    "schema",
    "cache",
    "retry",
]


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def build(root: Path, entries: int) -> None:
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    init_tree(root)
    memory = root / ".threadshare/memory"
    for i in range(entries):
        words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(12))
        entry = documents.Entry(
            id=f"entry-{i:05d}",
            type="work_method",
            status="approved",
            priority=50,
            confidence="medium",
            provenance_strength="direct",
            claim_support="human-confirmed",
            limitations=["source-local-only"],
            scope="repo",
            scene=f"scene-{i % 14:02d}",
            occurred=[],
            evidence=documents.Evidence(commits=[], paths=[]),
            superseded_by=None,
            body=f"Entry {i}: {words}.\n",
        )
        (memory / "entries" / f"entry-{i:05d}.md").write_bytes(documents.dump_entry(entry))
    for s in range(14):
        scene = documents.Scene(
            name=f"scene-{s:02d}",
            created="2026-11-01",
            updated="2026-11-01",
            summary=f"Scene {s}",
            heat=s + 1,
            body="## Scene\n" + "- a step\n" * 40,
        )
        (memory / "scenes" / f"scene-{s:02d}.md").write_bytes(documents.dump_scene(scene))
    (memory / "doctrine.md").write_text("### Core principles\n- Evidence is not truth.\n")


def patch_for(task: dict[str, Any], form: str = "binding") -> dict[str, Any]:
    """The patch, echoing the task's `binding` or its `bindingDigest` (`form`)."""
    ids = [e["entryId"] for e in task["entries"][:5]]
    ops = [
        {
            "operationId": f"u{s}",
            "op": "update",
            "target": "scene",
            "name": f"scene-{s:02d}",
            "newContent": '-----META-START-----\nsummary: "Updated"\n-----META-END-----\n'
            + "## Scene\n"
            + "- a refined step\n" * 40,
            "basedOnEntryIds": ids,
            "mergeSources": [],
            "rationale": "refined",
        }
        for s in range(3)
    ]
    ops.append(
        {
            "operationId": "d",
            "op": "update",
            "target": "doctrine",
            "name": "doctrine",
            "newContent": "### Core principles\n- Evidence is not truth.\n- Bind approvals.\n",
            "basedOnEntryIds": ids,
            "mergeSources": [],
            "rationale": "tightened",
        }
    )
    return {
        "format": "threadshare-memory-consolidation-patch@v1",
        "taskId": task["taskId"],
        form: task[form],
        "operations": ops,
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=4096)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "state"
        root = Path(tmp) / "repo"
        build(root, args.entries)
        identity = resolve_repository(root, home=home)
        conn = open_state_db(home)
        t0 = time.perf_counter()
        first = synthesize(conn, identity, full=True)
        cold = time.perf_counter() - t0
        size = len(orjson.dumps(first["task"]))
        warm: list[float] = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            again = synthesize(conn, identity, full=True)
            warm.append(time.perf_counter() - t0)
            assert again["taskId"] == first["taskId"]
        stage: list[float] = []
        by_form: dict[str, list[float]] = {"binding": [], "bindingDigest": []}
        for rep in range(args.reps * 2):
            form = "binding" if rep % 2 == 0 else "bindingDigest"
            result = synthesize(conn, identity, full=True)
            document = patch_for(result["task"], form)
            t0 = time.perf_counter()
            staged = stage_patch(conn, document, identity=identity)
            by_form[form].append(time.perf_counter() - t0)
            stage.append(by_form[form][-1])
            assert staged["status"] == "staged"
            conn.execute("BEGIN IMMEDIATE")  # discard it so the next rep can stage again
            conn.execute(
                "UPDATE consolidation_runs SET status = 'stale' WHERE status = 'pending_review'"
            )
            conn.execute("COMMIT")
            if rep < 2:
                print(
                    f"patch echoing {form}: {len(document['operations'])} operations, "
                    f"{len(orjson.dumps(document))} bytes"
                )
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"load average {os.getloadavg()[0]:.2f}; {args.entries} entries, 14 scenes, doctrine")
        print(
            f"synthesize cold (projection sync + task): {cold * 1000:.0f} ms; task "
            f"{size / 1024 / 1024:.2f} MiB ({size} bytes, {first['entryCount']} entries, "
            f"{first['deferredEntries']} left for a next pass), its binding "
            f"{len(orjson.dumps(first['task']['binding']))} bytes, the rest "
            f"{budgeted_bytes(first['task'])} bytes (budget {TASK_CONTENT_BUDGET})"
        )
        print(
            f"synthesize unchanged tree: p50 {pct(warm, 0.5) * 1000:.0f} ms, "
            f"p95 {pct(warm, 0.95) * 1000:.0f} ms"
        )
        print(
            f"stage patch (validate + materialize + tx): p50 {pct(stage, 0.5) * 1000:.0f} ms, "
            f"p95 {pct(stage, 0.95) * 1000:.0f} ms"
        )
        for form, times in by_form.items():
            print(f"stage patch echoing {form}: p50 {pct(times, 0.5) * 1000:.0f} ms")
        print(f"peak RSS {rss:.0f} MiB; mean stage {statistics.mean(stage) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
