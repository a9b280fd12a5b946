"""`teamlore install --client pi` writes one whole file teamlore owns, the Pi extension
(integrations/pi.py; installer.py "whole files"): created private, replaced only while it holds
teamlore's bytes, a file that is not teamlore's refused with INTEGRATION_CONFLICT (or, with
--force, backed up and put back by uninstall), an edited copy kept by uninstall; a real SIGKILL
at every step leaves it as before or as intended. Pi is opt-in: `--client all` never touches it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from install_world import op, refused, tree

from support import git, run_killed_at, teamlore_cli
from teamlore.integrations import pi

EXTENSION = Path(".pi/agent/extensions/teamlore.js")
RUN = """
import sys
from pathlib import Path
from teamlore.ops.registry import OpContext, run_operation
run_operation(sys.argv[1], OpContext(cwd=Path(sys.argv[2])), {"client": "pi"})
"""
STEPS = ["planned", "intent-written", "file-written-1", "files-written", "manifest-saved"]


def test_install_writes_a_private_extension_that_runs_this_teamlore(user: Path) -> None:
    done = op("install", user, client="pi")
    path = user / EXTENSION
    assert done["installed"][0]["files"] == [{"path": str(path), "action": "created"}]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    source = path.read_text()
    assert '"hook", "user-turn", "--client", "pi"' in source
    assert '"hook", "session-start", "--client", "pi"' in source
    assert f'"TEAMLORE_HOME": "{os.environ["TEAMLORE_HOME"]}"' in source
    assert any("uninstall --client pi" in note for note in done["notes"])
    assert op("install", user, client="pi")["installed"][0]["files"][0]["action"] == "unchanged"


def test_doctor_names_the_extension_from_home(user: Path) -> None:
    """As uninstall does (`~/.pi/…`; docs/cli-output.md, "Your home folder is `~`")."""
    op("install", user, client="pi")
    check = next(c for c in op("doctor", user, client="pi")["checks"] if c["check"] == "pi.config")
    assert check["message"] == f"~/{EXTENSION} (user scope)"


def test_the_agent_dir_follows_pi_coding_agent_dir(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi-agent"))
    op("install", user, client="pi")
    assert (tmp_path / "pi-agent" / "extensions" / "teamlore.js").is_file()
    assert not (user / ".pi").exists()


def test_uninstall_removes_the_file_and_the_folders_install_created(user: Path) -> None:
    before = tree(user)
    op("install", user, client="pi")
    done = op("uninstall", user, client="pi")
    assert done["uninstalled"][0]["files"][0]["action"] == "removed"
    assert tree(user) == before
    assert not (user / ".pi").exists()


def test_a_file_teamlore_did_not_write_is_refused_and_left_as_it_was(user: Path) -> None:
    path = user / EXTENSION
    path.parent.mkdir(parents=True)
    path.write_text("// my own extension\n")
    err = refused("install", user, client="pi")
    assert err.code == "INTEGRATION_CONFLICT"
    assert "is not teamlore's" in err.message and "--force" in err.message
    assert path.read_text() == "// my own extension\n"
    assert refused("uninstall", user, client="pi").code == "NOTHING_INSTALLED"


def test_force_replaces_it_and_uninstall_puts_it_back_byte_for_byte(user: Path) -> None:
    path = user / EXTENSION
    path.parent.mkdir(parents=True)
    path.write_bytes(b"// mine\r\n\x00")
    op("install", user, client="pi", force=True)
    assert b"teamlore" in path.read_bytes()
    assert op("uninstall", user, client="pi")["uninstalled"][0]["files"][0]["action"] == "restored"
    assert path.read_bytes() == b"// mine\r\n\x00"


def test_a_copy_edited_since_install_is_kept_refused_on_reinstall_and_flagged_by_doctor(
    user: Path,
) -> None:
    op("install", user, client="pi")
    path = user / EXTENSION
    path.write_text(path.read_text() + "// my tweak\n")
    edited = path.read_bytes()
    err = refused("install", user, client="pi")
    assert err.code == "INTEGRATION_CONFLICT" and "edited since teamlore wrote it" in err.message
    check = next(c for c in op("doctor", user, client="pi")["checks"] if c["check"] == "pi.config")
    assert check["status"] == "warn" and "edited since install" in check["message"]
    done = op("uninstall", user, client="pi")
    assert done["uninstalled"][0]["files"][0]["action"] == "kept (changed since install)"
    assert path.read_bytes() == edited


def test_force_over_an_edited_copy_puts_the_edit_back_on_uninstall(user: Path) -> None:
    op("install", user, client="pi")
    path = user / EXTENSION
    path.write_text("// rewritten by hand\n")
    op("install", user, client="pi", force=True)
    assert "rewritten by hand" not in path.read_text()
    op("uninstall", user, client="pi")
    assert path.read_text() == "// rewritten by hand\n"


def test_force_again_over_a_second_file_of_the_user_keeps_its_backup_for_uninstall(
    user: Path,
) -> None:
    """The second --force stored its backup under the first one's name, then dropped that
    name: uninstall refused (CONFIG_INVALID, the backup is missing) and the file was lost."""
    path = user / EXTENSION
    path.parent.mkdir(parents=True)
    path.write_text("// mine, first\n")
    op("install", user, client="pi", force=True)
    path.write_text("// mine, second\n")
    op("install", user, client="pi", force=True)
    assert "mine" not in path.read_text()
    assert op("uninstall", user, client="pi")["uninstalled"][0]["files"][0]["action"] == "restored"
    assert path.read_text() == "// mine, second\n"
    assert os.listdir(Path(os.environ["TEAMLORE_HOME"]) / "integrations" / "backups") == []


def test_pi_is_opt_in_all_never_installs_it(user: Path) -> None:
    done = op("install", user, client="all")
    assert sorted(d["client"] for d in done["installed"]) == ["claude", "codex"]
    assert not (user / ".pi").exists()


def test_pi_not_on_path_is_refused_with_how_to_install_it(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bin" / "pi").unlink()
    err = refused("install", user, client="pi")
    assert err.code == "CLIENT_NOT_FOUND"
    assert "npm install -g @earendil-works/pi-coding-agent" in err.message
    assert not (user / ".pi").exists()
    op("install", user, client="pi", force=True)  # --force writes it anyway, as for the others
    assert (user / EXTENSION).is_file()


@pytest.mark.parametrize("option", ["team", "personal", "syncOnStop"])
def test_mcp_server_options_are_refused_for_pi_as_usage(user: Path, option: str) -> None:
    err = refused("install", user, client="pi", **{option: True})
    assert err.code == "INVALID_ARGUMENT" and err.exit_code == 2
    assert not (user / ".pi").exists()


def test_project_scope_writes_the_portable_extension_safe_to_commit(
    user: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    op("install", repo, client="pi", scope="project")
    source = (repo / ".pi" / "extensions" / pi.EXTENSION_NAME).read_text()
    assert 'const TEAMLORE = ["teamlore"];' in source
    assert "const TEAMLORE_ENV = {};" in source
    assert str(tmp_path) not in source


def test_the_cli_text_and_json_say_what_was_written(user: Path) -> None:
    text = teamlore_cli("install", "--client", "pi", cwd=user, env={"COLUMNS": "80"})
    assert text.returncode == 0, text.stderr
    assert "pi (user scope): installed" in text.stdout
    assert "created" in text.stdout and "teamlore.js" in text.stdout
    usage = teamlore_cli("install", "--client", "pi", "--team", cwd=user)
    assert usage.returncode == 2 and "INVALID_ARGUMENT" in usage.stderr + usage.stdout


def each_file_as_before_or_as_intended(
    now: dict[str, bytes], before: dict[str, bytes], intended: dict[str, bytes]
) -> None:
    for name in sorted(set(before) | set(intended) | set(now)):
        assert now.get(name) in (before.get(name), intended.get(name)), name


@pytest.mark.parametrize("step", STEPS)
def test_a_kill_at_any_step_of_install_is_undone_by_uninstall_or_completed_by_install(
    user: Path, step: str
) -> None:
    before = tree(user)
    op("install", user, client="pi")
    intended = tree(user)
    op("uninstall", user, client="pi")
    run_killed_at(f"install.{step}", RUN, "install", str(user))
    each_file_as_before_or_as_intended(tree(user), before, intended)
    if step == "planned":
        assert tree(user) == before
        return
    op("install", user, client="pi")
    assert tree(user) == intended
    op("uninstall", user, client="pi")
    assert tree(user) == before


@pytest.mark.parametrize("step", STEPS)
def test_a_kill_at_any_step_of_uninstall_is_completed_by_the_next_uninstall(
    user: Path, step: str
) -> None:
    path = user / EXTENSION
    path.parent.mkdir(parents=True)
    path.write_text("// the user's own\n")
    before = tree(user)
    op("install", user, client="pi", force=True)
    installed = tree(user)
    run_killed_at(f"uninstall.{step}", RUN, "uninstall", str(user))
    each_file_as_before_or_as_intended(tree(user), installed, before)
    op("uninstall", user, client="pi")
    assert tree(user) == before
    assert refused("uninstall", user, client="pi").code == "NOTHING_INSTALLED"


def test_a_file_deleted_by_the_user_and_installed_again_is_removed_not_resurrected(
    user: Path,
) -> None:
    path = user / EXTENSION
    path.parent.mkdir(parents=True)
    path.write_text("// the user's old one\n")
    op("install", user, client="pi", force=True)
    path.unlink()  # the user threw both away
    op("install", user, client="pi")
    assert op("uninstall", user, client="pi")["uninstalled"][0]["files"][0]["action"] == "removed"
    assert not path.exists()
