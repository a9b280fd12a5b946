"""A path a person reads is shown from `~` (docs/cli-output.md, "Your home folder is `~`"), as
`core.paths.display_path` gives it: a folder `repo forget` does not know, a demo folder that is
not empty, a folder a project install is not in a repository in, the project an interrupted
install is finished in, the install an interrupted one was. (Doctor's Pi extension:
tests/integrations/test_install_pi.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from teamlore.core import errors
from teamlore.integrations.doctor import interrupted_check
from teamlore.integrations.transaction import Intent
from teamlore.ops.registry import OpContext, run_operation


@pytest.fixture()
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def refusal(name: str, cwd: Path, home: Path, payload: dict[str, Any]) -> str:
    with pytest.raises(errors.TeamloreError) as refused:
        run_operation(name, OpContext(cwd=cwd, home=home), payload)
    return refused.value.message


def test_repo_forget_names_a_folder_it_does_not_know_from_home(user: Path, home: Path) -> None:
    said = refusal("repo.forget", user, home, {"path": str(user / "src" / "nothere")})
    assert said.startswith("~/src/nothere is not a registered repository;"), said


def test_the_demo_names_a_folder_that_is_not_empty_from_home(user: Path, home: Path) -> None:
    (user / "d2").mkdir()
    (user / "d2" / "keep.txt").write_text("mine")
    said = refusal("demo", user, home, {"directory": str(user / "d2")})
    assert said == "~/d2 is not empty; give the demo an empty folder"


def test_a_project_install_outside_a_repository_names_the_folder_from_home(
    user: Path, home: Path
) -> None:
    (user / "notes").mkdir()
    said = refusal(
        "install", user / "notes", home, {"client": "claude", "scope": "project", "force": True}
    )
    assert said.startswith("~/notes is not inside a git worktree;"), said


def test_an_interrupted_install_names_its_project_from_home(user: Path) -> None:
    root = str(user / "src" / "app")
    check = interrupted_check("install", "claude", "project", root, "2026-12-07T10:00:00Z")
    assert check.fix is not None and check.fix.startswith("in ~/src/app: teamlore uninstall")
    intent = Intent(
        operation="install", client="claude", scope="project", root=root, startedAt="then"
    )
    assert intent.describe() == "install of claude (project scope for ~/src/app) at then"
