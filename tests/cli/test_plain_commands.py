"""A command in plain form runs without typer, with only its own command module loaded
(`teamlore.cli.commands.plain_invocation`; docs/architecture.md, "A short CLI process"), and says
exactly what the same command says when typer parses it."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import pytest
from typer.testing import CliRunner

from support import memory_init, teamlore_cli
from teamlore.cli import commands, params
from teamlore.cli.app import App
from teamlore.cli.app import app as declared
from teamlore.cli.commands import COMMAND_MODULES, sessions
from teamlore.cli.typer_app import to_typer


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


# the commands with an option the plain parse leaves to typer (`min=`/`max=`): typer parses them
TYPER_ONLY = {("ui",), ("org", "serve")}


@pytest.mark.parametrize("path", COMMAND_MODULES, ids=[" ".join(p) for p in COMMAND_MODULES])
def test_the_plain_parse_passes_what_typer_passes(path: tuple[str, ...]) -> None:
    """Each option by each of its flags, as `--opt V` and `--opt=V`, before and after the
    arguments, then every option at once: `params.parse_argv` gives the command the keyword
    arguments typer gives it (a list's default, a number's type, an enum member)."""
    import teamlore.cli.main  # noqa: F401  (declares every command)

    command = declared.find(path)
    assert command is not None
    for argv in _sample_argvs(command):
        plain = params.parse_argv(command, argv)
        assert (plain is None) == (path in TYPER_ONLY), argv
        if plain is not None:
            assert _typed(plain) == _typed(_typer_kwargs(command, argv)), argv


def _sample_argvs(command: Callable[..., Any]) -> list[list[str]]:
    hints = get_type_hints(command)
    required: list[str] = []
    each: list[list[str]] = []  # one option (or the optional arguments) given, by one flag
    together: list[str] = []
    for name, record in params.declared(command).items():
        value = _sample(hints[name])
        if record.kind == "argument":
            (required if record.default is ... else together).extend(value)
            each += [] if record.default is ... else [value]
            continue
        if record.default is ...:
            required += [record.decls[0], value[0]]
            continue
        together += [word for v in value for word in (record.decls[0], v)] or [record.decls[0]]
        for decl in record.decls:
            each += [[word for v in value for word in (decl, v)] or [decl]]
            each += [[f"{decl}={value[0]}"]] if value and decl.startswith("--") else []
    return [
        required,
        *([*required, *given] for given in each),
        *([*given, *required] for given in each),
        [*together, *required],
    ]


def _sample(hint: Any) -> list[str]:
    """Words for one value of type `hint` (a list: two; a flag: none)."""
    if get_origin(hint) is list:
        return ["first", "second"]
    kind = next((a for a in get_args(hint) if a is not type(None)), hint)  # X of X | None
    if kind is bool:
        return []
    if isinstance(kind, type) and issubclass(kind, Enum):
        return [list(kind)[-1].value]
    return [{int: "7", float: "2.5"}.get(kind, "some value")]


def _typer_kwargs(command: Callable[..., Any], argv: list[str]) -> dict[str, Any]:
    """The keyword arguments typer calls `command` with for `teamlore … ARGV`."""
    called: dict[str, Any] = {}

    @functools.wraps(command)
    def record(**kwargs: Any) -> None:
        called.update(kwargs)

    app = App()
    app.command("run")(record)
    app.command("other")(lambda: None)  # a group, as teamlore's commands are in
    done = CliRunner().invoke(to_typer(app), ["run", *argv])
    assert done.exit_code == 0, done.output
    return called


def _typed(kwargs: dict[str, Any]) -> dict[str, tuple[Any, type]]:
    return {name: (value, type(value)) for name, value in kwargs.items()}
