"""`mcp-config`: Codex config.toml blocks, Claude Code entries and hooks, --wsl wrapping.

The last two tests paste the output into the real clients (installed from the npm registry on
demand, cached under .bench/npm): `codex mcp list` must accept the block, and
`claude mcp add … && claude mcp list` must start the real teamlore MCP server and report it
Connected. They skip with a message when npm or the package is unavailable.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer import Typer
from typer.testing import CliRunner

from support import teamlore_cli
from teamlore.cli.app import App
from teamlore.cli.commands.mcp_config import mcp_config as mcp_config_command
from teamlore.cli.typer_app import to_typer
from teamlore.core.errors import TeamloreError
from teamlore.ops.integrations import mcp_config  # noqa: F401  (registers the operation)
from teamlore.ops.registry import REGISTRY, OpContext, load_operations

REPO_ROOT = Path(__file__).resolve().parents[2]
NPM_CACHE = REPO_ROOT / ".bench" / "npm"
PYTHON = os.path.abspath(sys.executable)


def run(**payload: Any) -> dict[str, Any]:
    return REGISTRY.get("mcp-config").run(OpContext(cwd=Path.cwd()), payload)


def refused(**payload: Any) -> TeamloreError:
    with pytest.raises(TeamloreError) as caught:
        run(**payload)
    return caught.value


def codex_table(result: dict[str, Any]) -> dict[str, Any]:
    parsed = tomllib.loads(result["codex"]["toml"])
    [(name, table)] = parsed["mcp_servers"].items()
    assert name == result["serverName"]
    return dict(table)


def registered_tools(*capabilities: str) -> list[str]:
    names: list[str] = []
    for capability in capabilities:
        for op in load_operations().for_capability(capability):
            if op.mcp_tool and op.mcp_tool not in names:
                names.append(op.mcp_tool)
    return names


@pytest.fixture()
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in ("TEAMLORE_HOME", "WSL_DISTRO_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "no-codex-config"))  # the user's is not read
    return monkeypatch


def registered_repository(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A real git worktree registered the way a user does it (`teamlore sync --repository`), in
    a private state dir that `TEAMLORE_HOME` points at."""
    state = tmp_path / "state"
    monkeypatch.setenv("TEAMLORE_HOME", str(state))
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    empty = tmp_path / "no-sessions"
    empty.mkdir()
    REGISTRY.get("sync").run(
        OpContext(cwd=project), {"repository": str(project), "sources": [f"codex={empty}"]}
    )
    return project


# -- Codex --------------------------------------------------------------------------------


def test_default_is_a_team_read_block_that_parses_with_tomllib(
    clean_env: pytest.MonkeyPatch,
) -> None:
    result = run(client="codex")
    table = codex_table(result)
    assert result["serverName"] == "teamlore"
    assert table["command"] == PYTHON and Path(table["command"]).is_absolute()
    assert table["args"] == ["-m", "teamlore.cli.main", "mcp", "--capability", "team-read"]
    assert "env" not in table  # TEAMLORE_HOME unset: the server uses the default state dir
    assert table["enabled_tools"] == registered_tools("team-read")
    assert table["enabled_tools"]  # the team-read tier has tools today
    assert "default_tools_approval_mode" not in table  # read-only tools: Codex decides (auto)
    assert "claude" not in result


def test_codex_waits_for_the_server(clean_env: pytest.MonkeyPatch) -> None:
    """`codex exec` skips an optional server that is still starting (docs/agents.md)."""
    table = codex_table(run(client="codex"))
    assert table["required"] is True and table["startup_timeout_sec"] == 30


def test_portable_form_is_safe_to_commit(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("TEAMLORE_HOME", str(tmp_path / "state"))
    result = run(portable=True, capabilities=["read"], global_context=True)
    table = codex_table(result)
    assert table["command"] == "teamlore" and "env" not in table
    assert table["args"][:3] == ["mcp", "--capability", "read"]
    entry = result["claude"]["mcpJson"]["mcpServers"][result["serverName"]]
    assert (entry["command"], entry["env"]) == ("teamlore", {})
    assert str(tmp_path) not in json.dumps(result["claude"]["mcpJson"]) + result["codex"]["toml"]


@pytest.mark.parametrize(
    "tier", [["-c", "read", "--global"], ["-c", "team-read"]], ids=["personal", "team"]
)
def test_the_portable_form_refuses_a_workspace_rather_than_print_a_home_path(
    tmp_path: Path, tier: list[str]
) -> None:
    """Walk defect: `mcp-config -c read --global --workspace ~/proj --portable` printed
    `"--workspace", "/home/mei/proj"` under "share it with the project", in the form meant to be
    committed; on a teammate's machine the server would refuse to start. A usage error, and
    nothing printed to paste."""
    project, env = tmp_path / "proj", {"TEAMLORE_HOME": str(tmp_path / "state")}
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    registered = teamlore_cli("sync", "--repository", str(project), env=env)
    assert registered.returncode == 0, registered.stderr  # a workspace a personal tier serves
    for fmt in ("text", "json"):
        done = teamlore_cli(
            "mcp-config", *tier, "--workspace", str(project), "--portable", "--format", fmt,
            env=env,
        )  # fmt: skip
        assert done.returncode == 2, done.stdout + done.stderr
        said = done.stdout if fmt == "json" else done.stderr
        assert "INVALID_ARGUMENT" in said and "--portable and --workspace" in said
        assert str(project) not in done.stdout


def test_teamlore_home_is_pinned_when_set(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("TEAMLORE_HOME", str(tmp_path / "state dir"))
    table = codex_table(run(client="codex"))
    assert table["env"] == {"TEAMLORE_HOME": str(tmp_path / "state dir")}


def test_write_tier_asks_before_writes_and_lets_reads_through(
    clean_env: pytest.MonkeyPatch,
) -> None:
    result = run(client="codex", capabilities=["team"], workspaces=[str(REPO_ROOT)])
    table = codex_table(result)
    assert result["serverName"] == "teamlore_team"
    assert table["args"][-2:] == ["--repository", str(REPO_ROOT)]
    assert table["enabled_tools"] == registered_tools("team")
    # "approve" would auto-approve every call in Codex; "prompt" makes it ask
    assert table["default_tools_approval_mode"] == "prompt"
    read_only = [t for t in table["enabled_tools"] if t not in result["writeTools"]]
    assert table.get("tools", {}) == {t: {"approval_mode": "auto"} for t in read_only}


def test_personal_tiers_are_picked_up_from_the_registry(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    project = registered_repository(clean_env, tmp_path)
    result = run(
        client="codex",
        capabilities=["read", "init"],
        client_id="chatgpt-desktop",
        global_context=True,
        workspaces=[str(project)],
    )
    table = codex_table(result)
    enabled = sorted(table["enabled_tools"])
    assert enabled == ["memory_init", "memory_read", "memory_status"]
    assert table["enabled_tools"] == registered_tools("read", "init")
    assert result["writeTools"] == ["memory_init"]
    assert table["default_tools_approval_mode"] == "prompt"
    assert table["tools"] == {
        "memory_status": {"approval_mode": "auto"},
        "memory_read": {"approval_mode": "auto"},
    }
    assert table["args"][3:] == [
        "--capability", "read", "--capability", "init",
        "--client-id", "chatgpt-desktop", "--global", "--workspace", str(project),
    ]  # fmt: skip


def test_relay_says_it_needs_the_opt_in_and_can_add_it(clean_env: pytest.MonkeyPatch) -> None:
    bare = run(client="codex", capabilities=["relay"], global_context=True)
    assert "--accept-client-reported-user-turns" not in codex_table(bare)["args"]
    [note] = [n for n in bare["notes"] if "relay" in n]
    assert "--accept-client-reported-user-turns" in note and "SUBMISSION_DISABLED" in note
    opted = run(client="claude", capabilities=["relay"], global_context=True, acceptUserTurns=True)
    entry = opted["claude"]["mcpJson"]["mcpServers"][opted["serverName"]]
    assert entry["args"][-1] == "--accept-client-reported-user-turns"
    assert opted["claude"]["addArgv"][-1] == "--accept-client-reported-user-turns"
    assert not [n for n in opted["notes"] if "relay" in n]
    wrong = refused(capabilities=["read"], global_context=True, acceptUserTurns=True)
    assert wrong.code == "INVALID_ARGUMENT" and "--capability relay" in wrong.message


def test_approval_mode_can_be_chosen(clean_env: pytest.MonkeyPatch) -> None:
    table = codex_table(run(client="codex", capabilities=["team"], approval_mode="writes"))
    assert table["default_tools_approval_mode"] == "writes"


# -- what is already there --------------------------------------------------------------------


def test_a_workspace_outside_every_registered_repository_is_refused_at_config_time(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    clean_env.setenv("TEAMLORE_HOME", str(state))
    err = refused(capabilities=["read"], workspaces=[str(tmp_path)])
    assert err.code == "UNREGISTERED_WORKSPACE"  # `teamlore mcp` would refuse it at launch
    assert not state.exists()  # a read-only command leaves no state behind


def test_a_registered_project_the_scopes_do_not_allow_gets_a_note(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    project = registered_repository(clean_env, tmp_path)
    result = run(client="codex", capabilities=["read"], workspaces=[str(project)])
    [note] = [n for n in result["notes"] if "allowed_scopes" in n]
    assert "project:" in note and "personal config --scope" in note
    assert str(project) not in note


def write_codex_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str) -> None:
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(text, encoding="utf-8")
    monkeypatch.setenv("CODEX_HOME", str(codex_home))


def test_notes_read_the_users_codex_config(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_codex_config(
        clean_env,
        tmp_path,
        "[mcp_servers.teamlore]\n"
        'command = "teamlore"\n'
        'enabled_tools = ["search", "not_a_teamlore_tool"]\n'
        "[mcp_servers.node_repl]\n"
        'command = "node"\n'
        "required = true\n",
    )
    notes = run(client="codex")["notes"]
    assert any("already has [mcp_servers.teamlore]" in n and "replace" in n for n in notes)
    [unknown] = [n for n in notes if "not_a_teamlore_tool" in n]
    assert "does not register" in unknown
    [left_out] = [n for n in notes if "leaves out" in n]
    assert all(t in left_out for t in registered_tools("team-read") if t != "search")
    [required] = [n for n in notes if "required = true" in n]
    assert "node_repl" in required and "$CODEX_HOME/config.toml" in required
    assert str(tmp_path) not in " ".join(notes)  # no absolute paths in what may be pasted


def test_no_notes_for_a_config_without_clashes_and_one_for_a_broken_file(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    write_codex_config(clean_env, tmp_path, '[mcp_servers.other]\ncommand = "x"\n')
    assert run(client="codex")["notes"] == []
    assert run(client="claude")["notes"] == []  # Claude Code does not read config.toml
    write_codex_config(clean_env, tmp_path, "[mcp_servers.other\n")
    [broken] = run(client="codex")["notes"]
    assert "cannot be read" in broken and "line 1" in broken


def test_the_text_view_shows_the_notes_after_the_block(
    cli: Typer, clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    write_codex_config(clean_env, tmp_path, '[mcp_servers.teamlore]\ncommand = "x"\n')
    out = CliRunner().invoke(cli, ["mcp-config", "--client", "codex"])
    assert out.exit_code == 0, out.output
    assert "# NOTE: $CODEX_HOME/config.toml already has [mcp_servers.teamlore]" in out.stdout
    tomllib.loads(out.stdout)  # the notes are comments: the output still pastes


# -- WSL ----------------------------------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="--wsl runs inside Linux")
def test_wsl_wraps_the_command_in_wsl_exe(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("WSL_DISTRO_NAME", "Ubuntu-24.04")
    clean_env.setenv("USER", "alice")
    clean_env.setenv("TEAMLORE_HOME", str(tmp_path))
    result = run(wsl=True)
    table = codex_table(result)
    assert table["command"] == "wsl.exe"
    assert table["args"] == [
        "-d", "Ubuntu-24.04", "-u", "alice", "-e", "/usr/bin/env",
        f"TEAMLORE_HOME={tmp_path}", PYTHON,
        "-m", "teamlore.cli.main", "mcp", "--capability", "team-read",
    ]  # fmt: skip
    assert "env" not in table
    assert result["claude"]["mcpJson"]["mcpServers"]["teamlore"]["command"] == "wsl.exe"
    assert "sessionStartHook" not in result["claude"]
    flags = codex_table(run(client="codex", wsl=True, distro="Debian", wsl_user="bob"))
    assert flags["args"][:4] == ["-d", "Debian", "-u", "bob"]


def test_wsl_without_a_distribution_is_refused(clean_env: pytest.MonkeyPatch) -> None:
    err = refused(wsl=True)
    assert err.code == "INVALID_ARGUMENT"
    assert "--distro" in err.message or "inside the WSL" in err.message


# -- Claude Code ----------------------------------------------------------------------------


def test_claude_entry_add_line_and_session_start_hook(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean_env.setenv("TEAMLORE_HOME", str(tmp_path / "my state"))
    claude = run(client="claude")["claude"]
    entry = claude["mcpJson"]["mcpServers"]["teamlore"]
    assert entry == {
        "type": "stdio",
        "command": PYTHON,
        "args": ["-m", "teamlore.cli.main", "mcp", "--capability", "team-read"],
        "env": {"TEAMLORE_HOME": str(tmp_path / "my state")},
    }
    argv = shlex.split(claude["addCommand"])
    assert argv == claude["addArgv"]
    assert argv[:3] == ["claude", "mcp", "add"]
    assert argv[argv.index("--") + 1 :] == [entry["command"], *entry["args"]]
    assert argv[argv.index("-e") + 1] == f"TEAMLORE_HOME={tmp_path / 'my state'}"
    [group] = claude["sessionStartHook"]["hooks"]["SessionStart"]
    [hook] = group["hooks"]
    assert hook["type"] == "command"
    words = shlex.split(hook["command"])  # the shell keeps "$CLAUDE_PROJECT_DIR" one word
    assert words[0] == f"TEAMLORE_HOME={tmp_path / 'my state'}"
    assert words[1:] == [PYTHON, "-m", "teamlore.cli.main", "personal", "show", "--workspace",
                         "$CLAUDE_PROJECT_DIR"]  # fmt: skip


def test_personal_client_ids_differ_per_client(clean_env: pytest.MonkeyPatch) -> None:
    result = run(capabilities=["read"], global_context=True)
    codex_args = codex_table(result)["args"]
    claude_args = result["claude"]["mcpJson"]["mcpServers"]["teamlore_read"]["args"]
    assert codex_args[codex_args.index("--client-id") + 1] == "codex-cli"
    assert claude_args[claude_args.index("--client-id") + 1] == "claude-code"


# -- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        {"global_context": True},  # --global is a personal-tier flag
        {"workspaces": ["/definitely/not/here"]},
        {"name": "has space"},
        {"client": "cursor"},
        {"capabilities": ["admin"]},
        {"client_id": "x" * 129},
        {"client_id": "has.dot"},
        {"approval_mode": "never"},
        {"capabilities": ["init", "read"]},  # a personal tier with no context cannot start
    ],
)
def test_bad_requests_are_refused(clean_env: pytest.MonkeyPatch, payload: dict[str, Any]) -> None:
    assert refused(**payload).code == "INVALID_ARGUMENT"


def test_a_refused_client_id_is_told_what_teamlore_mcp_accepts(
    clean_env: pytest.MonkeyPatch,
) -> None:
    """The message said "1-64 letters, digits, '.', '_' or '-'" and refused the dot."""
    assert "use 1-128 ASCII letters, digits, '_' or '-'" in refused(client_id="has.dot").message
    assert run(client_id="x" * 128, capabilities=["team-read"])["serverName"]


def test_the_codex_block_names_the_config_codex_home_points_at(
    clean_env: pytest.MonkeyPatch,
) -> None:
    assert "paste into $CODEX_HOME/config.toml" in run()["codex"]["toml"]
    clean_env.delenv("CODEX_HOME")
    assert "paste into ~/.codex/config.toml" in run()["codex"]["toml"]


# -- the CLI command ---------------------------------------------------------------------------


@pytest.fixture()
def cli() -> Typer:
    app = App()  # a teamlore app: its commands may declare options with cli/params.py
    app.command("mcp-config")(mcp_config_command)
    app.command("other")(lambda: None)  # a multi-command app, like teamlore's
    return to_typer(app)


def test_cli_text_output_is_pasteable(cli: Typer, clean_env: pytest.MonkeyPatch) -> None:
    out = CliRunner().invoke(cli, ["mcp-config", "--client", "codex", "-c", "team"])
    assert out.exit_code == 0, out.output
    assert tomllib.loads(out.stdout)["mcp_servers"]["teamlore_team"]["enabled_tools"]


def test_cli_json_and_usage_errors(cli: Typer, clean_env: pytest.MonkeyPatch) -> None:
    ok = CliRunner().invoke(cli, ["mcp-config", "--format", "json"])
    assert ok.exit_code == 0
    assert set(json.loads(ok.stdout)) >= {"codex", "claude", "tools", "notes"}
    bad = CliRunner().invoke(cli, ["mcp-config", "--client", "vim", "--format", "json"])
    assert bad.exit_code == 2
    assert json.loads(bad.stdout)["error"]["code"] == "INVALID_ARGUMENT"


# -- the real clients -------------------------------------------------------------------------


def npm_bin(package: str, binary: str) -> Path:
    """Install `package` from the npm registry once (cached in .bench/npm) and return its bin."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not installed; cannot install {package} to check the config")
    prefix = NPM_CACHE / package.replace("/", "__").lstrip("@")
    exe = prefix / "node_modules" / ".bin" / binary
    if not exe.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", str(prefix), package, "--no-audit", "--no-fund"],
                capture_output=True,
                text=True,
                timeout=540,
            )
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {package} timed out")
        if done.returncode != 0 or not exe.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            pytest.skip(f"npm install {package} failed: {' / '.join(tail)}")
    probe = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"{package} does not run here: {probe.stderr.strip()[:200]}")
    return exe


def client_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "CLAUDE"))}
    return {**env, "HOME": str(home), **extra}


@pytest.mark.slow
def test_codex_mcp_list_accepts_the_block(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    codex = npm_bin("@openai/codex", "codex")
    clean_env.setenv("TEAMLORE_HOME", str(tmp_path / "state"))
    read_block = run(client="codex")["codex"]["toml"]
    team_block = run(client="codex", capabilities=["team"])["codex"]["toml"]
    personal_block = run(
        client="codex", capabilities=["init"], client_id="chatgpt-desktop", global_context=True
    )["codex"]["toml"]
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        "\n".join([read_block, team_block, personal_block]), encoding="utf-8"
    )
    env = client_env(tmp_path, CODEX_HOME=str(codex_home))

    listed = subprocess.run(
        [str(codex), "mcp", "list", "--json"], capture_output=True, text=True, env=env, timeout=120
    )
    assert listed.returncode == 0, listed.stderr
    servers = {s["name"]: s for s in json.loads(listed.stdout)}
    assert set(servers) == {"teamlore", "teamlore_team", "teamlore_init"}
    assert servers["teamlore"]["enabled"] is True
    assert servers["teamlore"]["transport"]["command"] == PYTHON
    init = servers["teamlore_init"]["transport"]
    assert init["args"][-4:] == ["init", "--client-id", "chatgpt-desktop", "--global"]
    # the exact command Codex will run starts our server (it ends at stdin EOF)
    started = subprocess.run(
        [init["command"], *init["args"]], input="", capture_output=True, text=True, timeout=60,
        env={**os.environ, **(init.get("env") or {})},
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    assert "personal Writer off" in started.stderr  # no model profile: it says so once
    got = subprocess.run(
        [str(codex), "mcp", "get", "teamlore_team"], capture_output=True, text=True, env=env,
        timeout=120,
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    assert "default_tools_approval_mode: prompt" in got.stdout
    table = subprocess.run(
        [str(codex), "mcp", "list"], capture_output=True, text=True, env=env, timeout=120
    )
    print(table.stdout)  # shown with -s: the evidence the report quotes

    # Codex validates these blocks: a value it does not know fails the whole config
    (codex_home / "config.toml").write_text(team_block.replace('"prompt"', '"sometimes"'))
    broken = subprocess.run(
        [str(codex), "mcp", "list"], capture_output=True, text=True, env=env, timeout=120
    )
    assert broken.returncode != 0


@pytest.mark.slow
def test_claude_mcp_add_line_connects_to_the_real_server(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    claude = npm_bin("@anthropic-ai/claude-code", "claude")
    clean_env.setenv("TEAMLORE_HOME", str(tmp_path / "state"))
    argv = run(client="claude")["claude"]["addArgv"]
    project = tmp_path / "project"
    project.mkdir()
    env = client_env(tmp_path)

    added = subprocess.run(
        [str(claude), *argv[1:]], cwd=project, capture_output=True, text=True, env=env, timeout=120
    )
    assert added.returncode == 0, added.stderr
    listed = subprocess.run(
        [str(claude), "mcp", "list"], cwd=project, capture_output=True, text=True, env=env,
        timeout=180,
    )  # fmt: skip
    print(listed.stdout)
    line = next(ln for ln in listed.stdout.splitlines() if ln.startswith("teamlore:"))
    assert "Connected" in line, listed.stdout
    assert PYTHON in line
