"""`install --dry-run` shows every file the real install writes (the assembled CLAUDE.md /
AGENTS.md and Skill folder too) and writes no byte; the project-scope header names the
repository from `~`; a dry run for a client that is not on PATH is a preview with a note, not a
refusal. All through the real CLI, in a private HOME with the repository under it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from install_world import tree

from support import teamlore_cli
from teamlore.memory.store.layout import MANAGED_BLOCK_BEGIN

TEXT = {"COLUMNS": "80"}
# (client, flags): project scope assembles always, user scope with --assemble
CASES = [
    ("claude", ("--scope", "project")),
    ("codex", ("--assemble",)),
]


@pytest.fixture()
def proj(user: Path, team_repo: Path) -> Path:
    """The team's repository (team memory, no CLAUDE.md / AGENTS.md) at ~/proj."""
    target = user / "proj"
    shutil.copytree(team_repo, target, symlinks=True)
    return target


def state_dir() -> Path:
    return Path(os.environ["TEAMLORE_HOME"])


def changed_files(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {name for name in after if before.get(name) != after[name]} | (set(before) - set(after))


def ok(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = teamlore_cli(*args, cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


@pytest.mark.parametrize(("client", "flags"), CASES)
def test_the_dry_run_lists_exactly_the_files_the_real_install_changes(
    user: Path, proj: Path, client: str, flags: tuple[str, ...]
) -> None:
    before = tree(user)
    shown = json.loads(
        ok(
            "install",
            "--client",
            client,
            *flags,
            "--dry-run",
            "--force",
            "--format",
            "json",
            cwd=proj,
        )
    )
    assert tree(user) == before and not state_dir().exists()  # not a byte written, anywhere
    [preview] = shown["installed"]
    listed = {
        str(Path(row["path"]).relative_to(user)): row
        for row in preview["files"]
        if row["action"] != "unchanged"
    }
    assert all(row["diff"].startswith("--- /dev/null\n+++ ") for row in listed.values())
    instructions = "proj/CLAUDE.md" if client == "claude" else "proj/AGENTS.md"
    assert instructions in listed and preview["assemble"]["wouldRun"] is True
    text = ok("install", "--client", client, *flags, "--dry-run", "--force", cwd=proj, env=TEXT)
    assert f"  would create  ~/{instructions}\n" in text
    assert all(len(line) <= 80 for line in text.splitlines() if not line.startswith("+"))
    assert tree(user) == before

    ok("install", "--client", client, *flags, "--force", cwd=proj)
    assert set(listed) == changed_files(before, tree(user))


def test_a_second_dry_run_after_the_install_has_nothing_to_change(user: Path, proj: Path) -> None:
    """The Skill record assemble keeps (in the state dir) is read by the preview as by the real
    run: nothing is listed as to be written again."""
    ok("install", "--client", "claude", "--scope", "project", cwd=proj)
    before = tree(user), tree(state_dir())
    text = ok(
        "install", "--client", "claude", "--scope", "project", "--dry-run", cwd=proj, env=TEXT
    )
    assert text.startswith("claude (project scope in ~/proj): nothing to change (dry run)")
    assert "would" not in text.split("\n", 1)[1]
    assert (tree(user), tree(state_dir())) == before


def test_the_project_header_names_the_repository_from_home(user: Path, proj: Path) -> None:
    for args, title in [
        (("install", "--dry-run"), "would change (dry run), nothing written"),
        (("install",), "installed"),
        (("uninstall", "--dry-run"), "would change (dry run), nothing written"),
        (("uninstall",), "uninstalled"),
    ]:
        command, *rest = args
        text = ok(command, "--client", "claude", "--scope", "project", *rest, cwd=proj, env=TEXT)
        assert text.splitlines()[0] == f"claude (project scope in ~/proj): {title}"
        assert str(user) not in text


def test_a_dry_run_for_a_client_not_on_path_previews_it_with_a_note(
    user: Path, proj: Path, tmp_path: Path
) -> None:
    (tmp_path / "bin" / "claude").unlink()
    assert shutil.which("claude") is None
    before = tree(user)
    shown = json.loads(
        ok("install", "--client", "claude", "--dry-run", "--format", "json", cwd=proj)
    )
    [preview] = shown["installed"]
    assert [Path(row["path"]).name for row in preview["files"]] == [".claude.json", "settings.json"]
    [note] = shown["notes"]
    assert "`claude` is not on PATH" in note and "--force" in note
    text = ok("install", "--client", "claude", "--dry-run", cwd=proj, env=TEXT)
    assert text.startswith("claude (user scope): would change (dry run), nothing written\n")
    assert "note claude: `claude` is not on PATH" in text
    assert tree(user) == before and not state_dir().exists()
    # the real install still refuses without --force
    refused = teamlore_cli("install", "--client", "claude", cwd=proj)
    assert refused.returncode == 1 and "CLIENT_NOT_FOUND" in refused.stderr
    assert tree(user) == before


def test_install_help_says_force_writes_a_client_not_found(user: Path) -> None:
    shown = ok("install", "--help", cwd=user, env=TEXT)
    flat = " ".join(shown.split())
    assert "Write a client's config even when the client is not on PATH" in flat


def test_pi_in_project_scope_beside_team_memory_is_installed_not_an_internal_error(
    user: Path, proj: Path
) -> None:
    """Pi reads no assembled file: project scope in a repository with team memory installed
    the extension, then failed with INTERNAL (no assembled file is named for Pi)."""
    ok("install", "--client", "pi", "--scope", "project", "--dry-run", cwd=proj)
    assert not (proj / ".pi").exists()
    ok("install", "--client", "pi", "--scope", "project", cwd=proj)
    assert (proj / ".pi" / "extensions").is_dir()
    assert not (proj / "CLAUDE.md").exists() and not (proj / "AGENTS.md").exists()


def test_an_assemble_the_real_run_refuses_is_refused_in_the_dry_run_too(
    user: Path, proj: Path
) -> None:
    """A CLAUDE.md whose block was damaged by hand (a BEGIN without its END): the dry run says
    the team memory would not be assembled, for the reason the real run gives, and lists no
    CLAUDE.md."""
    (proj / "CLAUDE.md").write_text(f"# Notes\n\n{MANAGED_BLOCK_BEGIN}\nhalf a block\n")
    args = ("install", "--client", "claude", "--scope", "project")
    shown = json.loads(ok(*args, "--dry-run", "--format", "json", cwd=proj))
    [preview] = shown["installed"]
    assert preview["assemble"]["refused"] is True
    assert preview["assemble"]["reason"].startswith("ASSEMBLY_MARKERS_INVALID: ")
    assert not any(row["path"].endswith("CLAUDE.md") for row in preview["files"])
    text = ok(*args, "--dry-run", cwd=proj, env=TEXT)
    assert "  team memory would not be assembled: ASSEMBLY_MARKERS_INVALID" in text
    [done] = json.loads(ok(*args, "--format", "json", cwd=proj))["installed"]
    assert done["assemble"]["reason"] == preview["assemble"]["reason"]
