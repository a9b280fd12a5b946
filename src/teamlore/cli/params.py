"""Command options declared without importing typer: a `teamlore` process parses its command's
arguments before typer is loaded, or without loading it at all (docs/architecture.md, "A short
CLI process"; `teamlore.cli.commands.plain_invocation`).

`Option(...)` and `Argument(...)` take exactly what `typer.Option` / `typer.Argument` take and
record it. The typer app (`teamlore.cli.typer_app.to_typer`) turns each record into the typer
object when it registers a command, so `--help` and docs/cli.md come from the same declaration
as the fast parse. `parse_argv` reads the records to parse the plain forms (`--flag`, `--opt VALUE`,
`--opt=VALUE`, `-o VALUE`, positional words, `--` before words) into the keyword arguments typer
would pass (a search query's words may start with `-`: `query_after_dashes`);
anything else (an unknown or repeated option, a value that is not plainly a number or a
choice, a number outside its option's `min=`/`max=`, a missing argument, `--help`) returns None,
and the full typer path parses it, with its usage errors and exit code 2.
"""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from enum import Enum
from types import NoneType, UnionType
from typing import Any, NamedTuple

# the typer keyword arguments the fast parse understands: they change help text only
_PLAIN = frozenset({"help", "metavar"})
# and, on an `int` option, the bounds it checks (a number outside them: typer says so)
_BOUNDS = frozenset({"min", "max"})
_INTEGER = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?")

# the first flag of each parameter of the command `call` runs (an argument: its name), for
# naming a refused request field as the flag the user typed (`cli.output`); typer's click
# context tells the same for a command typer runs
RUNNING_FLAGS: ContextVar[dict[str, str] | None] = ContextVar("RUNNING_FLAGS", default=None)


class Param(NamedTuple):
    """One `Option(...)` or `Argument(...)` call, as typer would have received it."""

    kind: str  # "option" | "argument"
    default: Any
    decls: tuple[str, ...]
    options: dict[str, Any]

    def to_typer(self) -> Any:
        import typer

        make: Any = typer.Option if self.kind == "option" else typer.Argument
        return make(self.default, *self.decls, **self.options)


def Option(default: Any, *decls: str, **options: Any) -> Any:
    """`typer.Option(default, *decls, **options)`, declared without importing typer."""
    return Param("option", default, decls, options)


def Argument(default: Any, *decls: str, **options: Any) -> Any:
    """`typer.Argument(default, *decls, **options)`, declared without importing typer."""
    return Param("argument", default, decls, options)


def with_typer_params(command: Callable[..., Any]) -> Callable[..., Any]:
    """`command` as typer registers it: the same function with a signature whose `Param`
    defaults are the typer objects they declare (`command` itself keeps its records)."""
    import inspect  # the typer app's path only

    signature = inspect.signature(command)
    if not any(isinstance(p.default, Param) for p in signature.parameters.values()):
        return command

    @functools.wraps(command)
    def typed(*args: Any, **kwargs: Any) -> Any:
        return command(*args, **kwargs)

    typed.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[
            p.replace(default=p.default.to_typer()) if isinstance(p.default, Param) else p
            for p in signature.parameters.values()
        ]
    )
    return typed


def declared(command: Callable[..., Any]) -> dict[str, Any]:
    """Each parameter of the plain function `command` → its default (the `Param` record), in
    order: what `inspect.signature` says of it, read from the function itself (`inspect`
    imports `ast`, `dis` and `tokenize`: ~4 ms of a short command)."""
    code = command.__code__
    positional = code.co_varnames[: code.co_argcount]
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    given = command.__defaults__ or ()
    defaults = dict(zip(positional[len(positional) - len(given) :], given, strict=True))
    defaults.update(command.__kwdefaults__ or {})
    return {name: defaults.get(name) for name in names}


def call(command: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    """Run `command` with the keyword arguments `parse_argv` gave."""
    flags = {
        name: record.decls[0] if record.kind == "option" else name
        for name, record in declared(command).items()
    }
    token = RUNNING_FLAGS.set(flags)
    try:
        command(**kwargs)
    finally:
        RUNNING_FLAGS.reset(token)


def command_path(paths: Iterable[tuple[str, ...]], args: list[str]) -> tuple[str, ...] | None:
    """The one of `paths` (a command's words: `("memory", "status")`) that `args` start with,
    unless they ask for the help, which typer prints."""
    if "--help" in args or "-h" in args:
        return None
    return next((path for path in paths if tuple(args[: len(path)]) == path), None)


def invocation(command: Callable[..., Any], argv: list[str]) -> Callable[[], None] | None:
    """`command` ready to run with `argv`, when they are in the plain form `parse_argv` reads;
    None when typer has to parse them."""
    kwargs = parse_argv(command, argv)
    if kwargs is None:
        return None
    return lambda: call(command, kwargs)


def query_after_dashes(command: Callable[..., Any], argv: list[str]) -> list[str]:
    """`argv` (a command's arguments) as typer reads them when `command` takes a search query
    (an argument `QUERY`, any number of words): a word that starts with `-` and is not one of
    the command's options as typed is a word of the query (`teamlore sessions search -foo`,
    which typer reads as `-f oo`), so the query's words, in their order, go after `--`, the
    options before it. An option as typed: `-n 5`, `--limit 5`, `--limit=5`, or a short one
    with a number or a choice attached (`-n5`, `-fjson`); an unknown `--word` stays an option
    (typer refuses it: a mistyped flag). Any other `argv` is returned as it is."""
    params = declared(command)
    if not any(
        isinstance(r, Param) and r.kind == "argument" and r.options.get("metavar") == "QUERY"
        for r in params.values()
    ):
        return argv
    hints = typing.get_type_hints(command)
    by_decl = {
        d: name
        for name, record in params.items()
        if isinstance(record, Param) and record.kind == "option"
        for d in record.decls
    }
    options: list[str] = []
    words: list[str] = []
    tokens = iter(argv)
    for token in tokens:
        if token == "--":
            words.extend(tokens)
            break
        decl = token.partition("=")[0] if token.startswith("--") else token
        name = by_decl.get(decl)
        if name is not None or (token.startswith("--") and len(token) > 2):
            options.append(token)  # a known option, or an unknown `--word` typer refuses
            takes_value = name is not None and hints[name] is not bool and "=" not in token
            value = next(tokens, None) if takes_value else None
            options += [] if value is None else [value]
            continue
        attached = by_decl.get(token[:2]) if token.startswith("-") else None
        kind = _optional(hints[attached]) if attached is not None else None
        if kind is not None and kind is not str and _scalar(kind, token[2:]) is not _REFUSED:
            options.append(token)  # `-n5`, `-fjson`
            continue
        words.append(token)
    if not any(word.startswith("-") for word in words):
        return argv
    return [*options, "--", *words]


def parse_argv(command: Callable[..., Any], argv: list[str]) -> dict[str, Any] | None:
    """The keyword arguments typer would call `command` with for `argv`, or None when `argv`
    is not in the plain forms this parse handles (typer then parses it). A search query's
    words may start with `-` (`query_after_dashes`); after `--`, every token is a word."""
    params = declared(command)
    hints = typing.get_type_hints(command)
    if not all(_plain(record, hints[name]) for name, record in params.items()):
        return None
    by_decl = {
        d: name for name, record in params.items() if record.kind == "option" for d in record.decls
    }
    given: dict[str, list[str]] = {}
    words: list[str] = []
    tokens = iter(query_after_dashes(command, argv))
    for token in tokens:
        if token == "--":
            words.extend(tokens)
            break
        if not token.startswith("-"):
            words.append(token)
            continue
        decl, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        name = by_decl.get(decl)
        if name is None or (hints[name] is bool and eq):
            return None
        value = "" if hints[name] is bool else inline if eq else next(tokens, "-")
        if not eq and value.startswith("-") and hints[name] is not bool:
            return None
        given.setdefault(name, []).append(value)
    kwargs: dict[str, Any] = {}
    for name, record in params.items():
        if record.kind == "argument":
            values, words = (words, []) if _is_list(hints[name]) else (words[:1], words[1:])
        else:
            values = given.get(name, [])
        value = _convert(record, hints[name], values)
        if value is _REFUSED:
            return None
        kwargs[name] = value
    return None if words else kwargs


_REFUSED = object()


def _plain(default: Any, hint: Any) -> bool:
    understood = _PLAIN | _BOUNDS if _optional(hint) is int else _PLAIN
    return (
        isinstance(default, Param)
        and not set(default.options) - understood
        and all(d.startswith("-") and "/" not in d for d in default.decls)
        and (default.kind == "option") == bool(default.decls)
    )


def _is_list(hint: Any) -> bool:
    return typing.get_origin(hint) is list


def _convert(record: Param, hint: Any, values: list[str]) -> Any:
    value = _given(record, hint, values)
    return _REFUSED if _out_of_bounds(record, value) else value  # typer reports it


def _out_of_bounds(record: Param, value: Any) -> bool:
    """`value` (given, or the default: typer checks both) is a number outside the option's
    `min=`/`max=`."""
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    low, high = record.options.get("min"), record.options.get("max")
    return (low is not None and value < low) or (high is not None and value > high)


def _given(record: Param, hint: Any, values: list[str]) -> Any:
    if not values:
        if record.default is ...:
            return _REFUSED  # typer reports the missing value
        if _is_list(hint) and record.default is not None:  # typer passes a None default on
            return list(record.default)
        return record.default
    if _is_list(hint):
        return list(values)
    if len(values) > 1:
        return _REFUSED  # typer keeps the last; say nothing about it here
    if hint is bool:
        return True
    return _scalar(_optional(hint), values[0])


def _optional(hint: Any) -> Any:
    """`X` of `X | None`."""
    if isinstance(hint, UnionType):
        others = [a for a in typing.get_args(hint) if a is not NoneType]
        return others[0] if len(others) == 1 else None
    return hint


def _scalar(kind: Any, text: str) -> Any:
    if kind is str:
        return text
    if kind is int and _INTEGER.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
            return _REFUSED
    if kind is float and _DECIMAL.fullmatch(text):
        return float(text)
    if isinstance(kind, type) and issubclass(kind, Enum):
        for member in kind:
            if member.value == text:
                return member
    return _REFUSED
