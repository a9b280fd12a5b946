"""An excerpt of a huge text (a 5 MB command in a tool header) costs what its excerpt costs:
only the characters it may keep are measured in cells, not the whole text first."""

from __future__ import annotations

import pytest

from teamlore.core.text import excerpts
from teamlore.core.text.excerpts import EXCERPT_CELLS, excerpt

ENGLISH = "The nightly run took about 3 minutes (evidence: turn of 2026-11-20). "
CHINESE = (
    "测试环境的 conftest.py 改为先执行 alembic upgrade head 后再加载夹具，夜间任务用时约 3 分钟。"
)


@pytest.mark.parametrize("line", [ENGLISH, CHINESE, "src/app/" * 40])
def test_a_huge_text_is_cut_as_its_opening_is_measuring_only_what_it_may_keep(
    line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = line * (5_000_000 // len(line))
    opening = line * (4 * EXCERPT_CELLS // len(line) + 1)
    expected = excerpt(opening)
    measured = 0
    measure = excerpts.cell_width

    def counted(ch: str) -> int:
        nonlocal measured
        measured += 1
        return measure(ch)

    monkeypatch.setattr(excerpts, "cell_width", counted)
    assert excerpt(huge) == expected
    assert measured < 4 * EXCERPT_CELLS


def test_a_text_that_fits_is_whole_on_one_line() -> None:
    assert excerpt("  two\n words ") == "two words"
