"""`config.toml` in the state dir: the one reader and writer of teamlore's settings file.

Every other module reads its part through here, never with `tomllib` itself:

- `load_config(home)` — the whole file as a `Config` (`sources`, `repositories`, `models`,
  `personal`, `paths`, and any other table kept as is so a save never drops it);
- `load_table("personal", PersonalSettings, home)` — one table (a dotted name like
  `"models.runner"` reaches into nested tables) validated by the schema its owning package
  defines; an absent table gives the schema's defaults;
- `save_config` / `save_table` write the file back (0600, atomically, only once the new text
  reads back as the settings saved).

`readonly=True` reads without creating or tightening anything (for processes that must leave no
trace). Every problem — unreadable file, bad TOML, a value its schema refuses — is one error,
`CONFIG_INVALID`, whose message names the file, the line when it is known, and the table.

The file is the user's: a save edits its document (tomlkit, imported by the writer only, never on
a read command's path) rather than writing it anew, so comments, the order of keys and tables, and
every table teamlore did not change stay as they were; only the keys whose values changed are
rewritten, and a setting nobody chose (a schema default) is not written out. tomlkit writes an
array of tables whole: a table between two `[[repositories]]` items moves after them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from teamlore.core import errors
from teamlore.core.locations import state_dir_path
from teamlore.core.paths import display_path, read_private_file, resolve_home, write_private_file
from teamlore.core.shapes.records import Record, field

if TYPE_CHECKING:
    from pydantic import BaseModel

CONFIG_FILE = "config.toml"

Schema = TypeVar("Schema", bound="BaseModel")

# The file's own tables are checked by hand (`Config.from_data`): every short command reads
# config.toml, and pydantic would cost it more than the command (docs/architecture.md, "A short
# CLI process"). Tables other packages own are validated by `load_table` with their schema.

EmbeddingsBackend = Literal["bundled", "endpoint", "off"]


class RepositoryConfig(Record):
    """One `[[repositories]]` entry: a registered worktree (see "owner" in docs/glossary.md)."""

    path: str
    repository_key: str
    worktree_key: str


class EmbeddingsConfig(Record):
    """`[embeddings]`: which model embeds memory for hybrid search (models/embeddings.py)."""

    backend: EmbeddingsBackend = "bundled"
    profile: str | None = None  # a [models.<name>] profile, for backend = "endpoint"
    dimensions: int | None = None  # 8 to 8192


class Config(Record):
    """The whole file. Tables other packages own stay raw here and are validated by
    `load_table` with their owner's schema (`teamlore.personal.config.PersonalSettings`,
    `teamlore.models.profiles.ModelProfileConfig`, `teamlore.repo.path_settings.PathSettings`);
    `extra` keeps every other table as it is, so a save never drops it."""

    sources: dict[str, list[str]] = field(default_factory=dict)
    repositories: list[RepositoryConfig] = field(default_factory=list)
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    personal: dict[str, Any] = field(default_factory=dict)
    paths: dict[str, Any] = field(default_factory=dict)  # path aliases (docs/sessions.md)
    extra: dict[str, Any] = field(default_factory=dict)

    def registered_roots(self) -> dict[str, str]:
        """Registered worktree roots (real paths) → repository key."""
        return {os.path.realpath(r.path): r.repository_key for r in self.repositories}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Config:
        """The parsed file checked table by table; `_Refused` names the first problem."""
        known = {k: data[k] for k in _OWN_TABLES if k in data}
        for table in ("models", "personal", "paths"):
            _expect(dict, known.get(table, {}), (table,), "a valid dictionary")
        models = known.get("models", {})
        for name, profile in models.items():
            _expect(dict, profile, ("models", name), "a valid dictionary")
        return cls(
            sources=_sources(known.get("sources", {})),
            repositories=[_repository(n, r) for n, r in enumerate(_list(known, "repositories"))],
            embeddings=_embeddings(known.get("embeddings", {})),
            models=models,
            personal=known.get("personal", {}),
            paths=known.get("paths", {}),
            extra={k: v for k, v in data.items() if k not in _OWN_TABLES},
        )

    def to_data(self) -> dict[str, Any]:
        """The file's tables as plain values (what `from_data` reads back)."""
        return {
            "sources": {k: list(v) for k, v in self.sources.items()},
            "repositories": [
                {"path": r.path, "repository_key": r.repository_key, "worktree_key": r.worktree_key}
                for r in self.repositories
            ],
            "embeddings": {
                "backend": self.embeddings.backend,
                "profile": self.embeddings.profile,
                "dimensions": self.embeddings.dimensions,
            },
            "models": self.models,
            "personal": self.personal,
            "paths": self.paths,
            **self.extra,
        }


_OWN_TABLES = ("sources", "repositories", "embeddings", "models", "personal", "paths")


def unknown_setting(known: Iterable[str]) -> str:
    """The refusal of a key a table does not have, naming the ones it does (a typo shows)."""
    return f"not a setting teamlore knows here (it reads {', '.join(known)})"


def unknown_tables(config: Config) -> list[str]:
    """The top-level tables teamlore does not read (kept on save), each with the table it
    probably meant: `embedings (did you mean [embeddings]?)`."""
    import difflib

    shown = []
    for name in config.extra:
        close = difflib.get_close_matches(name, [*_OWN_TABLES, "model"], n=1, cutoff=0.7)
        meant = "models" if close == ["model"] else close[0] if close else None
        shown.append(f"[{name}] (did you mean [{meant}]?)" if meant else f"[{name}]")
    return shown


class _Refused(Exception):
    """A value the file's own schema refuses: where (table, field…) and pydantic's words."""

    def __init__(self, loc: tuple[str | int, ...], msg: str) -> None:
        super().__init__(msg)
        self.problem = {"loc": loc, "msg": msg}


def _expect(kind: type, value: object, loc: tuple[str | int, ...], word: str) -> None:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _Refused(loc, f"Input should be {word}")


def _list(data: dict[str, Any], table: str) -> list[Any]:
    value = data.get(table, [])
    _expect(list, value, (table,), "a valid list")
    return list(value)


def _sources(value: object) -> dict[str, list[str]]:
    _expect(dict, value, ("sources",), "a valid dictionary")
    assert isinstance(value, dict)
    for provider, roots in value.items():
        _expect(list, roots, ("sources", provider), "a valid list")
        for n, root in enumerate(roots):
            _expect(str, root, ("sources", provider, n), "a valid string")
    return {k: list(v) for k, v in value.items()}


def _repository(n: int, value: object) -> RepositoryConfig:
    _expect(dict, value, ("repositories", n), "a valid dictionary")
    assert isinstance(value, dict)
    names = ("path", "repository_key", "worktree_key")
    for key in value:
        if key not in names:
            raise _Refused(("repositories", n, key), unknown_setting(names))
    for key in names:
        if key not in value:
            raise _Refused(("repositories", n, key), "Field required")
        _expect(str, value[key], ("repositories", n, key), "a valid string")
    return RepositoryConfig(*(value[k] for k in names))


def _embeddings(value: object) -> EmbeddingsConfig:
    _expect(dict, value, ("embeddings",), "a valid dictionary")
    assert isinstance(value, dict)
    for key in value:
        if key not in ("backend", "profile", "dimensions"):
            raise _Refused(
                ("embeddings", key), unknown_setting(("backend", "profile", "dimensions"))
            )
    made = EmbeddingsConfig(**value)
    backends = get_args(EmbeddingsBackend)
    if made.backend not in backends:
        words = ", ".join(f"'{b}'" for b in backends[:-1]) + f" or '{backends[-1]}'"
        raise _Refused(("embeddings", "backend"), f"Input should be {words}")
    if made.profile is not None:
        _expect(str, made.profile, ("embeddings", "profile"), "a valid string")
    if made.dimensions is not None:
        loc = ("embeddings", "dimensions")
        _expect(int, made.dimensions, loc, "a valid integer")
        if made.dimensions < 8:
            raise _Refused(loc, "Input should be greater than or equal to 8")
        if made.dimensions > 8192:
            raise _Refused(loc, "Input should be less than or equal to 8192")
    return made


def config_path(home: Path | None = None, *, readonly: bool = False) -> Path:
    """Where the file is; unless `readonly`, the state dir is created (0700) if missing."""
    if readonly:
        return (home if home is not None else state_dir_path()) / CONFIG_FILE
    return resolve_home(home) / CONFIG_FILE


def load_config(home: Path | None = None, *, readonly: bool = False) -> Config:
    """The whole file, or an empty `Config` when there is none."""
    path = config_path(home, readonly=readonly)
    if not path.is_file() and not path.is_symlink():
        return Config()
    data = _parse(path, _read(path, readonly=readonly))
    try:
        return Config.from_data(data)
    except _Refused as exc:
        raise _invalid(path, str(exc.problem["loc"][0]), exc.problem) from None


def load_table(
    name: str, schema: type[Schema], home: Path | None = None, *, readonly: bool = False
) -> Schema:
    """The table `name` (dotted for nested tables) validated by `schema`; defaults if absent."""
    from pydantic import ValidationError  # the owner's schema is a pydantic model

    config = load_config(home, readonly=readonly)
    raw: Any = config.to_data()
    for part in name.split("."):
        raw = raw.get(part, {}) if isinstance(raw, dict) else raw
    try:
        return schema.model_validate(raw)
    except ValidationError as exc:
        problem: dict[str, Any] = dict(exc.errors()[0])
        if problem.get("type") == "extra_forbidden":
            problem["msg"] = unknown_setting(schema.model_fields)
        raise _invalid(config_path(home, readonly=True), name, problem) from None


def save_config(config: Config, home: Path | None = None) -> None:
    """Write `config` into config.toml by editing the file's document: a top-level table whose
    settings did not change is left untouched (comments, order, spelling); in one that did,
    only the changed keys are rewritten, and a table left empty (or `[embeddings]` at its
    defaults) is removed. Nothing is written unless the new text reads back as `config`."""
    import tomlkit  # the writer's alone: a read command never loads it

    from teamlore.core.text.files import with_line_ends_of

    path = config_path(home)
    text = ""
    exists = path.is_file() or path.is_symlink()
    if exists:
        text = _read(path, readonly=False)
        before = _settings_of(path, _parse(path, text)).to_data()
    else:
        before = Config().to_data()
    after = config.to_data()
    if exists and before == after:
        return  # the file already says so: not even re-dumped (tomlkit may move a table)
    original = text
    document = tomlkit.parse(text)
    blank = not text.strip()
    kept = _written_tables(config)
    for table in after:
        if before.get(table) == after[table]:
            continue  # unchanged: not one byte of it is touched
        if table in kept:
            _edit(document, table, kept[table])
        elif table in document:
            del document[table]
    for table in before.keys() - after.keys():  # an unknown table the caller dropped
        document.pop(table, None)
    text = with_line_ends_of(original, tomlkit.dumps(document))  # added lines end as the rest
    if blank:  # a new file starts with its first setting, not a blank line
        text = text.lstrip("\n")
    _refuse_unreadable(path, text, config)
    write_private_file(path, text.encode("utf-8"))


def _written_tables(config: Config) -> dict[str, Any]:
    """The tables a file holds for `config`: without `[embeddings]` at its defaults, without
    empty tables and lists, without unset (None) values."""
    data = config.to_data()
    if config.embeddings == EmbeddingsConfig():
        del data["embeddings"]
    return {
        table: value
        for table, value in data.items()
        if value is not None and (table not in _OWN_TABLES or value)
    }


def _edit(container: Any, key: str, value: Any) -> None:
    """Set `container[key]` to `value`, keeping what already holds it: a table is edited key by
    key, an array of tables item by item; any other value is replaced (its comment stays)."""
    from collections.abc import MutableMapping

    from tomlkit.items import AoT, InlineTable

    current = container.get(key)
    if isinstance(value, dict) and isinstance(current, MutableMapping):
        _edit_table(current, value)
    elif isinstance(current, AoT) and _tables(value):
        _edit_tables(current, value)
    else:
        container[key] = _new(value, inline=isinstance(container, InlineTable))


def _edit_tables(tables: Any, value: list[dict[str, Any]]) -> None:
    """An array of tables (`[[repositories]]`): the tables that stay keep their own lines and
    comments, the ones gone are removed and new ones added at the end; a reordered array is
    edited table by table."""
    held = [_plain(table) for table in tables]
    wanted = list(value)
    kept = []
    for position, table in enumerate(held):
        if table in wanted:
            wanted.remove(table)
            kept.append(position)
    if [held[position] for position in kept] != value[: len(kept)]:
        kept = list(range(min(len(held), len(value))))
        for position in kept:
            _edit_table(tables[position], value[position])
    for position in reversed(range(len(held))):
        if position not in kept:
            del tables[position]
    for table in value[len(kept) :]:
        tables.append(_new(table))


def _new(value: Any, *, inline: bool = False) -> Any:
    """A value to add: a table after a blank line (inside an inline table, an inline one: TOML
    allows no other), nothing unset in it."""
    import tomlkit

    value = _without_none(value)
    if not isinstance(value, dict):
        return value
    if inline:
        written = tomlkit.inline_table()
        written.update(value)
        return written
    table = tomlkit.table()
    table.update(value)
    table.trivia.indent = "\n"
    return table


def _edit_table(table: Any, value: dict[str, Any]) -> None:
    """A key whose value is the same is not touched; one `value` lacks (or unsets) is removed."""
    for name in [n for n in table if value.get(n) is None]:
        del table[name]
    for name, item in value.items():
        if item is not None and _plain(table.get(name)) != item:
            _edit(table, name, item)


def _plain(item: Any) -> Any:
    return item.unwrap() if hasattr(item, "unwrap") else item


def _tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _without_none(value: Any) -> Any:
    """TOML has no null: an unset value is left out."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def save_table(name: str, value: BaseModel, home: Path | None = None) -> None:
    """Write one top-level table, keeping every other part of the file. A setting the file does
    not have and whose value is the schema's default stays unwritten (it follows the default)."""
    from pydantic import ValidationError

    data = load_config(home).to_data()
    try:
        defaults = type(value)().model_dump(exclude_none=True)
    except ValidationError:  # a schema with required settings: every one is written
        defaults = {}
    old = data.get(name)
    data[name] = _chosen(old if isinstance(old, dict) else {}, value.model_dump(), defaults)
    save_config(Config.from_data(data), home)


def _chosen(old: dict[str, Any], new: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """`new` without the keys `old` does not have whose value is the default."""
    chosen: dict[str, Any] = {}
    for key, value in new.items():
        if value is None:
            continue
        default = defaults.get(key)
        if isinstance(value, dict) and isinstance(default, dict):
            inner = old.get(key)
            value = _chosen(inner if isinstance(inner, dict) else {}, value, default)
            if value or key in old:
                chosen[key] = value
        elif key in old or value != default:
            chosen[key] = value
    return chosen


def _read(path: Path, *, readonly: bool) -> str:
    try:
        raw = _read_untouched(path) if readonly else read_private_file(path)
        return raw.decode(_UTF8_MAYBE_MARKED)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        shown = display_path(path)
        raise errors.TeamloreError(errors.CONFIG_INVALID, f"{shown}: {reason}") from None


def _read_untouched(path: Path) -> bytes:
    """Read without following a symlink and without changing the file's mode."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


# an editor that saves with a byte order mark (Windows Notepad) still writes a valid file
_UTF8_MAYBE_MARKED = "utf-8-sig"

_AT_LINE = re.compile(r"\s*\(at line (\d+), column \d+\)$")


def _parse(path: Path, text: str) -> dict[str, Any]:
    import tomllib  # only a process that has a config file to read pays for the parser

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = _AT_LINE.search(message)
        where = f"{display_path(path)} line {found.group(1)}" if found else display_path(path)
        raise errors.TeamloreError(
            errors.CONFIG_INVALID, f"{where}: {_AT_LINE.sub('', message)}"
        ) from None


def _settings_of(path: Path, data: dict[str, Any]) -> Config:
    try:
        return Config.from_data(data)
    except _Refused as exc:
        raise _invalid(path, str(exc.problem["loc"][0]), exc.problem) from None


def _refuse_unreadable(path: Path, text: str, config: Config) -> None:
    """Before the file is replaced: the new text must read back as `config`, or nothing is
    written (a file teamlore cannot read would stop every later command, even the one that
    could repair it)."""
    try:
        read = Config.from_data(_parse(path, text))
    except (errors.TeamloreError, _Refused) as exc:
        reason = exc.message if isinstance(exc, errors.TeamloreError) else str(exc)
        reason = reason.removeprefix(display_path(path)).lstrip(" :")
    else:
        if _without_none(read.to_data()) == _without_none(config.to_data()):
            return
        reason = "they read back as other settings"
    raise errors.TeamloreError(
        errors.CONFIG_INVALID,
        f"{display_path(path)} was left as it was: the new settings would not read back ({reason})",
    ) from None


def _invalid(path: Path, table: str, problem: Any) -> errors.TeamloreError:
    """CONFIG_INVALID for a value a schema refuses: file, line (when found), table, field."""
    fields = [str(p) for p in problem.get("loc", ())]
    field = ".".join(fields[1:] if fields and fields[0] == table else fields)
    message = str(problem.get("msg", "invalid")).removeprefix("Value error, ")
    line = _line_of(path, table, field.split(".")[0] if field else "")
    where = f"{display_path(path)} line {line}" if line else display_path(path)
    label = f"[{table}] {field}" if table and field else f"[{table}]" if table else field
    return errors.TeamloreError(errors.CONFIG_INVALID, f"{where}: {label}: {message}")


def _line_of(path: Path, table: str, key: str) -> int | None:
    """The line of `key` inside `[table]`, else of the table's header (or of `table = …` at the
    top); read again on the error path only. None when it cannot be told."""
    try:
        lines = _read_untouched(path).decode(_UTF8_MAYBE_MARKED).splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    found, current = None, ""
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("["):
            current = stripped.strip("[]").strip()
            found = found or (number if current == table else None)
            continue
        name = stripped.split("=", 1)[0].strip().strip('"')
        if "=" in stripped and current == table and key and name == key:
            return number
        if "=" in stripped and not current and name == table:
            found = found or number
    return found
