r"""How CLI commands print: exact JSON with `--format json`, readable rich text otherwise.

Text output never lies (docs/cli-output.md): every string that comes from a transcript, a memory
file, a config value or an error is printed literally. The consoles here never parse Rich markup
or emoji codes in what they print (`[id]`, `split(/[/\\]/)`, `:warning:` stay as written); styles
come only from `styled` pieces; `literal` shows terminal control characters (escape sequences,
carriage returns, bidi overrides) as visible `\xNN` / `\uNNNN` escapes, so transcript text can
neither restyle the terminal nor hide text. Long text is cut with a visible marker (`clip`).

Errors: `{"error": {"code", "message", "problem", "next"}}` (core/errors.py) on stdout in JSON
mode, on stderr otherwise (wrapped at words, candidate ids short: `fail`); exit 1 for refusals
and failures, 2 for usage errors.
"""

from __future__ import annotations

import fcntl
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext, suppress
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

from teamlore.cli.literal import json_text, literal
from teamlore.cli.params import RUNNING_FLAGS, Argument, Option
from teamlore.core import errors
from teamlore.core.locations import UPGRADE_NOTES_NAME, state_dir_path
from teamlore.core.paths import from_here, working_directory
from teamlore.ops.registry import OpContext, run_operation

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


FormatOption = Option(
    OutputFormat.text, "--format", "-f", help="Output format: text for people, json for programs."
)

# A search query typed without quotes arrives as several arguments: they are one query
# (`teamlore sessions search release job failed`); quote a "phrase" to match it as a phrase.
QueryArgument = Argument(
    ...,
    metavar="QUERY",
    help='Words, identifiers or Chinese text; no quotes needed ("a phrase" in quotes).',
)

# The worktree a team-memory command acts on: the owner of the operation (docs/architecture.md)
RepositoryOption = Option(
    None,
    "--repository",
    "-r",
    help="Worktree to act on (default: the current directory).",
    metavar="PATH",
)


def cwd_of(repository: str | None) -> Path:
    """The directory a command given `--repository` (or not) runs its operation from."""
    return from_here(repository) if repository else working_directory()


# Hybrid search (docs/hybrid-search.md) fuses words and meaning; this leaves meaning out.
LexicalOption = Option(
    False, "--lexical", help="Rank by words alone (BM25); skip the embedding model."
)

_BY = {"lexical": "words", "translation": "translated words", "vector": "meaning"}


def paths_line(result: dict[str, Any]) -> str:
    """Which rankings a search ran: `words + meaning (<space>)` or `words only (<why>)`."""
    vector = result["vector"]
    if vector["ran"]:
        return f"words + meaning ({vector['space']})"
    why = f"{vector['code']}: {vector['reason']}" if vector.get("code") else vector["reason"]
    return f"words only ({why})"


def matched_by(hit: dict[str, Any]) -> str:
    """`by words`, `by translated words` (session search: only the query words' translations),
    `by meaning`, or words and meaning joined by `+`."""
    return "by " + " + ".join(_BY[p] for p in hit["matchedBy"])


def query_text(words: list[str]) -> str:
    """The words of a `QueryArgument`, as the one query they are (each as typed: `typed_text`)."""
    from teamlore.cli import typed_text

    return " ".join(typed_text(word) for word in words)


def styled(value: object, style: str) -> Text:
    """A styled piece of a `say` line, printed literally."""
    from rich.text import Text

    return Text(literal(value), style=style)


# Cut long transcript text this long in text output, with a visible marker
CLIP_CHARS = 2000


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """`1 repository`, `3 repositories`: a count with its noun in the right number."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"


def clip(value: object, limit: int = CLIP_CHARS, how: str = " (use --format json)") -> str:
    """`value` cut to `limit` characters with a visible `… N more characters (use --format
    json)` marker: the declared truncation of text output; `how` ends the marker where a text
    command prints the whole (`: --turn 3 prints them`, `sessions show`)."""
    text = str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… {len(text) - limit} more characters{how}"


def say_how_many_more(shown: int, total: int, indent: str = "  ") -> None:
    """The dim `… N more (--format json lists them all)` line under a list cut at `shown`."""
    if total > shown:
        say(indent, styled(f"… {total - shown} more (--format json lists them all)", "dim"))


# the `leftOut` codes of a file the memory tree's reader did not read (`_skip` and drift in
# memory/store/tree_reader.py; not imported: the CLI reaches the store only through ops, and
# tests/cli/test_memory_cli.py holds the two equal); every other code is a file read and found
# invalid (`format.*`, a lint rule, `duplicate-id`) or one that does not belong where it stands
_CANNOT_READ = frozenset(
    {
        "file-too-large",
        "name-not-utf8",
        "not-a-directory",
        "not-a-file",
        "source-drift",
        "symlink",
        "too-many-files",
        "unreadable",
    }
)


def say_left_out(
    left_out: list[dict[str, Any]], done: str = "searched", again: str = "search"
) -> int:
    """The memory files a search (or a recall: `done`, `again`) left out (its `leftOut`): those
    it cannot read, then the invalid ones, with what to do; how many."""
    if left_out:
        unread = [d for d in left_out if d["code"] in _CANNOT_READ]
        invalid = [d for d in left_out if d["code"] not in _CANNOT_READ]
        kinds = [counted(len(unread), "file") + " it cannot read"] if unread else []
        kinds += [counted(len(invalid), "invalid file")] if invalid else []
        say(styled(f"Not {done}: {' and '.join(kinds)}:", "yellow"))
        for d in [*unread, *invalid][:5]:
            field = f"field `{d['field']}`: " if d.get("field") else ""  # as `memory lint` says
            say(
                "  ",
                styled(d["code"], "yellow"),
                f" {d['file']}:{d.get('line') or ''} ",
                field,
                d["why"],
            )
        say_how_many_more(5, len(left_out))
        say_wrapped(
            f"fix them (`teamlore memory lint` shows each problem), then {again} again.",
            len("  next: "),
            lead="  next: ",
        )
    return len(left_out)


def say_ignored_by_git(rules: list[dict[str, Any]]) -> None:
    """What git ignores of what teamlore wrote or reads (`repo/ignored.py`), rule by rule, and
    what to do about it."""
    for rule in rules:
        paths = rule["paths"]
        say(
            styled("warn", "yellow"),
            f" git ignores {counted(len(paths), 'file')} ({rule['rule']}):"
            f" your team will not get {'it' if len(paths) == 1 else 'them'}",
        )
        for path in paths[:3]:
            say(f"  {path}")
        say_how_many_more(3, len(paths))
    if rules:
        one = sum(len(rule["paths"]) for rule in rules) == 1
        it, its = ("it", "its") if one else ("them", "their")
        say_wrapped(
            f"`git add -f` {it} once (git then shares {its} changes), or change the rule",
            len("  next: "),
            lead="  next: ",
        )


class _ConsoleOnFirstUse:
    """A `LiteralConsole` (`teamlore.cli.literal_console`) made when something first prints
    through it: a `--format json` run never imports rich."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made(), name)

    def made(self) -> Console:
        """The console itself, for what takes a console rather than printing through one
        (a rich live display enters it as a context manager)."""
        if self._console is None:
            from teamlore.cli.literal_console import LiteralConsole

            self._console = LiteralConsole(**self._options)
        return self._console

    def forget(self) -> None:
        """Make the console again on next use (it reads the stream and environment it prints
        to when it is made)."""
        self._console = None


_stderr = _ConsoleOnFirstUse(stderr=True)
_stdout = _ConsoleOnFirstUse()
stdout = cast("Console", _stdout)
stderr = cast("Console", _stderr)


def forget_consoles() -> None:
    """The warm server (`teamlore.cli.watch`) runs each request against that client's streams
    and environment: the consoles are made again for it."""
    _stdout.forget()
    _stderr.forget()


def print_unpadded(renderable: Any, under: Sequence[Any] = ()) -> None:
    """Print `renderable` (a rich table) without the spaces rich pads each line with after its
    last cell: a copy, a pipe or `grep` gets the text only; `under[i]`, when given, printed
    under its i-th line (a row's line of its own: `sessions list`'s titles)."""
    from rich.text import Text

    console = _stdout.made()
    for at, line in enumerate(console.render_lines(renderable, pad=False)):
        text = Text()
        for segment in line:
            if not segment.control:
                text.append(segment.text, segment.style)
        text.rstrip()
        console.print(text, soft_wrap=True)
        if at < len(under):
            console.print(under[at], soft_wrap=True)


def hanging(lead: str, text: str, indent: int) -> list[str]:
    """`lead` then `text`, wrapped at the terminal's width with its later lines under `indent`
    spaces; a word longer than a line (a path, a command) is kept whole and never left alone
    on a line of its own after `lead`. Widths are terminal cells (`迁移` takes 4), and a path
    with a space in it is one word (`_words`)."""
    from rich.cells import cell_len  # text output only: rich is loaded to print it anyway

    width = max(stdout.width, indent + 20)
    lines: list[str] = []
    line, used, empty = lead, cell_len(lead), True
    for word in _words(text):
        cells = cell_len(word.replace(_GLUE, " "))
        if not empty and used + 1 + cells > width:
            lines.append(line)
            line, used = " " * indent + word, indent + cells
        else:
            line = f"{line}{'' if empty else ' '}{word}"
            used += cells if empty else 1 + cells
        empty = False
    return [*lines, line]


# a word that starts a path: `~/…`, `/…`, `./…`, `../…`, after an opening bracket or quote
_PATH_START = re.compile(r"""[("'\[]?(?:~|\.{1,2})?/[^/\s]""")
_PATH_END = re.compile(r"""[,;:)'"\]]$""")


def _words(text: str) -> list[str]:
    """The words `hanging` wraps `text` at, a path whose name holds a space being one
    (`~/código proj/app/.mcp.json`: a path to copy stays whole, docs/cli-output.md): after a
    word that starts a path, a word that goes on with a `/` (`proj/app/.mcp.json`), or one that
    names with it what is there on disk (`~/My Notes.md`), is part of it, joined by the spaces
    it had."""
    parts = re.split(r"( +)", text.strip())
    words: list[str] = []
    for at in range(0, len(parts), 2):
        word = parts[at]
        if at and words and _PATH_START.match(words[-1]) and _path_goes_on(words[-1], word):
            words[-1] += parts[at - 1] + word
        else:
            words += word.split()
    return words


def _path_goes_on(path: str, word: str) -> bool:
    """Whether `word`, after a space, is still part of `path` (`_words`)."""
    if not word or any(c.isspace() for c in word) or _PATH_END.search(path):
        return False
    if word[0] in "([`'\"~/-" or "://" in word:
        return False
    if "/" in word:
        return True
    name = (path + " " + word).lstrip("(['\"").rstrip(".,;:)]'\"")
    return os.path.lexists(os.path.expanduser(name))


# a `command` in backticks, which a wrapped sentence keeps whole on one line (it is copied)
_COMMAND = re.compile(r"`[^`\n]*`")
_GLUE = "\x00"  # a command's space while `hanging` wraps: `str.split` does not split at it


def _commands_whole(lead: str, text: str, indent: int) -> list[str]:
    """`hanging(lead, text, indent)` with each `command` in backticks whole on one line."""
    glued = _COMMAND.sub(lambda command: command.group().replace(" ", _GLUE), text)
    return [line.replace(_GLUE, " ") for line in hanging(lead, glued, indent)]


def wrapped_lines(lead: str, text: str, indent: int = 2) -> list[str]:
    """`lead` then `text` as `say_wrapped` wraps it: the lines, for a caller that styles or
    prints them elsewhere (stderr); none ends in a space."""
    return [line.rstrip() for line in _commands_whole(lead, text, indent)]


def say_wrapped(
    text: str,
    indent: int = 2,
    *,
    lead: str = "",
    style: str = "",
    console: Console | None = None,
) -> None:
    """A sentence of teamlore's own after `lead` (`Next: `), wrapped at words (`hanging`) with
    its later lines under `indent` spaces, each line in `style` when given; a `command` in
    backticks stays whole on one line, to be copied."""
    # wrapped as printed: a control character is its escape (`\x1f`), not a place to break
    for line in wrapped_lines(lead, literal(text), indent):
        say(styled(line, style) if style else line, console=console)


def say_command(command: str, indent: int = 4) -> None:
    """A command to copy and run, under `indent` spaces: on one line, or where that would pass
    the terminal's width broken before a flag, each line but the last ending in ` \\`, so the
    lines pasted into a shell still run as the one command."""
    from rich.cells import cell_len

    lines = [" " * indent]
    for part in re.split(r" (?=--)", command):
        line = f"{lines[-1]} {part}" if lines[-1].strip() else f"{lines[-1]}{part}"
        if lines[-1].strip() and cell_len(line) + 2 > stdout.width:
            lines[-1] += " \\"
            lines.append(f"{' ' * (indent + 2)}{part}")
        else:
            lines[-1] = line
    for line in lines:
        say(line)


def say_titled(title: str, details: str) -> None:
    """`title` (an id: one token, in bold) then `details` on its line, or on the next line under
    it, indented, when the two would pass the terminal's width: a search hit's head line."""
    from rich.cells import cell_len

    if cell_len(literal(title)) + 2 + cell_len(literal(details)) <= stdout.width:
        say(styled(title, "bold"), f"  {details}")
    else:
        say(styled(title, "bold"))
        say(f"  {details}")


def say_file(path: str, note: str) -> None:
    """`  path` then `note` (` (new)`, `: written`): the path is one token, whole on its line
    even past the width; the words of `note` go on under it where they would push past it."""
    for line in hanging("  ", path.replace(" ", _GLUE) + note, 4):
        say(line.replace(_GLUE, " "))


def ask_line(question: str) -> str:
    """The line a person at the terminal types after `question` (on stdout, as the lines above
    it), stripped; Ctrl-C or Ctrl-D stops the command as an interrupted one (exit 130). A long
    question is wrapped at words to the terminal's width; the answer is typed after its last
    line."""
    *above, last = wrapped_lines("", f"{question}:", indent=0)
    sys.stdout.write("".join(f"{line}\n" for line in above) + f"{last} ")
    sys.stdout.flush()
    try:
        return input().strip()
    except (KeyboardInterrupt, EOFError):
        sys.stdout.write("\n")  # the shell's prompt starts on a line of its own
        raise SystemExit(130) from None


def say(*parts: object, console: Console | None = None) -> None:
    """Print one line made of `parts`: plain values literally, `styled` pieces with their
    style."""
    from rich.text import Text

    line = Text()
    for part in parts:
        line.append(part if isinstance(part, Text) else Text(literal(part)))
    (console or stdout).print(line)


def print_json(value: Any) -> None:
    sys.stdout.write(json_text(value, indent=2) + "\n")
    sys.stdout.flush()


# a candidate id in full (`extract-<64 hex>-c1`, `patch-consolidate-<64 hex>`), which an
# error's text view shows as the other text views do: its hex cut to the first 12 characters
# (ops/memory/review.py `short_candidate_id`, not imported: a refusal loads no operation)
_FULL_CANDIDATE_ID = re.compile(
    r"(?<![0-9A-Za-z-])([a-z]+(?:-[a-z]+)*-[0-9a-f]{12})[0-9a-f]{52}((?:-c[0-9]+)?)(?![0-9A-Za-z])"
)


def _say_error_line(mark: str, style: str, lead: str, text: str, indent: int) -> None:
    """`mark` (in `style`) and `lead` then `text`, on stderr, wrapped at words with its later
    lines under `indent` spaces; a `command` in backticks stays whole on one line (copied)."""
    # made visible before wrapping: a control character is never taken for a space
    shown = literal(_FULL_CANDIDATE_ID.sub(r"\1\2", text))
    lines: list[str] = []
    for part in shown.split("\n"):  # a line break in the message stays one
        lines += _commands_whole(mark + lead if not lines else " " * indent, part, indent)
    lines = [line.rstrip() for line in lines]
    say(styled(mark, style), lines[0][len(mark) :], console=stderr)
    for line in lines[1:]:
        say(line, console=stderr)


def fail(err: errors.TeamloreError, fmt: OutputFormat) -> NoReturn:
    """Print a refusal: in JSON as it is (full candidate ids, for the agent that acts on them);
    as text wrapped at words under its lead, candidate ids in the short form the text views
    show (`memory review`), which every `--candidate` takes back."""
    if fmt is OutputFormat.json:
        print_json({"error": err.to_json()})
    else:
        _say_error_line("error", "bold red", f" {err.code}: ", err.message, len("error "))
        _say_error_line("  next", "bold", ": ", err.remedy or errors.next_step(err.error), 8)
    raise SystemExit(err.exit_code)


def fail_unexpected(exc: Exception, fmt: OutputFormat) -> NoReturn:
    """Refuse with `exc`'s stable code (a read-only state dir is STATE_READ_ONLY, not a
    traceback); TEAMLORE_DEBUG=1 re-raises it to show the traceback."""
    if os.environ.get("TEAMLORE_DEBUG"):
        raise exc
    from teamlore.core.refusals import refusal_for  # a failure's path: short commands never load it

    refusal = refusal_for(exc)
    if refusal.error is errors.INTERNAL:
        refusal.message += " (set TEAMLORE_DEBUG=1 for a traceback)"
    fail(refusal, fmt)


@contextmanager
def progress_for(fmt: OutputFormat, label: str) -> Iterator[Callable[[int, int, str], None] | None]:
    if fmt is OutputFormat.json or not sys.stderr.isatty():
        yield None
        return
    # only a terminal shows progress: a scripted or JSON run never imports it
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn(
            literal(label).replace("{", "{{").replace("}", "}}"), style="bold", markup=False
        ),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", markup=False),
        console=_stderr.made(),
        transient=True,
    ) as progress:
        task = progress.add_task("", total=None)

        def update(done: int, total: int, what: str) -> None:
            progress.update(task, completed=done, total=total, description=literal(what[-40:]))

        yield update


def _command_flags() -> dict[str, str] | None:
    """The running command's first flag per parameter (an argument: its name): from the lean
    parse (`params.RUNNING_FLAGS`), else from typer's click context."""
    flags = RUNNING_FLAGS.get()
    if flags is not None:
        return flags
    from typer._click.globals import get_current_context  # typer vendors its own click

    context = get_current_context(silent=True)
    if context is None:
        return None
    return {p.name: p.opts[0] for p in context.command.params if p.opts}


def _in_flag_terms(err: errors.TeamloreError) -> errors.TeamloreError:
    """A refused request field (`providers: unknown provider 'x'`) named as the flag the user
    typed (`--provider: unknown provider 'x'`)."""
    field, sep, rest = err.message.partition(": ")
    if not sep or err.code != errors.INVALID_ARGUMENT.code:
        return err
    flags = _command_flags()
    if flags is None:
        return err
    item = re.sub(r"(\.\d+)+$", "", field)  # `kind.0`: an item of a repeatable flag
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", item).lower()
    for name in (snake, *(snake.removesuffix(end) for end in ("s", "_seconds", "_id"))):
        flag = flags.get(name)
        if flag is not None:
            shown = flag if flag.startswith("-") else flag.upper()
            return errors.TeamloreError(err.error, f"{shown}: {rest}", **err.details)
    return err


def run(
    name: str,
    payload: dict[str, Any],
    fmt: OutputFormat,
    render: Callable[[dict[str, Any]], None],
    *,
    progress_label: str | None = None,
    cwd: Path | None = None,
    confirm: Callable[[dict[str, Any]], bool] | None = None,
    org_database: str | None = None,
    before_error: Callable[[errors.TeamloreError], None] | None = None,
    each: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run one registered operation and print its result (or its error); `confirm` asks the
    person at the terminal (see `OpContext.confirm`); `org_database`: `teamlore org --database`;
    `each`: the text view of each part of the result as it is done (`OpContext.each`);
    `before_error`: the text view's lines ahead of a refusal (what was done before it: the
    JSON view has it in the error's `details`)."""
    try:
        # a live display only for work that reports its progress (an operation that does not
        # would show a bar that never moves), and none while the person answers questions on
        # the same terminal
        showing = (
            progress_for(fmt, progress_label)
            if progress_label is not None and confirm is None
            else nullcontext(None)
        )
        with showing as progress:
            ctx = OpContext(
                cwd=cwd or working_directory(),
                progress=progress,
                confirm=confirm,
                org_database=org_database,
                each=each if fmt is OutputFormat.text else None,
            )
            result = run_operation(name, ctx, {k: v for k, v in payload.items() if v is not None})
    except errors.TeamloreError as err:
        if fmt is OutputFormat.text:
            say_upgrade_notes()
            if before_error is not None:
                before_error(err)
        fail(_in_flag_terms(err), fmt)
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except Exception as exc:
        if fmt is OutputFormat.text:
            say_upgrade_notes()
        fail_unexpected(exc, fmt)
    if fmt is OutputFormat.json:
        print_json(result)
    else:
        say_upgrade_notes()
        render(result)
    return result


def say_upgrade_notes() -> None:
    """Say on stderr, once, what migrations of the state dir's databases did since the last
    text view (core/db.py, `_note_upgrade`): taken by renaming, so two commands never both say
    them. A JSON view, a hook and an MCP server leave them, their output being a program's."""
    notes = state_dir_path() / UPGRADE_NOTES_NAME
    taken = notes.with_name(f".{UPGRADE_NOTES_NAME}.{os.getpid()}")
    try:
        os.replace(notes, taken)
    except OSError:
        return  # none (the usual case), or a state dir this command cannot change
    try:
        with open(taken, "rb") as file:
            # a migration that opened the file before the rename writes its line first
            # (core/db.py, `_append_note`)
            fcntl.flock(file.fileno(), fcntl.LOCK_EX)
            text = file.read().decode("utf-8", errors="replace")
    except OSError:
        return
    finally:
        with suppress(OSError):
            os.unlink(taken)
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:  # a file a migration opened but wrote nothing to: nothing was upgraded
        return
    for line in lines:
        _say_error_line("note", "bold yellow", ": ", line, len("note: "))
    _say_error_line(
        "note",
        "bold yellow",
        ": ",
        'to go back to an older teamlore: docs/architecture.md, "Upgrading and going back"',
        len("note: "),
    )
