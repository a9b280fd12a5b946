"""The SessionStart brief: personal memory for the session's folder, plus the team's doctrine
and scenes when the repository has team memory but no assembled block; bounded in size."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from support import git, teamlore_cli
from teamlore.memory.store.documents import Doctrine, Scene, dump_doctrine, dump_scene
from teamlore.ops.integrations.session_brief import (
    BRIEF_MAX_BYTES,
    compose_brief,
    personal_section,
)
from teamlore.personal import documents

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
    body, note = brief.rsplit("</common-memory>\n\n", 1)
    assert body.endswith(" …\n")  # one line too long for the brief: cut, marked
    assert body.rsplit("\n", 2)[-2].rsplit(" ", 2)[-2] in big.split()  # after a whole word
    assert note.startswith("[teamlore: personal memory was cut") and note.endswith("]")
    assert 'left out: profile (the rest of section "Notes")' in note


def test_a_code_fence_cut_open_is_closed_inside_its_block(tmp_path: Path) -> None:
    code = "".join(f"    step_{i}()  # one line of the user's script\n" for i in range(400))
    profile = f"# Profile\n\n## Script\n```python\n{code}```\n"
    brief = compose_brief(tmp_path, "codex", personal_home(tmp_path, profile))
    assert len(brief.encode()) <= BRIEF_MAX_BYTES
    block = brief.split('<common-memory target="profile">\n', 1)[1].split("</common-memory>")[0]
    assert block.count("```") == 2 and block.endswith("```\n")


def test_a_fifo_scene_is_skipped_not_waited_on(tmp_path: Path) -> None:
    repo = repo_with_team_memory(tmp_path)
    os.mkfifo(repo / ".threadshare" / "memory" / "scenes" / "stuck.md")
    brief = compose_brief(repo, "claude", tmp_path / "none")
    assert "- billing: billing summary" in brief and "stuck" not in brief


def test_the_marker_is_the_one_memory_assemble_writes() -> None:
    from teamlore.memory.assemble import BEGIN_MARKER
    from teamlore.ops.integrations.session_brief import ASSEMBLED_MARKER

    assert BEGIN_MARKER.startswith(ASSEMBLED_MARKER)


# -- a brief over its budget, through the real hook ---------------------------------------

CJK_SENTENCE = "用户喜欢简洁的回答，并且在工作中使用 Rust 和 Python。"
PREFERENCES = "# Preferences\n\n## Style\nCode first, short answers.\n"
NOTES = "# Project\n\n## Build\nRun make test before pushing.\n"


def registered_world(tmp_path: Path, profile: str, notes: str = NOTES) -> tuple[Path, Path]:
    """A state dir with a registered repository, `project:*` allowed, and the three documents."""
    state, repo = tmp_path / "state", tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    env = {"TEAMLORE_HOME": str(state)}
    for args in (
        ("sync", "--repository", str(repo)),
        ("personal", "config", "--scope", "project:*"),
    ):
        done = teamlore_cli(*args, env=env)
        assert done.returncode == 0, done.stderr
    shown = teamlore_cli("personal", "config", "--format", "json", env=env)
    [project] = json.loads(shown.stdout)["projects"]
    personal = state / "personal"
    (personal / "projects").mkdir(parents=True, exist_ok=True)
    (personal / "profile.md").write_text(profile)
    (personal / "preferences.md").write_text(PREFERENCES)
    (personal / "projects" / f"{project['contextId'].split(':', 1)[1]}.md").write_text(notes)
    return state, repo


def hook_brief(state: Path, repo: Path, client: str) -> str:
    env = {"TEAMLORE_HOME": str(state), "TEAMLORE_HOOK_BUDGET": "30"}
    payload = json.dumps({"cwd": str(repo / "src"), "hook_event_name": "SessionStart"})
    done = teamlore_cli("hook", "session-start", "--client", client, env=env, input=payload)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


def long_profile() -> str:  # ~13 KB in 12 sections
    return "# Profile\n\n" + "".join(
        f"## Section {i}\n{CJK_SENTENCE * 14}\n\n" for i in range(1, 13)
    )


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_long_profile_is_cut_by_sections_and_the_note_says_how_to_read_the_rest(
    tmp_path: Path, client: str
) -> None:
    profile = long_profile()
    assert 12_000 < len(profile.encode()) < 14_000
    state, repo = registered_world(tmp_path, profile)
    (repo / "src").mkdir()

    brief = hook_brief(state, repo, client)

    assert len(brief.encode()) <= BRIEF_MAX_BYTES
    assert brief.count("<common-memory") == brief.count("</common-memory>") == 3
    assert "Code first, short answers." in brief and "Run make test before pushing." in brief
    body, note = brief.rsplit("</common-memory>\n\n", 1)
    kept = body.split('<common-memory target="profile">\n', 1)[1]
    assert kept.endswith(f"{CJK_SENTENCE * 14}\n")  # whole sections only
    first_left_out = kept.count("## Section") + 1
    assert f'from "Section {first_left_out}" on' in note
    assert f"{12 - first_left_out + 1} of 12 sections" in note
    assert 'memory_read tool with contextId "global"' in note
    command = note.split("run `", 1)[1].split("`", 1)[0]
    shown = subprocess.run(command, shell=True, capture_output=True, text=True, check=True)
    assert profile.strip() in shown.stdout  # the command in the note prints all of it


def test_cut_project_notes_point_to_the_cli_only(tmp_path: Path) -> None:
    notes = "# Project\n\n" + "".join(
        f"## Step {i}\n{'Run the tests. ' * 60}\n\n" for i in range(12)
    )
    state, repo = registered_world(tmp_path, "# Profile\n\n## Work\nRust.\n", notes)
    (repo / "src").mkdir()

    brief = hook_brief(state, repo, "claude")

    assert len(brief.encode()) <= BRIEF_MAX_BYTES
    assert "## Work\nRust." in brief and "Code first, short answers." in brief
    note = brief.rsplit("</common-memory>\n\n", 1)[1]
    assert "left out: project notes (" in note and "memory_read" not in note
    command = note.split("run `", 1)[1].split("`", 1)[0]
    shown = subprocess.run(command, shell=True, capture_output=True, text=True, check=True)
    assert notes.strip() in shown.stdout


def test_a_cut_brief_still_says_a_secret_was_masked(tmp_path: Path) -> None:
    token = "ghp_" + "R8a2Kd9sLq0ZxYw3Vb7Nc1Tm5Pe4Ju6Hf2Gi"
    profile = long_profile().replace("## Section 1\n", f"## Section 1\nMy token is {token}\n", 1)
    state, repo = registered_world(tmp_path, profile)
    (repo / "src").mkdir()

    brief = hook_brief(state, repo, "claude")

    assert len(brief.encode()) <= BRIEF_MAX_BYTES
    assert "personal memory was cut to fit this brief" in brief
    assert token not in brief and "My token is …[40 chars]" in brief
    assert "profile.md:4 secret.github-token" in brief.rsplit("</common-memory>", 1)[1]


def test_personal_memory_is_read_once_per_session_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each document is read, and scanned for secrets, once: the brief's emptiness check and
    its text come from the same read."""
    state, repo = registered_world(tmp_path, PROFILE)
    read = documents.read_document_bytes
    targets: list[str] = []

    def counted(root: Path, target: str) -> bytes | None:
        targets.append(target)
        return read(root, target)

    monkeypatch.setattr(documents, "read_document_bytes", counted)
    section = personal_section(state, repo)
    assert "The user writes Rust at work." in section and "Run make test" in section
    assert sorted(targets) == sorted(set(targets)) and len(targets) == 3


def test_a_project_outside_the_allowed_scopes_stays_out_of_the_brief(tmp_path: Path) -> None:
    state, repo = registered_world(tmp_path, PROFILE)
    env = {"TEAMLORE_HOME": str(state)}
    done = teamlore_cli("personal", "config", "--remove-scope", "project:*", env=env)
    assert done.returncode == 0, done.stderr
    section = personal_section(state, repo)
    assert "The user writes Rust at work." in section and "Run make test" not in section
