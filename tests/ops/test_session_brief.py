"""The SessionStart brief: personal memory for the session's folder, plus the team's doctrine
and scenes when the repository has team memory but no assembled block; bounded in size."""

from __future__ import annotations

import os
from pathlib import Path

from support import git
from teamlore.memory.store.documents import Doctrine, Scene, dump_doctrine, dump_scene
from teamlore.ops.integrations.session_brief import BRIEF_MAX_BYTES, compose_brief

PROFILE = "# Profile\n\n## Work\nThe user writes Rust at work.\n"


def repo_with_team_memory(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    memory = repo / ".threadshare" / "memory"
    (memory / "scenes").mkdir(parents=True)
    (memory / "entries").mkdir()
    git(repo, "init", "-q")
    (memory / "entries" / "e1.md").write_text("---\nid: e1\n---\nx\n")
    (memory / "doctrine.md").write_bytes(dump_doctrine(Doctrine(text="Never skip the tests.\n")))
    for name, heat in (("release", 3), ("billing", 9)):
        scene = Scene(
            name=name,
            created="2026-11-01",
            updated="2026-11-02",
            summary=f"{name} summary",
            heat=heat,
            body="Body.\n",
        )
        (memory / "scenes" / f"{name}.md").write_bytes(dump_scene(scene))
    return repo


def personal_home(tmp_path: Path, profile: str = PROFILE) -> Path:
    home = tmp_path / "state"
    (home / "personal").mkdir(parents=True, mode=0o700)
    (home / "personal" / "profile.md").write_text(profile)
    return home


def test_brief_has_doctrine_scenes_by_heat_and_personal_memory(tmp_path: Path) -> None:
    repo = repo_with_team_memory(tmp_path)
    brief = compose_brief(repo, "claude", personal_home(tmp_path))
    assert "reviewed team memory (1 entry in" in brief
    assert "Never skip the tests." in brief
    assert brief.index("- billing: billing summary") < brief.index("- release: release summary")
    assert "The user writes Rust at work." in brief


def test_an_assembled_block_replaces_the_team_part_for_that_client_only(tmp_path: Path) -> None:
    repo = repo_with_team_memory(tmp_path)
    (repo / "CLAUDE.md").write_text(
        "# Notes\n<!-- BEGIN THREADSHARE MEMORY (generated; do not edit by hand) -->\nx\n"
        "<!-- END THREADSHARE MEMORY -->\n"
    )
    home = personal_home(tmp_path)
    assert "Never skip" not in compose_brief(repo, "claude", home)
    assert "Never skip" in compose_brief(repo, "codex", home)  # AGENTS.md has no block


def test_nothing_to_say_is_an_empty_brief_and_nothing_is_created(tmp_path: Path) -> None:
    home = tmp_path / "missing-state"
    assert compose_brief(tmp_path, "codex", home) == ""
    assert not home.exists()


def test_the_brief_is_capped(tmp_path: Path) -> None:
    big = "# Profile\n\n## Notes\n" + "A long remembered sentence about the user. " * 400 + "\n"
    brief = compose_brief(tmp_path, "claude", personal_home(tmp_path, big))
    assert len(brief.encode()) <= BRIEF_MAX_BYTES
    assert brief.endswith("use the memory tools for more]")


def test_a_fifo_scene_is_skipped_not_waited_on(tmp_path: Path) -> None:
    repo = repo_with_team_memory(tmp_path)
    os.mkfifo(repo / ".threadshare" / "memory" / "scenes" / "stuck.md")
    brief = compose_brief(repo, "claude", tmp_path / "none")
    assert "- billing: billing summary" in brief and "stuck" not in brief


def test_the_marker_is_the_one_memory_assemble_writes() -> None:
    from teamlore.memory.assemble import BEGIN_MARKER
    from teamlore.ops.integrations.session_brief import ASSEMBLED_MARKER

    assert BEGIN_MARKER.startswith(ASSEMBLED_MARKER)
