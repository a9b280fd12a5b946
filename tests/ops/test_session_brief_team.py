"""The team part of the SessionStart brief and the lint's limits agree: a doctrine `memory lint`
accepts reaches the session whole with the scene list, in Chinese too (3 bytes a character);
what does not fit is left out at a sentence or a whole scene line, and said so."""

from __future__ import annotations

from pathlib import Path

from support import git
from teamlore.memory.store.documents import (
    DOCTRINE_MAX_CHARS,
    SCENE_SUMMARY_MAX_CHARS,
    Doctrine,
    Scene,
    dump_doctrine,
    dump_scene,
)
from teamlore.memory.store.lint import lint_bytes
from teamlore.ops.integrations.session_brief import (
    BRIEF_MAX_BYTES,
    MAX_SCENES,
    TEAM_MAX_BYTES,
    cap,
    compose_brief,
)

SENTENCE = "对账任务每天凌晨两点运行，失败时先查渠道侧的回调日志再重试。"  # 30 characters


def chinese_repo(tmp_path: Path, doctrine: str, scenes: int) -> Path:
    repo = tmp_path / "repo"
    memory = repo / ".threadshare" / "memory"
    (memory / "scenes").mkdir(parents=True)
    (memory / "entries").mkdir()
    git(repo, "init", "-q")
    (memory / "entries" / "e1.md").write_text("---\nid: e1\n---\nx\n")
    data = dump_doctrine(Doctrine(text=doctrine))
    assert not [f for f in lint_bytes(data, path="doctrine.md", kind="doctrine")]  # lint passes
    (memory / "doctrine.md").write_bytes(data)
    for n in range(scenes):
        scene = Scene(
            name=f"对账场景{n:02d}",
            created="2026-11-01",
            updated="2026-11-02",
            summary=("渠道回调与对账" * 6)[: SCENE_SUMMARY_MAX_CHARS - 2] + f"{n:02d}",
            heat=100 - n,
            body="正文。\n",
        )
        (memory / "scenes" / f"{scene.name}.md").write_bytes(dump_scene(scene))
    return repo


def test_a_chinese_doctrine_the_lint_accepts_comes_whole_with_every_scene(tmp_path: Path) -> None:
    doctrine = (SENTENCE * 40)[: DOCTRINE_MAX_CHARS - 1] + "。"  # 1,200 characters, 3,600 bytes
    repo = chinese_repo(tmp_path, doctrine, MAX_SCENES)
    brief = compose_brief(repo, "claude", tmp_path / "no-state")
    assert doctrine in brief
    assert "truncated" not in brief and "not listed" not in brief
    listed = brief.split("\nScenes:\n", 1)[1].splitlines()
    assert len(listed) == MAX_SCENES and listed[0].startswith("- 对账场景00: ")
    assert len(brief.encode()) <= TEAM_MAX_BYTES <= BRIEF_MAX_BYTES < 10_000


def test_scenes_that_do_not_fit_are_left_out_whole_and_counted(tmp_path: Path) -> None:
    doctrine = (SENTENCE * 40)[: DOCTRINE_MAX_CHARS - 1] + "。"
    repo = chinese_repo(tmp_path, doctrine, MAX_SCENES + 3)
    brief = compose_brief(repo, "claude", tmp_path / "no-state")
    assert doctrine in brief
    *listed, note = brief.split("\nScenes:\n", 1)[1].splitlines()
    assert len(listed) == MAX_SCENES and listed[-1].startswith("- 对账场景14: ")
    assert note == "[teamlore: 3 more scenes not listed; use the memory tools for more]"


def test_a_cut_ends_after_a_whole_sentence_and_says_so() -> None:
    text = "Doctrine:\n" + SENTENCE * 10
    cut = cap(text, 500)
    assert len(cut.encode()) <= 500
    kept, note = cut.split("\n[teamlore: ", 1)
    assert kept.endswith("再重试。") and note.startswith("brief truncated")
