"""`install --client all --dry-run` with neither `claude` nor `codex` on PATH previews both
clients with the note, as `--client claude --dry-run` does, instead of refusing with
CLIENT_NOT_FOUND; the real install still refuses. Through the real CLI, in a private HOME."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from install_world import tree

from support import teamlore_cli


def test_all_as_a_dry_run_without_either_client_previews_both_with_the_note(
    user: Path, tmp_path: Path
) -> None:
    for name in ("claude", "codex"):
        (tmp_path / "bin" / name).unlink()
        assert shutil.which(name) is None
    before = tree(user)

    done = teamlore_cli("install", "--client", "all", "--dry-run", "--format", "json", cwd=user)

    assert done.returncode == 0, done.stderr + done.stdout
    shown = json.loads(done.stdout)
    assert [preview["client"] for preview in shown["installed"]] == ["claude", "codex"]
    assert all(preview["files"] for preview in shown["installed"])
    claude_note, codex_note = shown["notes"]
    assert claude_note.startswith("claude: `claude` is not on PATH") and "--force" in claude_note
    assert codex_note.startswith("codex: `codex` is not on PATH") and "--force" in codex_note
    text = teamlore_cli("install", "--client", "all", "--dry-run", cwd=user, env={"COLUMNS": "80"})
    assert text.returncode == 0 and "note codex: `codex` is not on PATH" in text.stdout
    assert tree(user) == before and not Path(os.environ["TEAMLORE_HOME"]).exists()
    # the real install still refuses
    refused = teamlore_cli("install", "--client", "all", cwd=user)
    assert refused.returncode == 1 and "CLIENT_NOT_FOUND" in refused.stderr
    assert tree(user) == before
