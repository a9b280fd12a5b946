"""What the write checks need of the `[personal]` settings, without the settings' pydantic schema
when config.toml has no `[personal]` table (docs/architecture.md, "A short CLI process").

`hook user-turn` runs on every prompt the user types; with the table absent its settings are the
defaults, and importing pydantic (with `importlib.metadata` and `email`) to build them would be
most of the hook's process. A table that is present is read by its schema (`personal.config`),
so its refusals are the schema's own (`personal.api.load_policy`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal, NamedTuple, Protocol

from teamlore.core.config import load_config

DEFAULT_PROVENANCE: tuple[Literal["user_explicit"]] = ("user_explicit",)
DEFAULT_SCOPES = ("global",)
MAX_REQUEST_BYTES = 131_072  # one model request discloses at most 128 KiB (DESIGN.md)


class Policy(Protocol):
    """The part of `PersonalSettings` a write's checks read."""

    @property
    def allowed_pii(self) -> Sequence[str]: ...
    @property
    def max_request_bytes(self) -> int: ...
    def provenance_allowed(self, provenance: str) -> bool: ...
    def scope_allowed(self, scope: str) -> bool: ...


def scope_allowed(allowed_scopes: Sequence[str], scope: str) -> bool:
    """Whether `scope` is allowed: listed, or a project while `project:*` is listed."""
    if scope in allowed_scopes:
        return True
    return scope.startswith("project:") and "project:*" in allowed_scopes


class DefaultPolicy(NamedTuple):
    """`PersonalSettings()`'s answers, for a config.toml without a `[personal]` table."""

    allowed_pii: tuple[str, ...] = ()
    max_request_bytes: int = MAX_REQUEST_BYTES

    def provenance_allowed(self, provenance: str) -> bool:
        return provenance in DEFAULT_PROVENANCE

    def scope_allowed(self, scope: str) -> bool:
        return scope_allowed(DEFAULT_SCOPES, scope)


def registered_project_ids(home: Path | None = None) -> frozenset[str]:
    """Project ids of registered repositories (`repository_key`): `project:<id>` contexts."""
    return frozenset(repo.repository_key for repo in load_config(home).repositories)
