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

from support import memory_init, refusal_lines, teamlore_cli
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
    done, modules = _run_listing_modules(tmp_path, *args)
    assert done.returncode == 0, done.stderr[-2000:]
    return modules


def _run_listing_modules(
    tmp_path: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`teamlore ARGS` run as the console entry runs it, and the modules it held as it exited."""
    listed = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", _LIST_AT_EXIT, str(listed), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, set(json.loads(listed.read_text()))


def _command_modules(modules: set[str]) -> set[str]:
    return {m.rsplit(".", 1)[-1] for m in modules if m.startswith(f"{commands.__name__}.")}


@pytest.fixture()
def registered(repo: Path, home: Path, tmp_path: Path) -> Path:
    """`repo`, registered (`sync --repository`, from an empty sessions folder): it has a review
    queue, empty."""
    from teamlore.ops.registry import OpContext, run_operation

    (tmp_path / "no-sessions").mkdir()
    sources = [f"codex={tmp_path / 'no-sessions'}"]
    run_operation(
        "sync", OpContext(cwd=repo, home=home), {"sources": sources, "repository": str(repo)}
    )
    return repo


# the JSON forms of commands whose text view rich draws (`review.py`, `runner.py`): the JSON is
# written without it, so nothing imports rich
JSON_FORMS = [
    (("memory", "review", "--format", "json"), 0, '"items": []'),  # an empty queue
    (("memory", "confirm", "--yes", "--format", "json"), 0, '"nothing-to-confirm"'),
    (("memory", "extract", "--format", "json"), 2, "--runner is required"),  # a refusal
]


@pytest.mark.parametrize(
    ("args", "code", "says"), JSON_FORMS, ids=[" ".join(a[:2]) for a, _, _ in JSON_FORMS]
)
def test_a_json_form_of_a_command_rich_draws_the_text_of_loads_no_rich(
    registered: Path, tmp_path: Path, args: tuple[str, ...], code: int, says: str
) -> None:
    done, modules = _run_listing_modules(tmp_path, *args, "--repository", str(registered))
    assert (done.returncode, done.stderr) == (code, ""), done.stderr[-2000:]
    assert says in done.stdout
    packages = {m.split(".")[0] for m in modules}
    assert not packages & {"typer", "click", "rich"}, sorted(packages & {"typer", "click", "rich"})
    own = COMMAND_MODULES[args[:2]]
    assert _command_modules(modules) == {own, "memory", "sessions"}  # `own` imports `memory`


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
    # a number within its option's `min=`/`max=`: each refuses before it serves
    ("ui", "--port", "65535", "--repository", "/nowhere/at/all"),
    ("org", "serve", "--port", "1", "--rate", "1", "--host", "0.0.0.0"),
    # a number out of range that the command refuses itself (INVALID_ARGUMENT, as `--limit`)
    ("org", "serve", "--port", "0"),
    ("org", "serve", "--rate=0"),
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


# a port or rate within its option's `min=`/`max=`; each command refuses before it serves (a path
# that is no repository; a host beyond loopback without --allow-remote), so no server starts
WITHIN_BOUNDS = [
    (("ui", "--port", "65535", "--repository", "/nowhere/at/all"), 1, "error PATH_NOT_FOUND"),
    (("ui", "--port=0", "--no-open", "--repository", "/nowhere"), 1, "error PATH_NOT_FOUND"),
    (
        ("org", "serve", "--port", "1", "--rate=1", "--host", "0.0.0.0"),
        2,
        "error INVALID_ARGUMENT: org serve binds to loopback only",
    ),
]


@pytest.mark.parametrize(
    ("args", "code", "says"), WITHIN_BOUNDS, ids=[" ".join(a) for a, _, _ in WITHIN_BOUNDS]
)
def test_a_number_within_its_bounds_runs_without_typer(
    home: Path, tmp_path: Path, args: tuple[str, ...], code: int, says: str
) -> None:
    done, modules = _run_listing_modules(tmp_path, *args)
    assert done.returncode == code and done.stderr.startswith(says), done.stderr[-2000:]
    # the servers' own modules import click (uvicorn) and a text refusal is printed with rich:
    # typer and the module that declares every command are what a plain run never loads
    assert "typer" not in {m.split(".")[0] for m in modules}
    assert not {"teamlore.cli.main", "teamlore.cli.typer_app"} & modules
    path = next(p for p in COMMAND_MODULES if args[: len(p)] == p)
    assert COMMAND_MODULES[path] in _command_modules(modules)


# a number outside its option's bounds (`ui --port`: 0-65535); the plain parse leaves it to
# typer, whose usage error it is (`org serve` checks its own: tests/org/test_org_new_user_walk.py)
OUTSIDE_BOUNDS = [
    (("ui", "--port", "65536"), "'--port': must be 65535 or less"),
    (("ui", "--port=99999999999999999999"), "'--port': must be 65535 or less"),
]


@pytest.mark.parametrize(
    ("args", "says"), OUTSIDE_BOUNDS, ids=[" ".join(a) for a, _ in OUTSIDE_BOUNDS]
)
def test_a_number_outside_its_bounds_is_typers_usage_error(
    repo: Path, args: tuple[str, ...], says: str
) -> None:
    import teamlore.cli.main  # noqa: F401  (declares every command)

    path = next(p for p in COMMAND_MODULES if args[: len(p)] == p)
    command = declared.find(path)
    assert command is not None
    assert params.parse_argv(command, list(args[len(path) :])) is None
    plain = teamlore_cli(*args, cwd=repo, env={"COLUMNS": "80"})
    typer_parsed = teamlore_cli(*args, "--", cwd=repo, env={"COLUMNS": "80"})
    said = "\n".join(refusal_lines(plain.stderr))
    assert plain.returncode == 2 and says in said, plain.stderr
    assert said.startswith(f"error USAGE: teamlore {' '.join(path)}: invalid value for ")
    assert (plain.returncode, plain.stdout, plain.stderr) == (
        typer_parsed.returncode,
        typer_parsed.stdout,
        typer_parsed.stderr,
    )


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
        assert plain is not None, argv
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
