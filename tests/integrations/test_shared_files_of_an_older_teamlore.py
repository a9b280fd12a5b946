"""Two installations in one config, as an older teamlore recorded them (docs/agents.md, "Two
installations in one file"): in a home that is a git repository, user and project scope both
hold `~/.claude/settings.json` (Codex: `~/.codex/config.toml`). Edited by hand between the two
installs, the config no longer held what the first wrote, and a teamlore before this one kept,
for the second, a copy of it as it found it: the first one's entries in it. Uninstalled with
this teamlore, in either order, the file ends as it was plus the edit, byte for byte. All
through the real CLI."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from install_world import CODEX_CONFIG

from support import git, in_process, teamlore_cli
from teamlore.integrations.manifest import backup_name, installation_key

CONFIGS = {"claude": Path(".claude") / "settings.json", "codex": Path(".codex") / "config.toml"}
ORIGINALS = {
    "claude": b'{\n  "theme": "dark",\n  "hooks": {"Stop": []}\n}\n',
    "codex": CODEX_CONFIG.encode(),
}
EDITS: dict[str, Callable[[bytes], bytes]] = {
    "claude": lambda data: data.replace(b'"dark"', b'"light"'),
    "codex": lambda data: data + b'\n[profiles.home]\nmodel = "o3"\n',
}


def teamlore(home: Path, *args: str) -> None:
    """`teamlore ARGS` run to its end from `home`, in process (`in_process`): what it does to
    the files is the subject; the kills at failpoints below are real processes."""
    done = in_process(*args, cwd=home)
    assert done.returncode == 0, done.stdout + done.stderr


def state() -> Path:
    return Path(os.environ["TEAMLORE_HOME"]) / "integrations"


def as_an_older_teamlore_left_it(client: str, second: str, config: Path, found: bytes) -> None:
    """The manifest and backups a teamlore before this one (625e35e9) left after the second
    install: the same records this one writes, but the second one's record of `config` names a
    copy of the file as that install found it (`existed`: true), stored under its own name
    (`backup_name`), 0600. Checked against that teamlore's own output for both clients and
    install orders: the same fields and values, the same backup bytes, the same config."""
    manifest = state() / "manifest.json"
    data = json.loads(manifest.read_text())
    owner = next(i for i in data["installations"] if (i["client"], i["scope"]) == (client, second))
    record = next(f for f in owner["files"] if f["path"] == str(config))
    assert (record["existed"], record["backup"]) == (True, None)  # as this teamlore writes it
    record["backup"] = backup_name(config, installation_key(client, second, owner["root"]))
    fd = os.open(state() / "backups" / record["backup"], os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "wb") as copy:
        copy.write(found)
    manifest.write_text(json.dumps(data, indent=2) + "\n")


def installed_as_an_older_teamlore_left_it(home: Path, client: str, first: str) -> Path:
    """Both scopes installed in `home` (a git repository), the config edited by hand between."""
    git(home, "init", "-q")
    config = home / CONFIGS[client]
    config.parent.mkdir()
    config.write_bytes(ORIGINALS[client])
    teamlore(home, "install", "--client", client, "--scope", first)
    config.write_bytes(EDITS[client](config.read_bytes()))
    found = config.read_bytes()
    second = other(first)
    force = ["--force"] if client == "codex" else []  # Codex's scopes write one key here
    teamlore(home, "install", "--client", client, "--scope", second, *force)
    as_an_older_teamlore_left_it(client, second, config, found)
    return config


def other(scope: str) -> str:
    return "project" if scope == "user" else "user"


@pytest.mark.parametrize("client", ["claude", "codex"])
@pytest.mark.parametrize("first_in", ["user", "project"])
@pytest.mark.parametrize("first_out", ["user", "project"])
def test_a_copy_an_older_teamlore_kept_of_the_edited_config_brings_back_no_entry_of_teamlores(
    user: Path, client: str, first_in: str, first_out: str
) -> None:
    """That copy holds the first one's entries (Claude's `SessionStart` hook; Codex's
    `[mcp_servers.teamlore]`, `[mcp_servers.teamlore_personal]`, `[features] codex_hooks`).
    Uninstalling the first one in first left the second one's record in step with the file, so
    its uninstall then put the copy back, and those entries stayed with no record left to
    remove them. Now the copy is read as none (this teamlore keeps none there) and dropped, and
    the second one takes its entries out one by one."""
    config = installed_as_an_older_teamlore_left_it(user, client, first_in)

    for scope in (first_out, other(first_out)):
        teamlore(user, "uninstall", "--client", client, "--scope", scope)

    assert config.read_bytes() == EDITS[client](ORIGINALS[client])
    assert os.listdir(state() / "backups") == []


STEPS = ["planned", "intent-written", "file-written-1", "files-written", "manifest-saved"]


@pytest.mark.parametrize("step", STEPS)
def test_an_uninstall_killed_at_any_step_over_an_older_teamlores_copy_is_completed(
    user: Path, step: str
) -> None:
    """The record is read without the copy on every load, and saved so by the transaction of
    the first uninstall: killed at any step of it, the next run completes it, and after both
    the file holds the edit and no hook of teamlore's."""
    config = installed_as_an_older_teamlore_left_it(user, "claude", "user")
    killed = teamlore_cli(
        "uninstall", "--client", "claude", cwd=user, env={"TEAMLORE_FAILPOINT": f"uninstall.{step}"}
    )
    assert killed.returncode == -9, killed.stdout + killed.stderr

    teamlore(user, "uninstall", "--client", "claude")  # completes it (or runs it anew)
    teamlore(user, "uninstall", "--client", "claude", "--scope", "project")

    assert config.read_bytes() == EDITS["claude"](ORIGINALS["claude"])
    assert os.listdir(state() / "backups") == []


def doctor_backups(home: Path) -> list[dict[str, str]]:
    """Doctor's `integrations.backups` checks, its paths shown from the folder that holds both
    HOME and the state dir (`~/home/…`, `~/state/…`), as in its text below."""
    from typer.testing import CliRunner

    from teamlore.cli.main import app

    # in-process: the subject is the check, not the command's start (its text: a subprocess)
    here = os.getcwd()
    os.chdir(home)
    try:
        done = CliRunner().invoke(
            app, ["doctor", "--format", "json"], env={"HOME": str(home.parent)}
        )
    finally:
        os.chdir(here)
    checks = json.loads(done.stdout)["checks"]
    return [c for c in checks if c["check"] == "integrations.backups"]


def test_doctor_names_the_copy_an_older_teamlore_kept_as_that_and_not_as_an_interrupted_install(
    user: Path,
) -> None:
    """No install was interrupted: the copy is the one an older teamlore kept for the second
    install, which this teamlore reads as none (it holds the first one's entries). Doctor says
    so, in JSON and in the text at 80 columns, until the next uninstall drops it."""
    config = installed_as_an_older_teamlore_left_it(user, "claude", "user")

    [check] = doctor_backups(user)
    folder = state() / "backups"
    assert check["status"] == "warn"
    copy = backup_name(config, installation_key("claude", "project", str(user)))
    assert copy in os.listdir(folder)  # beside the first one's own copy of the file
    assert check["message"] == (
        f"a copy of ~/home/{CONFIGS['claude']} an older teamlore kept in"
        " ~/state/integrations/backups (with another installation's entries in it, so this"
        " teamlore never puts it back)"
    )
    assert check["fix"] == "the next `teamlore install` or `uninstall` removes it"
    assert "interrupted install" not in check["message"]

    env = {"COLUMNS": "80", "HOME": str(user.parent)}
    text = teamlore_cli("doctor", cwd=user, env=env).stdout.splitlines()
    assert max(len(line) for line in text) <= 80
    [start] = [i for i, line in enumerate(text) if "integrations.backups" in line]
    end = next(i for i, line in enumerate(text) if i > start and "fix: " in line)
    said = [text[start].split(None, 2)[2], *(line.strip() for line in text[start + 1 : end])]
    assert " ".join(said) == check["message"]

    teamlore(user, "uninstall", "--client", "claude", "--scope", "project")
    assert doctor_backups(user) == [] and copy not in os.listdir(folder)


def test_doctor_names_the_copy_a_repaired_manifest_no_longer_refers_to_as_an_older_teamlores(
    user: Path,
) -> None:
    """An older teamlore's uninstall of the first installation was killed after writing the
    files; this teamlore completes it, saving the manifest as it reads it (the second one's
    record without the copy), and is killed before it removes the copy. No install was
    interrupted then: doctor said the copy was one an interrupted install left, as it did
    before 4e011b2 of a copy the manifest still named. It names it as the older teamlore's
    copy, and the next uninstall removes it."""
    git(user, "init", "-q")
    config = user / CONFIGS["claude"]
    config.parent.mkdir()
    config.write_bytes(ORIGINALS["claude"])
    teamlore(user, "install", "--client", "claude")
    config.write_bytes(EDITS["claude"](config.read_bytes()))
    found = config.read_bytes()
    teamlore(user, "install", "--client", "claude", "--scope", "project")
    step = {"TEAMLORE_FAILPOINT": "uninstall.files-written"}
    killed = teamlore_cli("uninstall", "--client", "claude", cwd=user, env=step)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    as_an_older_teamlore_left_it("claude", "project", config, found)  # with the intent pending
    copy = backup_name(config, installation_key("claude", "project", str(user)))

    step = {"TEAMLORE_FAILPOINT": "complete.before-strays"}
    args = ("uninstall", "--client", "claude", "--scope", "project")
    killed = teamlore_cli(*args, cwd=user, env=step)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    saved = json.loads((state() / "manifest.json").read_text())
    [record] = [f for i in saved["installations"] for f in i["files"] if f["path"] == str(config)]
    assert record["backup"] is None and not (state() / "intent.json").exists()
    assert copy in os.listdir(state() / "backups")

    [check] = doctor_backups(user)
    assert check["status"] == "warn"
    assert check["message"] == (
        f"a copy of ~/home/{CONFIGS['claude']} an older teamlore kept in"
        " ~/state/integrations/backups (with another installation's entries in it, so this"
        " teamlore never puts it back)"
    )
    assert check["fix"] == "the next `teamlore install` or `uninstall` removes it"

    teamlore(user, *args)
    assert doctor_backups(user) == [] and os.listdir(state() / "backups") == []
    assert config.read_bytes() == EDITS["claude"](ORIGINALS["claude"])
