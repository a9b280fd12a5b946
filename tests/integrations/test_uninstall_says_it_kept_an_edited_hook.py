"""A teamlore hook the user edited since install (its SessionStart command changed in
~/.claude/settings.json): uninstall, which removes a hook by the command it recorded, keeps it,
and now says so, as it does for a server entry it keeps (it said only `edited`). The real CLI,
in a private HOME."""

from __future__ import annotations

import json
from pathlib import Path

from install_world import cli, seed_user_configs

from support import teamlore_cli


def test_uninstall_names_the_edited_hook_it_kept(user: Path) -> None:
    seed_user_configs(user)
    cli("install", "--client", "claude")
    settings = user / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    hook = data["hooks"]["SessionStart"][0]["hooks"][0]
    hook["command"] = hook["command"] + " --quiet-please"  # the user's edit
    settings.write_text(json.dumps(data, indent=2) + "\n")

    done = teamlore_cli("uninstall", "--client", "claude")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "kept the SessionStart hook" in text, text
    assert "--quiet-please" in settings.read_text()  # kept, as before

    done = teamlore_cli("install", "--client", "claude", "--dry-run", "--format", "json")
    assert done.returncode == 0, done.stderr
