"""The install tests' world: a private HOME with stand-in `claude` / `codex` on PATH, seeded
client config files, and the operations run in-process."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from support import teamlore_cli
from teamlore.core import errors
from teamlore.ops.registry import OpContext, run_operation

CODEX_CONFIG = """\
# my Codex settings
model = "o3"  # the one I like
approval_policy = "on-request"

[mcp_servers.other]
command = "other-server"
args = ["--fast"]

[profiles.work]
model = "gpt-5.5"
"""
CLAUDE_JSON = '{\n  "numStartups": 3,\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}'
CLAUDE_SETTINGS = '{\n  "theme": "dark",\n  "hooks": {\n    "Stop": []\n  }\n}\n'


def user_env(tmp_path: Path, clients: dict[str, str]) -> dict[str, str]:
    """The environment of a user whose HOME and teamlore state are under `tmp_path`, with only
    `clients` (name: the `--version` line it prints) on PATH besides the system's."""
    bin_dir = tmp_path / "clients"
    bin_dir.mkdir()
    for name, version in clients.items():
        (bin_dir / name).write_text(f"#!/bin/sh\necho '{version}'\n")
        (bin_dir / name).chmod(0o755)
    home = tmp_path / "home"
    env = {
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin",
        "TEAMLORE_HOME": str(tmp_path / "state"),
    }
    if "claude" in clients:
        env["CLAUDE_CONFIG_DIR"] = str(home / ".claude")
    if "codex" in clients:
        env["CODEX_HOME"] = str(home / ".codex")
    return env


def op(name: str, cwd: Path, **payload: Any) -> dict[str, Any]:
    return run_operation(name, OpContext(cwd=cwd), payload)


def refused(name: str, cwd: Path, **payload: Any) -> errors.TeamloreError:
    with pytest.raises(errors.TeamloreError) as caught:
        op(name, cwd, **payload)
    return caught.value


def seed_user_configs(home: Path) -> dict[Path, bytes]:
    files = {
        home / ".codex" / "config.toml": CODEX_CONFIG.encode(),
        home / ".claude.json": CLAUDE_JSON.encode(),
        home / ".claude" / "settings.json": CLAUDE_SETTINGS.encode(),
    }
    for path, data in files.items():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
    return files


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def cli(*args: str) -> None:
    """The real CLI, which must succeed."""
    done = teamlore_cli(*args)
    assert done.returncode == 0, done.stderr


def uninstalled_after_an_edit(path: Path, text: str, old: str, new: str, *install: str) -> str:
    """`path` written as `text`, teamlore installed (`--client claude` and `install`'s flags),
    `old` edited to `new` by hand (so the backup no longer applies and uninstall removes
    teamlore's entries one by one), uninstalled: the file's text after."""
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    cli("install", "--client", "claude", *install)
    path.write_text(path.read_text().replace(old, new))
    cli("uninstall", "--client", "claude")
    return path.read_text()


def recorded_as_an_older_teamlore(*fields: str) -> None:
    """The install manifest as a teamlore before these entry `fields` wrote it (none of them)."""
    manifest = Path(os.environ["TEAMLORE_HOME"]) / "integrations" / "manifest.json"
    record = json.loads(manifest.read_text())
    for installation in record["installations"]:
        for file in installation["files"]:
            for entry in file["entries"]:
                for field in fields:
                    entry.pop(field, None)
    manifest.write_text(json.dumps(record))


def copied_aside(user: Path) -> Path:
    """HOME (`user`) and the state dir beside it (the `user` fixture's) copied aside as they are."""
    aside = user.parent / "aside"
    for name in ("home", "state"):
        shutil.copytree(user.parent / name, aside / name, symlinks=True)
    return aside


def put_back(aside: Path) -> None:
    """HOME and the state dir as `copied_aside` found them, at their own paths (the installs'
    records and entries name them): one copy in place of installing them all again."""
    for name in ("home", "state"):
        shutil.rmtree(aside.parent / name)
        shutil.copytree(aside / name, aside.parent / name, symlinks=True)
