"""Two installations in one key (docs/agents.md, "Two installations in one file"): in a home that
is a git repository, Codex's user-scope and project-scope config are one file,
`~/.codex/config.toml`, and both installs write `[mcp_servers.teamlore]` (and the personal
server, and `[features] codex_hooks`) in it. The second needs `--force`, and the refusal names
teamlore's own other installation; uninstalling either leaves the other's entries as the other
one wrote them, whatever the order; after both the file is as it was. All through the CLI's
app, run in this process (`in_process`): the subject is what the commands do to the files."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
from install_world import CLAUDE_JSON, CODEX_CONFIG, copied_aside, put_back, tree

from support import git, in_process

SERVERS = ("teamlore", "teamlore_personal")


def teamlore(home: Path, *args: str) -> None:
    done = in_process(*args, cwd=home)
    assert done.returncode == 0, done.stdout + done.stderr


def install(home: Path, scope: str, *flags: str) -> None:
    teamlore(home, "install", "--client", "codex", "--scope", scope, *flags)


def uninstall(home: Path, scope: str) -> None:
    teamlore(home, "uninstall", "--client", "codex", "--scope", scope)


def teamlores_entries(config: Path) -> dict[str, Any]:
    """What Codex reads of teamlore in `config`: its server tables and the hooks flag."""
    settings = tomllib.loads(config.read_text())
    servers = settings.get("mcp_servers", {})
    return {
        **{name: servers.get(name) for name in SERVERS},
        "codex_hooks": settings.get("features", {}).get("codex_hooks"),
    }


def without_git(files: dict[str, bytes]) -> dict[str, bytes]:
    return {name: data for name, data in files.items() if not name.startswith(".git/")}


@pytest.fixture()
def config(user: Path) -> Path:
    """`~/.codex/config.toml` of a home that is a git repository (the project of both scopes)."""
    git(user, "init", "-q")
    path = user / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_CONFIG)
    return path


@pytest.mark.parametrize("first", ["user", "project"])
def test_uninstalling_either_scope_leaves_the_other_scopes_entries_in_the_one_config(
    user: Path, config: Path, first: str
) -> None:
    """Both records said "mine" of `[mcp_servers.teamlore]`: uninstalling the user scope after
    `install --scope project --force` removed the project's entries with its own (and the other
    way round), and the hooks flag went with them. Uninstalling the last one in first was
    right, and stays so."""
    second = "project" if first == "user" else "user"
    before = without_git(tree(user))
    install(user, first)
    entries = {first: teamlores_entries(config)}
    install(user, second, "--force")
    entries[second] = teamlores_entries(config)
    assert entries[second] != entries[first]  # the second one's value is in the key now

    uninstall(user, second)  # the last one in goes first: the first one's value comes back
    assert teamlores_entries(config) == entries[first]
    install(user, second, "--force")

    uninstall(user, first)  # the first one in goes first: the second one's value stays
    assert teamlores_entries(config) == entries[second]

    uninstall(user, second)
    assert without_git(tree(user)) == before
    state = Path(os.environ["TEAMLORE_HOME"]) / "integrations"
    assert os.listdir(state / "backups") == []


@pytest.mark.parametrize("first", ["user", "project"])
def test_install_force_again_puts_the_first_scopes_entries_back_over_the_seconds(
    user: Path, config: Path, first: str
) -> None:
    second = "project" if first == "user" else "user"
    before = without_git(tree(user))
    install(user, first)
    entries = {first: teamlores_entries(config)}
    install(user, second, "--force")
    entries[second] = teamlores_entries(config)

    install(user, first, "--force")
    assert teamlores_entries(config) == entries[first]

    uninstall(user, first)  # the second one's value comes back
    assert teamlores_entries(config) == entries[second]
    uninstall(user, second)
    assert without_git(tree(user)) == before


@pytest.mark.parametrize("first", ["user", "project"])
def test_the_installation_left_takes_out_its_entries_from_a_config_edited_since(
    user: Path, config: Path, first: str
) -> None:
    """The config edited after both installs (no backup applies): the installation left puts
    back what was there before teamlore, not the entries of the one that went before it."""
    second = "project" if first == "user" else "user"
    install(user, first)
    install(user, second, "--force")
    config.write_text(config.read_text() + '\n[profiles.home]\nmodel = "o3"\n')

    uninstall(user, first)
    uninstall(user, second)

    settings = tomllib.loads(config.read_text())
    assert settings["mcp_servers"] == {"other": {"command": "other-server", "args": ["--fast"]}}
    assert "features" not in settings
    assert settings["profiles"]["home"] == {"model": "o3"}


@pytest.mark.parametrize("first", ["user", "project"])
def test_the_second_scope_is_refused_naming_teamlores_own_installation(
    user: Path, config: Path, first: str
) -> None:
    """The refusal said the entry was one "which teamlore did not write" (or one installed for
    another state dir), though teamlore's own other scope had written it."""
    second = "project" if first == "user" else "user"
    install(user, first)
    written = config.read_bytes()

    done = in_process(
        "install", "--client", "codex", "--scope", second, "--format", "json", cwd=user
    )

    assert done.returncode == 1, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "INTEGRATION_CONFLICT"
    assert f"which teamlore's {first}-scope installation" in error["message"]
    assert "did not write" not in error["message"]
    assert "another state dir" not in error["message"]
    assert "--force" in error["message"]
    assert config.read_bytes() == written


@pytest.mark.parametrize("installed", ["user", "project"])
def test_uninstalling_the_scope_not_installed_names_the_one_that_is(
    user: Path, config: Path, installed: str
) -> None:
    """It said the other scope's entries were "installed for another state dir (the default
    one)" and sent the person to `env -u TEAMLORE_HOME teamlore uninstall`, which finds nothing."""
    other = "project" if installed == "user" else "user"
    install(user, installed)

    done = in_process(
        "uninstall", "--client", "codex", "--scope", other, "--format", "json", cwd=user
    )

    assert done.returncode == 1, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "NOTHING_INSTALLED"
    assert f"are teamlore's {installed}-scope installation's" in error["message"]
    assert f"`teamlore uninstall --client codex --scope {installed}`" in error["message"]
    assert "another state dir" not in error["message"]


@pytest.mark.parametrize("first", ["user", "project"])
def test_a_config_edited_between_the_two_installs_keeps_the_edit_and_loses_teamlores_entries(
    user: Path, config: Path, first: str
) -> None:
    """Edited by hand after the first install, the config was no longer as the first one left
    it, so the second kept a copy of it as it found it, the first one's entries in it: the
    first uninstalled first took out nothing (its keys held the second one's values), and the
    second then put that copy back, the first one's entries with it. Now the second takes out
    its own entries one by one, in either order."""
    second = "project" if first == "user" else "user"
    install(user, first)
    entries = {first: teamlores_entries(config)}
    edit = '\n[profiles.home]\nmodel = "o3"\n'
    config.write_text(config.read_text() + edit)
    install(user, second, "--force")

    uninstall(user, second)  # the last one in goes first: the first one's entries come back
    assert teamlores_entries(config) == entries[first]
    assert tomllib.loads(config.read_text())["profiles"]["home"] == {"model": "o3"}
    install(user, second, "--force")
    entries[second] = teamlores_entries(config)

    uninstall(user, first)  # the first one in goes first: the second one's entries stay
    assert teamlores_entries(config) == entries[second]
    uninstall(user, second)

    assert config.read_text() == CODEX_CONFIG + edit
    state = Path(os.environ["TEAMLORE_HOME"]) / "integrations"
    assert os.listdir(state / "backups") == []


# Two state dirs (a second TEAMLORE_HOME, for a second setup) in one user config: neither
# manifest sees the other's. The second's `install --force` writes its entries over the first
# one's; uninstalling the first then took the second one's entries out without a word, which
# left that installation's MCP servers gone.
OTHER_STATE = {
    "codex": (CODEX_CONFIG, ".codex/config.toml", "mcp_servers", ".codex/hooks.json"),
    "claude": (CLAUDE_JSON, ".claude.json", "mcpServers", ".claude/settings.json"),
}


def kept_lines(servers: str) -> str:
    """What uninstall says at 80 columns of the two server entries it kept, and why."""
    why = "changed since install, teamlore was"
    return (
        f"  kept {servers}.teamlore: {why} installed for\n"
        "    another state dir (~/second-state) since\n"
        f"  kept {servers}.teamlore_personal: {why}\n"
        "    installed for another state dir (~/second-state) since\n"
    )


@pytest.mark.parametrize("client", ["codex", "claude"])
def test_uninstalling_one_state_dir_keeps_the_entries_another_state_dir_wrote_over_its_own(
    user: Path, client: str
) -> None:
    seeded, name, servers, hooks = OTHER_STATE[client]
    config = user / name
    config.parent.mkdir(exist_ok=True)
    config.write_text(seeded)
    second = {"TEAMLORE_HOME": str(user / "second-state")}
    teamlore(user, "install", "--client", client)
    first_wrote = config.read_bytes()
    done = in_process("install", "--client", client, "--force", cwd=user, env=second)
    assert done.returncode == 0, done.stdout + done.stderr
    second_wrote = config.read_bytes()
    first_home, second_home = os.environ["TEAMLORE_HOME"], second["TEAMLORE_HOME"]
    assert second_wrote == first_wrote.replace(first_home.encode(), second_home.encode())

    shown = in_process("uninstall", "--client", client, cwd=user, env={"COLUMNS": "80"})
    assert shown.returncode == 0, shown.stdout + shown.stderr
    if client == "codex":  # the hooks flag the first one set goes (Codex runs hooks by default)
        flag = b"\n[features]\ncodex_hooks = true\n"
        assert config.read_bytes() == second_wrote.replace(flag, b"")
        row = f"  edited     ~/{name}"
    else:  # nothing else of the first one's was in it: the file is as the second one left it
        assert config.read_bytes() == second_wrote
        row = f"  kept (changed since install) ~/{name}"
    assert shown.stdout == (
        f"{client} (user scope): uninstalled\n{row}\n{kept_lines(servers)}  edited     ~/{hooks}\n"
    )
    # its hook went, and only its own: the second one's starts teamlore with that state dir
    groups = json.loads((user / hooks).read_text())["hooks"]["SessionStart"]
    commands = [hook["command"] for group in groups for hook in group["hooks"]]
    assert [c.split()[0] for c in commands] == [f"TEAMLORE_HOME={second_home}"]


def test_uninstall_after_the_person_moved_their_own_state_dir_takes_its_entries_out(
    user: Path,
) -> None:
    """An entry naming another state dir is kept only when that state dir records it: one that
    still names this state dir's old place (the person moved it, then uninstalled from the new
    one) is this installation's, and goes, as it did before such entries were kept."""
    config = user / ".codex/config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_CONFIG)
    old = Path(os.environ["TEAMLORE_HOME"])
    teamlore(user, "install", "--client", "codex")
    config.write_text(config.read_text() + '\n[mcp_servers.mine]\ncommand = "mine"\n')
    moved = old.parent / "moved-state"
    old.rename(moved)

    done = in_process("uninstall", "--client", "codex", cwd=user, env={"TEAMLORE_HOME": str(moved)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kept" not in done.stdout
    assert config.read_text() == CODEX_CONFIG + '\n[mcp_servers.mine]\ncommand = "mine"\n'


def installed_by_both(user: Path, client: str) -> Path:
    """The first state dir installs, a second one installs over it with `--force`: HOME and the
    state dirs as the two installs left them, copied aside."""
    teamlore(user, "install", "--client", client)
    second = {"TEAMLORE_HOME": str(user / "second-state")}
    done = in_process("install", "--client", client, "--force", cwd=user, env=second)
    assert done.returncode == 0, done.stdout + done.stderr
    return copied_aside(user)


def uninstall_both(user: Path, client: str, installed: Path, first_out: str) -> None:
    """Both state dirs uninstall, `first_out` first, from the two installs (`installed`)."""
    homes = {"first": os.environ["TEAMLORE_HOME"], "second": str(user / "second-state")}
    put_back(installed)
    assert named_state_dir(user / OTHER_STATE[client][1], client) == homes["second"]
    for which in (first_out, "second" if first_out == "first" else "first"):
        env = {"TEAMLORE_HOME": homes[which]}
        done = in_process("uninstall", "--client", client, cwd=user, env=env)
        assert done.returncode == 0, (first_out, done.stdout + done.stderr)


@pytest.mark.parametrize("client", ["codex", "claude"])
def test_uninstalling_both_state_dirs_in_either_order_leaves_no_entry_of_either(
    user: Path, client: str
) -> None:
    """The second state dir's `install --force` recorded the first one's entries as what it
    found. Uninstalling the first one first keeps the second one's entries (above); the
    second one's uninstall then put the first one's entries back (Claude: the whole file as
    it found it; Codex: each key, and the hooks flag), which started a state dir nothing
    installed any more, and an empty `hooks` list stayed in the hooks file the first one made.
    Now what it found is put back only while that state dir records it: in either order the
    config ends as the user had it, byte for byte, and the hooks file is gone."""
    seeded, name, _, hooks = OTHER_STATE[client]
    config = user / name
    config.parent.mkdir(exist_ok=True)
    config.write_text(seeded)
    installed = installed_by_both(user, client)
    for first_out in ("first", "second"):
        uninstall_both(user, client, installed, first_out)

        assert config.read_text() == seeded, first_out
        assert not (user / hooks).exists(), first_out  # the first one made it; nothing is left


USERS_HOOKS = (
    '{\n  "theme": "dark",\n  "hooks": {\n    "Stop": [{"hooks": [{"type": "command",'
    ' "command": "my-stop"}]}]\n  }\n}\n'
)


@pytest.mark.parametrize("client", ["codex", "claude"])
def test_a_hooks_file_of_the_users_own_is_left_as_it_was_after_both_state_dirs_go(
    user: Path, client: str
) -> None:
    """The containers the second state dir's install found are taken out only as far as the
    first one's hooks alone were in them: the user's own hook and settings stay, byte for
    byte, in either order."""
    seeded, name, _, hooks = OTHER_STATE[client]
    for path, text in ((user / name, seeded), (user / hooks, USERS_HOOKS)):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    installed = installed_by_both(user, client)
    for first_out in ("first", "second"):
        uninstall_both(user, client, installed, first_out)

        assert (user / name).read_text() == seeded, first_out
        assert (user / hooks).read_text() == USERS_HOOKS, first_out


# Three state dirs in one user config, each installed with `--force` over the one before, then
# uninstalled in every order. In the order 1, 3, 2 the third one's uninstall put back the hooks
# flag it found on (the first one had set it, and its uninstall had taken it out already), and
# the second one then found it on as it had found it, so `[features] codex_hooks = true` stayed
# with no teamlore left; in the orders 1, 2, 3 and 2, 1, 3 an empty `SessionStart` list stayed
# in the hooks file the first one made (the third one read the second one's "found there" as
# the user's).
THREE = ("1", "2", "3")
HOOKS_ON = CODEX_CONFIG + "\n[features]\ncodex_hooks = true\n"
SEEDS = {  # client, config, hooks file before the first install (None: none)
    "codex": ("codex", CODEX_CONFIG, None),
    "codex-hooks-on": ("codex", HOOKS_ON, None),  # the user's own flag: it stays
    "claude": ("claude", CLAUDE_JSON, None),
    "codex-empty-hooks": ("codex", CODEX_CONFIG, '{\n  "hooks": {}\n}\n'),
    "claude-users-hooks": ("claude", CLAUDE_JSON, USERS_HOOKS),
}


def named_state_dir(config: Path, client: str) -> str | None:
    """The state dir teamlore's team server in `config` starts (None: it has none)."""
    text = config.read_text()
    servers = (tomllib.loads(text) if client == "codex" else json.loads(text)).get(
        OTHER_STATE[client][2], {}
    )
    entry = servers.get("teamlore")
    return None if entry is None else entry.get("env", {}).get("TEAMLORE_HOME")


ORDERS = ["".join(o) for o in itertools.permutations(THREE)]


@pytest.mark.parametrize("seed", list(SEEDS))
def test_three_state_dirs_uninstalled_in_any_order_leave_the_users_files_as_they_were(
    user: Path, seed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from teamlore.cli.main import app

    client, seeded, users_hooks = SEEDS[seed]
    _, name, _, hooks_name = OTHER_STATE[client]
    config, hooks = user / name, user / hooks_name
    config.parent.mkdir(exist_ok=True)
    config.write_text(seeded)
    if users_hooks is not None:
        hooks.parent.mkdir(exist_ok=True)
        hooks.write_text(users_hooks)
    homes = {"1": os.environ["TEAMLORE_HOME"], "2": str(user / "two"), "3": str(user / "three")}
    for which in THREE:
        force = ["--force"] if which != "1" else []
        env = {"TEAMLORE_HOME": homes[which]}
        done = in_process("install", "--client", client, *force, cwd=user, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    installed = copied_aside(user)
    for order in ORDERS:  # each from the three installs as they left HOME and the state dirs
        put_back(installed)
        monkeypatch.chdir(user)  # the uninstalls: the app in-process, not a process start each
        assert named_state_dir(config, client) == homes["3"], order  # the last one's entries
        left = set(THREE)
        for which in order:
            env = {"TEAMLORE_HOME": homes[which]}
            done = CliRunner().invoke(app, ["uninstall", "--client", client], env=env)
            assert done.exit_code == 0, (order, done.output)
            left.remove(which)
            # no entry starts a state dir nothing installed any more
            assert named_state_dir(config, client) in {homes[w] for w in left} | {None}, order

        assert config.read_bytes() == seeded.encode(), order
        if users_hooks is None:
            assert not hooks.exists(), order  # the first one made it; nothing is left in it
        else:
            assert hooks.read_bytes() == users_hooks.encode(), order


# A home that is a git repository, a project-scope install from one state dir and a user-scope
# install from another: both write `~/.codex/config.toml` (and `~/.codex/hooks.json`). The
# project-scope entries are portable (`teamlore` on PATH): they name no state dir. The user-scope
# uninstall read such an entry as the default state dir's user-scope one, which that state dir
# records nowhere, so it took the project's MCP servers out instead of putting them back; the
# project-scope uninstall took the other state dir's servers out with its own.
def user_and_project(
    user: Path, monkeypatch: pytest.MonkeyPatch, project_state: str, first: str
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, Any]]]:
    """A project-scope install with the state dir `project_state` (the default one, or one
    TEAMLORE_HOME names) and a user-scope one with another state dir, `first` first, the
    second with `--force`: each one's environment, and the servers each one wrote."""
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)  # the default state dir: in HOME
    if project_state == "default":
        monkeypatch.delenv("TEAMLORE_HOME")
    envs = {"project": {}, "user": {"TEAMLORE_HOME": str(user.parent / "user-state")}}
    wrote: dict[str, dict[str, Any]] = {}
    for scope in (first, "user" if first == "project" else "project"):
        force = ["--force"] if scope != first else []
        args = ("install", "--client", "codex", "--scope", scope, *force)
        done = in_process(*args, cwd=user, env=envs[scope])
        assert done.returncode == 0, done.stdout + done.stderr
        wrote[scope] = servers(user / ".codex/config.toml")
    return envs, wrote


def servers(config: Path) -> dict[str, Any]:
    return {name: teamlores_entries(config)[name] for name in SERVERS}


def hook_commands(hooks: Path) -> list[str]:
    groups = json.loads(hooks.read_text())["hooks"]["SessionStart"]
    return [hook["command"] for group in groups for hook in group["hooks"]]


def uninstalled(user: Path, scope: str, env: dict[str, str]) -> str:
    args = ("uninstall", "--client", "codex", "--scope", scope)
    done = in_process(*args, cwd=user, env={**env, "COLUMNS": "200"})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("first", ["project", "user"])
@pytest.mark.parametrize("project_state", ["default", "named"])
def test_uninstalling_another_state_dirs_user_install_leaves_the_project_installs_servers(
    user: Path, config: Path, monkeypatch: pytest.MonkeyPatch, project_state: str, first: str
) -> None:
    envs, wrote = user_and_project(user, monkeypatch, project_state, first)

    said = uninstalled(user, "user", envs["user"])
    assert servers(config) == wrote["project"]
    kept = (  # installed over its own, the project's entries are in its keys
        "  kept mcp_servers.teamlore: changed since install, teamlore's project-scope entry was"
        " installed over it since\n"
    )
    assert (kept in said) == (first == "user")
    assert hook_commands(user / ".codex/hooks.json") == [
        "teamlore hook session-start --client codex"
    ]
    uninstalled(user, "project", envs["project"])
    assert config.read_text() == CODEX_CONFIG
    assert not (user / ".codex/hooks.json").exists()


@pytest.mark.parametrize("first", ["project", "user"])
@pytest.mark.parametrize("project_state", ["default", "named"])
def test_uninstalling_the_project_install_leaves_another_state_dirs_user_servers(
    user: Path, config: Path, monkeypatch: pytest.MonkeyPatch, project_state: str, first: str
) -> None:
    envs, wrote = user_and_project(user, monkeypatch, project_state, first)

    uninstalled(user, "project", envs["project"])
    assert servers(config) == wrote["user"]
    assert [c.split()[0] for c in hook_commands(user / ".codex/hooks.json")] == [
        f"TEAMLORE_HOME={envs['user']['TEAMLORE_HOME']}"
    ]
    uninstalled(user, "user", envs["user"])
    if (project_state, first) == ("named", "project"):
        # what the user-scope install found was a project-scope entry, which names no state
        # dir: looked for in the default state dir (the one it starts), it is not known there
        # to be gone, so it is put back as install found it (docs/agents.md)
        return
    assert config.read_text() == CODEX_CONFIG
    assert not (user / ".codex/hooks.json").exists()


def test_a_portable_entry_edited_in_by_hand_in_a_home_that_is_no_repository_is_removed(
    user: Path,
) -> None:
    """An entry of the project-scope form (`teamlore` on PATH, no TEAMLORE_HOME) is kept as
    another installation's only on evidence that one wrote it: a home that is a git repository
    (its project scope writes the same file) or a state dir whose project-scope install records
    it there. Here neither: the person edited the user-scope entry by hand, and uninstall kept
    it, saying a project-scope entry was installed over it (none was)."""
    config = user / ".codex/config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_CONFIG)
    teamlore(user, "install", "--client", "codex", "--force")
    lines = config.read_text().split("\n")
    at = lines.index("[mcp_servers.teamlore]")
    assert lines[at + 1].startswith("command = ") and lines[at + 3].startswith("env = ")
    lines[at + 1] = 'command = "teamlore"'
    del lines[at + 3]
    config.write_text("\n".join(lines))
    assert teamlores_entries(config)["teamlore"]["command"] == "teamlore"

    said = uninstalled(user, "user", {})
    assert "kept" not in said
    assert config.read_text() == CODEX_CONFIG


def test_a_project_install_of_the_default_state_dir_is_kept_after_the_home_stopped_being_a_repo(
    user: Path, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other evidence: the default state dir (the one a portable entry starts) records its
    project-scope entry in the config, though the home is no repository any more."""
    envs, wrote = user_and_project(user, monkeypatch, "default", "user")
    shutil.rmtree(user / ".git")

    said = uninstalled(user, "user", envs["user"])
    assert "  kept mcp_servers.teamlore: changed since install, teamlore's project-scope" in said
    assert servers(config)["teamlore"] == wrote["project"]["teamlore"]
