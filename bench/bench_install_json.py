"""Format-preserving JSON edits on a large `~/.claude.json` (integrations/json_text.py).

Claude Code keeps per-project state in `~/.claude.json`; a long-lived one holds thousands of
projects and reaches megabytes. Install parses it with the strict tokenizer and splices its
entries in; this times that against the load-and-dump it replaced (`json.loads` + `json.dumps`,
which also turned `1e400` into `Infinity`). Prints the medians in milliseconds and the ratio.

    .venv/bin/python bench/bench_install_json.py [--projects 4000] [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from teamlore.integrations.json_text import JsonText

SERVER = {"type": "stdio", "command": "teamlore", "args": ["mcp"], "env": {}}


def claude_state(projects: int) -> str:
    state = {
        "numStartups": 412,
        "projects": {
            f"/home/dev/src/project-{i}": {
                "allowedTools": ["Bash(git status)", "Read"],
                "history": [{"display": f"fix the export bug number {j}"} for j in range(8)],
                "lastCost": 0.123,
                "exampleFiles": ["src/a.py", "src/b.py"],
            }
            for i in range(projects)
        },
        "mcpServers": {"other": {"command": "x"}},
    }
    return json.dumps(state, indent=2)


def median_ms(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def edit_as_text(text: str) -> str:
    doc = JsonText(text, Path("~/.claude.json"))
    doc.set(("mcpServers", "teamlore"), SERVER)
    doc.set(("mcpServers", "teamlore_personal"), SERVER)
    return doc.text


def load_and_dump(text: str) -> str:
    doc = json.loads(text)
    doc["mcpServers"]["teamlore"] = SERVER
    doc["mcpServers"]["teamlore_personal"] = SERVER
    return json.dumps(doc, indent=2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    text = claude_state(args.projects)
    text_ms = median_ms(lambda: edit_as_text(text), args.runs)
    dump_ms = median_ms(lambda: load_and_dump(text), args.runs)
    print(f"~/.claude.json: {len(text) / 1e6:.1f} MB, {args.projects} projects")
    print(f"format-preserving edit (2 entries): {text_ms:.0f} ms")
    print(f"load-and-dump (replaced):            {dump_ms:.0f} ms")
    print(f"ratio: {text_ms / dump_ms:.1f}x")


if __name__ == "__main__":
    main()
