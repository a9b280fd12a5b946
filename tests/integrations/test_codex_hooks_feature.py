"""Codex runs no hooks under `[features] hooks = false`, or `codex_hooks = false` (its older
alias, which `hooks` overrides). A user who wrote either chose that: install leaves it off, adds
no hook that would need it, and says so with the way to turn it on (`--force`); uninstall then
leaves the user's `false` as it is."""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import pytest
from install_world import CODEX_CONFIG, cli, op, tree

from agent_clis import AgentClis
from support import teamlore_cli

HOOKS_OFF = CODEX_CONFIG + "\n[features]\ncodex_hooks = false\n"
# Codex 0.171's own name for the feature, which overrides `codex_hooks` (`codex features list`)
SWITCHED_OFF = CODEX_CONFIG + "\n[features]\nhooks = false\n"


def codex_config(home: Path) -> dict[str, object]:
    return tomllib.loads((home / ".codex" / "config.toml").read_text())


def written_off(home: Path, text: str = HOOKS_OFF) -> dict[str, bytes]:
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(text)
    return tree(home)


def test_hooks_the_user_turned_off_stay_off_and_install_says_what_that_means(user: Path) -> None:
    before = written_off(user)
    done = op("install", user, client="codex")
    config = codex_config(user)
    assert config["features"] == {"codex_hooks": False}
    assert set(config["mcp_servers"]) == {"other", "teamlore", "teamlore_personal"}  # type: ignore[arg-type]
    assert not (user / ".codex" / "hooks.json").exists()
    [note] = [n for n in done["notes"] if n.startswith("codex:")]
    assert note.startswith(
        "codex: hooks stay off as you set them (~/.codex/config.toml: features.codex_hooks"
        " = false), so teamlore added no SessionStart hook"
    )
    assert "`teamlore install --client codex --force` turns hooks on" in note
    assert done["installed"][0]["keptOff"] == ["~/.codex/config.toml: features.codex_hooks"]
    [check] = [
        c for c in op("doctor", user, client="codex")["checks"] if c["check"] == "codex.hook"
    ]
    assert check["status"] == "ok" and check["message"] == (
        "hooks off in ~/.codex/config.toml as you set them: sessions start without the memory brief"
    )

    op("uninstall", user, client="codex")
    assert tree(user) == before


def test_hooks_off_by_their_current_name_stay_off_as_codex_hooks_false_does(user: Path) -> None:
    """Install added its hook and `codex_hooks = true` under `hooks = false`, which Codex
    reads first: a hook that never ran, and a flag that meant nothing."""
    before = written_off(user, SWITCHED_OFF)

    done = op("install", user, client="codex")

    assert codex_config(user)["features"] == {"hooks": False}
    assert not (user / ".codex" / "hooks.json").exists()
    assert done["installed"][0]["keptOff"] == ["~/.codex/config.toml: features.hooks"]
    [note] = [n for n in done["notes"] if n.startswith("codex:")]
    assert note.startswith(
        "codex: hooks stay off as you set them (~/.codex/config.toml: features.hooks = false),"
        " so teamlore added no SessionStart hook"
    )
    [check] = [
        c for c in op("doctor", user, client="codex")["checks"] if c["check"] == "codex.hook"
    ]
    assert check["status"] == "ok" and check["message"].startswith("hooks off in")
    op("uninstall", user, client="codex")
    assert tree(user) == before


def test_force_turns_hooks_on_by_their_current_name_and_uninstall_puts_the_false_back(
    user: Path,
) -> None:
    before = written_off(user, SWITCHED_OFF)
    done = op("install", user, client="codex", force=True)
    assert codex_config(user)["features"] == {"hooks": True, "codex_hooks": True}
    assert "hook session-start" in (user / ".codex" / "hooks.json").read_text()
    assert not any("hooks stay" in n for n in done["notes"])
    op("uninstall", user, client="codex")
    assert tree(user) == before


def test_hooks_off_by_their_current_name_after_install_take_the_hook_and_its_flag_out(
    user: Path,
) -> None:
    """The next install takes out the hook and the `codex_hooks = true` it wrote beside the
    user's `hooks = false`, which stays, through uninstall too."""
    (user / ".codex").mkdir()
    (user / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    op("install", user, client="codex")
    config = user / ".codex" / "config.toml"
    config.write_text(
        config.read_text().replace("codex_hooks = true", "codex_hooks = true\nhooks = false")
    )
    [check] = [
        c
        for c in op("doctor", user, client="codex")["checks"]
        if c["check"] == "codex.hook" and c["status"] == "warn"
    ]
    assert "`teamlore install --client codex --scope user --force` turns them on" in check["fix"]

    done = op("install", user, client="codex", personal=True)

    assert codex_config(user)["features"] == {"hooks": False}
    assert "session-start" not in (user / ".codex" / "hooks.json").read_text()
    assert done["installed"][0]["keptOff"] == ["~/.codex/config.toml: features.hooks"]
    op("uninstall", user, client="codex")
    assert config.read_text() == SWITCHED_OFF
    assert not (user / ".codex" / "hooks.json").exists()


@pytest.mark.parametrize("text", [HOOKS_OFF, SWITCHED_OFF], ids=["codex_hooks", "hooks"])
def test_a_reinstall_says_hooks_an_earlier_force_turned_on_stay_on_and_how_to_go_back(
    user: Path, text: str
) -> None:
    """The manifest records the user's `false` (uninstall puts it back); a later install
    without --force kept the hooks on and said nothing."""
    key = "hooks" if text == SWITCHED_OFF else "codex_hooks"
    before = written_off(user, text)
    cli("install", "--client", "codex", "--force")

    again = op("install", user, client="codex", personal=True)
    shown = teamlore_cli("install", "--client", "codex", env={"COLUMNS": "80"})

    assert again["installed"][0]["keptOn"] == [f"~/.codex/config.toml: features.{key}"]
    [note] = [n for n in again["notes"] if n.startswith("codex: hooks stay on")]
    assert note.startswith(
        f"codex: hooks stay on (~/.codex/config.toml: features.{key} = true): an earlier"
        " `teamlore install --force` (or an older teamlore) turned your `false` on"
    )
    assert "`teamlore uninstall --client codex` puts your `false` back" in note
    assert shown.returncode == 0, shown.stderr
    assert "hooks stay on" in " ".join(shown.stdout.split())
    assert codex_config(user)["features"][key] is True  # type: ignore[index]
    assert not any(
        "hooks stay on" in n for n in op("install", user, client="codex", force=True)["notes"]
    )
    config = user / ".codex" / "config.toml"  # the way back the note names
    config.write_text(config.read_text().replace(f"\n{key} = true", f"\n{key} = false"))
    op("install", user, client="codex")
    assert "session-start" not in (user / ".codex" / "hooks.json").read_text()
    op("uninstall", user, client="codex")
    assert tree(user) == before


@pytest.mark.parametrize("text", [HOOKS_OFF, SWITCHED_OFF], ids=["codex_hooks", "hooks"])
def test_the_dry_run_says_the_same_and_the_text_fits_80_columns(user: Path, text: str) -> None:
    before = written_off(user, text)
    [preview] = op("install", user, client="codex", dryRun=True)["installed"]
    assert [f["path"] for f in preview["files"]] == [str(user / ".codex" / "config.toml")]
    assert "codex_hooks" not in preview["files"][0]["diff"]
    shown = teamlore_cli("install", "--client", "codex", "--dry-run", env={"COLUMNS": "80"})
    assert shown.returncode == 0, shown.stderr
    said = " ".join(shown.stdout.split())
    assert "hooks stay off as you set them" in said and "trust teamlore's" not in said
    assert all(len(line) <= 80 for line in shown.stdout.splitlines() if "hooks stay" in line)
    assert tree(user) == before


def test_force_turns_hooks_on_and_uninstall_turns_them_off_again(user: Path) -> None:
    before = written_off(user)
    done = op("install", user, client="codex", force=True)
    assert codex_config(user)["features"] == {"codex_hooks": True}
    assert "hook session-start" in (user / ".codex" / "hooks.json").read_text()
    assert not any("hooks stay off" in n for n in done["notes"])
    op("uninstall", user, client="codex")
    assert tree(user) == before


def test_hooks_turned_off_after_install_stay_off_through_the_next_install_and_uninstall(
    user: Path,
) -> None:
    (user / ".codex").mkdir()
    (user / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    op("install", user, client="codex")
    config = user / ".codex" / "config.toml"
    config.write_text(config.read_text().replace("codex_hooks = true", "codex_hooks = false"))
    checks = op("doctor", user, client="codex")["checks"]
    [check] = [c for c in checks if c["check"] == "codex.hook" and c["status"] == "warn"]
    assert check["message"].startswith("hooks are off in ~/.codex/config.toml")
    assert "`teamlore install --client codex --scope user --force` turns them on" in check["fix"]

    op("install", user, client="codex", personal=True)  # another tier, later
    assert codex_config(user)["features"] == {"codex_hooks": False}
    assert "session-start" not in (user / ".codex" / "hooks.json").read_text()
    op("uninstall", user, client="codex")
    assert config.read_text() == CODEX_CONFIG + "\n[features]\ncodex_hooks = false\n"
    assert not (user / ".codex" / "hooks.json").exists()


def test_hooks_turned_off_after_install_stay_off_through_an_uninstall_right_after(
    user: Path,
) -> None:
    """The user's `false` is theirs even when no install ran since to notice it: uninstall
    removes teamlore's servers and hook and leaves the flag as the user set it."""
    (user / ".codex").mkdir()
    (user / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    op("install", user, client="codex")
    config = user / ".codex" / "config.toml"
    config.write_text(config.read_text().replace("codex_hooks = true", "codex_hooks = false"))

    op("uninstall", user, client="codex")
    assert config.read_text() == CODEX_CONFIG + "\n[features]\ncodex_hooks = false\n"
    assert not (user / ".codex" / "hooks.json").exists()


def _hooks_feature_check(user: Path) -> dict[str, str]:
    """Doctor's `codex.hook` check of the hooks feature (another says whether the hook runs)."""
    [check] = [
        c
        for c in op("doctor", user, client="codex")["checks"]
        if c["check"] == "codex.hook" and c["message"].startswith("hooks ")
    ]
    return dict(check)


def _codex_runs_hooks(codex: Path, home: Path) -> bool:
    """What the real Codex CLI says of its `hooks` feature with this HOME's config.toml."""
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "CODEX_HOME": str(home / ".codex")}
    done = subprocess.run(
        [str(codex), "features", "list"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    [row] = [line.split() for line in done.stdout.splitlines() if line.split()[:1] == ["hooks"]]
    return row[-1] == "true"


@pytest.mark.e2e
def test_hooks_turned_off_by_their_current_name_are_off_as_codex_reads_them(
    user: Path, agent_clis: AgentClis
) -> None:
    """Codex 0.171 calls the feature `hooks` (`codex_hooks` is its older alias, which `hooks`
    overrides): `hooks = false` turns the hook off even over install's `codex_hooks = true`,
    and doctor said `hooks feature on`."""
    (user / ".codex").mkdir()
    (user / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    op("install", user, client="codex")
    config = user / ".codex" / "config.toml"
    config.write_text(
        config.read_text().replace("codex_hooks = true", "codex_hooks = true\nhooks = false")
    )
    assert not _codex_runs_hooks(agent_clis.codex, user)

    check = _hooks_feature_check(user)

    assert check["status"] == "warn"
    assert check["message"] == (
        "hooks are off in ~/.codex/config.toml (hooks = false): Codex does not run the hook"
    )
    assert check["fix"].startswith("`teamlore install --client codex --scope user --force`")


@pytest.mark.e2e
def test_a_config_that_names_no_hooks_key_runs_the_hook_and_doctor_says_why(
    user: Path, agent_clis: AgentClis
) -> None:
    """Hooks are on by default in Codex 0.171: with the key install wrote deleted, doctor says
    the hook runs, and why, rather than naming a setting that is not there."""
    (user / ".codex").mkdir()
    (user / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    op("install", user, client="codex")
    config = user / ".codex" / "config.toml"
    config.write_text(config.read_text().replace("codex_hooks = true", ""))
    assert _codex_runs_hooks(agent_clis.codex, user)

    check = _hooks_feature_check(user)

    assert check["status"] == "ok"
    assert check["message"] == (
        "hooks on: ~/.codex/config.toml sets neither hooks nor codex_hooks, and Codex 0.171 runs"
        " hooks then; it runs the hook once you trusted it (/hooks in codex)"
    )
