"""The shared pydantic configurations for models at a boundary (docs/architecture.md): every model
that reads or writes JSON, TOML or a request refuses unknown fields, and picks one of these
instead of spelling its own `ConfigDict`. Versioned contracts use `contracts._base.ContractModel`,
which is `WIRE` frozen."""

from __future__ import annotations

from pydantic import ConfigDict
from pydantic.alias_generators import to_camel

STRICT = ConfigDict(extra="forbid")
"""Unknown fields are refused; attribute names are the field names."""

STRICT_FROZEN = ConfigDict(extra="forbid", frozen=True)
"""STRICT, and a parsed value never changes."""

WIRE = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)
"""STRICT, camelCase on the wire (snake_case attributes; both names accepted on input)."""

REQUEST = ConfigDict(extra="forbid", alias_generator=to_camel)
"""An operation request (CLI JSON and MCP arguments): camelCase field names only, as the
threadshare contracts spell them (snake_case attributes in Python)."""

WIRE_FROZEN = ConfigDict(
    extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
)
"""WIRE, and a parsed value never changes."""
