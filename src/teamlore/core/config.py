"""`config.toml` in the state dir: registered repositories and session sources.

Read with tomllib; written by a small serializer for the flat shapes we store (tables of
strings, numbers, booleans and string lists), so no TOML-writing dependency is needed.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from teamlore.core import errors
from teamlore.core.paths import read_private_file, resolve_home, write_private_file
from teamlore.core.strict import STRICT


class RepositoryConfig(BaseModel):
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
    model_config = ConfigDict(extra="allow")

    sources: dict[str, list[str]] = Field(default_factory=dict)
    repositories: list[RepositoryConfig] = Field(default_factory=list)
    embeddings: EmbeddingsConfig = Field(default_factory=EmbeddingsConfig)


def config_path(home: Path | None = None) -> Path:
    return resolve_home(home) / "config.toml"


def load_config(home: Path | None = None) -> Config:
    path = config_path(home)
    if not path.exists():
        return Config()
    try:
        data = tomllib.loads(read_private_file(path).decode("utf-8"))
        return Config.model_validate(data)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, ValidationError, OSError) as exc:
        first = str(exc).splitlines()[0]
        raise errors.TeamloreError(errors.CONFIG_INVALID, f"{path}: {first}") from exc


def save_config(config: Config, home: Path | None = None) -> None:
    data = config.model_dump()
    if config.embeddings == EmbeddingsConfig():  # the default is not written out
        del data["embeddings"]
    write_private_file(config_path(home), dumps_toml(data).encode("utf-8"))


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
