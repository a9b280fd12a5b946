"""A managed block the released teamlore 0.1.0 wrote, unchanged, is teamlore's: assemble rewrites
it in this version's layout (0.1.0's has no search hint), after an upgrade and when a teammate
still on 0.1.0 assembled, while one line of it edited by hand is still refused (docs/assemble.md,
"Hand edits inside the block"). The blocks are 0.1.0's own output, committed as text
(tests/memory/data/assembled_by_0_1_0/SOURCE.md); real git repositories, the real CLI."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_assemble_hand_edits import BEGIN, END, error_of

from support import commit_all, git, writable_copy

WRITTEN_BY_0_1_0 = Path(__file__).parent / "data" / "assembled_by_0_1_0"
HINT = "The team's approved memory entries are in .threadshare/memory/entries/ (not copied here)."
PROVIDERS = {"claude": ("CLAUDE.md", ".claude/skills"), "codex": ("AGENTS.md", ".agents/skills")}


def assemble_cli(root: Path, *args: str, home: Path | None = None) -> tuple[int, dict[str, Any]]:
    """`teamlore memory assemble … --format json` in `root`: the CLI's app run in this process
    (typer's CliRunner), its exit code and what it printed. The ~0.4 s a `teamlore` process
    spends starting would be most of these tests' time; test_assemble_hand_edits.py runs the
    same refusals through the console entry point."""
    from typer.testing import CliRunner

    from teamlore.cli.main import app

    env = {"TEAMLORE_HOME": str(home or os.environ["TEAMLORE_HOME"])}
    with contextlib.chdir(root):
        done = CliRunner().invoke(app, ["memory", "assemble", *args, "--format", "json"], env=env)
    return done.exit_code, json.loads(done.stdout)


def shop(root: Path, *, doctrine: bool = True, leave_out: str | None = None) -> Path:
    """A git repository holding the memory tree the blocks were assembled from (without its
    doctrine, or without the Skill `leave_out`) and CLAUDE.md and AGENTS.md as they were before
    the first assemble; nothing committed yet."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for name, _ in PROVIDERS.values():
        text = (WRITTEN_BY_0_1_0 / name).read_text()
        (root / name).write_text(text[: text.index(BEGIN)])
    memory = writable_copy(WRITTEN_BY_0_1_0 / "memory", root / ".threadshare/memory")
    if not doctrine:
        (memory / "doctrine.md").unlink()
    if leave_out:
        shutil.rmtree(memory / "skills" / leave_out)
    return root


def write_as_0_1_0(root: Path, *, doctrine: bool = True) -> None:
    """What 0.1.0's assemble writes for the whole tree: CLAUDE.md and AGENTS.md as it wrote
    them, and its Skill copies (each SKILL.md byte for byte)."""
    if doctrine:
        shutil.copyfile(WRITTEN_BY_0_1_0 / "CLAUDE.md", root / "CLAUDE.md")
        shutil.copyfile(WRITTEN_BY_0_1_0 / "AGENTS.md", root / "AGENTS.md")
    else:
        shutil.copyfile(WRITTEN_BY_0_1_0 / "CLAUDE.without-doctrine.md", root / "CLAUDE.md")
    for _, skills_dir in PROVIDERS.values():
        for skill in (root / ".threadshare/memory/skills").iterdir():
            copy = root / skills_dir / skill.name / "SKILL.md"
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(skill / "SKILL.md", copy)


def as_0_1_0_left_it(root: Path, *, doctrine: bool = True) -> Path:
    """A repository as 0.1.0's assemble left it, committed."""
    shop(root, doctrine=doctrine)
    write_as_0_1_0(root, doctrine=doctrine)
    commit_all(root, "team memory, assembled by teamlore 0.1.0")
    return root


def block_of(text: str) -> str:
    return text[text.index(BEGIN) : text.index(END) + len(END)]


@pytest.mark.parametrize(
    ("provider", "doctrine", "options"),
    [
        ("codex", True, ()),
        ("codex", True, ("--repair",)),
        ("claude", True, ()),
        ("claude", False, ()),  # the placeholder line, no doctrine
    ],
)
def test_a_block_0_1_0_wrote_is_rewritten_after_the_upgrade(
    tmp_path: Path, home: Path, provider: str, doctrine: bool, options: tuple[str, ...]
) -> None:
    """The walk (0.1.0 → main): `memory assemble -p codex`, with `--repair` and `--check` too,
    refused the untouched block 0.1.0 had written as edited by hand (ASSEMBLY_CONFLICT): only
    a block laid out as this version lays it out, with its search hint, counted as teamlore's."""
    root = as_0_1_0_left_it(tmp_path / "shop", doctrine=doctrine)
    name, _ = PROVIDERS[provider]
    before = (root / name).read_text()
    assert HINT not in before

    code, payload = assemble_cli(root, "-p", provider, "--check")
    assert code == 1
    assert error_of(payload)["code"] == "ASSEMBLY_STALE", payload
    assert error_of(payload)["details"]["stale"] == [
        {"path": name, "why": "its managed block differs from the memory tree"}
    ]

    code, payload = assemble_cli(root, "-p", provider, *options)
    assert code == 0, payload
    assert payload["changed"] is True
    after = (root / name).read_text()
    assert after == before.replace(block_of(before), payload["block"])  # the rest kept
    assert HINT in payload["block"]
    for line in block_of(before).splitlines():  # every line 0.1.0 wrote is still there
        assert line in payload["block"].splitlines()
    assert assemble_cli(root, "-p", provider, "--check")[0] == 0


def test_a_block_a_teammate_still_on_0_1_0_wrote_is_rewritten(tmp_path: Path, home: Path) -> None:
    """A mixed team: this version assembled and committed; then 0.1.0 (a teammate's, or an
    agent's MCP server started before the upgrade) added a Skill to the block in its own layout,
    from a tree not committed yet. That block is rewritten, not refused."""
    root = shop(tmp_path / "shop", leave_out="rollback")
    for provider in PROVIDERS:
        assert assemble_cli(root, "-p", provider)[0] == 0
    commit_all(root, "team memory, assembled by this version, no rollback Skill yet")
    assert HINT in (root / "CLAUDE.md").read_text()

    # the rollback Skill, never committed, and 0.1.0's assemble of the tree that holds it
    writable_copy(
        WRITTEN_BY_0_1_0 / "memory/skills/rollback", root / ".threadshare/memory/skills/rollback"
    )
    write_as_0_1_0(root)

    for provider, (name, _) in PROVIDERS.items():
        code, payload = assemble_cli(root, "-p", provider)
        assert code == 0, payload
        assert payload["changed"] is True
        text = (root / name).read_text()
        assert HINT in text and "rollback/SKILL.md" in text
        assert assemble_cli(root, "-p", provider, "--check")[0] == 0


@pytest.mark.parametrize(
    ("provider", "line", "edited"),
    [
        (
            "codex",
            "- Run the release tests before pushing a tag.",
            "- Run the release tests before pushing a tag, and ask Sam on Fridays.",
        ),
        (
            "claude",
            "- .claude/skills/rollback/SKILL.md \u2014 Roll a release back to the previous tag.",
            "- .claude/skills/rollback/SKILL.md \u2014 Roll back with `make rollback` only.",
        ),
        (
            "claude",
            "- .threadshare/memory/scenes/ci-cache.md (heat 1) \u2014 Debugging the CI cache",
            "- .threadshare/memory/scenes/ci-cache.md (heat 1) \u2014 Debugging the CI cache\n"
            "- Never clear the cache on main.",
        ),
    ],
    ids=["doctrine-line", "skill-line", "added-line"],
)
def test_a_0_1_0_block_with_a_line_edited_by_hand_is_still_refused(
    tmp_path: Path, home: Path, provider: str, line: str, edited: str
) -> None:
    root = as_0_1_0_left_it(tmp_path / "shop")
    name, _ = PROVIDERS[provider]
    path = root / name
    assert path.read_text().count(line) == 1
    path.write_text(path.read_text().replace(line, edited))
    hand_edited = path.read_bytes()

    for options in ((), ("--repair",), ("--check",)):
        code, payload = assemble_cli(root, "-p", provider, *options)
        assert code == 1
        refusal = error_of(payload)
        assert refusal["code"] == "ASSEMBLY_CONFLICT", (options, payload)
        assert "was edited by hand since teamlore wrote it" in refusal["message"]
        assert path.read_bytes() == hand_edited
