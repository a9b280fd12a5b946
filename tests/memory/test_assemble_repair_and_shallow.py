"""A hand edit inside an intact block is refused with `--repair` too (repair mends damaged
markers, it does not drop a person's text), and a shallow clone, whose history may not reach the
commit a block was assembled from, says it cannot tell stale from edited (docs/assemble.md,
"Hand edits inside the block"). Real git repositories and clones, the real CLI in a
subprocess."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_assemble_skill_folders import assemble_cli

from support import commit_all, git
from teamlore.core.errors import TeamloreError
from teamlore.ops.registry import OpContext, run_operation

BEGIN = "<!-- BEGIN THREADSHARE MEMORY (generated; do not edit by hand) -->"
RULE = "- Make release inputs deterministic before trusting a green run."


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    skill = root / ".threadshare/memory/skills/release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        '---\nname: "release"\ndescription: "Cut a release."\n---\n## Procedure\n\n1. Tag.\n'
    )
    (root / ".threadshare/memory/doctrine.md").write_text(f"{RULE}\n")
    (root / "CLAUDE.md").write_text("# Shop\n\nRun the tests before you push.\n")
    assert assemble_cli(root, "-p", "claude")[0] == 0
    commit_all(root, "team memory, assembled")
    return root


def test_repair_refuses_a_hand_edit_inside_an_intact_block(repo: Path, home: Path) -> None:
    """The review's repro: a note between intact markers; plain assemble refused, `--repair`
    printed success and the note was gone."""
    claude = repo / "CLAUDE.md"
    text = claude.read_text()
    at = text.index(BEGIN) + len(BEGIN) + 1
    claude.write_text(text[:at] + "MY HAND NOTE\n" + text[at:])
    edited = claude.read_bytes()

    for args in ((), ("--repair",)):
        code, payload = assemble_cli(repo, "-p", "claude", *args)
        assert code == 1, payload
        assert payload["error"]["code"] == "ASSEMBLY_CONFLICT"
        assert claude.read_bytes() == edited
    with pytest.raises(TeamloreError) as mcp:  # threadshare_memory_assemble, repair: true
        run_operation(
            "memory.assemble",
            OpContext(cwd=repo, home=home),
            {"provider": "claude", "repair": True},
        )
    assert mcp.value.code == "ASSEMBLY_CONFLICT"
    assert claude.read_bytes() == edited
    assert "MY HAND NOTE" in claude.read_text()


def test_a_shallow_clone_says_it_cannot_tell_stale_from_edited(repo: Path, tmp_path: Path) -> None:
    """A second memory commit made without assembling: a full clone's `--check` calls the block
    stale; a `--depth 1` clone only sees HEAD, so it said "edited by hand … delete the lines
    between the markers" (and plain assemble refused with that advice)."""
    (repo / ".threadshare/memory/doctrine.md").write_text(f"{RULE}\n- Tag from main only.\n")
    commit_all(repo, "a rule promoted, not assembled")

    full = tmp_path / "full"
    git(tmp_path, "clone", "-q", str(repo), str(full))
    code, payload = assemble_cli(
        full, "-p", "claude", "--check", env={"TEAMLORE_HOME": str(tmp_path / "full-state")}
    )
    assert code == 1 and payload["error"]["code"] == "ASSEMBLY_STALE", payload

    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    assert git(shallow, "rev-parse", "--is-shallow-repository") == "true"
    state = tmp_path / "shallow-state"
    code, payload = assemble_cli(
        shallow, "-p", "claude", "--check", env={"TEAMLORE_HOME": str(state)}
    )
    assert code == 1
    refusal = payload["error"]
    assert refusal["code"] == "ASSEMBLY_STALE", refusal
    assert "shallow clone" in refusal["message"] and "fetch-depth: 0" in refusal["message"]
    assert "edited by hand since" not in refusal["message"]

    claude = shallow / "CLAUDE.md"
    before = claude.read_bytes()
    code, payload = assemble_cli(shallow, "-p", "claude", env={"TEAMLORE_HOME": str(state)})
    assert code == 1
    refusal = payload["error"]
    assert refusal["code"] == "ASSEMBLY_CONFLICT"  # a person's text is never lost: refused
    assert "shallow clone cannot tell" in refusal["message"]
    assert "git fetch --unshallow" in refusal["next"]
    assert claude.read_bytes() == before

    git(shallow, "fetch", "-q", "--unshallow")  # what the refusal advises
    code, payload = assemble_cli(shallow, "-p", "claude", env={"TEAMLORE_HOME": str(state)})
    assert code == 0, payload
    assert "Tag from main only." in claude.read_text()
