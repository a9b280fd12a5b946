"""`teamlore personal config`: the allowed lists are edited, never replaced; every change is
said (text and JSON); a model profile the Writer cannot use yet (no `[models.<name>]` table, no
key) is a warning."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from personal_ops_world import PROJECT_KEY, write_config

from support import git, in_process


def config(*args: str) -> tuple[int, dict[str, Any]]:
    proc = in_process("personal", "config", *args, "--format", "json")
    return proc.returncode, json.loads(proc.stdout)


def test_allow_adds_to_the_list_and_says_what_changed(home: Path) -> None:
    code, first = config("--allow", "agent_observation")
    assert code == 0 and first["changed"] is True
    assert first["allowedProvenance"] == ["user_explicit", "agent_observation"]
    assert first["changes"] == {
        "allowedProvenance": {"added": ["agent_observation"], "removed": []}
    }
    code, second = config("--allow", "document_import", "--scope", "project:*")
    assert second["allowedProvenance"] == ["user_explicit", "agent_observation", "document_import"]
    assert second["allowedScopes"] == ["global", "project:*"]
    text = in_process("personal", "config", "--deny", "user_explicit", "--remove-scope", "global")
    assert text.returncode == 0
    assert "changed allowed provenance: - user_explicit" in text.stdout
    assert "changed scopes: - global" in text.stdout and "Saved." in text.stdout
    code, shown = config()
    assert shown["allowedProvenance"] == ["agent_observation", "document_import"]
    assert shown["allowedScopes"] == ["project:*"] and shown["changed"] is False


def test_repeating_a_setting_changes_nothing_and_says_so(home: Path) -> None:
    config("--allow", "agent_observation")
    code, again = config("--allow", "agent_observation", "--deny", "document_import")
    assert (code, again["changed"], again["changes"]) == (0, False, {})
    text = in_process("personal", "config", "--allow", "agent_observation")
    assert "Nothing changed" in text.stdout and "Saved." not in text.stdout


def test_a_missing_model_profile_is_kept_with_a_warning(home: Path) -> None:
    code, result = config("--model-profile", "nightly")
    assert code == 0 and result["modelProfile"] == "nightly"
    assert result["changes"] == {"modelProfile": {"from": None, "to": "nightly"}}
    assert len(result["warnings"]) == 1 and "[models.nightly]" in result["warnings"][0]
    text = in_process("personal", "config")
    assert text.returncode == 0 and "warning:" in text.stderr and "[models.nightly]" in text.stderr
    with (home / "config.toml").open("a") as toml:
        toml.write('\n[models.nightly]\nmodel = "m"\napi_key_env = "NIGHTLY_KEY"\n')
    [no_key] = config()[1]["warnings"]
    assert "needs an API key in $NIGHTLY_KEY" in no_key and "Writer does not run" in no_key
    doctor = json.loads(in_process("doctor", "--format", "json").stdout)
    personal = next(c for c in doctor["checks"] if c["check"] == "personal")
    assert personal["status"] == "warn" and "$NIGHTLY_KEY" in personal["message"]
    (home / ".env").write_text("NIGHTLY_KEY=sk-nightly\n", encoding="utf-8")
    assert config()[1]["warnings"] == []
    doctor = json.loads(in_process("doctor", "--format", "json").stdout)
    personal = next(c for c in doctor["checks"] if c["check"] == "personal")
    assert personal["status"] == "ok"


def test_the_doctor_warns_rather_than_fails_on_a_missing_profile(home: Path) -> None:
    config("--model-profile", "nightly")
    doctor = json.loads(in_process("doctor", "--format", "json").stdout)
    personal = next(c for c in doctor["checks"] if c["check"] == "personal")
    assert personal["status"] == "warn" and "nightly" in personal["message"]


def test_bad_values_name_the_flag_and_change_nothing(home: Path) -> None:
    config("--allow", "agent_observation")
    before = (home / "config.toml").read_bytes()
    for args, flag in [
        (["--allow", "everything"], "--allow"),
        (["--deny", "nope"], "--deny"),
        (["--scope", "project:../x"], "--scope"),
        (["--remove-scope", "all"], "--remove-scope"),
        (["--allow", "document_import", "--deny", "document_import"], "--allow and --deny"),
    ]:
        code, refused = config(*args)
        assert code == 2 and refused["error"]["code"] == "INVALID_ARGUMENT", args
        assert refused["error"]["message"].startswith(flag), refused
    assert (home / "config.toml").read_bytes() == before


def test_a_profile_name_config_toml_cannot_hold_is_refused_and_nothing_is_saved(
    home: Path,
) -> None:
    config("--allow", "agent_observation")
    before = (home / "config.toml").read_bytes()
    for name in ["x\x7fy", "bad name!", "a.b", "x" * 65]:
        code, refused = config("--model-profile", name)
        assert code == 2 and refused["error"]["code"] == "INVALID_ARGUMENT", name
        assert refused["error"]["message"].startswith("--model-profile: "), refused
        assert "[models.<name>]" in refused["error"]["message"]
    assert (home / "config.toml").read_bytes() == before
    for command in (["personal", "status"], ["personal", "show"], ["personal", "config"]):
        assert in_process(*command).returncode == 0, command
    code, chosen = config("--model-profile", "night-ly_2")
    assert code == 0 and chosen["modelProfile"] == "night-ly_2"
    assert config("--model-profile", "")[1]["modelProfile"] is None


def test_a_scope_of_no_registered_project_is_kept_and_said(home: Path, tmp_path: Path) -> None:
    # kept for a project registered later; said, since a mistyped id reads and writes nothing
    write_config(home, project_root=tmp_path / "repo")
    code, saved = config("--scope", "project:deadbeef", "--scope", f"project:{PROJECT_KEY}")
    assert code == 0 and "project:deadbeef" in saved["allowedScopes"]
    assert saved["warnings"] == [
        "project:deadbeef is no registered project's context (`teamlore personal config` lists"
        " them): nothing is read or written for it until one is"
    ]
    text = in_process("personal", "config", env={"COLUMNS": "80"})
    assert "warning: project:deadbeef is no registered project's context" in text.stderr


def test_config_and_status_show_the_state_dir_from_the_tilde(home: Path) -> None:
    """As `status` does: a state dir under the user's home is shown from `~`."""
    user = {"HOME": str(home.parent)}
    shown = json.loads(in_process("personal", "config", "-f", "json", env=user).stdout)
    assert shown["configPath"] == f"~/{home.name}/config.toml"
    assert shown["personalDir"] == f"~/{home.name}/personal"
    status = in_process("personal", "status", env=user).stdout
    assert f"~/{home.name}/personal" in status and str(home) not in status


def test_the_text_view_shows_a_project_folder_from_the_tilde(home: Path) -> None:
    user = {"HOME": str(home.parent)}
    repo = home.parent / "src" / "shop"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    empty = home.parent / "no-sessions"
    empty.mkdir()
    synced = in_process("sync", "--source", f"claude={empty}", "--repository", str(repo), env=user)
    assert synced.returncode == 0, synced.stderr
    text = in_process("personal", "config", cwd=repo, env=user).stdout
    [project] = [line for line in text.splitlines() if line.startswith("project ")]
    assert project.endswith("  ~/src/shop") and str(home.parent) not in text
    shown = json.loads(in_process("personal", "config", "-f", "json", cwd=repo, env=user).stdout)
    # from `~` in both views (docs/cli-output.md); the JSON gave the recorded path
    assert [p["path"] for p in shown["projects"]] == ["~/src/shop"]


def test_a_change_rewrites_only_its_own_lines_of_config_toml(home: Path) -> None:
    """Comments, the order of keys and tables, and the tables teamlore does not own stay as
    they were; the defaults nobody chose are not written out."""
    original = (
        "# my teamlore settings\n"
        "[mystuff]  # not teamlore's\n"
        "x = 1\n"
        "\n"
        "[personal]\n"
        "# only what I said myself\n"
        'allowed_scopes = ["global"]  # for now\n'
        'allowed_provenance = ["user_explicit"]\n'
        "\n"
        "[personal.batch]\n"
        "idle_seconds = 60  # a minute\n"
        "\n"
        "[models.default]  # the Writer's\n"
        'model = "m"\n'
    )
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(original)
    os.chmod(path, 0o600)
    code, result = config("--allow", "agent_observation", "--model-profile", "default")
    assert code == 0 and result["changed"] is True
    assert path.read_text() == original.replace(
        'allowed_provenance = ["user_explicit"]\n',
        'allowed_provenance = ["user_explicit", "agent_observation"]\nmodel_profile = "default"\n',
    )
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    code, result = config("--deny", "agent_observation", "--scope", "project:*")
    assert code == 0 and path.read_text() == original.replace(
        'allowed_scopes = ["global"]  # for now\n',
        'allowed_scopes = ["global", "project:*"]  # for now\n',
    ).replace(
        'allowed_provenance = ["user_explicit"]\n',
        'allowed_provenance = ["user_explicit"]\nmodel_profile = "default"\n',
    )
