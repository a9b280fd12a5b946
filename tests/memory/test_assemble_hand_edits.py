"""A managed block edited by hand is refused, not overwritten (docs/assemble.md, "Hand edits
inside the block"), while a block that is merely stale — a teammate's fresh clone after a pull,
a tree changed since the last assemble — is rewritten; `--repair` keeps a person's text after a
stray END, and the command its refusal names runs as written. Real git repositories and clones,
the real CLI in a subprocess."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from support import commit_all, git, teamlore_cli
from teamlore.core.errors import TeamloreError
from teamlore.ops.registry import OpContext, run_operation

BEGIN = "<!-- BEGIN THREADSHARE MEMORY (generated; do not edit by hand) -->"
END = "<!-- END THREADSHARE MEMORY -->"
RULE = "- Make release inputs deterministic before trusting a green run."


def add_skill(root: Path, name: str, description: str) -> None:
    folder = root / ".threadshare/memory/skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f'---\nname: "{name}"\ndescription: "{description}"\n---\n## Procedure\n\n1. {name}.\n'
    )


def make_repo(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for sub in ("entries", "scenes", "skills"):
        (root / ".threadshare/memory" / sub).mkdir(parents=True)
    add_skill(root, "release", "Cut a release.")
    return root


def assemble_cli(root: Path, *args: str, home: Path | None = None) -> tuple[int, dict[str, Any]]:
    env = {"TEAMLORE_HOME": str(home)} if home else None
    done = teamlore_cli("memory", "assemble", *args, "--format", "json", cwd=root, env=env)
    return done.returncode, json.loads(done.stdout)


def error_of(payload: dict[str, Any]) -> dict[str, Any]:
    error: dict[str, Any] = payload["error"]
    return error


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    root = make_repo(tmp_path / "shop")
    (root / ".threadshare/memory/doctrine.md").write_text(f"{RULE}\n")
    (root / "CLAUDE.md").write_text("# Shop\n\nRun the tests before you push.\n")
    assert assemble_cli(root, "-p", "claude")[0] == 0
    commit_all(root, "team memory, assembled")
    return root


def test_a_hand_edit_inside_the_block_is_refused_and_check_says_it_was_edited(
    repo: Path, home: Path
) -> None:
    """The walk: `sed` changed a doctrine line inside the block; `--check` called it stale and
    advised assemble, which printed `Updated CLAUDE.md` and threw the edit away."""
    claude = repo / "CLAUDE.md"
    claude.write_text(claude.read_text().replace(RULE, "- HAND EDIT INSIDE"))
    edited = claude.read_bytes()

    code, payload = assemble_cli(repo, "-p", "claude", "--check")
    assert code == 1
    refusal = error_of(payload)
    assert refusal["code"] == "ASSEMBLY_CONFLICT"
    assert refusal["message"].startswith("CLAUDE.md: its managed block (lines 5-")
    assert "was edited by hand since teamlore wrote it" in refusal["message"]

    code, payload = assemble_cli(repo, "-p", "claude")
    assert code == 1
    refusal = error_of(payload)
    assert refusal["code"] == "ASSEMBLY_CONFLICT"
    assert "nothing was changed" in refusal["message"]
    assert "delete the lines between the markers" in refusal["next"]
    assert claude.read_bytes() == edited
    with pytest.raises(TeamloreError) as mcp:  # threadshare_memory_assemble: the same refusal
        run_operation("memory.assemble", OpContext(cwd=repo, home=home), {"provider": "claude"})
    assert mcp.value.code == "ASSEMBLY_CONFLICT"
    assert claude.read_bytes() == edited

    # what the refusal says to do: the lines between the markers deleted, assemble writes them
    text = claude.read_text()
    claude.write_text(text[: text.index(BEGIN) + len(BEGIN)] + "\n" + text[text.index(END) :])
    assert assemble_cli(repo, "-p", "claude")[0] == 0
    assert "HAND EDIT" not in claude.read_text() and RULE in claude.read_text()
    assert assemble_cli(repo, "-p", "claude", "--check")[0] == 0


def test_a_stale_block_in_a_teammates_fresh_clone_is_rewritten(repo: Path, tmp_path: Path) -> None:
    """A teammate's clone has no record of what was assembled: the committed block is judged by
    what git holds. One assembled from a tree never committed as a whole (a Skill promoted and
    assembled, the doctrine promoted after without assembling) is stale, not edited."""
    add_skill(repo, "hotfix", "Ship a hotfix.")
    assert assemble_cli(repo, "-p", "codex")[0] == 0  # AGENTS.md: hotfix, the old doctrine
    (repo / ".threadshare/memory/doctrine.md").write_text(f"{RULE}\n- Tag from main only.\n")
    add_skill(repo, "rollback", "Roll a release back.")
    commit_all(repo, "two Skills and a rule, assembled only in part")

    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    fresh = tmp_path / "teammate-state"
    for provider, name in (("claude", "CLAUDE.md"), ("codex", "AGENTS.md")):
        code, payload = assemble_cli(clone, "-p", provider, home=fresh)
        assert code == 0, payload
        assert payload["changed"] is True
        text = (clone / name).read_text()
        assert "Tag from main only." in text and "rollback/SKILL.md" in text

    # a hand edit committed and pulled is still a hand edit
    claude = repo / "CLAUDE.md"
    claude.write_text(claude.read_text().replace(RULE, "- HAND EDIT, committed"))
    commit_all(repo, "an edit inside the block")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    code, payload = assemble_cli(other, "-p", "claude", home=tmp_path / "other-state")
    assert code == 1 and error_of(payload)["code"] == "ASSEMBLY_CONFLICT"
    assert "HAND EDIT, committed" in (other / "CLAUDE.md").read_text()


def test_a_block_this_machine_wrote_from_a_tree_git_never_held_is_its_own(
    repo: Path, home: Path
) -> None:
    """The private record of the last block written: a Skill described one way, assembled, then
    described another way before anything was committed."""
    add_skill(repo, "hotfix", "Ship a hotfix, first wording.")
    assert assemble_cli(repo, "-p", "claude")[0] == 0
    add_skill(repo, "hotfix", "Ship a hotfix, second wording.")
    assert assemble_cli(repo, "-p", "claude", "--check")[0] == 1
    record = home / "skill-assembly"
    saved = record.parent / "record-aside"
    shutil.copytree(record, saved)
    shutil.rmtree(record)
    # without the record, nothing tells this block from an edit: refused
    code, payload = assemble_cli(repo, "-p", "claude")
    assert code == 1 and error_of(payload)["code"] == "ASSEMBLY_CONFLICT"
    assert error_of(payload)["message"].startswith("CLAUDE.md: its managed block")
    shutil.rmtree(record)
    shutil.copytree(saved, record)
    code, payload = assemble_cli(repo, "-p", "claude")
    assert code == 0, payload
    assert "second wording" in (repo / "CLAUDE.md").read_text()


def test_repair_keeps_the_text_after_a_stray_end_and_its_advice_runs_as_written(
    repo: Path,
) -> None:
    """The walk: a stray END after the block, the person's notes, another END: `--repair`
    took BEGIN through the last END as the old block and deleted the notes; and the advised
    `teamlore memory assemble --repair` was a usage error (no --provider)."""
    claude = repo / "CLAUDE.md"
    text = claude.read_text()
    claude.write_text(text + f"{END}\n\n## My notes\n\n- keep me\n{END}\ntail\n")

    code, payload = assemble_cli(repo, "-p", "claude")
    assert code == 1
    refusal = error_of(payload)
    assert refusal["code"] == "ASSEMBLY_MARKERS_INVALID"
    assert "1 BEGIN and 3 END marker(s)" in refusal["message"]
    advised = re.findall(r"`(teamlore [^`]+)`", refusal["message"])
    assert advised == ["teamlore memory assemble -p claude --repair"]
    done = teamlore_cli(*advised[0].split()[1:], cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr

    repaired = claude.read_text()
    assert "## My notes\n\n- keep me\n" in repaired and repaired.endswith("tail\n")
    assert repaired.count(BEGIN) == 1 and repaired.count(END) == 1
    assert repaired.index(END) < repaired.index("## My notes")
    assert repaired.startswith("# Shop\n\nRun the tests before you push.\n")
