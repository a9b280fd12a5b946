"""Uninstall removes teamlore's own hooks and nothing else (docs/agents.md, "What uninstall
removes"): a hook the user added to teamlore's hook group stays, a group goes only when nothing
is left in it, a `hooks.<event>` list only when teamlore created it, and the `hooks` object is
put back as it was (`{}` stays `{}`). A kill at any step of such an uninstall leaves the file as
before or as intended, and the next uninstall finishes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from install_world import cli, op, recorded_as_an_older_teamlore, uninstalled_after_an_edit

from support import run_killed_at

USER_HOOK = {"type": "command", "command": "echo same-group"}
RUN = """
import sys
from pathlib import Path
from teamlore.ops.registry import OpContext, run_operation
run_operation(sys.argv[1], OpContext(cwd=Path(sys.argv[2])), {"client": sys.argv[3]})
"""
STEPS = ["planned", "intent-written", "file-written-1", "file-written-2", "files-written"]
STEPS += ["manifest-saved"]


def add_to_teamlores_group(path: Path) -> None:
    settings = json.loads(path.read_text())
    settings["hooks"]["SessionStart"][0]["hooks"].append(USER_HOOK)
    path.write_text(json.dumps(settings, indent=2) + "\n")


def test_a_hook_the_user_added_to_teamlores_group_survives_uninstall(user: Path) -> None:
    settings = user / ".claude" / "settings.json"
    codex_hooks = user / ".codex" / "hooks.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {}}\n')
    cli("install", "--client", "all")
    for path in (settings, codex_hooks):
        add_to_teamlores_group(path)

    cli("uninstall", "--client", "all")

    for path in (settings, codex_hooks):
        assert json.loads(path.read_text()) == {
            "hooks": {"SessionStart": [{"hooks": [USER_HOOK]}]}
        }, path


def test_an_empty_hooks_object_the_user_had_is_put_back(user: Path) -> None:
    settings = user / ".claude" / "settings.json"
    after = uninstalled_after_an_edit(
        settings, '{"hooks": {}, "model": "opus"}\n', "opus", "sonnet"
    )
    assert after == '{"hooks": {}, "model": "sonnet"}\n'


def test_the_hooks_object_install_created_goes_with_every_event_of_it(user: Path) -> None:
    settings = user / ".claude" / "settings.json"
    text = '{\n  "theme": "dark"\n}\n'
    # --sync-on-stop: SessionStart and Stop
    after = uninstalled_after_an_edit(settings, text, "dark", "light", "--sync-on-stop")
    assert after == '{\n  "theme": "light"\n}\n'


def test_an_event_list_the_user_had_stays_when_teamlores_hook_leaves_it(user: Path) -> None:
    settings = user / ".claude" / "settings.json"
    text = '{"hooks": {"SessionStart": []}, "model": "opus"}\n'
    after = uninstalled_after_an_edit(settings, text, "opus", "sonnet")
    assert after == '{"hooks": {"SessionStart": []}, "model": "sonnet"}\n'


def test_a_record_of_an_older_teamlore_still_removes_the_containers_it_emptied(
    user: Path,
) -> None:
    settings = user / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "theme": "dark"\n}\n')
    cli("install", "--client", "claude")
    recorded_as_an_older_teamlore("createdEvent", "createdHooks")
    settings.write_text(settings.read_text().replace("dark", "light"))

    cli("uninstall", "--client", "claude")

    assert settings.read_text() == '{\n  "theme": "light"\n}\n'


@pytest.mark.parametrize("step", STEPS)
def test_a_kill_at_any_step_of_such_an_uninstall_is_completed_by_the_next(
    user: Path, step: str
) -> None:
    settings = user / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {}}\n')
    op("install", user, client="claude")
    add_to_teamlores_group(settings)
    installed = settings.read_bytes()
    intended = json.dumps({"hooks": {"SessionStart": [{"hooks": [USER_HOOK]}]}}, indent=2) + "\n"

    run_killed_at(f"uninstall.{step}", RUN, "uninstall", str(user), "claude")
    assert settings.read_bytes() in (installed, intended.encode())
    op("uninstall", user, client="claude")

    assert settings.read_text() == intended
