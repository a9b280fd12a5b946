"""The `teamlore` console entry point.

`teamlore hook session-start`, `hook session-end` and `hook user-turn` run from here without
importing the full CLI (typer, rich, every command module): agents start them on every session, with
a sub-second budget (`teamlore.cli.hook_runner`). Every command whose arguments are in plain form
(`teamlore.cli.params`) runs without typer, with only its own command module loaded
(`teamlore.cli.commands.plain_invocation`; `sync`, `status` and `sessions list|show|search` from
`teamlore.cli.commands.sessions`, the lean commands); otherwise typer parses them, with only the
lean commands loaded for one of those (`cli.app.lean`). `mcp` starts the MCP server without
typer when its flags are plain (`teamlore.cli.mcp_command`). While `teamlore watch` runs, the read
commands it serves are answered by it (`teamlore.cli.warm`), falling back to this process on any
failure. Everything else goes to `teamlore.cli.main`.
"""

from __future__ import annotations

import os
import sys

INTERRUPTED_EXIT = 130  # as a command interrupted while it runs (cli/output.py, `run`)
# the console script imports this module before it calls `main`: a Ctrl-C while it loads exits
# as one in `main` does, not with Python's traceback (a SystemExit out of an import is quiet)
try:
    import gc
    from collections.abc import Callable

    from teamlore.cli import (
        any_character_gets_out,
        closed_stdin_as_empty,
        in_utf8_mode,
        reader_went_away,
        single_blas_thread,
    )

    if os.environ.get("TEAMLORE_INTERRUPTPOINT"):  # tests only (core/failpoints.py)
        from teamlore.core.failpoints import failpoint

        failpoint("entry-import")
except KeyboardInterrupt:
    sys.exit(INTERRUPTED_EXIT)

TYPE_CHECKING = False  # not `typing`'s: the watch client's process does not load typing
if TYPE_CHECKING:
    from typing import Any

# set (to anything) to run every command in its own process even while `teamlore watch` runs
NO_WATCH_ENV = "TEAMLORE_NO_WATCH"


def main() -> None:
    """Run the command; Ctrl-C before it started running exits as Ctrl-C while it runs does."""
    try:
        in_utf8_mode()  # file names read as UTF-8 in any locale (or this process starts again)
        closed_stdin_as_empty()
        _dispatch(sys.argv[1:])
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED_EXIT)


class OrjsonImportHold:
    """A meta path finder for one module, orjson, whose import it runs with SIGINT held pending
    and then lets the signal in: orjson 3.13's module init, interrupted by Ctrl-C, leaves the
    process to crash (SIGSEGV) later. The import is the only window: a Ctrl-C held there is
    delivered as the import returns, as a KeyboardInterrupt. A finder rather than an import
    here: the read commands never load orjson (docs/architecture.md, "A short CLI process"),
    and the commands that do load it where they need it."""

    @classmethod
    def find_spec(cls, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "orjson":
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _SigintHeldLoader(spec.loader)  # type: ignore[assignment]  # duck-typed
        return spec


class _SigintHeldLoader:
    """A module's loader whose `exec_module` (for a package, its submodules' imports too) runs
    with SIGINT held pending."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        # `_signal`, loaded by the interpreter at start: `signal` would be one more module
        import _signal  # type: ignore[import-not-found]  # no stub: the C half of `signal`

        held = _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGINT})
        try:
            self._loader.exec_module(module)
        finally:
            _signal.pthread_sigmask(_signal.SIG_SETMASK, held)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


def _dispatch(args: list[str]) -> None:
    any_character_gets_out()
    single_blas_thread()
    sys.meta_path.insert(0, OrjsonImportHold)
    if args[:2] == ["hook", "session-start"] and "--help" not in args:
        from teamlore.cli.hook_runner import exit_now, run_from_argv

        exit_now(run_from_argv(args[2:]))
    if args[:2] == ["hook", "session-end"] and "--help" not in args:
        from teamlore.cli.hook_runner import exit_now, session_end_from_argv

        exit_now(session_end_from_argv(args[2:]))
    if args[:2] == ["hook", "user-turn"] and "--help" not in args:
        from teamlore.cli.hook_runner import exit_now, user_turn_from_argv

        exit_now(user_turn_from_argv(args[2:]))
    if args == ["--version"]:  # as typer's eager option prints it, without loading typer
        from teamlore import __version__

        print(f"teamlore {__version__}")
        return
    if args[:1] == ["mcp"]:
        from teamlore.cli.mcp_command import serve_from_argv

        serve_from_argv(args[1:])
    if not os.environ.get(NO_WATCH_ENV):  # a read command `teamlore watch` answers (docs/watch.md)
        from teamlore.cli.warm import answered

        code = answered(args)
        if code is not None:
            sys.exit(code)
    # importing the CLI creates only long-lived objects (modules, classes, pydantic schemas):
    # collecting while it runs finds nothing, and moving them to the permanent generation
    # afterwards keeps every later collection, and the one at exit, from walking them again
    gc.disable()
    from teamlore.cli.commands import plain_invocation
    from teamlore.cli.commands.sessions import lean_command, lean_invocation

    invocation = lean_invocation(args) or plain_invocation(args)
    if invocation is not None:  # typer is not even imported (cli/params.py)
        gc.freeze()
        gc.enable()
        _run_lean(invocation)
        return
    from teamlore.cli import app

    app.lean = lean_command(args) is not None
    from teamlore.cli.main import main as full_main

    gc.freeze()
    gc.enable()
    full_main()


def _run_lean(invocation: Callable[[], None]) -> None:
    """Exit as a typer command does: 0 when it returns, its code when it exits, 0 quietly when
    the reader of its output went away (`reader_went_away`)."""
    from teamlore.core.errors import TeamloreError

    try:
        invocation()
    except TeamloreError as err:  # refused before its operation ran (CWD_GONE)
        from teamlore.cli.main import _requested_format
        from teamlore.cli.output import fail

        fail(err, _requested_format(sys.argv[1:]))
    except BrokenPipeError:
        sys.exit(reader_went_away())
    sys.exit(0)


if __name__ == "__main__":
    main()
