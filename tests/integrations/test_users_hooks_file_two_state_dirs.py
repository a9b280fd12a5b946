"""A hooks file of the user's own that holds nothing teamlore could tell from its own leftovers
(`{}`, `{"hooks": {}}`, `{"hooks": {"Stop": []}}`), and two state dirs installed into it
(docs/agents.md, "Two state dirs in one config"): the second one's copy of the file holds only
the first one's hooks, so once the first was uninstalled the second took the containers, and
the file, for the first one's making, and removed them (`removed ~/.claude/settings.json`). Now
the second one's record says what the first one found there, so in either order the file ends
as the user had it, byte for byte. All through the CLI's app, run in this process
(`in_process`): the subject is what the commands do to the files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from install_world import CLAUDE_JSON, CODEX_CONFIG

from support import in_process

CLIENTS = {
    "codex": (".codex/config.toml", CODEX_CONFIG, ".codex/hooks.json"),
    "claude": (".claude.json", CLAUDE_JSON, ".claude/settings.json"),
}
ORIGINALS = {
    "empty": "{}\n",
    "empty-hooks": '{\n  "hooks": {}\n}\n',
    "empty-stop": '{\n  "hooks": {\n    "Stop": []\n  }\n}\n',
    "none": None,  # no file: the first install makes it, and the last uninstall removes it
}


def hooked(path: Path) -> list[str]:
    """The state dirs the teamlore hooks in the hooks file `path` start teamlore with."""
    groups = json.loads(path.read_text()).get("hooks", {}).values()
    commands = [h["command"] for event in groups for g in event for h in g["hooks"]]
    return sorted({c.split()[0].removeprefix("TEAMLORE_HOME=") for c in commands})


def found_before_fields(state: str) -> list[object]:
    manifest = json.loads((Path(state) / "integrations" / "manifest.json").read_text())
    return [
        f["foundBefore"]
        for i in manifest["installations"]
        for f in i["files"]
        if "foundBefore" in f
    ]


def run(user: Path, state: str, *args: str) -> str:
    done = in_process(*args, cwd=user, env={"TEAMLORE_HOME": state})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def both_in_and_out(user: Path, client: str, original: str, first_out: str) -> dict[str, str]:
    """Install the first state dir, then the second with `--force`, then uninstall them in the
    order `first_out` says, checking whose hooks the hooks file holds after each step; the
    config ends as the user had it. Returns what each uninstall said."""
    name, seeded, hooks_name = CLIENTS[client]
    config, hooks = user / name, user / hooks_name
    config.parent.mkdir(exist_ok=True)
    config.write_text(seeded)
    text = ORIGINALS[original]
    if text is not None:
        hooks.parent.mkdir(exist_ok=True)
        hooks.write_text(text)
    homes = {"first": os.environ["TEAMLORE_HOME"], "second": str(user / "second-state")}

    run(user, homes["first"], "install", "--client", client)
    assert hooked(hooks) == [homes["first"]]
    run(user, homes["second"], "install", "--client", client, "--force")
    assert hooked(hooks) == sorted(homes.values())
    last = "second" if first_out == "first" else "first"
    said = {first_out: run(user, homes[first_out], "uninstall", "--client", client)}
    assert hooked(hooks) == [homes[last]]
    said[last] = run(user, homes[last], "uninstall", "--client", client)
    assert config.read_text() == seeded
    return said


@pytest.mark.parametrize("client", ["codex", "claude"])
@pytest.mark.parametrize("original", ["empty", "empty-hooks"])
def test_the_users_own_hooks_file_stays_when_the_first_state_dir_goes_first(
    user: Path, client: str, original: str
) -> None:
    """The case that lost the file (`{}`) or its `hooks` object (`{"hooks": {}}`)."""
    said = both_in_and_out(user, client, original, "first")
    hooks_name = CLIENTS[client][2]
    assert f"removed    ~/{hooks_name}" not in said["second"]
    assert (user / hooks_name).read_text() == ORIGINALS[original]


@pytest.mark.parametrize("client", ["codex", "claude"])
@pytest.mark.parametrize("original", list(ORIGINALS))
@pytest.mark.parametrize("first_out", ["first", "second"])
def test_the_hooks_file_ends_as_the_user_had_it_in_either_order(
    user: Path, client: str, original: str, first_out: str
) -> None:
    """Every original and order, the file made from nothing too: it is removed by the last
    uninstall (as before this fix; the cases above are the ones that changed)."""
    said = both_in_and_out(user, client, original, first_out)
    hooks = user / CLIENTS[client][2]
    if ORIGINALS[original] is None:
        assert not hooks.exists()
    else:
        assert all("removed" not in out for out in said.values())
        assert hooks.read_text() == ORIGINALS[original]


@pytest.mark.parametrize("original", list(ORIGINALS))
def test_what_the_first_one_found_is_saved_only_when_uninstall_needs_it(
    user: Path, original: str
) -> None:
    """`foundBefore` is a field an older teamlore's strict reader refuses: the second state
    dir's record holds it only when a container holding the first one's hooks alone (or the
    file) was there before the first one (`Stop: []` holds no hook: teamlore hooks only
    SessionStart; a file made from nothing: nothing was)."""
    (user / ".claude.json").write_text(CLAUDE_JSON)
    hooks = user / ".claude/settings.json"
    text = ORIGINALS[original]
    if text is not None:
        hooks.parent.mkdir()
        hooks.write_text(text)
    second = str(user / "second-state")
    run(user, os.environ["TEAMLORE_HOME"], "install", "--client", "claude")
    run(user, second, "install", "--client", "claude", "--force")
    kept = {"empty": [""], "empty-hooks": ["", "hooks"]}.get(original)
    assert found_before_fields(second) == ([kept] if kept else [])
    assert found_before_fields(os.environ["TEAMLORE_HOME"]) == []
