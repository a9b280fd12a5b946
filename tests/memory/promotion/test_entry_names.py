"""The id (file name) of a new entry whose lesson is in Chinese: named from the lesson and its
statements, never from the `Statements:` list and evidence notes teamlore appends, which every
entry of one day shares; a Chinese-only lesson is named by its scene or kind and its hash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from teamlore.memory.promotion.rendered import RenderContext
from teamlore.memory.promotion.rendering import render_entry_candidate
from teamlore.memory.promotion.review import CandidateView, ResolvedEvidence, StatementView
from teamlore.memory.store.slugs import HASH_SUFFIX_LENGTH, entry_slug, is_slug

ASSESSMENT = {
    "statementTextDigest": "",
    "citationsDigest": "",
    "provenanceStrength": "unknown",
    "claimSupport": "human-confirmed",
    "limitations": [],
}


def _statement(number: int, text: str, day: str) -> StatementView:
    turn = ResolvedEvidence(f"ev-{number}", "", "turn", None, (), occurred=day)
    return StatementView(f"st-{number}", text, "", [turn], "", ASSESSMENT, None)


def _entry_id(repo: Path, content: str, statements: list[str], **payload: Any) -> str:
    """The id promotion gives a candidate whose statements cite two turns of one day (so its
    body lists them with `(evidence: turn of 2026-11-20)`)."""
    view = CandidateView(
        candidate_id="cand-1",
        kind="entry",
        status="quarantined",
        adjudication="store",
        revision=1,
        content_digest="",
        payload={"content": content, "type": "work_fact", **payload},
        statements=[_statement(n, t, "2026-11-20") for n, t in enumerate(statements)],
    )
    [file] = render_entry_candidate(view, RenderContext(repo, None, set()))
    assert "Statements:" in file.content.decode()  # the boilerplate is in the body
    assert is_slug(file.entry_id) and len(file.entry_id) <= 60
    return file.entry_id


def test_chinese_entries_are_never_named_by_teamlores_own_evidence_notes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".threadshare/memory/entries").mkdir(parents=True)
    nightly = _entry_id(
        repo, "对账任务每天凌晨两点运行，失败时会重试三次。", ["对账任务两点运行", "失败重试三次"]
    )
    deploy = _entry_id(
        repo,
        "部署前先执行 alembic upgrade head，再改 conftest.py。",
        ["部署前先迁移", "测试夹具随后修改"],
        scene="release-readiness",
    )
    scened = _entry_id(
        repo, "发布前检查变更日志。", ["发布前检查", "变更日志要写"], scene="release-readiness"
    )
    for entry_id in (nightly, deploy, scened):
        assert not {"statements", "evidence", "turn", "2026"} & set(entry_id.split("-"))
    # no ASCII word at all: the kind, else the scene, then the content hash
    assert nightly.startswith("fact-") and len(nightly) == len("fact-") + HASH_SUFFIX_LENGTH
    assert scened.startswith("release-readiness-")
    # the commands and file names a Chinese lesson mentions name it, each word once
    assert deploy.startswith("alembic-upgrade-head-conftest-py-")


def test_a_random_token_in_a_chinese_lesson_never_names_it() -> None:
    """A password a secret rule missed is no name for the file: a Chinese text's ASCII run
    that reads as a random token is left out (a lesson whose password the rule catches is
    blocked before any file is named)."""
    entry_id = entry_slug("预发库那个值 zh8kp2qlm9vx，放在 CI 的配置里，每月换。")
    assert "zh8kp2qlm9vx" not in entry_id
    assert entry_id.startswith("ci-")


def test_mixed_text_takes_each_word_once(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".threadshare/memory/entries").mkdir(parents=True)
    entry_id = _entry_id(
        repo,
        "镜像从 python:3.12-slim 换成 alpine；python 依赖在 alpine 上要重新编译。",
        ["换成 alpine", "需要重新编译"],
    )
    assert entry_id.startswith("python-3-12-slim-alpine-")
    assert entry_id.count("python") == 1 and entry_id.count("alpine") == 1


def _english_id(repo: Path, content: str, statements: list[str], days: list[str]) -> str:
    """The id promotion gives a new entry whose statements cite one turn each, of `days`."""
    view = CandidateView(
        candidate_id="cand-en",
        kind="entry",
        status="quarantined",
        adjudication="store",
        revision=1,
        content_digest="",
        payload={"content": content, "type": "work_fact"},
        statements=[
            _statement(n, t, d) for n, (t, d) in enumerate(zip(statements, days, strict=True))
        ],
    )
    [file] = render_entry_candidate(view, RenderContext(repo, None, set()))
    return file.entry_id


def test_an_english_entry_is_named_by_its_own_words_alone(tmp_path: Path) -> None:
    """An English lesson's id is what it always was: the lesson's words, never its statements'
    (which repeat the lesson or say more) nor teamlore's `Statements:` list."""
    repo = tmp_path / "repo"
    (repo / ".threadshare/memory/entries").mkdir(parents=True)
    lesson = "Run alembic upgrade head before tests"
    assert _english_id(repo, lesson, [lesson], ["2026-11-20"]) == (
        "run-alembic-upgrade-head-before-tests"
    )
    uv = ["The team uses uv sync, never pip install"]
    assert _english_id(repo, "Use uv", uv, ["2026-11-20"]) == "use-uv"
    # two claim units: the body lists them after `Statements:`, the id does not
    both = [*uv, "CI runs uv sync --frozen"]
    assert _english_id(repo, "Use uv", both, ["2026-11-20", "2026-11-21"]) == "use-uv"


def test_an_english_id_never_repeats_a_word() -> None:
    assert entry_slug("Pin the version; pin it in uv.lock") == "pin-the-version-it-in-uv-lock"
    assert entry_slug("Use the fixture, not the mock") == "use-the-fixture-not-mock"


def test_a_lesson_with_no_ascii_word_is_named_by_its_statements_commands(tmp_path: Path) -> None:
    """The statements name an entry only when the lesson has no ASCII word to name it by."""
    repo = tmp_path / "repo"
    (repo / ".threadshare/memory/entries").mkdir(parents=True)
    entry_id = _english_id(
        repo, "部署前先迁移数据库。", ["先执行 alembic upgrade head"], ["2026-11-20"]
    )
    assert entry_id.startswith("alembic-upgrade-head-")
    assert len(entry_id) == len("alembic-upgrade-head-") + HASH_SUFFIX_LENGTH
