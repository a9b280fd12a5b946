"""The command modules: each declares its commands on the apps of `teamlore.cli.app`.

A plain invocation (`teamlore memory status --format json`: the forms `teamlore.cli.params`
parses) imports only the module that declares its command and runs it without typer
(`plain_invocation`); `--help`, a usage error or any other form goes to typer, with every module
loaded (`teamlore.cli.main`). docs/architecture.md, "A short CLI process".
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

# the module of this package that declares each command (tests/cli/test_plain_commands.py keeps
# this table and the declarations in step); `sync`, `status`, `sessions list|show|search` and
# `memory search` are the lean commands (`sessions.LEAN_COMMANDS`)
COMMAND_MODULES: dict[tuple[str, ...], str] = {
    ("install",): "integrations",
    ("uninstall",): "integrations",
    ("doctor",): "integrations",
    ("hook", "session-start"): "integrations",
    ("hook", "session-end"): "integrations",
    ("hook", "user-turn"): "integrations",
    ("ui",): "review",
    **{
        ("memory", name): "memory"
        for name in ("init", "status", "lint", "recall", "stage", "assemble")
    },
    **{("memory", name): "review" for name in ("review", "prepare", "discard", "confirm")},
    ("memory", "promote"): "promote",
    ("memory", "synthesize"): "consolidation",
    **{("memory", name): "runner" for name in ("extract", "reverify-runner", "consolidate")},
    **{
        ("org", name): "org"
        for name in ("add", "remove", "list", "sync", "search", "status", "serve")
    },
    **{("org", "token", name): "org" for name in ("create", "revoke", "list")},
    **{
        ("personal", name): "personal"
        for name in ("config", "status", "show", "import", "flush", "retry")
    },
    ("repo", "list"): "repo",
    ("repo", "forget"): "repo",
}


def plain_invocation(args: list[str]) -> Callable[[], None] | None:
    """`teamlore ARGS` ready to run with only its command's module imported, when ARGS name a
    command of `COMMAND_MODULES` in the plain form `params.parse_argv` reads; None when typer
    has to parse them."""
    from teamlore.cli.params import command_path, invocation

    path = command_path(COMMAND_MODULES, args)
    if path is None:
        return None
    from teamlore.cli.app import app

    importlib.import_module(f"{__name__}.{COMMAND_MODULES[path]}")
    command = app.find(path)
    return None if command is None else invocation(command, args[len(path) :])
