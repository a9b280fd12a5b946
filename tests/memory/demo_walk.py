"""A new user's walk: `teamlore demo --dir D` in a temp folder, its repository committed (`git add
-A && git commit`), then the real `teamlore` CLI in it with the demo's own state dir."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from support import git, teamlore_cli

MEMORY = ".threadshare/memory"
EXPORT_ENTRY = f"{MEMORY}/entries/invoice-export-must-sort-rows-by-id-unordered-exports-made.md"
LOCK_ENTRY = f"{MEMORY}/entries/staging-30-lock-timeout-30s-alembic-upgrade-head-9f909c8920.md"
SCENE = f"{MEMORY}/scenes/release.md"


class Walk:
    def __init__(self, tmp_path: Path) -> None:
        demo = tmp_path / "d2"
        self.state = demo / "state"
        made = teamlore_cli("demo", "--dir", str(demo), env={"TEAMLORE_HOME": str(self.state)})
        assert made.returncode == 0, made.stdout + made.stderr
        self.root = demo / "acme-billing"
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", "demo")

    def cli(self, *args: str, columns: int | None = None) -> subprocess.CompletedProcess[str]:
        env = {"TEAMLORE_HOME": str(self.state)}
        if columns is not None:
            env["COLUMNS"] = str(columns)
        return teamlore_cli(*args, cwd=self.root, env=env)

    def json(self, *args: str) -> tuple[int, dict[str, Any]]:
        done = self.cli(*args, "--format", "json")
        payload: dict[str, Any] = json.loads(done.stdout)
        return done.returncode, payload

    def answer(self, *args: str) -> dict[str, Any]:
        """The JSON a command answers, whatever its exit code."""
        return self.json(*args)[1]

    def path(self, relative: str) -> Path:
        return self.root / relative

    def write(self, relative: str, text: str) -> None:
        self.path(relative).write_text(text, encoding="utf-8")

    def read(self, relative: str) -> str:
        return self.path(relative).read_text(encoding="utf-8")


class KeptAside:
    """One walk built for many tests, and a copy of its folder kept aside: `walk()` puts the copy
    back in the walk's own place (its state dir records the repository's path) before each test,
    so each starts from `teamlore demo` as it left it, for one copy instead of a demo."""

    def __init__(self, tmp_path: Path) -> None:
        self._walk = Walk(tmp_path)
        self._aside = tmp_path / "aside"
        shutil.copytree(self._walk.root.parent, self._aside, symlinks=True)

    def walk(self) -> Walk:
        shutil.rmtree(self._walk.root.parent)
        shutil.copytree(self._aside, self._walk.root.parent, symlinks=True)
        return self._walk
