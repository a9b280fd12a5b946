"""`memory assemble` at the limits: 256 Skills (8 KiB each), 40 scenes, a doctrine, 500 entries.

Times the first run (writes CLAUDE.md and every projection), then re-runs with nothing new (the
common case: `changed: false`, nothing written), and recall's skill/memory context over the same
tree. Prints p50/p95 in milliseconds and the peak RSS.

    .venv/bin/python bench/bench_assemble.py [--runs 20] [--skills 256]
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

from teamlore.memory.assemble import assemble
from teamlore.memory.skills.context import read_team_memory, recall_contexts


def build(root: Path, skills: int) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    memory = root / ".threadshare" / "memory"
    for sub in ("entries", "scenes", "skills"):
        (memory / sub).mkdir(parents=True)
    (memory / "doctrine.md").write_text("- Test before tagging.\n- Tag with a v prefix.\n")
    step = "1. Run the suite, read the failures, fix the cause, run it again.\n"
    for i in range(skills):
        folder = memory / "skills" / f"procedure-{i:03d}"
        folder.mkdir()
        (folder / "SKILL.md").write_text(
            f'---\nname: "procedure-{i:03d}"\ndescription: "Procedure {i} of the team."\n---\n'
            + step * 120
        )
    for i in range(40):
        (memory / "scenes" / f"area-{i:02d}.md").write_text(
            "-----META-START-----\ncreated: 2026-01-01\nupdated: 2026-01-02\n"
            f'summary: "Area {i}"\nheat: {1 + i % 7}\n-----META-END-----\n## Area {i}\n- a point'
        )
    for i in range(500):
        (memory / "entries" / f"fact-number-{i}.md").write_text(
            f"---\nid: fact-number-{i}\ntype: work_fact\nstatus: approved\npriority: 50\n"
            "confidence: high\nprovenance_strength: direct\nclaim_support: human-confirmed\n"
            "limitations: []\nscope: repo\nscene: null\noccurred: []\n"
            'evidence: {"commits":[],"paths":[]}\nsuperseded_by: null\n---\n'
            f"Fact number {i}: the release job runs on v-prefixed tags only.\n"
        )


def timed(fn, runs: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def report(name: str, samples: list[float]) -> None:
    p95 = statistics.quantiles(samples, n=20)[-1] if len(samples) > 1 else samples[0]
    print(f"{name:<34} p50 {statistics.median(samples):8.1f} ms   p95 {p95:8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--skills", type=int, default=256)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "repo", Path(tmp) / "state"
        root.mkdir()
        home.mkdir(mode=0o700)
        build(root, args.skills)
        first = timed(lambda: assemble(root, "claude", home=home, worktree_key="b" * 64), 1)
        report(f"assemble, first run ({args.skills} Skills)", first)
        report(
            "assemble, unchanged re-run",
            timed(lambda: assemble(root, "claude", home=home, worktree_key="b" * 64), args.runs),
        )
        report("read team memory", timed(lambda: read_team_memory(root), args.runs))
        report(
            "recall skill+memory context",
            timed(lambda: recall_contexts(root, "release tag procedure-007"), args.runs),
        )
        size = sum(f.stat().st_size for f in (root / ".claude" / "skills").rglob("SKILL.md"))
        print(f"projected {size / 2**20:.2f} MiB of SKILL.md; pid {os.getpid()}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
