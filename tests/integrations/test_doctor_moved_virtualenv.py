"""A virtualenv moved elsewhere (`mv ~/venv ~/venv.bak`) keeps console scripts whose first line
names the Python of its old place. `install` run from the moved one wrote its hook as that
script, which the shell then says is "not found" (exit 127), and doctor's fix repeated the same
install. A moved virtualenv is made for real here: a Python with the suite's `pyvenv.cfg` and
packages under another folder, beside a `teamlore` script that names a Python no longer there."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from install_world import user_env

from support import in_process
from teamlore.integrations import doctor as doctor_checks


@pytest.fixture()
def moved_venv(tmp_path: Path) -> Path:
    """`<tmp>/venv.bak`, once `<tmp>/venv`: its Python runs teamlore, its script names the old
    place's Python."""
    bak = tmp_path / "venv.bak"
    (bak / "bin").mkdir(parents=True)
    shutil.copy(Path(sys.prefix) / "pyvenv.cfg", bak / "pyvenv.cfg")
    (bak / "lib").symlink_to(Path(sys.prefix) / "lib")
    (bak / "bin" / "python3").symlink_to(os.path.realpath(sys.executable))
    script = bak / "bin" / "teamlore"
    script.write_text(
        f"#!{tmp_path / 'venv' / 'bin' / 'python3'}\nimport sys\n"
        "from teamlore.cli.entry import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    return bak


@pytest.fixture()
def user(tmp_path: Path) -> dict[str, str]:
    return user_env(tmp_path, {"claude": "2.1.332 (Claude Code)"})


def _session_start_command(user: dict[str, str]) -> str:
    settings = json.loads((Path(user["CLAUDE_CONFIG_DIR"]) / "settings.json").read_text())
    return str(settings["hooks"]["SessionStart"][0]["hooks"][0]["command"])


def test_install_from_a_moved_virtualenv_starts_the_hook_with_its_own_python(
    moved_venv: Path, user: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = moved_venv / "bin" / "python3"
    monkeypatch.setattr(sys, "executable", str(python))  # install run by the moved one's Python
    done = in_process("install", "--client", "claude", cwd=tmp_path, env=user)
    assert done.returncode == 0, done.stderr

    command = _session_start_command(user)
    launch = f"{python} -m teamlore.cli.entry hook session-start --client claude"
    assert command.endswith(f" {launch}"), command
    for name in ("HOME", "TEAMLORE_HOME", "CLAUDE_CONFIG_DIR"):  # as doctor runs the hook
        monkeypatch.setenv(name, user[name])
    hook = doctor_checks.hook_check("claude", command, tmp_path)
    assert hook.status == "ok", hook


def test_doctor_names_the_gone_interpreter_of_a_hooks_script_with_the_install_and_its_tiers(
    moved_venv: Path,
) -> None:
    script = moved_venv / "bin" / "teamlore"
    command = f"TEAMLORE_HOME=/x/state {script} hook session-start --client claude"
    again = "teamlore install --client claude --scope user --team"

    hook = doctor_checks.hook_check("claude", command, moved_venv, again=again)

    gone = moved_venv.parent / "venv" / "bin" / "python3"
    assert hook.status == "fail"
    assert hook.message == (
        f"the SessionStart hook runs {script}, whose interpreter {gone} is gone: the virtualenv"
        " moved?"
    )
    assert hook.fix is not None and hook.fix.startswith(again + " (")
