"""`memory assemble --repair` takes a lone END back to the old block's own `## Team memory`
heading. When a person's file holds a `## Team memory` section of their own above the block and
the merge took the block's heading with its BEGIN, the last heading before the END is theirs:
the repair removed their section with the old block's text (docs/assemble.md promises the block's
own heading, every other byte kept), and with no heading left it did not refuse. It now
refuses, nothing changed, when the text it would remove holds lines the file holds outside its
block as git has it (HEAD, a stopped merge's other side), as it refuses when the block's own
heading is there beside the person's. Real git repository, the real CLI in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support import commit_all, git, teamlore_cli

BEGIN = "<!-- BEGIN THREADSHARE MEMORY (generated; do not edit by hand) -->"
HEADING = "## Team memory"
RULE = "- Make release inputs deterministic."
OWN = "# Shop\n\n## Team memory\n\nWe pair on Fridays.\nAsk Dana before a release.\n"


def assemble(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = teamlore_cli("memory", "assemble", "-p", "claude", *args, "--format", "json", cwd=root)
    payload: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, payload


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    """A team's CLAUDE.md with its own `## Team memory` notes above the assembled block."""
    root = tmp_path / "shop"
    (root / ".threadshare/memory").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / ".threadshare/memory/doctrine.md").write_text(f"{RULE}\n")
    (root / "CLAUDE.md").write_text(OWN)
    assert assemble(root)[0] == 0
    commit_all(root, "team memory, assembled")
    return root


@pytest.mark.parametrize("line_ends", ["\n", "\r\n"])
def test_a_lone_end_whose_heading_went_too_leaves_the_persons_own_section(
    repo: Path, line_ends: str
) -> None:
    """The resolution kept the old block's text from its doctrine on: BEGIN and the block's
    heading went with the other side. The only heading before the END is the person's."""
    claude = repo / "CLAUDE.md"
    text = claude.read_text()
    assert text.startswith(OWN)
    damaged = text.replace(f"{BEGIN}\n\n{HEADING}\n\n", "").replace("\n", line_ends)
    claude.write_bytes(damaged.encode())

    code, payload = assemble(repo, "--repair")

    assert code == 1, payload
    assert payload["error"]["code"] == "ASSEMBLY_MARKERS_INVALID"
    assert claude.read_bytes() == damaged.encode()  # their notes are still there
