"""Entry ids: readable ASCII slugs, real distinct ids for Chinese (and any other) text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from teamlore.memory.store.slugs import (
    GENERATED_SLUG_MAX_LENGTH,
    content_hash,
    entry_slug,
    is_slug,
    slug_problem,
    unique_entry_slug,
    validate_slug,
)


def test_ascii_text_becomes_dashed_words() -> None:
    assert entry_slug("Don't refactor the auth module!") == "don-t-refactor-the-auth-module"
    assert entry_slug("  CI: run `mobile-e2e` first ") == "ci-run-mobile-e2e-first"


def test_latin_diacritics_fold_without_a_hash() -> None:
    assert entry_slug("Café crème déjà vu") == "cafe-creme-deja-vu"
    assert entry_slug("ＦＵＬＬ width") == "full-width"


def test_long_text_is_cut_at_a_word_boundary_within_sixty() -> None:
    text = (
        "Threadshare memory promotion should be based on a PromotionPlan that binds target "
        "file blob hashes"
    )
    slug = entry_slug(text)
    assert slug == "threadshare-memory-promotion-should-be-based-on-a"
    assert len(slug) <= GENERATED_SLUG_MAX_LENGTH and is_slug(slug)
    assert entry_slug("x" * 80) == "x" * 60


def test_chinese_text_gets_distinct_real_ids() -> None:
    first = entry_slug("别重构旧鉴权模块的 session 中间件")
    second = entry_slug("移动端 v2.3 之前的客户端仍依赖旧行为")
    only_chinese = entry_slug("改动前必须先在预发环境验证")
    other_chinese = entry_slug("发布前检查变更日志")
    assert first == f"session-{content_hash('别重构旧鉴权模块的 session 中间件')}"
    assert second.startswith("v2-3-") and len(second) == len("v2-3-") + 10
    assert only_chinese.startswith("entry-") and other_chinese.startswith("entry-")
    assert len({first, second, only_chinese, other_chinese}) == 4
    assert all(is_slug(s) for s in (first, second, only_chinese, other_chinese))


def test_other_scripts_and_symbols_get_a_hash_too() -> None:
    for text in ("Не трогать модуль авторизации", "認証モジュール", "🎉🎉🎉"):
        slug = entry_slug(text)
        assert is_slug(slug)
        assert slug.endswith(content_hash(text))


def test_hash_ignores_whitespace_layout_only() -> None:
    assert entry_slug("预发  环境\n验证") == entry_slug("预发 环境 验证")
    assert entry_slug("预发环境验证") != entry_slug("预发环境检查")


def test_blank_text_has_no_id() -> None:
    with pytest.raises(ValueError):
        entry_slug(" \n\t")


def test_slug_rules() -> None:
    assert is_slug("a") and is_slug("a-1-b") and is_slug("a" * 128)
    for bad in ("", "A", "a_b", "-a", "a-", "a--b", "a b", "é", "a" * 129):
        assert not is_slug(bad), bad
        assert slug_problem(bad) is not None
    with pytest.raises(ValueError, match="at most 64"):
        validate_slug("a" * 65, max_length=64)


def test_unique_slug_never_reuses_a_taken_id() -> None:
    text = "Run the e2e suite before merging"
    base = entry_slug(text)
    assert unique_entry_slug(text, set()) == base
    hashed = unique_entry_slug(text, {base})
    assert hashed == f"{base}-{content_hash(text)}"
    assert unique_entry_slug(text, {base, hashed}) == f"{hashed}-2"
    chinese = "发布前检查变更日志"
    assert unique_entry_slug(chinese, {entry_slug(chinese)}) == f"{entry_slug(chinese)}-2"


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1).filter(lambda s: s.strip() != ""))
def test_any_text_yields_a_valid_bounded_slug(text: str) -> None:
    slug = entry_slug(text)
    assert is_slug(slug)
    assert len(slug) <= GENERATED_SLUG_MAX_LENGTH
    assert entry_slug(text) == slug


def test_secret_rules_know_the_slug_hash_suffix_length() -> None:
    """core.secrets treats `<words>-<hash suffix>` as an id; it must agree with the slug writer."""
    from teamlore.core.secrets import SLUG_HASH_SUFFIX_LENGTH
    from teamlore.memory.store.slugs import HASH_SUFFIX_LENGTH

    assert SLUG_HASH_SUFFIX_LENGTH == HASH_SUFFIX_LENGTH
