"""`memory review` without --limit says first how many candidates follow.

At team scale it printed 8,974 lines for 201 candidates with no count anywhere: only the paged
view (`--limit`) said `5 of 201 candidates shown`. The whole queue is still shown (as the docs
and --help say), headed by its count; one candidate alone is headed by itself, as before.
"""

from __future__ import annotations

import sys
from pathlib import Path

from support import teamlore_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "promotion"))
from test_review import TEXT, Flow, candidate

OTHER = "Run the migrations before the fixtures, or the fixtures load into an old schema."


def review(flow: Flow, *args: str) -> str:
    env = {"TEAMLORE_HOME": str(flow.home), "COLUMNS": "80"}
    done = teamlore_cli("memory", "review", *args, cwd=flow.repo, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_whole_queue_is_headed_by_its_count(tmp_path: Path, home: Path) -> None:
    flow = Flow(tmp_path, home)
    flow.quarantine(
        [
            candidate(TEXT, [(TEXT, [flow.turn_ev(1)])]),
            candidate(OTHER, [(OTHER, [flow.turn_ev(1)])]),
        ]
    )
    printed = review(flow)
    assert printed.splitlines()[:3] == [
        "2 candidates awaiting review, every one shown below (`--limit N` shows a page at",
        "  a time).",
        "",
    ]
    assert printed.count("\nCandidate ") == 2
