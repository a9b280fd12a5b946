"""`config.toml` in the state dir: the one reader and writer of teamlore's settings file.

Every other module reads its part through here, never with `tomllib` itself:

- `load_config(home)` — the whole file as a `Config` (`sources`, `repositories`, `models`,
  `personal`, `paths`, and any other table kept as is so a save never drops it);
- `load_table("personal", PersonalSettings, home)` — one table (a dotted name like
  `"models.runner"` reaches into nested tables) validated by the schema its owning package
  defines; an absent table gives the schema's defaults;
- `save_config` / `save_table` write the file back (0600, atomically).

`readonly=True` reads without creating or tightening anything (for processes that must leave no
trace). Every problem — unreadable file, bad TOML, a value its schema refuses — is one error,
`CONFIG_INVALID`, whose message names the file, the line when it is known, and the table.

Written by a small serializer for the flat shapes we store (tables of strings, numbers,
booleans and string lists), so no TOML-writing dependency is needed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from teamlore.core import errors
from teamlore.core.locations import state_dir_path
from teamlore.core.paths import read_private_file, resolve_home, write_private_file
from teamlore.core.strict import STRICT

CONFIG_FILE = "config.toml"

Schema = TypeVar("Schema", bound=BaseModel)


class RepositoryConfig(BaseModel):
    """One `[[repositories]]` entry: a registered worktree (see "owner" in docs/glossary.md)."""

    model_config = STRICT

    path: str
    repository_key: str
    worktree_key: str


class EmbeddingsConfig(BaseModel):
    """`[embeddings]`: which model embeds memory for hybrid search (models/embeddings.py)."""

    model_config = STRICT

    backend: Literal["bundled", "endpoint", "off"] = "bundled"
    profile: str | None = None  # a [models.<name>] profile, for backend = "endpoint"
    dimensions: int | None = Field(None, ge=8, le=8192)


class Config(BaseModel):
    """The whole file. Tables other packages own stay raw here and are validated by
    `load_table` with their owner's schema (`teamlore.personal.config.PersonalSettings`,
    `teamlore.models.profiles.ModelProfileConfig`, `teamlore.repo.worktrees.PathSettings`)."""

    model_config = ConfigDict(extra="allow")

    sources: dict[str, list[str]] = Field(default_factory=dict)
    repositories: list[RepositoryConfig] = Field(default_factory=list)
    embeddings: EmbeddingsConfig = Field(default_factory=EmbeddingsConfig)
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)
    personal: dict[str, Any] = Field(default_factory=dict)
    paths: dict[str, Any] = Field(default_factory=dict)  # path aliases (docs/sessions.md)

    def registered_roots(self) -> dict[str, str]:
        """Registered worktree roots (real paths) → repository key."""
        return {os.path.realpath(r.path): r.repository_key for r in self.repositories}


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
        return Config.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        table = str(problem["loc"][0]) if problem["loc"] else ""
        raise _invalid(path, table, problem) from None


def load_table(
    name: str, schema: type[Schema], home: Path | None = None, *, readonly: bool = False
) -> Schema:
    """The table `name` (dotted for nested tables) validated by `schema`; defaults if absent."""
    config = load_config(home, readonly=readonly)
    raw: Any = config.model_dump()
    for part in name.split("."):
        raw = raw.get(part, {}) if isinstance(raw, dict) else raw
    try:
        return schema.model_validate(raw)
    except ValidationError as exc:
        raise _invalid(config_path(home, readonly=True), name, exc.errors()[0]) from None


def save_config(config: Config, home: Path | None = None) -> None:
    data = config.model_dump()
    if config.embeddings == EmbeddingsConfig():  # the default is not written out
        del data["embeddings"]
    for table in ("models", "personal", "paths"):  # written only when they hold something
        if not data.get(table):
            data.pop(table, None)
    write_private_file(config_path(home), dumps_toml(data).encode("utf-8"))


def save_table(name: str, value: BaseModel, home: Path | None = None) -> None:
    """Write one top-level table, keeping every other part of the file."""
    data = load_config(home).model_dump()
    data[name] = value.model_dump(exclude_none=True)
    save_config(Config.model_validate(data), home)


def _read(path: Path, *, readonly: bool) -> str:
    try:
        raw = _read_untouched(path) if readonly else read_private_file(path)
        return raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise errors.TeamloreError(errors.CONFIG_INVALID, f"{path}: {reason}") from None


def _read_untouched(path: Path) -> bytes:
    """Read without following a symlink and without changing the file's mode."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


_AT_LINE = re.compile(r"\s*\(at line (\d+), column \d+\)$")


def _parse(path: Path, text: str) -> dict[str, Any]:
    import tomllib  # only a process that has a config file to read pays for the parser

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = _AT_LINE.search(message)
        where = f"{path} line {found.group(1)}" if found else str(path)
        raise errors.TeamloreError(
            errors.CONFIG_INVALID, f"{where}: {_AT_LINE.sub('', message)}"
        ) from None


def _invalid(path: Path, table: str, problem: Any) -> errors.TeamloreError:
    """CONFIG_INVALID for a value a schema refuses: file, line (when found), table, field."""
    fields = [str(p) for p in problem.get("loc", ())]
    field = ".".join(fields[1:] if fields and fields[0] == table else fields)
    message = str(problem.get("msg", "invalid")).removeprefix("Value error, ")
    line = _line_of(path, table, field.split(".")[0] if field else "")
    where = f"{path} line {line}" if line else str(path)
    label = f"[{table}] {field}" if table and field else f"[{table}]" if table else field
    return errors.TeamloreError(errors.CONFIG_INVALID, f"{where}: {label}: {message}")


def _line_of(path: Path, table: str, key: str) -> int | None:
    """The line of `key` inside `[table]`, else of the table's header (or of `table = …` at the
    top); read again on the error path only. None when it cannot be told."""
    try:
        lines = _read_untouched(path).decode("utf-8").splitlines()
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


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        escaped = escaped.replace("\n", "\\n").replace("\t", "\\t")
        return f'"{escaped}"'
    if isinstance(value, list) and all(not isinstance(v, dict) for v in value):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"unsupported TOML value {value!r}")


def _toml_key(key: str) -> str:
    if key.replace("_", "").replace("-", "").isalnum() and key.isascii():
        return key
    return _toml_value(key)


def dumps_toml(data: dict[str, Any], prefix: str = "") -> str:
    """Serialize nested dicts / lists of dicts (array of tables) of scalars to TOML."""
    lines: list[str] = []
    tables: list[tuple[str, Any]] = []
    for key, value in data.items():
        if value is None:
            continue
        if isinstance(value, dict) or (
            isinstance(value, list) and value and all(isinstance(v, dict) for v in value)
        ):
            tables.append((key, value))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    out = "\n".join(lines) + ("\n" if lines else "")
    for key, value in tables:
        name = f"{prefix}{_toml_key(key)}"
        if isinstance(value, dict):
            body = dumps_toml(value, prefix=f"{name}.")
            out += f"\n[{name}]\n{body}"
        else:
            for item in value:
                out += f"\n[[{name}]]\n{dumps_toml(item, prefix=f'{name}.')}"
    return out
