"""What a walk with the real Codex CLI found in install, uninstall and doctor around a user's
`~/.codex/config.toml`: the real `teamlore` CLI in a private HOME (the `user` fixture)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from install_world import cli

from support import UNPRIVILEGED, teamlore_cli, unprivileged_prefix


def run(*args: str) -> dict[str, Any]:
    """`teamlore ARGS --format json`, its JSON answer (an error's too)."""
    done = teamlore_cli(*args, "--format", "json")
    return dict(json.loads(done.stdout or done.stderr))


# -- 1. uninstall after an edit: no blank line left at the end ---------------------------------


@pytest.mark.parametrize(
    "tail",
    [
        '[mcp_servers.docs]\ncommand = "docs"\n\n# trailing comment at end of file\n',
        '[mcp_servers.docs]\ncommand = "docs"\n',  # a last table that ends in keys
        "[tui]\nnotifications = true\n\n# trailing comment at end of file\n",
    ],
)
def test_uninstall_after_an_edit_leaves_the_end_of_the_file_as_it_was(
    user: Path, tail: str
) -> None:
    """teamlore's tables go after the user's last one, which (an `[mcp_servers.docs]`) may hold
    them in the same `mcp_servers`: the blank line put before them went with them only when
    `mcp_servers` itself went."""
    config = user / ".codex" / "config.toml"
    config.parent.mkdir()
    before = (
        'model = "o3"\nmodel_reasoning_effort = "low"\n\n[features]\nweb_search = true\n\n' + tail
    )
    config.write_text(before)
    cli("install", "--client", "codex")
    config.write_text(config.read_text().replace('effort = "low"', 'effort = "medium"'))
    cli("uninstall", "--client", "codex")
    assert config.read_text() == before.replace('effort = "low"', 'effort = "medium"')


# -- 2. codex_hooks goes after [features]' last key, not under the next table's comment -------


def test_codex_hooks_goes_after_the_last_key_not_under_a_comment_for_the_next_table(
    user: Path,
) -> None:
    config = user / ".codex" / "config.toml"
    config.parent.mkdir()
    before = (
        'model = "o3"\n\n[features]\nweb_search = true\n\n'
        '# my other MCP servers\n[mcp_servers.docs]\ncommand = "docs"\n'
    )
    config.write_text(before)
    diff = run("install", "--client", "codex", "--dry-run")["installed"][0]["files"][0]["diff"]
    assert " web_search = true\n+codex_hooks = true\n \n # my other MCP servers\n" in diff
    cli("install", "--client", "codex")
    assert config.read_text().startswith(
        'model = "o3"\n\n[features]\nweb_search = true\ncodex_hooks = true\n\n'
        '# my other MCP servers\n[mcp_servers.docs]\ncommand = "docs"\n\n[mcp_servers.teamlore]\n'
    )
    cli("uninstall", "--client", "codex")
    assert config.read_text() == before  # byte for byte
    cli("install", "--client", "codex")  # and after an edit, entry by entry
    config.write_text(config.read_text().replace('"o3"', '"o4"'))
    cli("uninstall", "--client", "codex")
    assert config.read_text() == before.replace('"o3"', '"o4"')


# -- 3. doctor on a config that does not parse -------------------------------------------------


def test_doctor_names_a_config_that_stopped_parsing_once_and_claims_nothing_about_its_hooks(
    user: Path,
) -> None:
    config = user / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o3"\n\n[features]\nhooks = true\n')
    cli("install", "--client", "codex")
    with config.open("a") as handle:
        handle.write("[broken\n")
    done = teamlore_cli("doctor", "--client", "codex", "--format", "json")
    checks = json.loads(done.stdout)["checks"]
    broken = [c for c in checks if c["check"] == "codex.config" and c["status"] == "fail"]
    assert len(broken) == 1 and "config.toml does not parse" in broken[0]["message"]
    assert "nothing was changed" not in broken[0]["message"]  # doctor changes nothing anyway
    assert broken[0]["fix"] == "fix the file, then teamlore install --client codex --scope user"
    hooks = [c["message"] for c in checks if c["check"] == "codex.hook"]
    assert not any("sets neither hooks nor codex_hooks" in m for m in hooks), hooks


def test_doctor_names_a_config_that_does_not_parse_when_teamlore_is_not_installed(
    user: Path,
) -> None:
    """Not "not installed: run install", which refuses that file (CLIENT_CONFIG_INVALID)."""
    config = user / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model="x"\n[features\n')
    refusal = run("install", "--client", "codex")["error"]
    assert refusal["code"] == "CLIENT_CONFIG_INVALID"
    done = teamlore_cli("doctor", "--client", "codex", "--format", "json")
    (check,) = [c for c in json.loads(done.stdout)["checks"] if c["check"] == "codex.config"]
    assert check["status"] == "fail" and "config.toml does not parse" in check["message"]
    assert "not installed" not in check["message"]
    assert "nothing was changed" not in check["message"]
    assert check["fix"] == "fix the file, then teamlore install --client codex"


# -- 4. install outside a repository: a next step install can follow ---------------------------


def test_a_project_install_outside_a_repository_says_what_install_can_do(
    user: Path, tmp_path: Path
) -> None:
    """install has no path option: "or give the path of one" (the generic next) misleads."""
    outside = tmp_path / "x"
    outside.mkdir()
    done = teamlore_cli(
        "install", "--client", "claude", "--scope", "project", "--format", "json", cwd=outside
    )
    error = json.loads(done.stdout or done.stderr)["error"]
    assert error["code"] == "NOT_A_GIT_REPOSITORY"
    assert "path" not in error["next"]
    assert error["next"] == (
        "Run it again inside the repository's worktree (`cd` there), or use --scope user."
    )


# -- 5. a config folder that is not writable is named, not the file in it ----------------------


@pytest.fixture()
def as_user() -> list[str]:
    """Root writes whatever the mode: as root, the CLI runs as nobody (`setpriv`)."""
    return unprivileged_prefix()


@pytest.fixture()
def home_of(as_user: list[str]) -> Iterator[Path]:
    """A HOME (not under pytest's temp base, which is private to root) owned by the user the
    CLI runs as, with a stand-in `codex` on PATH beside it."""
    root = Path(tempfile.mkdtemp(prefix="teamlore-unwritable-codex-"))
    os.chmod(root, 0o755)
    home, bin_dir = root / "home", root / "bin"
    (home / ".codex").mkdir(parents=True)
    bin_dir.mkdir()
    (bin_dir / "codex").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "codex").chmod(0o755)
    (home / ".codex" / "config.toml").write_text('model = "o3"\n')
    (home / ".codex" / "config.toml").chmod(0o644)
    if as_user:
        for path in [root, *root.rglob("*")]:
            os.chown(path, UNPRIVILEGED, UNPRIVILEGED, follow_symlinks=False)
    try:
        yield home
    finally:
        (home / ".codex").chmod(0o755)
        shutil.rmtree(root)


def test_a_codex_folder_that_is_not_writable_is_named_with_its_fix(
    as_user: list[str], home_of: Path
) -> None:
    codex_dir = home_of / ".codex"
    before = (codex_dir / "config.toml").read_bytes()
    codex_dir.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | 0o005)  # 555
    env = {
        **os.environ,
        "HOME": str(home_of),
        "TEAMLORE_HOME": str(home_of / "state"),
        "PATH": f"{home_of.parent / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_STATE_HOME"):
        env.pop(name, None)
    command = [sys.executable, "-m", "teamlore.cli.main", "install", "--client", "codex"]
    done = subprocess.run(
        [*as_user, *command, "--format", "json"], capture_output=True, text=True, env=env
    )
    error = json.loads(done.stdout or done.stderr)["error"]
    assert error["code"] == "CLIENT_CONFIG_UNWRITABLE"
    assert error["message"].startswith("folder ~/.codex is not writable"), error["message"]
    assert "config.toml is not writable" not in error["message"]  # the file is 0644
    assert error["next"] == "Fix the folder's owner or mode (`ls -ld ~/.codex`), then retry."
    assert (codex_dir / "config.toml").read_bytes() == before
