"""A command in plain form runs without typer, with only its own command module loaded
(`teamlore.cli.commands.plain_invocation`; docs/architecture.md, "A short CLI process"), and says
exactly what the same command says when typer parses it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import memory_init, teamlore_cli
from teamlore.cli import commands
from teamlore.cli.app import App
from teamlore.cli.app import app as declared
from teamlore.cli.commands import COMMAND_MODULES, sessions


def _declared_paths(group: App, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], str]:
    """Every command of `group` → the module that declares it."""
    found = {
        (*prefix, name or command.__name__.replace("_", "-")): command.__module__
        for name, _, command in group.commands
    }
    for sub, name in group.groups:
        found.update(_declared_paths(sub, (*prefix, name)))
    return found


def test_the_table_names_the_module_of_every_command_a_command_module_declares() -> None:
    import teamlore.cli.main  # noqa: F401  (declares every command)

    lean = {path for path in sessions.LEAN_COMMANDS}
    by_module = {
        path: module.rsplit(".", 1)[-1]
        for path, module in _declared_paths(declared).items()
        if module.startswith(f"{commands.__name__}.") and path not in lean
    }
    registered_by_main = {("sessions", "exclude"), ("sessions", "include"), ("mcp-config",)}
    expected = {p: m for p, m in by_module.items() if p not in registered_by_main}
    assert expected == COMMAND_MODULES


def test_every_table_entry_finds_its_command() -> None:
    import teamlore.cli.main  # noqa: F401

    for path, module in COMMAND_MODULES.items():
        command = declared.find(path)
        assert command is not None, path
        assert command.__module__ == f"{commands.__name__}.{module}", path


@pytest.fixture()
def repo(home: Path, tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    memory_init(repo, home)
    return repo


PLAIN = [
    ("memory", "status", "--format", "json"),
    ("memory", "lint", "--format", "json"),
    ("personal", "config", "--format", "json"),
    ("personal", "show", "--format", "json"),
    ("repo", "list", "--format", "json"),
]


@pytest.mark.parametrize("args", PLAIN, ids=[" ".join(a[:2]) for a in PLAIN])
def test_a_plain_command_loads_neither_typer_nor_another_command_module(
    repo: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    path = next(p for p in COMMAND_MODULES if args[: len(p)] == p)
    where = ("--repository", str(repo)) if args[0] == "memory" else ()
    modules = _modules_of(tmp_path, *args, *where)
    packages = {m.split(".")[0] for m in modules}
    assert not packages & {"typer", "click", "rich"}, sorted(packages & {"typer", "click", "rich"})
    loaded = {m for m in modules if m.startswith(f"{commands.__name__}.")}
    own = f"{commands.__name__}.{COMMAND_MODULES[path]}"
    assert loaded == {own, sessions.__name__}, loaded  # the entry asks the lean commands first
    assert "teamlore.cli.main" not in modules


# `-X importtime` does not list a module `importlib.import_module` imports: the process writes
# what it holds in `sys.modules` as it exits instead
_LIST_AT_EXIT = """
import atexit, json, runpy, sys
out, *args = sys.argv[1:]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["teamlore", *args]
runpy.run_module("teamlore.cli.entry", run_name="__main__")
"""


def _modules_of(tmp_path: Path, *args: str) -> set[str]:
    listed = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", _LIST_AT_EXIT, str(listed), *args], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(listed.read_text()))


# the same request in plain form and in a form the plain parse leaves to typer (`--` ends the
# options: typer accepts it, `params.parse_argv` does not)
SAME = [
    ("memory", "status"),
    ("memory", "status", "--format", "json"),
    ("memory", "lint"),
    ("personal", "config", "--format", "json"),
    ("personal", "config", "--allow", "nonsense", "--format", "json"),  # a refusal
    ("personal", "show"),
    ("repo", "forget", "/nowhere/at/all", "--format", "json"),  # a refusal
    ("doctor", "--format", "json"),
]


@pytest.mark.parametrize("args", SAME, ids=[" ".join(a) for a in SAME])
def test_plain_and_typer_parsed_commands_say_the_same(repo: Path, args: tuple[str, ...]) -> None:
    plain = teamlore_cli(*args, cwd=repo, env={"COLUMNS": "80"})
    typer_parsed = teamlore_cli(*args, "--", cwd=repo, env={"COLUMNS": "80"})
    assert (plain.returncode, plain.stdout, plain.stderr) == (
        typer_parsed.returncode,
        typer_parsed.stdout,
        typer_parsed.stderr,
    )
