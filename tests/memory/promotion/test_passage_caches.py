"""What a review keeps of the turns it read (memory/promotion/passages.py): a long-running
`teamlore ui` reviewing big turns holds a bounded few megabytes, never each turn's text again in
a cache key, and still computes a turn's passages and their ranking once while they are kept."""

from __future__ import annotations

import gc
import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from teamlore.memory.extraction.selection import SelectedTurn, ToolRow
from teamlore.memory.promotion import passages
from teamlore.memory.promotion.passages import best_support

MIB = 1024 * 1024
STATEMENT = "Run alembic upgrade head before the staging tests"
LINE = "step {i}: the staging run waited on a lock while alembic upgrade head migrated"


def _text(n: int, tag: str, chars: int) -> str:
    """`chars` of text of turn `n`; its words are every turn's but one (the analyzer's own
    bounded caches of words fill once, before what is measured)."""
    lines = [f"turn {n}"]
    size = 0
    while size < chars:
        line = f"{tag} " + LINE.format(i=len(lines))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def _big_turn(n: int) -> SelectedTurn:
    """A turn of about 190 KB: the person's paste, the agent's answer, ten tool outputs."""
    tools = [
        ToolRow(
            seq,
            "shell_command",
            "shell",
            f"pytest tests/test_{n}_{seq}.py",
            None,
            "error",
            1,
            _text(n, f"head-{seq}", 6_500),
            _text(n, f"tail-{seq}", 6_500),
            13_000,
            None,
            True,
        )
        for seq in range(10)
    ]
    return SelectedTurn(
        n, f"session-{n}", 1, "r1", "2026-11-20T10:00:00Z",
        _text(n, "user", 20_000), _text(n, "agent", 40_000), tools,
    )  # fmt: skip


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "state"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text('[embeddings]\nbackend = "off"\n')
    os.chmod(home / "config.toml", 0o600)
    return home


def _counted(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Calls of the real `passages.<name>` (it still computes the answer), counted."""
    real: Callable[..., Any] = getattr(passages, name)
    calls = [0]

    def counting(*args: Any) -> Any:
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(passages, name, counting)
    return calls


def test_reviewing_many_big_turns_keeps_a_bounded_few_megabytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _home(tmp_path)
    assert (
        180_000
        < len(_big_turn(0).user_text + _big_turn(0).assistant_text)
        + sum(len(t.result_head or "") + len(t.result_tail or "") for t in _big_turn(0).tools)
        < 200_000
    )
    cut = _counted(monkeypatch, "_turn_passages")
    ranked = _counted(monkeypatch, "_ranked")
    turns = 48
    best_support(STATEMENT, _big_turn(-1), home)  # the analyzer's words, the config: read once
    gc.collect()
    tracemalloc.start()
    try:
        for n in range(turns):
            turn = _big_turn(n)
            support = best_support(STATEMENT, turn, home)
            assert support is not None and support.matched_by == ("lexical",)
            del turn, support
        gc.collect()
        retained, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # about 0.6 MB a turn was held before (28 MiB here; 220 MB for 512 turns): the turn's text
    # in the key, its passages, their texts again in the ranking's key
    assert retained < 12 * MIB, f"{retained / MIB:.1f} MiB retained after {turns} big turns"
    assert cut[0] == turns + 1 and ranked[0] == turns + 1

    # the review page reloads: the turns it just read are still kept, nothing is computed again
    again = [best_support(STATEMENT, _big_turn(n), home) for n in range(turns - 3, turns)]
    assert cut[0] == turns + 1 and ranked[0] == turns + 1
    # and what is kept is what computing it again gives
    passages.clear_caches()
    recomputed = [best_support(STATEMENT, _big_turn(n), home) for n in range(turns - 3, turns)]
    assert cut[0] == turns + 4 and ranked[0] == turns + 4
    assert again == recomputed


def test_a_turn_that_differs_in_any_field_is_computed_for_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _home(tmp_path)
    cut = _counted(monkeypatch, "_turn_passages")
    first = _big_turn(1000)
    best_support(STATEMENT, first, home)
    best_support(STATEMENT, _big_turn(1000), home)
    assert cut[0] == 1
    changed = _big_turn(1000)
    tool = changed.tools[3]
    changed.tools[3] = ToolRow(
        tool.seq, tool.name, tool.family, tool.command, tool.input, tool.status, 2,
        tool.result_head, tool.result_tail, tool.result_bytes, None, True,
    )  # fmt: skip
    shown = passages.turn_passages(changed)
    assert cut[0] == 2
    assert shown[sum(1 for p in shown if p.part != "tool" or p.tool < 4)].header == (
        "#4 shell_command pytest tests/test_1000_3.py (error, exit 2)"
    )


def test_a_vector_matrix_is_weighed_once() -> None:
    """`sys.getsizeof` already holds an owning array's data: adding `nbytes` counted it twice,
    and the vector caches held half what their budgets say."""
    import numpy as np

    from teamlore.memory.promotion.passages import _array_weight

    matrix = np.zeros((30, 384), np.float32)
    assert matrix.nbytes <= _array_weight(matrix) < 2 * matrix.nbytes
