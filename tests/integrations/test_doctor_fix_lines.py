"""Doctor's fixes are the install that mends what it found: with the tier flags the installation
was made with (a fix after `install --team` that dropped `--team` re-installed the read-only tier
without a word), and saying what the failure costs (a Codex entry is `required = true` at user
scope: Codex starts no session while its command is gone). A server that starts another, older
teamlore than this one is named too, not `ok`."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from install_world import user_env

from support import in_process
from teamlore import __version__
from teamlore.integrations import doctor as doctor_checks
from teamlore.integrations.manifest import load_manifest


@pytest.fixture()
def user(tmp_path: Path) -> dict[str, str]:
    return user_env(tmp_path, {"claude": "2.1.332 (Claude Code)", "codex": "codex-cli 0.171.0"})


def _entry_checks(user: dict[str, str], client: str) -> list[doctor_checks.Check]:
    manifest = load_manifest(Path(user["TEAMLORE_HOME"]))
    (installation,) = [i for i in manifest.installations if i.client == client]
    return doctor_checks.entry_checks(installation)[0]


def test_the_fix_for_a_removed_hook_keeps_the_tiers_it_was_installed_with(
    user: dict[str, str], tmp_path: Path
) -> None:
    flags = ("--team", "--personal", "--sync-on-stop")
    done = in_process("install", "--client", "claude", *flags, cwd=tmp_path, env=user)
    assert done.returncode == 0, done.stderr
    (Path(user["CLAUDE_CONFIG_DIR"]) / "settings.json").write_text("{}")

    missing = [c for c in _entry_checks(user, "claude") if "hook is missing" in c.message]

    assert [c.fix for c in missing] == [
        "teamlore install --client claude --scope user --team --personal --sync-on-stop"
    ] * 2  # SessionStart and Stop


def test_a_codex_server_whose_python_is_gone_says_codex_starts_no_session(
    user: dict[str, str], tmp_path: Path
) -> None:
    done = in_process("install", "--client", "codex", "--team", cwd=tmp_path, env=user)
    assert done.returncode == 0, done.stderr
    config = Path(user["CODEX_HOME"]) / "config.toml"
    gone = str(tmp_path / "venv" / "bin" / "python3")  # the virtualenv moved
    text = config.read_text()
    config.write_text(text.replace(f'command = "{sys.executable}"', f'command = "{gone}"'))
    assert tomllib.loads(config.read_text())["mcp_servers"]["teamlore"]["required"] is True

    failed = [c for c in _entry_checks(user, "codex") if c.status == "fail"]

    assert [c.message for c in failed] == [
        f"mcp_servers.{name}: `{gone}` does not exist, and Codex refuses to start any session"
        " until it is fixed (required = true)"
        for name in ("teamlore", "teamlore_personal")
    ]
    assert {c.fix for c in failed} == {"teamlore install --client codex --scope user --team"}


# the personal server of an older teamlore: this one, naming another version as it starts
def _teamlore_server(version: str, tmp_path: Path) -> dict[str, Any]:
    """The personal server as a client starts it, from an installation of teamlore `version`."""
    another = (
        f"import runpy, teamlore; teamlore.__version__ = {version!r};"
        " runpy.run_module('teamlore.cli.main', run_name='__main__')"
    )
    return {
        "name": "teamlore_personal",
        "command": sys.executable,
        "args": ["-c", another, "mcp", "--capability", "read", "--client-id", "claude", "--global"],
        "env": {"TEAMLORE_HOME": str(tmp_path / "state")},
    }


def test_a_server_that_starts_an_older_teamlore_is_a_warning_with_the_install(
    tmp_path: Path,
) -> None:
    again = "teamlore install --client claude --scope user --team"

    check = doctor_checks.server_check(
        "claude", _teamlore_server("0.1.0", tmp_path), tmp_path, again=again
    )

    assert check.status == "warn", check
    assert check.message == (
        f"teamlore_personal starts teamlore 0.1.0, not this teamlore ({__version__}):"
        f" `{sys.executable}` is another installation"
    )
    assert check.fix == f"{again} (points it at this teamlore)"


def test_a_server_that_starts_a_newer_teamlore_says_to_upgrade_this_one(tmp_path: Path) -> None:
    """It said to point the client at this teamlore, or to upgrade the newer one on PATH."""
    again = "teamlore install --client claude --scope user --team"

    check = doctor_checks.server_check(
        "claude", _teamlore_server("9.0.0", tmp_path), tmp_path, again=again
    )

    assert check.status == "warn", check
    assert check.message == (
        f"teamlore_personal starts teamlore 9.0.0, newer than this teamlore ({__version__}):"
        f" `{sys.executable}` is another installation"
    )
    assert check.fix == "upgrade this teamlore, or run the newer one's own `teamlore doctor`"


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("0.1.0", "0.2.0.dev0"),
        ("0.2.0.dev0", "0.2.0.dev1"),
        ("0.2.0.dev9", "0.2.0a1"),
        ("0.2.0a1", "0.2.0rc1"),
        ("0.2.0rc1", "0.2.0"),
        ("0.2.0", "0.2.0.post1"),
        ("0.9.0", "0.10.0"),
        ("0.2.1.dev3+gabc", "0.2.1.dev5+gdef"),
    ],
)
def test_teamlore_versions_are_ordered_as_released(older: str, newer: str) -> None:
    """A release candidate is older than its release (`rc1` was read as a fourth number)."""
    before, after = doctor_checks._release_order(older), doctor_checks._release_order(newer)
    assert before is not None and after is not None and before < after


def test_a_version_doctor_cannot_read_is_not_taken_for_newer() -> None:
    assert doctor_checks._release_order("1.0") == doctor_checks._release_order("1.0.0")
    assert [doctor_checks._release_order(v) for v in ("", "None", "0.2.0.dev²")] == [None] * 3
