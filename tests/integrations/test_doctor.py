"""`teamlore doctor`: one line per check with ok / warn / fail and the fix; exit 1 on a failure.
Servers and hooks are started for real; the client CLIs are stand-ins on PATH that print a
version (the e2e tests run doctor next to the real ones)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from support import git, in_process


@pytest.fixture()
def user(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, version in (("claude", "2.1.332 (Claude Code)"), ("codex", "codex-cli 0.171.0")):
        stand_in = bin_dir / name
        stand_in.write_text(f"#!/bin/sh\necho '{version}'\n")
        stand_in.chmod(0o755)
    state = tmp_path / "state"
    return {
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "TEAMLORE_HOME": str(state),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(home / ".codex"),
    }


def doctor(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    done = in_process("doctor", *args, "--format", "json", env=env)
    return done.returncode, json.loads(done.stdout)


def by_check(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for check in report["checks"]:
        out.setdefault(check["check"], []).append(check)
    return out


def test_after_install_every_client_check_is_ok(user: dict[str, str], tmp_path: Path) -> None:
    assert in_process("install", "--client", "codex", env=user).returncode == 0
    code, report = doctor(user, "--client", "codex")
    checks = by_check(report)
    assert code == 0 and report["counts"]["fail"] == 0
    assert "codex-cli 0.171.0" in checks["codex.cli"][0]["message"]
    assert [c["status"] for c in checks["codex.server"]] == ["ok", "ok"]
    assert "lists 2 tools" in checks["codex.server"][0]["message"]
    assert all(c["status"] == "ok" for c in checks["codex.hook"])
    assert checks["state.permissions"][0]["status"] == "ok"
    text = in_process("doctor", "--client", "codex", env=user)
    assert text.returncode == 0 and "ok   codex.server" in text.stdout


def test_a_broken_server_a_removed_hook_and_loose_permissions_fail_with_fixes(
    user: dict[str, str],
) -> None:
    assert in_process("install", "--client", "claude", env=user).returncode == 0
    servers_file = Path(user["CLAUDE_CONFIG_DIR"]) / ".claude.json"
    config = json.loads(servers_file.read_text())
    config["mcpServers"]["teamlore"]["args"] = [
        "-m",
        "teamlore.cli.main",
        "mcp",
        "--capability",
        "nope",
    ]
    servers_file.write_text(json.dumps(config))
    (Path(user["CLAUDE_CONFIG_DIR"]) / "settings.json").write_text("{}")
    state = Path(user["TEAMLORE_HOME"])
    state.chmod(0o755)
    for n in range(6):  # more than the message names
        (state / f"copied-{n}").write_text("")
        (state / f"copied-{n}").chmod(0o644)

    code, report = doctor(user, "--client", "claude")
    checks = by_check(report)
    assert code == 1
    broken = next(c for c in checks["claude.server"] if "teamlore " in c["message"] + " ")
    assert broken["status"] == "fail" and broken["fix"]
    missing_hook = [c for c in checks["claude.config"] if "hook is missing" in c["message"]]
    assert missing_hook and missing_hook[0]["fix"].startswith("teamlore install --client claude")
    loose = checks["state.permissions"][0]
    assert loose["status"] == "fail" and loose["fix"].startswith("chmod -R go-rwx")
    readable = [p for p in [state, *state.rglob("*")] if p.stat().st_mode & 0o077]
    assert loose["message"].endswith(f" and {len(readable) - 5} more")


def test_a_server_older_than_the_state_dir_fails_with_the_install_that_mends_it(
    user: dict[str, str], tmp_path: Path
) -> None:
    """After an upgrade the client config may still start another, older teamlore (another
    venv): it starts and lists its tools, then refuses every call with DB_SCHEMA_TOO_NEW, and
    doctor said `ok`. A state database of a newer schema stands in for the upgrade here."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    for step in ("init", "status"):  # status makes the state database
        assert in_process("memory", step, cwd=repo, env=user).returncode == 0
    assert in_process("install", "--client", "codex", env=user).returncode == 0
    with sqlite3.connect(Path(user["TEAMLORE_HOME"]) / "memory-state.sqlite3") as db:
        (known,) = db.execute("PRAGMA user_version").fetchone()
        db.execute(f"PRAGMA user_version = {known + 1}")

    done = in_process("doctor", "--client", "codex", "--format", "json", cwd=repo, env=user)

    team = by_check(json.loads(done.stdout))["codex.server"][0]
    assert done.returncode == 1
    assert team["status"] == "fail"
    assert "refuses every call (DB_SCHEMA_TOO_NEW)" in team["message"]
    assert team["fix"].startswith("teamlore install --client codex")


def test_a_state_file_deep_in_the_state_dir_made_readable_is_named(user: dict[str, str]) -> None:
    """Only the state dir's top level was checked: `personal/profile.md` made 0644 by hand was
    reported private."""
    state = Path(user["TEAMLORE_HOME"])
    profile = state / "personal" / "profile.md"
    for folder in (state, profile.parent):
        folder.mkdir()
        folder.chmod(0o700)
    profile.write_text("# Profile\n")
    profile.chmod(0o644)
    _, report = doctor(user, "--client", "claude")
    (check,) = by_check(report)["state.permissions"]
    assert check["status"] == "fail"
    assert check["message"].endswith(": readable by others: personal/profile.md")


def test_a_missing_cli_and_no_installation_are_reported(user: dict[str, str]) -> None:
    env = {**user, "PATH": "/usr/bin:/bin"}
    code, report = doctor(env, "--client", "claude")
    checks = by_check(report)
    assert code == 1
    assert checks["claude.cli"][0]["status"] == "fail"
    assert "npm install -g @anthropic-ai/claude-code" in checks["claude.cli"][0]["fix"]
    assert checks["claude.config"][0]["status"] == "warn"
    assert checks["index"][0]["fix"] == "teamlore sync"


def test_a_client_that_is_not_used_is_not_a_failure(user: dict[str, str], tmp_path: Path) -> None:
    codex_only = tmp_path / "codex-only"
    codex_only.mkdir()
    (codex_only / "codex").symlink_to(tmp_path / "bin" / "codex")
    env = {**user, "PATH": f"{codex_only}{os.pathsep}/usr/bin:/bin"}
    assert in_process("install", "--client", "codex", env=env).returncode == 0

    code, report = doctor(env)
    checks = by_check(report)
    assert checks["claude.cli"] == [
        {
            "check": "claude.cli",
            "status": "ok",
            "message": "`claude` is not on PATH and teamlore is not installed for claude: "
            "not checked",
        }
    ]
    assert "claude.config" not in checks
    assert checks["codex.cli"][0]["status"] == "ok"
    assert report["counts"]["fail"] == 0 and code == 0, report
    # a client teamlore was installed for whose CLI went away is still a failure
    env["PATH"] = "/usr/bin:/bin"
    code, report = doctor(env)
    assert by_check(report)["codex.cli"][0]["status"] == "fail" and code == 1
    # and with no client at all, each one fails
    user_without_clients = {**user, "PATH": "/usr/bin:/bin", "TEAMLORE_HOME": str(tmp_path / "s2")}
    code, report = doctor(user_without_clients)
    checks = by_check(report)
    assert checks["claude.cli"][0]["status"] == "fail" == checks["codex.cli"][0]["status"]


def test_a_personal_document_broken_by_hand_is_named_with_its_line(
    user: dict[str, str], tmp_path: Path
) -> None:
    personal = tmp_path / "state" / "personal"
    personal.mkdir(parents=True, mode=0o700)
    (personal / "preferences.md").write_text("# Preferences\n\nTabs, not spaces.\n")
    _, report = doctor(user)
    [check] = by_check(report)["personal"]
    assert check["status"] == "fail"
    assert check["message"].startswith("PERSONAL_DOCUMENT_INVALID: preferences.md:3: ")
    assert "outside any section" in check["message"] and "## <title>" in check["message"]
    (personal / "preferences.md").write_text("# Preferences\n\n## Editor\nTabs, not spaces.\n")
    assert by_check(doctor(user)[1])["personal"][0]["status"] == "ok"


def test_a_personal_document_grown_by_hand_past_its_limit_is_named_with_its_size(
    user: dict[str, str], tmp_path: Path
) -> None:
    # the Writer does not edit it and every agent's session-start hook reads it all
    personal = tmp_path / "state" / "personal"
    personal.mkdir(parents=True, mode=0o700)
    notes = "".join(f"## Note {i}\n" + "notes " * 100 + "\n" for i in range(40))
    (personal / "preferences.md").write_text("# Preferences\n\n" + notes)
    _, report = doctor(user)
    [check] = by_check(report)["personal"]
    assert check["status"] == "fail"
    assert check["message"].startswith("PERSONAL_DOCUMENT_TOO_LARGE: preferences.md holds ")
    assert "over the 16,384 a document may hold" in check["message"]


def test_a_secret_typed_into_a_personal_document_is_named_by_file_and_line_not_quoted(
    user: dict[str, str], tmp_path: Path
) -> None:
    # the Writer never writes one, but a person may: every agent reads the file at session start
    personal = tmp_path / "state" / "personal"
    personal.mkdir(parents=True, mode=0o700)
    key = "AKIA" + "QWERTYUIOPASDFGH"
    (personal / "profile.md").write_text(f"# Profile\n\n## Creds\naws {key}\n")
    _, report = doctor(user)
    [check] = by_check(report)["personal"]
    assert check["status"] == "fail"
    assert check["message"].startswith("SENSITIVE_CONTENT_REJECTED: profile.md:4 holds a secret (")
    assert key not in json.dumps(report)


def test_a_state_dir_under_the_home_is_named_from_the_tilde(user: dict[str, str]) -> None:
    mine = {**user, "TEAMLORE_HOME": str(Path(user["HOME"]) / ".state")}
    assert in_process("sync", env=mine).returncode == 0
    _, report = doctor(mine, "--client", "codex")
    assert by_check(report)["state.permissions"][0]["message"] == "~/.state is private (0700/0600)"


def test_a_misspelt_table_is_named_with_the_one_it_probably_meant(user: dict[str, str]) -> None:
    """`[embedings]` and `[model.default]` were read by no command and said by none: the user
    believed their setting was in force."""
    state = Path(user["TEAMLORE_HOME"])
    state.mkdir(mode=0o700)
    config = state / "config.toml"
    config.write_text('[embedings]\nbackend = "off"\n\n[model.default]\nmodel = "m"\n')
    config.chmod(0o600)
    checks = by_check(doctor(user)[1])
    assert checks["config"][0]["status"] == "warn"
    assert checks["config"][0]["message"].endswith(
        "no command reads [embedings] (did you mean [embeddings]?), "
        "[model] (did you mean [models]?)"
    )
    config.write_text('[embeddings]\nbackend = "off"\n\n[models.default]\nmodel = "m"\n')
    assert by_check(doctor(user)[1])["config"][0]["status"] == "ok"


def test_an_invalid_config_fails_once_and_the_checks_that_read_it_wait_for_it(
    user: dict[str, str],
) -> None:
    state = Path(user["TEAMLORE_HOME"])
    state.mkdir(mode=0o700)
    config = state / "config.toml"
    config.write_text('[models.default]\nmodle = "m"\n')  # read by `[models]` users only
    config.chmod(0o600)
    code, report = doctor(user)
    checks = by_check(report)
    assert code == 1 and checks["config"][0]["status"] == "fail"
    assert checks["config"][0]["message"].endswith(
        "line 2: [models.default] modle: not a setting teamlore knows here "
        "(it reads base_url, model, api_key_env, api, timeout_s, max_retries)"
    )
    config.write_text('[embeddings]\nprovider = "off"\n')  # read by every command
    checks = by_check(doctor(user)[1])
    assert [c["status"] for c in checks["config"]] == ["fail"]
    assert {checks[n][0]["message"] for n in ("repositories", "personal")} == {
        "not checked while config.toml is invalid"
    }


def test_a_damaged_install_record_is_one_failing_check_and_the_others_still_run(
    user: dict[str, str],
) -> None:
    folder = Path(user["TEAMLORE_HOME"]) / "integrations"
    folder.mkdir(parents=True, mode=0o700)
    folder.parent.chmod(0o700)
    manifest = folder / "manifest.json"
    manifest.write_text('{"format": "teamlore-integrations@v1", "installations": [{')
    manifest.chmod(0o600)
    code, report = doctor(user)
    checks = by_check(report)
    assert code == 1 and [c["status"] for c in checks["integrations"]] == ["fail"]
    assert "manifest.json is damaged" in checks["integrations"][0]["message"]
    assert checks["state.permissions"][0]["status"] == "ok"


def test_the_text_report_fits_80_columns_and_says_every_word(user: dict[str, str]) -> None:
    state = Path(user["TEAMLORE_HOME"])
    state.mkdir(mode=0o700)
    (state / "config.toml").write_text('[models.default]\nmodle = "m"\n')
    (state / "config.toml").chmod(0o600)
    env = {**user, "HOME": str(state.parent), "COLUMNS": "80"}  # paths shown as ~/state/…
    message = by_check(doctor(env)[1])["config"][0]["message"]
    assert len(message) > 80
    text = in_process("doctor", env=env).stdout.splitlines()
    assert max(len(line) for line in text) <= 80
    [start] = [i for i, line in enumerate(text) if line.startswith("fail config ")]
    end = next(i for i, line in enumerate(text) if i > start and "fix: " in line)
    said = [text[start].split(None, 2)[2], *(line.strip() for line in text[start + 1 : end])]
    assert " ".join(said) == message


def test_a_damaged_intent_record_does_not_hide_what_the_manifest_says_is_installed(
    user: dict[str, str],
) -> None:
    assert in_process("install", "--client", "codex", env=user).returncode == 0
    intent = Path(user["TEAMLORE_HOME"]) / "integrations" / "intent.json"
    intent.write_text('{"operation": "ins')
    intent.chmod(0o600)
    code, report = doctor(user, "--client", "codex")
    checks = by_check(report)
    assert code == 1 and [c["status"] for c in checks["integrations"]] == ["fail"]
    assert "intent.json is damaged" in checks["integrations"][0]["message"]
    assert all(c["status"] == "ok" for c in checks["codex.config"]), checks["codex.config"]
    assert [c["status"] for c in checks["codex.server"]] == ["ok", "ok"]


def test_the_repositories_check_counts_what_repo_list_lists(
    user: dict[str, str], tmp_path: Path
) -> None:
    """Doctor said `0 registered, all present` beside a `repo list` that listed the repository
    `sync --repository` registered: it counted config.toml's entries (the personal memory's
    projects), which a config.toml written anew by hand had lost. It counts the index's now,
    and says which of them the personal memory does not know."""
    shop = tmp_path / "shop"
    shop.mkdir()
    git(shop, "init", "-q")
    git(shop, "commit", "-q", "--allow-empty", "-m", "first")
    assert in_process("sync", "--repository", str(shop), env=user).returncode == 0
    assert by_check(doctor(user)[1])["repositories"][0] == {
        "check": "repositories",
        "status": "ok",
        "message": "1 registered, all present",
    }
    config = Path(user["TEAMLORE_HOME"]) / "config.toml"
    config.write_text('[embeddings]\nbackend = "off"\n')  # written anew, the registration lost
    listed = json.loads(in_process("repo", "list", "--format", "json", env=user).stdout)
    assert [r["name"] for r in listed["repositories"]] == ["shop"]
    (check,) = by_check(doctor(user)[1])["repositories"]
    assert check["status"] == "warn"
    assert check["message"] == (
        "1 registered, all present; config.toml does not name 1 of them, so the personal "
        f"memory does not know it as a project: {shop.resolve()}"
    )
    assert check["fix"] == "`teamlore sync --repository PATH` for it"

    assert in_process("sync", "--repository", str(shop), env=user).returncode == 0
    assert by_check(doctor(user)[1])["repositories"][0]["status"] == "ok"
    os.rename(shop, tmp_path / "moved")
    (check,) = by_check(doctor(user)[1])["repositories"]
    assert check["status"] == "warn"
    assert check["message"] == (
        f"1 of 1 registered repositories can no longer be used: {shop.resolve()}"
    )


def test_a_long_list_of_gone_folders_names_three_and_counts_the_rest(
    user: dict[str, str], tmp_path: Path
) -> None:
    config = Path(user["TEAMLORE_HOME"]) / "config.toml"
    config.parent.mkdir(mode=0o700, exist_ok=True)
    config.write_text(
        "".join(
            f'[[repositories]]\npath = "{tmp_path / f"gone{n}"}"\n'
            f'repository_key = "r{n}"\nworktree_key = "w{n}"\n\n'
            for n in range(5)
        )
    )
    (check,) = by_check(doctor(user)[1])["repositories"]
    assert check["status"] == "warn"
    assert check["message"].endswith(
        f"whose folders are gone: {tmp_path / 'gone0'}, {tmp_path / 'gone1'}, "
        f"{tmp_path / 'gone2'} and 2 more"
    )
