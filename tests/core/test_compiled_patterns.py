"""The analyzer's Unicode patterns, compiled once per state dir (`compile_once`, core/analyzer.py):
the stored program matches exactly what `re.compile` gives, and a later process compiles no
character class."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from support import shared_fixtures
from teamlore.core import analyzer
from teamlore.core.analyzer import PATTERN_CACHE_DIR, compile_once
from teamlore.models import glosses

PATTERNS = [
    analyzer._TOKEN,
    f"[{analyzer._CJK}]+",
    rf"({analyzer._TOKEN})\*",
    glosses._HAN,
]


REAL_CHARS = 200_000  # of each session file


@pytest.fixture()
def state(home: Path) -> Path:
    home.mkdir()
    return home


def _matches(pattern: re.Pattern[str], text: str) -> list[tuple[int, int, tuple[str | None, ...]]]:
    return [(m.start(), m.end(), m.groups()) for m in pattern.finditer(text)]


def _real_texts() -> Iterator[str]:
    for path in sorted(shared_fixtures("sessions").rglob("*.jsonl")):
        yield path.read_text(encoding="utf-8", errors="replace")[:REAL_CHARS]


def _derived_and_loaded(pattern: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    return compile_once(pattern), compile_once(pattern)


# the prefix-word pattern backtracks over a whole file's long tokens: random text checks it
@pytest.mark.parametrize(
    "pattern", PATTERNS[:2] + PATTERNS[3:], ids=["token", "cjk run", "han run"]
)
def test_the_stored_program_matches_what_re_compile_gives_on_real_sessions(
    state: Path, pattern: str
) -> None:
    expected = re.compile(pattern)
    derived, loaded = _derived_and_loaded(pattern)
    assert list((state / PATTERN_CACHE_DIR).glob("pattern-*.marshal"))
    for text in _real_texts():
        assert _matches(derived, text) == _matches(loaded, text) == _matches(expected, text)


_MIXED = st.text(
    alphabet=st.one_of(
        st.characters(),
        st.sampled_from("_-./* \n中文発表한글ｶﾀabcXYZ09éß"),
        st.characters(min_codepoint=0x1100, max_codepoint=0x11FF),
        st.characters(min_codepoint=0x3400, max_codepoint=0xFFFF),
        st.characters(min_codepoint=0x20000, max_codepoint=0x31350),
    ),
    max_size=60,
)


@given(_MIXED)
def test_the_stored_program_matches_what_re_compile_gives_on_random_text(text: str) -> None:
    for pattern in PATTERNS:
        # the state dir of the session that ran the real-sessions test, or none: either way
        assert _matches(compile_once(pattern), text) == _matches(re.compile(pattern), text)


def _compiling_a_class_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a character class was compiled")

    re.purge()
    monkeypatch.setattr("re._compiler._optimize_charset", refuse)


def _clear_compiled() -> None:
    for compiled in (analyzer._token, analyzer._cjk_run, glosses._han_run):
        compiled.cache_clear()


def test_a_later_process_tokenizes_chinese_text_without_compiling_a_class(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for pattern in PATTERNS:
        compile_once(pattern)  # the first process derives and stores the programs
    _clear_compiled()
    _compiling_a_class_fails(monkeypatch)
    try:
        assert analyzer.tokens("发布任务 release") == [
            "发",
            "布",
            "任",
            "务",
            "发布",
            "布任",
            "任务",
            "releas",
        ]
        assert glosses._han_run().findall("发布 release") == ["发布"]
    finally:
        _clear_compiled()


def test_a_damaged_copy_is_derived_again(state: Path) -> None:
    compile_once(analyzer._TOKEN)
    (stored,) = (state / PATTERN_CACHE_DIR).glob("pattern-*.marshal")
    stored.write_bytes(b"\x00not marshal")
    assert _matches(compile_once(analyzer._TOKEN), "中文 abc") == [(0, 2, ()), (3, 6, ())]
    assert stored.read_bytes() != b"\x00not marshal"


def test_a_missing_state_dir_is_not_created(home: Path) -> None:
    assert _matches(compile_once(analyzer._TOKEN), "中文") == [(0, 2, ())]
    assert not home.exists()
