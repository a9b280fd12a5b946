"""Excerpts of memory text (the consolidation review's entry excerpts, the dedup pool's
summaries `memory stage` lists) are cut between words, never inside `2026-11-20` or a number,
and marked `…`; a Chinese one within 240 terminal cells (some 120 characters), not 240
characters (some 480 columns). One helper for both: core/text/excerpts.py."""

from __future__ import annotations

from pathlib import Path

from test_dedup import q, recall
from test_staging import World

from teamlore.core.text.excerpts import EXCERPT_CELLS, excerpt, text_width
from teamlore.memory.consolidation.review import _evidence
from teamlore.memory.consolidation.source import ApprovedEntry, ApprovedSource
from teamlore.memory.store.state_db import open_state_db

CHINESE = (
    "测试环境的 conftest.py 改为先执行 alembic upgrade head 后再加载夹具，夜间任务用时约 3 分钟。"
)
ENGLISH = "The nightly run took about 3 minutes (evidence: turn of 2026-11-20). "


def _cut_with_marker(shown: str, whole: str) -> None:
    assert shown.endswith("…") and text_width(shown) <= EXCERPT_CELLS
    kept = shown[:-1]
    assert " ".join(whole.split()).startswith(kept)
    rest = " ".join(whole.split())[len(kept) :]
    # the cut is between two words: a space, or a Chinese character on either side
    assert rest[0] == " " or not (kept[-1].isascii() and rest[0].isascii()), (kept[-8:], rest[:8])


def test_a_pool_summary_is_cut_between_words_and_marked(home: Path) -> None:
    world = World(open_state_db(home))
    world.approve("nightly-zh", CHINESE * 8)
    world.approve("nightly-en", ENGLISH * 8)
    result = recall(world, q("probe", "alembic upgrade head nightly run evidence"))
    summaries = {item.id: item.summary for item in result.pool}
    _cut_with_marker(summaries["nightly-zh"], CHINESE * 8)
    _cut_with_marker(summaries["nightly-en"], ENGLISH * 8)
    assert text_width(summaries["nightly-zh"]) > EXCERPT_CELLS - 20  # the room is used


def test_a_consolidation_review_excerpt_is_cut_between_words_and_marked() -> None:
    def entry(entry_id: str, body: str) -> ApprovedEntry:
        return ApprovedEntry(entry_id, "", 1, "", "approved", "work_fact", None, 50, "high", body)

    entries = {"zh": entry("zh", CHINESE * 8), "en": entry("en", ENGLISH * 8)}
    source = ApprovedSource(1, "", "", entries, {}, None)
    evidence = {e["evidenceId"]: e["excerpt"] for e in _evidence(source, ["zh", "en", "short"])}
    _cut_with_marker(evidence["zh"], CHINESE * 8)
    _cut_with_marker(evidence["en"], ENGLISH * 8)
    assert evidence["short"] is None


def test_short_text_is_whole_and_a_run_longer_than_the_excerpt_is_cut_on_a_character() -> None:
    assert excerpt("  两行\n文字  ") == "两行 文字"
    url = "https://example.com/" + "a" * 400
    assert excerpt(url) == url[: EXCERPT_CELLS - 1] + "…"
    assert text_width("对账ab") == 6
    chinese = excerpt("对账任务每天凌晨两点运行，失败时重试三次。" * 30)
    assert len(chinese) <= EXCERPT_CELLS // 2 and chinese.endswith("运行…")  # after a clause


def test_a_path_longer_than_the_excerpt_is_cut_after_a_separator() -> None:
    """A path with no space near the cut was cut on a character (`src/compo…`), a name that
    does not exist; it is cut after its last separator in the excerpt's second half."""
    path = "src/" + "/".join(f"components{i:02d}" for i in range(30))
    assert excerpt(path, 100) == path[: path.rfind("/", 0, 99) + 1] + "…"


def test_an_excerpt_of_characters_that_take_no_cell_keeps_to_240_characters() -> None:
    """A text in NFD (`ü` as `u` + U+0308, as macOS pastes it) or holding zero-width spaces took
    fewer cells than characters: its excerpt had 250-360 characters, and the summary of the
    dedup pool (at most 240) failed staging with an uncaught validation error."""
    import unicodedata

    from teamlore.core.text.excerpts import excerpt

    german = unicodedata.normalize("NFD", "Über die Größe der Übergänge müssen wir reden. " * 20)
    spaced = "\u200b".join("word " * 200)
    for text in (german, spaced):
        cut = excerpt(text)
        assert len(cut) <= 240 and cut.endswith("…"), len(cut)
