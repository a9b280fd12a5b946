"""Shared building blocks of the versioned contracts: the strict base model and field types.

Every contract model is frozen, refuses unknown fields and speaks camelCase on the wire (Python
attributes are snake_case; both names are accepted on input). Arrays are tuples so a parsed
contract is immutable all the way down.

Optional-but-not-nullable fields (the spec's `field?`) are typed `X | SkipJsonSchema[None]` with a
default of None and listed in the model's `_omit_when_none`: they are left out of the wire form
when unset, an explicit JSON `null` is refused, and the exported schema does not allow null.
Optional-and-nullable fields (`field?: X | null`, where null and absent mean different things)
are listed in `_omit_when_unset`: absent stays absent on the wire, an explicit null is kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Iterable
from datetime import datetime
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    StringConstraints,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from teamlore.contracts.formats import HEX64_PATTERN as HEX64_PATTERN  # its home: formats.py
from teamlore.contracts.formats import SLUG_WORDS_PATTERN
from teamlore.core.canonical import MAX_SAFE_INTEGER, digest

HEX40_PATTERN = r"^[0-9a-f]{40}$"
IDENTIFIER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
SLUG_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$"
CANONICAL_TIMESTAMP_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$"
DECIMAL_STRING_PATTERN = r"^(?:0|[1-9][0-9]{0,19})$"
VERSION_PATTERN = r"^[a-z0-9][a-z0-9.-]{0,63}@[0-9]{1,9}$"
LIMITATION_PATTERN = SLUG_WORDS_PATTERN

Hex64 = Annotated[str, StringConstraints(pattern=HEX64_PATTERN)]
Hex40 = Annotated[str, StringConstraints(pattern=HEX40_PATTERN)]
Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER_PATTERN)]
Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN)]
DecimalString = Annotated[str, StringConstraints(pattern=DECIMAL_STRING_PATTERN)]
VersionTag = Annotated[str, StringConstraints(pattern=VERSION_PATTERN)]
LimitationCode = Annotated[str, StringConstraints(pattern=LIMITATION_PATTERN, max_length=128)]
NonEmptyText = Annotated[str, StringConstraints(min_length=1)]

SafeInt = Annotated[int, Field(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER, strict=True)]
NonNegativeInt = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER, strict=True)]
PositiveInt = Annotated[int, Field(ge=1, le=MAX_SAFE_INTEGER, strict=True)]


def _check_real_instant(value: str) -> str:
    """A canonical timestamp must name a real instant (what `Date.toISOString()` round-trips)."""
    try:
        datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        raise ValueError(f"{value!r} is not a real calendar instant") from None
    return value


CanonicalTimestamp = Annotated[
    str,
    StringConstraints(pattern=CANONICAL_TIMESTAMP_PATTERN),
    AfterValidator(_check_real_instant),
]


# the name of a scene, `scenes/<name>.md` (memory/store/documents.py `Scene.name`), one rule for
# the file, an entry's or a draft's `scene` and the scenes a consolidation writes, so an entry
# always names a scene as its file is named (`Release_Notes` never matched `release-notes`): 1-64
# lowercase letters and digits of any script (`release-notes`, `鉴权模块维护`), `-` between them —
# one file name, so no path (`/`, `..`), blank or line break, and no two names a case-insensitive
# file system takes for one file.
SCENE_NAME = re.compile(r"[^\W_](?:(?:[^\W_]|-){0,62}[^\W_])?")
SCENE_NAME_RULE = (
    "1-64 lowercase letters and digits (any script), with `-` between words, as"
    " `scenes/<name>.md` is named (`release-notes`)"
)


def is_scene_name(value: str) -> bool:
    """Whether `value` names a scene (`SCENE_NAME`, and no capital letter)."""
    return SCENE_NAME.fullmatch(value) is not None and value == value.lower()


def scene_name_for(value: str) -> str | None:
    """The scene name `value` most likely meant, when one follows from it by the upgrade's
    renaming (CHANGELOG, "Upgrading from 0.1.0"): lowercase, `_` and blanks as `-`, none at
    either end (`Chess_UI` → `chess-ui`, `chess-variant-` → `chess-variant`); None for any other
    character (`release/notes`, `../x` are not names to guess at) or when none is left."""
    if not re.fullmatch(r"[\w\- ]+", value):
        return None
    words = re.split(r"[\s_-]+", value.lower())
    name = "-".join(word for word in words if word)[:64].strip("-")
    return name if name and is_scene_name(name) else None


def _check_scene_name(value: str) -> str:
    if not is_scene_name(value):
        raise ValueError(f"invalid-scene-name: a scene is named by {SCENE_NAME_RULE}")
    return value


# the wire schema is unchanged (a string of 1-200): the name rule is checked on input
SceneName = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_check_scene_name)]


def utf8_at_most(limit: int) -> AfterValidator:
    """A string whose UTF-8 encoding is at most `limit` bytes."""

    def check(value: str) -> str:
        size = len(value.encode("utf-8"))
        if size > limit:
            raise ValueError(f"is {size} UTF-8 bytes; the limit is {limit}")
        return value

    return AfterValidator(check)


def unique_items(values: Iterable[Hashable], what: str) -> None:
    seen: set[Hashable] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"{what} {value!r} appears more than once")
        seen.add(value)


def sorted_unique_items(values: tuple[Any, ...], what: str) -> None:
    unique_items(values, what)
    if list(values) != sorted(values):
        raise ValueError(f"{what} must be sorted")


class ContractModel(BaseModel):
    """Strict, frozen, camelCase-on-the-wire base of every contract part."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        alias_generator=to_camel,
        strict=False,
        str_strip_whitespace=False,
    )

    _omit_when_none: ClassVar[frozenset[str]] = frozenset()
    _omit_when_unset: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _refuse_explicit_null_for_optional(cls, data: Any) -> Any:
        if isinstance(data, dict) and cls._omit_when_none:
            for name in cls._omit_when_none:
                field = cls.model_fields[name]
                for key in (field.alias, name):
                    if key in data and data[key] is None:
                        raise ValueError(f"{field.alias or name} may be omitted but not null")
        return data

    @model_serializer(mode="wrap")
    def _drop_unset_optionals(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        out = handler(self)
        if isinstance(out, dict):
            fields = type(self).model_fields
            for name in self._omit_when_none | self._omit_when_unset:
                unset = name not in self.model_fields_set
                if (name in self._omit_when_none and getattr(self, name) is None) or (
                    name in self._omit_when_unset and unset
                ):
                    field = fields[name]
                    out.pop(field.alias if info.by_alias and field.alias else name, None)
        return out

    def to_wire(self) -> dict[str, Any]:
        """The JSON object this contract is on the wire (camelCase, unset optionals omitted)."""
        result: dict[str, Any] = self.model_dump(mode="json", by_alias=True)
        return result

    def to_json(self) -> str:
        return json.dumps(self.to_wire(), ensure_ascii=False, separators=(",", ":"))

    def canonical_digest(self) -> str:
        """digest(canonical JSON of the whole wire form) — no field excluded."""
        return digest(self.to_wire())

    @classmethod
    def from_wire(cls, data: Any) -> Self:
        return cls.model_validate(data)


class Owner(ContractModel):
    """The owner scope of a task: one repository and one of its worktrees (keyed ids)."""

    repository_key: Hex64
    worktree_key: Hex64
