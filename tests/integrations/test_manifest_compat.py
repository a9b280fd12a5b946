"""The install manifest across versions (docs/agents.md, "The install manifest"): what install
writes stays readable by an older teamlore when it can, an install that changes nothing leaves
it as it is, and a manifest this version cannot read says why and what to do."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from support import in_process
from teamlore.core import errors
from teamlore.core.paths import display_path
from teamlore.integrations.manifest import load_manifest


def cli(*args: str) -> None:
    done = in_process(*args)
    assert done.returncode == 0, done.stderr


def manifest_file() -> Path:
    return Path(os.environ["TEAMLORE_HOME"]) / "integrations" / "manifest.json"


def hook_entries() -> list[dict[str, object]]:
    record = json.loads(manifest_file().read_text())
    return [
        entry
        for installation in record["installations"]
        for file in installation["files"]
        for entry in file["entries"]
        if entry["type"] == "hook"
    ]


def test_a_fresh_install_writes_no_field_an_older_teamlore_does_not_know(user: Path) -> None:
    cli("install", "--client", "claude")
    entries = hook_entries()
    assert entries
    # the fields of an older teamlore's strict hook record, and no other
    assert all(set(entry) <= {"type", "event", "command"} for entry in entries), entries

    settings = user / ".claude" / "settings.json"
    cli("install", "--client", "claude", "--force")  # a reinstall keeps "install created it"
    cli("uninstall", "--client", "claude")
    assert not settings.exists() or "hooks" not in json.loads(settings.read_text() or "{}")


# the fields of teamlore 0.1.0's strict records (3243ea08, integrations/manifest.py), which
# refuse any other: its doctor, install and uninstall then call the whole manifest damaged
FIELDS_010 = {
    "installation": {"client", "files", "installedAt", "options", "root", "scope"},
    "file": {"backup", "createdDirs", "entries", "existed", "installedSha256", "kind", "path"},
    "key": {"type", "key", "hadPrevious", "previous"},
    "hook": {"type", "event", "command"},
}


def test_a_fresh_install_of_both_clients_stays_readable_by_teamlore_0_1_0(user: Path) -> None:
    """Every key record carried `previousText: null`, which 0.1.0 does not know: going back,
    its doctor, install and uninstall said `manifest.json is damaged; fix or remove it`."""
    cli("install", "--client", "all")
    record = json.loads(manifest_file().read_text())
    unknown = []
    for installation in record["installations"]:
        unknown += sorted(set(installation) - FIELDS_010["installation"])
        for file in installation["files"]:
            unknown += sorted(set(file) - FIELDS_010["file"])
            for entry in file["entries"]:
                unknown += sorted(set(entry) - FIELDS_010[entry["type"]])
    assert unknown == []
    cli("uninstall", "--client", "all")


def test_what_install_found_there_is_still_recorded(user: Path) -> None:
    settings = user / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {}}\n')
    cli("install", "--client", "claude")
    assert all(entry.get("createdHooks") is False for entry in hook_entries())
    cli("uninstall", "--client", "claude")
    assert json.loads(settings.read_text()) == {"hooks": {}}


def test_an_install_that_changes_nothing_leaves_the_manifest_as_it_is(user: Path) -> None:
    cli("install", "--client", "claude")
    before = manifest_file().read_bytes()
    os.utime(manifest_file(), (1, 1))
    cli("install", "--client", "claude")
    assert manifest_file().read_bytes() == before
    assert manifest_file().stat().st_mtime == 1


def test_a_manifest_of_a_newer_teamlore_says_upgrade(user: Path) -> None:
    cli("install", "--client", "claude")
    record = json.loads(manifest_file().read_text())
    record["installations"][0]["files"][0]["entries"][0]["createdBy"] = "a later version"
    manifest_file().write_text(json.dumps(record))
    with pytest.raises(errors.TeamloreError) as caught:
        load_manifest(manifest_file().parent.parent)
    assert caught.value.code == "DB_SCHEMA_TOO_NEW"
    assert "newer teamlore" in caught.value.message and "createdBy" in caught.value.message
    assert "upgrade teamlore" in caught.value.message

    record["format"] = "teamlore-integrations@v2"
    del record["installations"][0]["files"][0]["entries"][0]["createdBy"]
    manifest_file().write_text(json.dumps(record))
    with pytest.raises(errors.TeamloreError) as caught:
        load_manifest(manifest_file().parent.parent)
    assert caught.value.code == "DB_SCHEMA_TOO_NEW"


def test_a_damaged_manifest_names_the_manifest_not_config_toml(user: Path) -> None:
    cli("install", "--client", "claude")
    manifest_file().write_text('{"installations": [')
    with pytest.raises(errors.TeamloreError) as caught:
        load_manifest(manifest_file().parent.parent)
    assert caught.value.code == "STATE_INVALID"
    assert "manifest.json is damaged" in caught.value.message
    assert "config.toml" not in errors.next_step(caught.value.error)


def backups() -> Path:
    return Path(os.environ["TEAMLORE_HOME"]) / "integrations" / "backups"


def test_uninstall_removes_the_pi_extension_whose_backup_an_older_teamlore_lost(
    user: Path,
) -> None:
    """A second `install --client pi --force` of an older teamlore deleted the backup its
    manifest still names. Uninstall refused (CONFIG_INVALID, "fix config.toml") and the
    extension stayed, queueing every prompt; now it goes and uninstall says the user's file
    cannot come back."""
    extension = user / ".pi" / "agent" / "extensions" / "teamlore.js"
    extension.parent.mkdir(parents=True)
    extension.write_text("// mine\n")
    cli("install", "--client", "pi", "--force")
    for backup in backups().iterdir():
        backup.unlink()

    done = in_process("uninstall", "--client", "pi", env={"COLUMNS": "80"})

    assert done.returncode == 0, done.stderr
    assert "removed (backup lost) ~/.pi/agent/extensions/teamlore.js" in done.stdout
    assert "that file cannot be put back" in " ".join(done.stdout.split())  # wrapped at 80
    assert not extension.exists()
    assert load_manifest(manifest_file().parent.parent).installations == []


def test_uninstall_takes_its_entries_out_of_a_config_whose_backup_is_lost(user: Path) -> None:
    config = user / ".claude.json"
    config.write_text('{"theme": "dark"}\n')
    cli("install", "--client", "claude")
    for backup in backups().iterdir():
        backup.unlink()

    cli("uninstall", "--client", "claude")

    assert json.loads(config.read_text()) == {"theme": "dark"}


def _claude_json_backup(user: Path) -> Path:
    """Install into a `~/.claude.json` of the user's: the backup that holds it as it was."""
    (user / ".claude.json").write_text('{"theme": "dark"}\n')
    cli("install", "--client", "claude")
    [backup] = [b for b in backups().iterdir() if b.read_bytes() == b'{"theme": "dark"}\n']
    return backup


def _refused_uninstall() -> dict[str, str]:
    done = in_process("uninstall", "--client", "claude", "--format", "json")
    assert done.returncode == 1, done.stdout
    error: dict[str, str] = json.loads(done.stdout)["error"]
    return error


def test_a_backup_that_cannot_be_read_is_named_with_what_to_do(user: Path) -> None:
    """It was CONFIG_INVALID "the backup … is missing", whose next step said to fix
    config.toml; moving the backup aside, as it says now, lets uninstall finish."""
    backup = _claude_json_backup(user)
    kept = backup.with_name("kept-aside")
    backup.rename(kept)
    backup.symlink_to(kept)  # backups are read without following a link

    error = _refused_uninstall()

    assert error["code"] == "STATE_INVALID"
    assert error["message"].startswith(
        f"{display_path(backup)}, the copy of ~/.claude.json from before install, cannot be read"
    )
    assert error["next"].startswith(f"Move {display_path(backup)} aside, then run the command")
    backup.unlink()
    cli("uninstall", "--client", "claude")
    assert json.loads((user / ".claude.json").read_text()) == {"theme": "dark"}


def _reads_any_file() -> bool:
    """Whether this process reads a file of mode 000 (root, or CAP_DAC_OVERRIDE)."""
    with tempfile.NamedTemporaryFile() as probe:
        os.chmod(probe.name, 0)
        try:
            Path(probe.name).read_bytes()
        except PermissionError:
            return False
        return True


@pytest.mark.skipif(_reads_any_file(), reason="this user reads a file of any mode")
def test_a_backup_you_may_not_read_is_permission_denied_naming_it(user: Path) -> None:
    backup = _claude_json_backup(user)
    backup.chmod(0)

    error = _refused_uninstall()

    assert error["code"] == "PERMISSION_DENIED"
    assert error["message"].startswith(f"{display_path(backup)}, the copy of ~/.claude.json")
    assert error["next"].startswith(f"Make {display_path(backup)} yours and readable")
    backup.chmod(0o600)
    cli("uninstall", "--client", "claude")
    assert (user / ".claude.json").read_bytes() == b'{"theme": "dark"}\n'
