"""Chinese words for English query words: CC-CEDICT read backwards, derived once per cache."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from teamlore.models import reverse_glosses
from teamlore.models.reverse_glosses import chinese_words


@pytest.fixture(autouse=True)
def _fresh_process() -> None:
    reverse_glosses._derived = None


def test_an_english_word_maps_to_the_chinese_words_whose_first_sense_it_is(
    tmp_path: Path,
) -> None:
    found = chinese_words(["contributor", "threshold", "nonexistentword"], tmp_path / "models")
    assert {"貢獻者", "贡献者"} <= set(found["contributor"])
    assert {"閾值", "阈值"} <= set(found["threshold"])
    assert "nonexistentword" not in found


def test_words_are_compared_by_their_stem_as_the_index_compares_them(tmp_path: Path) -> None:
    # the first sense of 實現 is "to implement", of 貢獻者 "contributor": a query holds
    # "implementing" and "contributors", which the analyzer stems as it stems the senses
    found = chinese_words(["implement", "contributor"], tmp_path / "models")
    assert "实现" in found["implement"]


def test_a_developer_sense_answers_its_english_words(tmp_path: Path) -> None:
    # CC-CEDICT has no Chinese word whose first sense is "incognito" or "submission", and
    # "save" is 拯救 ("rescue") or 节省 ("economize"): the developer senses read backwards
    found = chinese_words(["incognito", "submission", "sav", "deployment"], tmp_path / "models")
    assert {"無痕", "无痕"} <= set(found["incognito"])
    assert "提交" in found["submission"]
    assert "保存" in found["sav"]
    assert "部署" in found["deployment"]


def test_a_developer_word_answers_the_english_word_of_its_later_sense(tmp_path: Path) -> None:
    # CC-CEDICT's first senses of 門檻, 分數, 影響 and 一次性 are "doorstep", "(exam) grade",
    # "influence" and "one-off"; a developer writing 門檻 or 分數 means a threshold or a score,
    # and those later senses are put first (docs/hybrid-search.md, round 12)
    # (the words as query terms: "score" stems to "scor", "one-time" is joined and stemmed)
    found = chinese_words(["threshold", "scor", "impact", "onetim"], tmp_path / "models")
    assert {"門檻", "门槛"} <= set(found["threshold"])
    assert {"分數", "分数"} <= set(found["scor"])
    assert {"影響", "影响"} <= set(found["impact"])
    assert "一次性" in found["onetim"]


def test_an_english_word_no_dictionary_sense_answers_has_its_developer_word(
    tmp_path: Path,
) -> None:
    # no first sense in CC-CEDICT is "status", "symlink" or "dedup" (狀態 is "state"; 符號連結
    # and 去重 are not in it): the developer senses give each the word developers write
    found = chinese_words(["status", "symlink", "dedup"], tmp_path / "models")
    assert {"狀態", "状态"} <= set(found["status"])
    assert {"符號連結", "符号链接"} <= set(found["symlink"])
    assert "去重" in found["dedup"]


def test_the_table_is_derived_once_into_the_model_cache_and_read_from_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "models"
    first = chinese_words(["contributor"], cache)
    [cached] = cache.glob("reverse-glosses-*.sqlite3")
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600
    reverse_glosses._derived = None

    def no_derive() -> dict[str, str]:
        raise AssertionError("derived again")

    monkeypatch.setattr(reverse_glosses, "derive", no_derive)
    assert chinese_words(["contributor"], cache) == first


def test_a_damaged_copy_is_derived_again(tmp_path: Path) -> None:
    cache = tmp_path / "models"
    first = chinese_words(["contributor"], cache)
    [cached] = cache.glob("reverse-glosses-*.sqlite3")
    cached.write_bytes(b"not a database" * 100)
    reverse_glosses._derived = None
    assert chinese_words(["contributor"], cache) == first


def test_without_a_state_dir_nothing_is_written(tmp_path: Path) -> None:
    missing = tmp_path / "no-state" / "models"
    assert chinese_words(["contributor"], missing)
    assert not missing.parent.exists()


def test_a_hyphenated_sense_answers_the_hyphenated_word_as_the_analyzer_joins_it(
    tmp_path: Path,
) -> None:
    # 一次性 is "one-off": a query term `one-off` is searched as `oneoff` (its parts joined)
    assert "一次性" in chinese_words(["oneoff"], tmp_path / "models")["oneoff"]


def test_a_copy_of_another_format_or_dictionary_is_replaced(tmp_path: Path) -> None:
    cache = tmp_path / "models"
    cache.mkdir()
    (cache / "reverse-glosses-0-00000000.sqlite3").write_bytes(b"old")
    chinese_words(["contributor"], cache)
    assert [p.name.startswith("reverse-glosses-0-") for p in cache.iterdir()] == [False]
