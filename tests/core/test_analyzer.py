from __future__ import annotations

import re
import sqlite3
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from teamlore.core import analyzer
from teamlore.core.analyzer import (
    STOPWORDS,
    analyze,
    fts_query,
    parse_query,
    snippet,
    stem,
    tokens,
)


def test_identifiers_are_split_and_kept_whole() -> None:
    # the whole identifier and its parts are stemmed like any word
    assert tokens("parseLine") == ["parselin", "pars", "lin"]
    assert tokens("snake_case_name") == ["snakecasenam", "snak", "cas", "nam"]
    assert tokens("src/core/db.py")[:2] == ["srccoredbpy", "src"]
    assert tokens("HTTPServer") == ["httpserver", "http", "server"]


def test_nfkc_and_case_folding() -> None:
    assert tokens("ＡＢＣ École") == ["abc", "école"]


def test_cjk_runs_become_unigrams_and_bigrams() -> None:
    assert tokens("数据库") == ["数", "据", "库", "数据", "据库"]
    assert tokens("修复 bug") == ["修", "复", "修复", "bug"]


def test_long_noise_tokens_are_dropped() -> None:
    assert tokens("x" * 400) == []


def _index(docs: list[str]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE f USING fts5(body, tokenize='unicode61 remove_diacritics 0')"
    )
    conn.executemany(
        "INSERT INTO f(rowid, body) VALUES (?, ?)", [(i, analyze(d)) for i, d in enumerate(docs, 1)]
    )
    return conn


def _hits(conn: sqlite3.Connection, query: str, mode: str = "all") -> list[int]:
    match = fts_query(query, mode=mode)
    return [
        r[0] for r in conn.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY rank", (match,))
    ]


def test_chinese_queries_of_one_and_two_characters_match() -> None:
    conn = _index(["修复了数据库连接池泄漏", "release failed on CI", "数据迁移脚本"])
    assert _hits(conn, "库") == [1]
    assert sorted(_hits(conn, "数据")) == [1, 3]
    assert _hits(conn, "连接池") == [1]
    assert _hits(conn, "迁移数据") == []  # all bigrams must occur


def test_identifier_query_meets_split_and_joined_forms() -> None:
    conn = _index(["call parse_line here", "the parseLine helper", "parse the next line"])
    assert sorted(_hits(conn, "parse_line")) == [1, 2, 3]
    assert _hits(conn, "parseline") == [1, 2]


def test_any_mode_ranks_overlap() -> None:
    conn = _index(["alpha beta gamma", "alpha", "delta"])
    assert _hits(conn, "alpha beta", mode="any")[0] == 1


@pytest.mark.parametrize(
    ("forms", "stemmed"),
    [
        (["test", "tests", "tested", "testing"], "test"),
        (["prompt", "prompts", "prompted"], "prompt"),
        (["fail", "fails", "failed", "failing"], "fail"),
        (["create", "creates", "created", "creating"], "creat"),
        (["stop", "stops", "stopped", "stopping"], "stop"),
        (["copy", "copies", "copied"], "copy"),
        (["fix", "fixes", "fixed"], "fix"),
        (["class", "classes"], "class"),
        (["status", "statuses"], "status"),
    ],
)
def test_light_stemming_makes_word_forms_meet(forms: list[str], stemmed: str) -> None:
    assert {stem(f) for f in forms} == {stemmed}


@pytest.mark.parametrize("word", ["need", "string", "thing", "bus", "this", "add", "v2", "é"])
def test_stemming_leaves_short_and_non_inflected_words_alone(word: str) -> None:
    assert stem(word) == word


def test_index_and_query_stem_alike() -> None:
    conn = _index(["the prompts were tested", "a prompt for the test", "nothing here"])
    assert sorted(_hits(conn, "prompt tests")) == [1, 2]
    assert sorted(_hits(conn, "Tested Prompting")) == [1, 2]


def test_stopwords_are_not_search_terms_unless_nothing_else_is_left() -> None:
    assert [t.parts for t in parse_query("when did the release fail on CI").terms] == [
        ("releas",),
        ("fail",),
        ("ci",),
    ]
    assert [t.parts for t in parse_query("the who").terms] == [("the",), ("who",)]
    assert {"the", "when", "did", "on", "a"} <= STOPWORDS


def test_quoted_words_match_as_a_phrase() -> None:
    conn = _index(["flaky export test failed", "export the flaky test", "a test"])
    assert _hits(conn, '"flaky export test"') == [1]
    assert sorted(_hits(conn, "flaky export test")) == [1, 2]
    # stopwords inside a phrase still count: the index keeps them
    conn = _index(["to be or not to be", "be quick"])
    assert _hits(conn, '"not to be"') == [1]


def test_a_quoted_chinese_word_matches_inside_a_longer_run() -> None:
    # the index holds a run's unigrams, then its bigrams: the phrase is the word's bigrams, which
    # follow one another wherever the word stands in a run (before, only a run that was the
    # phrase and nothing else matched)
    conn = _index(["用无痕视窗打开", "安装冒烟通过", "视窗和无痕分开写", "冒烟"])
    assert _hits(conn, '"无痕视窗"') == [1]
    assert sorted(_hits(conn, '"冒烟"')) == [2, 4]
    assert sorted(_hits(conn, "无痕视窗")) == [1]  # unquoted: every bigram, anywhere
    assert _hits(conn, '"视窗无痕"') == []
    query = parse_query('"无痕视窗"')
    assert [t.parts for t in query.terms] == [("无痕", "痕视", "视窗")]
    assert query.coverage(analyze("请用无痕视窗打开")) == 1


def test_a_trailing_star_is_a_prefix() -> None:
    conn = _index(["run the migration now", "migrate later", "mild weather"])
    assert sorted(_hits(conn, "migrat*")) == [1, 2]
    assert _hits(conn, "migrati") == []
    conn = _index(["call parse_line here", "the parseLength helper", "other"])
    assert sorted(_hits(conn, "parse_l*")) == [1, 2]


def test_coverage_counts_the_terms_a_text_holds() -> None:
    query = parse_query('release job failed "flaky export" 数据')
    assert query.coverage(analyze("The release job failed: flaky export; 数据库")) == 5
    assert query.coverage(analyze("export flaky release")) == 1
    assert query.coverage(analyze("jobs failing")) == 2


def test_query_with_no_terms_is_empty() -> None:
    assert fts_query("  ,.;  ") == ""


@given(st.text(max_size=200))
def test_every_query_is_valid_fts5(text: str) -> None:
    conn = _index(["anything"])
    match = fts_query(text)
    if match:
        conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (match,)).fetchall()
    for m in (fts_query(text, mode="any"), parse_query(text).match_any()):
        if m:
            conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (m,)).fetchall()


@given(st.text(alphabet='ab "*_-.数据 ', max_size=40))
def test_quotes_stars_and_separators_always_give_valid_fts5(text: str) -> None:
    conn = _index(["a b", "数据 ab"])
    query = parse_query(text)
    for m in (query.match_all(), query.match_any()):
        if m:
            conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (m,)).fetchall()


@given(st.text(max_size=80), st.text(max_size=80))
def test_lines_are_analyzed_independently(first: str, second: str) -> None:
    assert tokens(first + "\n" + second) == tokens(first) + tokens(second)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=120))
def test_ascii_fast_path_matches_the_general_path(text: str) -> None:
    # the same ASCII text seen through the non-ASCII path (a trailing non-ASCII line break
    # character forces it) must give the same tokens
    assert tokens(text.replace("\n", " ") + " é") == [*tokens(text.replace("\n", " ")), "é"]


_PIECES = [*"abcXYZ019_-./ \n\t", "Parse", "line", "ÉTÉ", "ﬁle", "中文", "测试"]
_PIECES += ["か", "한", "→", "😀"]
_ALPHABET = st.sampled_from(_PIECES)


@given(st.lists(_ALPHABET, max_size=60).map("".join))
def test_analyze_is_exactly_the_tokens_joined(text: str) -> None:
    # analyze() takes a faster route (cached per-word output, no per-token Python loop) than
    # tokens(); the FTS index depends on both giving the same document form
    assert analyze(text) == " ".join(tokens(text))


@given(
    st.text(
        alphabet=st.one_of(st.characters(max_codepoint=127), st.sampled_from(["é", "中", "→"])),
        max_size=120,
    )
)
def test_analyze_splits_ascii_at_every_non_token_character_as_the_pattern_does(text: str) -> None:
    # analyze() cuts ASCII stretches into chunks at every character outside [A-Za-z0-9_-./]
    # (translate + split) instead of running the token pattern over them
    assert analyze(text) == " ".join(tokens(text))


# characters NFKC turns into ASCII gaps, spaces or letters, or composes with the character before
# (`=` + U+0338 is `≠`), whitespace outside ASCII, a lone surrogate, a combining mark
_NFKC_EDGES = ["\uff0f", "\uff08", "\u3000", "\u00a0", "\u2028", "\u0338", "\u0301", "\u2122"]
_NFKC_EDGES += ["\u2460", "\ufb01", "\uff21", "\ud800", "\x1e", "\x00", "=", "e", "中", "→"]


@given(st.text(alphabet=st.one_of(st.characters(max_codepoint=127), st.sampled_from(_NFKC_EDGES))))
def test_analyze_cuts_the_utf8_bytes_at_ascii_gaps_as_the_pattern_does(text: str) -> None:
    # analyze() normalizes a non-ASCII text whole and cuts its UTF-8 bytes at every ASCII
    # character outside [A-Za-z0-9_-./] (bytes translate + split), then analyzes each chunk
    assert analyze(text) == " ".join(tokens(text))


_CJK_OR_NOT = st.text(
    alphabet=st.sampled_from([*"aZ9_-./ é\n", "中", "文", "か", "한", "ㄱ", "\u3400", "\U00020001"])
)


@given(_CJK_OR_NOT)
def test_the_token_pattern_is_the_lookahead_form_it_replaced(text: str) -> None:
    from teamlore.core import analyzer

    cjk = analyzer._CJK
    letter = rf"(?:(?![{cjk}])[^\W_])"
    reference = re.compile(rf"[{cjk}]+|{letter}+(?:[_\-./]{letter}+)*")
    assert analyzer._token().findall(text) == reference.findall(text)


def test_adjacent_non_ascii_lines_are_analyzed_as_one_run() -> None:
    # analyze() sends a run of adjacent lines holding non-ASCII characters through NFKC and the
    # general pattern at once; NFKC never joins or splits across a newline, so it is the same
    text = "plain start\nÉTÉ ﬁle\n中文 parse_line\n😀 done\nascii_only again\nmore é\nend"
    assert analyze(text) == " ".join(tokens(text))
    assert analyze("ﬁle\nﬁle") == analyze("file file")


@pytest.mark.parametrize(
    "query",
    ["parselines", "parse_lines", "copies", "failed tests", "ERR_MODULE", "zebra"],
)
def test_a_long_tool_output_snippet_is_the_one_the_word_by_word_scan_cuts(
    query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long ASCII text is searched for its first match from where the query tokens' first
    letters occur (docs/sessions.md, "Passages"); it finds the word the slow scan finds: stems
    (`copies` → `copy`), an identifier's whole typed as one word, parts, and nothing at all."""
    filler = "checked the layout and formatted files; " * 12
    text = (
        filler
        + "called parse_lines from the reader, copied copies, ERR_MODULE_NOT_FOUND then 3 failed"
        + " tests\n"
        + filler
        + "parseLines again"
    )
    highlight = parse_query(query).highlight_tokens()
    fast = snippet(text, highlight)
    monkeypatch.setattr(analyzer, "_SCAN_CHARS", len(text))  # word by word
    assert fast == snippet(text, highlight)
    assert fast.startswith("checked") == (query == "zebra")  # no match: the text's start


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=120))
def test_in_ascii_the_ascii_pattern_finds_what_the_token_pattern_does(text: str) -> None:
    from teamlore.core import analyzer

    assert analyzer._ASCII_TOKEN.findall(text) == analyzer._token().findall(text)


def test_an_ascii_query_and_snippet_compile_no_cjk_pattern() -> None:
    # compiling the CJK classes walks every code point of their ranges: ~5 ms of a short CLI
    # process that searches in English (docs/architecture.md, "A short CLI process")
    probe = (
        "from teamlore.core import analyzer\n"
        "from teamlore.models import glosses\n"
        "q = analyzer.parse_query('release_job \"ship it\" parse*')\n"
        "analyzer.snippet('We ship the release job today. ' * 20, q.highlight_tokens())\n"
        "assert not glosses.has_chinese('release job')\n"
        "print([f.cache_info().currsize for f in (analyzer._token, analyzer._cjk_run, "
        "glosses._han_run)])\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[0, 0, 0]"


_SYLLABLES = [c + v for c in "bcdfhjkmnpstwy" for v in "aeiouy"]
_ENDINGS = ["", "s", "es", "ies", "ied", "ed", "ing", "e", "sses", "ches", "eed", "y"]


@st.composite
def ascii_words(draw: st.DrawFn) -> str:
    """Words and identifiers every stem rule and split applies to, stopwords among their
    stems (`whies` → `why` + `e`)."""
    stems = st.one_of(
        st.lists(st.sampled_from(_SYLLABLES), min_size=1, max_size=3).map("".join),
        st.sampled_from(sorted(STOPWORDS)),
    )
    parts = draw(st.lists(st.tuples(stems, st.sampled_from(_ENDINGS)), min_size=1, max_size=3))
    words = [stem + ending for stem, ending in parts]
    separator = draw(st.sampled_from(["_", "-", ".", "/", ""]))
    if separator == "":
        words = [w.capitalize() if i else w for i, w in enumerate(words)]
    return separator.join(words) + draw(st.sampled_from(["", "2", "V3", "S"]))


@given(ascii_words())
def test_a_word_never_rules_out_its_own_tokens(word: str) -> None:
    # a snippet skips analyzing a text that cannot hold a query token: never one that does
    for token in tokens(word):
        assert analyzer._may_hold(f"a {word} b", frozenset([token])), token


def test_a_snippet_of_a_text_holding_no_query_token_analyzes_none_of_its_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # most of a hybrid page: documents found by meaning alone (docs/hybrid-search.md)
    text = "Rotate the signing secret before the canary deploy; mobile clients cache it. " * 3
    analyzed: list[str] = []
    monkeypatch.setattr(analyzer, "tokens", lambda word: analyzed.append(word) or [])
    found = snippet(text, parse_query("flaky retries").highlight_tokens())
    assert found == snippet(text, frozenset()) and found.startswith("Rotate the signing secret")
    assert analyzed == []


def test_a_term_with_forms_in_the_other_script_matches_any_of_them() -> None:
    # 无痕 typed in Simplified, 無痕 written in Traditional: one term, either form
    term = analyzer.QueryTerm("word", "", ("无痕",), (("無痕",),))
    assert term.expr() == '("无痕" OR "無痕")'
    assert term.found_in(f" {analyze('我用無痕可以看到')} ")
    assert term.found_in(f" {analyze('无痕模式')} ")
    assert not term.found_in(f" {analyze('痕迹')} ")
    query = analyzer.Query((term,))
    assert query.coverage(analyze("我用無痕可以看到")) == 1
    assert query.coverage_bound("我用無痕可以看到") == 1
    assert "無痕" in query.highlight_tokens()
    # a longer word's form is every bigram of it, as the word itself
    longer = analyzer.QueryTerm("word", "", ("数据", "据库"), (("數據", "據庫"),))
    assert longer.expr() == '(("数据" AND "据库") OR ("數據" AND "據庫"))'
