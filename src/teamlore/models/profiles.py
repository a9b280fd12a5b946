"""Model profiles: which endpoint, model and key a model call uses.

Profiles live in the state dir's `config.toml`:

    [models.default]
    base_url = "https://api.openai.com/v1"   # the API root, not /chat/completions
    model = "gpt-4.1-mini"
    api_key_env = "OPENAI_API_KEY"           # the NAME of the variable holding the key
    api = "chat"                             # chat (Chat Completions) | responses
    timeout_s = 60
    max_retries = 2

Every field is optional. A missing `base_url` comes from `OPENAI_BASE_URL` (else the OpenAI API
root); a missing `model` from `OPENAI_MODEL`. Variables are looked up in the process environment
first, then in the private `<state dir>/.env` file (`NAME=value` lines), so the key never has to
sit in `config.toml`. The key itself is kept as a `SecretStr`: it is never printed or logged.
A server on this machine (a `base_url` on localhost or a loopback address, as Ollama, llama.cpp
or vLLM serve by default) may go without a key: the requests then carry no `Authorization`.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, field_validator

from teamlore.core import errors
from teamlore.core.config import load_config, load_table
from teamlore.core.paths import display_path
from teamlore.core.shapes.strict import STRICT, STRICT_FROZEN

DEFAULT_PROFILE = "default"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
ENV_FILE_NAME = ".env"

ApiKind = Literal["chat", "responses"]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# a name `[models.<name>]` can hold as it is written (a TOML bare key), so every message that
# says "add a [models.<name>] table" can be copied into config.toml
PROFILE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
PROFILE_NAME_FORM = (
    "a model profile name: 1-64 ASCII letters, digits, _ or - (as in [models.<name>])"
)
_ENDPOINT_SUFFIXES = ("/chat/completions", "/responses", "/completions")


def normalize_base_url(value: str) -> str:
    """Check an API root URL (http/https, no credentials, query or fragment); drop trailing /."""
    url = value.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("base_url must be an http:// or https:// URL")
    if parts.username or parts.password:
        raise ValueError("base_url must not contain credentials; use api_key_env")
    if parts.query or parts.fragment:
        raise ValueError("base_url must not contain a query or fragment")
    if parts.path.endswith(_ENDPOINT_SUFFIXES):
        raise ValueError("base_url is the API root (like https://api.openai.com/v1), no endpoint")
    return url


def is_loopback_url(url: str) -> bool:
    """Whether `url` names this machine (localhost or a loopback address): no key is needed."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ModelProfileConfig(BaseModel):
    """One `[models.<name>]` table as written in config.toml."""

    model_config = STRICT

    base_url: str | None = None
    model: str | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    api: ApiKind = "chat"
    timeout_s: float = Field(60.0, gt=0, le=600)
    max_retries: int = Field(2, ge=0, le=10)

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        return None if value is None else normalize_base_url(value)

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str) -> str:
        if not _ENV_NAME.match(value):
            raise ValueError("api_key_env must be an environment variable name")
        return value

    @field_validator("model")
    @classmethod
    def _model(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("model must not be empty")
        return None if value is None else value.strip()


class ModelProfile(BaseModel):
    """A resolved profile: everything a client needs, the key included (as a secret)."""

    model_config = STRICT_FROZEN

    name: str
    base_url: str
    model: str
    api: ApiKind
    api_key: SecretStr | None
    api_key_env: str
    timeout_s: float
    max_retries: int


def read_env_file(path: Path) -> dict[str, str]:
    """Parse a dotenv file: `NAME=value`, optional `export `, quotes, `#` comments.

    Returns {} when the file does not exist. Malformed lines are skipped, never echoed (they may
    hold a secret).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise errors.TeamloreError(
            errors.CONFIG_INVALID, f"{display_path(path)} cannot be read"
        ).advising(
            f"Make the state dir's {path.name} UTF-8 text you can read, or move it aside."
        ) from exc
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        name, sep, value = line.partition("=")
        name = name.strip()
        if not sep or not _ENV_NAME.match(name):
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        values[name] = value
    return values


def profile_names(home: Path | None = None) -> list[str]:
    """The `[models.<name>]` profiles defined in config.toml."""
    return sorted(load_config(home).models)


def profile_problem(name: str, home: Path | None = None) -> str | None:
    """Why profile `name` cannot be used yet (no table, no model, no key), or None if it can."""
    if name not in profile_names(home) and name != DEFAULT_PROFILE:  # default: env alone
        return f"model profile {name!r} has no [models.{name}] table in config.toml"
    try:
        load_profile(name, home=home)
    except errors.TeamloreError as exc:
        return exc.message
    return None


def load_profile(
    name: str | None = None,
    *,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> ModelProfile:
    """Resolve profile `name` (default "default") from config.toml, the environment and `.env`.

    A missing "default" profile is not an error: it resolves from the environment alone. A named
    profile that config.toml does not define is `MODEL_NOT_CONFIGURED`, as is a missing model or
    key. Messages name variables, never their values.
    """
    from teamlore.core.paths import resolve_home

    state = resolve_home(home)
    chosen = name or DEFAULT_PROFILE
    tables = load_config(state).models
    if chosen not in tables and chosen != DEFAULT_PROFILE:
        known = ", ".join(sorted(tables)) or "none"
        raise errors.TeamloreError(
            errors.MODEL_NOT_CONFIGURED,
            f"no [models.{chosen}] profile in config.toml (defined: {known})",
        )
    config = load_table(f"models.{chosen}", ModelProfileConfig, state)

    env_file = read_env_file(state / ENV_FILE_NAME)
    process_env = os.environ if environ is None else environ

    def lookup(var: str) -> str | None:
        value = process_env.get(var) or env_file.get(var)
        return value.strip() if value and value.strip() else None

    base_url = config.base_url
    if base_url is None:
        from_env = lookup("OPENAI_BASE_URL")
        try:
            base_url = normalize_base_url(from_env) if from_env else DEFAULT_BASE_URL
        except ValueError as exc:
            raise errors.TeamloreError(errors.CONFIG_INVALID, f"OPENAI_BASE_URL: {exc}").advising(
                "Set OPENAI_BASE_URL (environment or the state dir's .env) to an http(s) URL."
            ) from None
    model = config.model or lookup("OPENAI_MODEL")
    if not model:
        raise errors.TeamloreError(
            errors.MODEL_NOT_CONFIGURED,
            f"profile {chosen!r} names no model: set `model` in [models.{chosen}] or OPENAI_MODEL",
        )
    key = lookup(config.api_key_env)
    if not key and not is_loopback_url(base_url):
        raise errors.TeamloreError(
            errors.MODEL_NOT_CONFIGURED,
            f"profile {chosen!r} needs an API key in ${config.api_key_env} "
            f"(environment or {display_path(state / ENV_FILE_NAME)})",
        )
    return ModelProfile(
        name=chosen,
        base_url=base_url,
        model=model,
        api=config.api,
        api_key=SecretStr(key) if key else None,
        api_key_env=config.api_key_env,
        timeout_s=config.timeout_s,
        max_retries=config.max_retries,
    )
