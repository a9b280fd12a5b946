"""Personal-memory settings: the `[personal]` table of teamlore's `config.toml`.

```toml
[personal]
allowed_provenance = ["user_explicit", "agent_observation", "document_import"]
allowed_scopes = ["global", "project:*"]      # what may be read, disclosed to the model, written
allowed_pii = []                               # "phone", "card", "email": let these through
model_profile = "default"                      # a profile name resolved by teamlore.models

[personal.batch]                               # when relayed user turns are processed
turn_threshold = 6
byte_threshold = 16384
idle_seconds = 120
max_wait_seconds = 600
```

Registering a project grants nothing by itself: a `project:<id>` scope must be allowed here
(explicitly or through `project:*`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from teamlore.core.config import load_table, save_table
from teamlore.core.shapes.strict import STRICT
from teamlore.personal.policy import DEFAULT_PROVENANCE, DEFAULT_SCOPES, MAX_REQUEST_BYTES
from teamlore.personal.policy import scope_allowed as _scope_allowed

ProvenanceClass = Literal["user_explicit", "agent_observation", "document_import"]
PROVENANCE_CLASSES: tuple[ProvenanceClass, ...] = (
    "user_explicit",
    "agent_observation",
    "document_import",
)

_SCOPE_PATTERN = re.compile(r"^(global|project:[A-Za-z0-9_-]{1,128}|project:\*)$")


class BatchTriggers(BaseModel):
    model_config = STRICT

    turn_threshold: int = Field(default=6, ge=1, le=64)
    byte_threshold: int = Field(default=16_384, ge=1)
    idle_seconds: float = Field(default=120.0, gt=0)
    max_wait_seconds: float = Field(default=600.0, gt=0)


class QueueSettings(BaseModel):
    model_config = STRICT

    lease_seconds: float = Field(default=120.0, gt=0)
    max_attempts: int = Field(default=5, ge=1, le=100)
    backoff_base_seconds: float = Field(default=1.0, gt=0)
    backoff_cap_seconds: float = Field(default=600.0, gt=0)
    max_batch_observations: int = Field(default=8, ge=1, le=64)


class PersonalSettings(BaseModel):
    model_config = STRICT

    allowed_provenance: list[ProvenanceClass] = Field(
        default_factory=lambda: list[ProvenanceClass](DEFAULT_PROVENANCE)
    )
    allowed_scopes: list[str] = Field(default_factory=lambda: list(DEFAULT_SCOPES))
    # personal data the person lets reach the model on purpose (personal/safety.py)
    allowed_pii: list[Literal["phone", "card", "email"]] = Field(default_factory=list)
    model_profile: str | None = None
    max_request_bytes: int = Field(default=MAX_REQUEST_BYTES, ge=4096, le=MAX_REQUEST_BYTES)
    batch: BatchTriggers = Field(default_factory=BatchTriggers)
    queue: QueueSettings = Field(default_factory=QueueSettings)

    @field_validator("allowed_scopes")
    @classmethod
    def _scopes_are_known(cls, value: list[str]) -> list[str]:
        for scope in value:
            if not _SCOPE_PATTERN.match(scope):
                raise ValueError(f"scope {scope!r} is not global, project:<id> or project:*")
        return value

    def provenance_allowed(self, provenance: str) -> bool:
        return provenance in self.allowed_provenance

    def scope_allowed(self, scope: str) -> bool:
        return _scope_allowed(self.allowed_scopes, scope)


def load_personal_settings(home: Path | None = None) -> PersonalSettings:
    """The `[personal]` table, or defaults when it is absent."""
    return load_table("personal", PersonalSettings, home)


def save_personal_settings(settings: PersonalSettings, home: Path | None = None) -> None:
    """Write the `[personal]` table, keeping every other part of config.toml."""
    save_table("personal", settings, home)


def load_personal_settings_readonly(home: Path) -> PersonalSettings:
    """Like `load_personal_settings`, but never creates the state dir (for read-only callers)."""
    return load_table("personal", PersonalSettings, home, readonly=True)
