"""The passage that supports a statement (memory/promotion/passages.py) on the real rave-era
first turn (94 tool calls): time to rank its passages, words only vs words + meaning, per
statement, and the ratio. Prints figures; asserts nothing. Needs ../shared/fixtures.

    PYTHONPATH=src python bench/bench_review_passages.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> None:
    from support import RAVE_ERA_STATEMENTS, rave_era_repository
    from teamlore.memory.extraction.selection import load_turns
    from teamlore.memory.promotion import passages
    from teamlore.ops.registry import load_operations
    from teamlore.repo.binding import resolve_repository
    from teamlore.sessions.index_db import open_index

    load_operations()
    root = Path(tempfile.mkdtemp())
    home = root / "state"
    repo = rave_era_repository(root, home)
    identity = resolve_repository(repo, home=home)
    conn = open_index(home)
    key = conn.execute("SELECT session_key FROM sessions").fetchone()[0]
    [turn] = load_turns(conn, identity, key, [1])
    print(f"turn 1: {len(turn.tools)} tool calls, {len(passages.turn_passages(turn))} passages")
    passages.best_support("warm up the model", turn, home)
    for name, text in RAVE_ERA_STATEMENTS.items():
        runs = 5
        start = time.perf_counter()
        for _ in range(runs):
            both = passages.best_support(text, turn, home)
        hybrid = (time.perf_counter() - start) / runs
        with mock.patch.object(passages, "_vector", lambda *a: []):
            start = time.perf_counter()
            for _ in range(runs):
                words = passages.best_support(text, turn, home)
            lexical = (time.perf_counter() - start) / runs
        assert both and words
        print(
            f"{name}: words+meaning {hybrid * 1000:.0f} ms (tool #{both.passage.tool}), "
            f"words only {lexical * 1000:.0f} ms (tool #{words.passage.tool}), "
            f"ratio {hybrid / lexical:.1f}x"
        )


if __name__ == "__main__":
    main()
