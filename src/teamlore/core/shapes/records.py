"""Records: classes of named fields whose `__init__`, `__eq__`, `__repr__` (and, frozen, their
immutability and `__hash__`) follow from their annotations, for the modules a short command
imports (docs/architecture.md, "A short CLI process").

A dataclass writes its methods as source text and `exec`s each one when its module is imported
(0.4–0.7 ms a class), and `dataclasses` imports `inspect`, `ast`, `dis` and `tokenize` (~8 ms of
CPU): a `sessions search` process spent ~13 ms of its ~90 on the 15 dataclasses it defined. A
record's methods are this base's, shared by every record, reading the field list its class made
once. mypy checks a record as a dataclass (`typing.dataclass_transform`).

    class EmbedStats(Record):
        space: str
        embedded: int = 0
        names: list[str] = field(default_factory=list)


    class Diagnostic(Record, frozen=True, kw_only=True): ...

A record has no `__slots__` (they must exist when the class is made); `fields(cls)` and
`record._replace(**changes)` are `dataclasses.fields` and `dataclasses.replace`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Self, TypeVar, dataclass_transform

T = TypeVar("T")
MISSING: Any = object()  # no default: the field is required


class Field:
    """A field as its class declares it (`fields`): a default, or a factory of one, and the
    metadata a declaring helper keeps there (e.g. `ops.plain_request.param`'s rule)."""

    __slots__ = ("default", "default_factory", "metadata", "name")

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Callable[[], Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.name = ""
        self.default, self.default_factory = default, default_factory
        self.metadata = metadata or {}


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], T] | None = None,
    metadata: dict[str, Any] | None = None,
) -> T:
    """A field's declaration beyond a plain default, as `dataclasses.field`'s: a mutable
    default (`default_factory()` for each record) or metadata."""
    return Field(default, default_factory, metadata)  # type: ignore[return-value]  # stands for it


def fields(cls: type[Record] | Record) -> tuple[Field, ...]:
    """The fields of a record class, in order (`dataclasses.fields`)."""
    return tuple(cls._record_specs[name] for name in cls._record_fields)


def _required(spec: Field) -> bool:
    return spec.default is MISSING and spec.default_factory is None


class FrozenRecordError(AttributeError):
    """An assignment to a field of a frozen record (`dataclasses.FrozenInstanceError`'s role)."""


@dataclass_transform(field_specifiers=(field,))
class Record:
    """The base of a record class: its annotated names, in order and after its bases', are the
    fields; a class attribute is that field's default."""

    _record_fields: ClassVar[tuple[str, ...]] = ()
    _record_specs: ClassVar[dict[str, Field]] = {}
    _record_frozen: ClassVar[bool] = False
    _record_kw_only: ClassVar[bool] = False

    def __init_subclass__(cls, *, frozen: bool = False, kw_only: bool = False, **rest: Any) -> None:
        super().__init_subclass__(**rest)
        frozen, kw_only = frozen or cls._record_frozen, kw_only or cls._record_kw_only
        names = list(cls._record_fields)
        specs = dict(cls._record_specs)
        own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063  # `inspect`: ~8 ms
        for name, hint in own.items():
            if str(hint).startswith(("ClassVar", "typing.ClassVar")):
                continue
            if name not in names:
                names.append(name)
            value = cls.__dict__.get(name, MISSING)
            spec = value if isinstance(value, Field) else Field(value)
            if isinstance(value, Field):
                delattr(cls, name)  # the instance's own value is the field
            spec.name = name
            specs[name] = spec
            earlier = names[: names.index(name)]
            if not kw_only and _required(spec) and not all(_required(specs[n]) for n in earlier):
                raise TypeError(f"{cls.__name__}: non-default field {name!r} after a default")
        cls._record_fields, cls._record_specs = tuple(names), specs
        cls._record_frozen, cls._record_kw_only = frozen, kw_only
        if frozen:
            cls.__setattr__ = Record._frozen_setattr  # type: ignore[method-assign,assignment]
            cls.__delattr__ = Record._frozen_delattr  # type: ignore[method-assign,assignment]
        if "__hash__" not in cls.__dict__:
            cls.__hash__ = Record._hash_fields if frozen else None  # type: ignore[assignment]

    def __init__(self, *args: Any, **values: Any) -> None:
        names = self._record_fields
        if args:
            if self._record_kw_only or len(args) > len(names):
                raise TypeError(f"{type(self).__name__}() takes its fields by keyword")
            for name, value in zip(names, args, strict=False):
                if name in values:
                    raise TypeError(f"{type(self).__name__}() got {name!r} twice")
                values[name] = value
        specs = self._record_specs
        for name in names:
            if name in values:
                value = values.pop(name)
            else:
                spec = specs[name]
                if spec.default_factory is not None:
                    value = spec.default_factory()
                elif spec.default is MISSING:
                    raise TypeError(f"{type(self).__name__}() missing field {name!r}")
                else:
                    value = spec.default
            object.__setattr__(self, name, value)
        if values:
            raise TypeError(f"{type(self).__name__}() has no field {next(iter(values))!r}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._record_fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def _hash_fields(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._record_fields)
        return f"{type(self).__qualname__}({shown})"

    def _frozen_setattr(self, name: str, value: Any) -> None:
        raise FrozenRecordError(f"cannot assign to field {name!r}")

    def _frozen_delattr(self, name: str) -> None:
        raise FrozenRecordError(f"cannot delete field {name!r}")

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """A record as a field of a pydantic model (`memory.status`'s counts): checked as a
        mapping of its fields, or taken as it is, and dumped as that mapping. pydantic loads
        only where a model holds a record."""
        import typing

        from pydantic_core import core_schema

        hints = typing.get_type_hints(cls)
        mapping = core_schema.typed_dict_schema(
            {
                spec.name: core_schema.typed_dict_field(
                    handler.generate_schema(hints[spec.name]), required=_required(spec)
                )
                for spec in fields(cls)
            },
            extra_behavior="forbid",
        )
        made = core_schema.no_info_after_validator_function(lambda values: cls(**values), mapping)
        return core_schema.json_or_python_schema(
            json_schema=made,
            python_schema=core_schema.union_schema([core_schema.is_instance_schema(cls), made]),
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda record: {name: getattr(record, name) for name in record._record_fields},
                return_schema=mapping,
            ),
        )

    def _replace(self, **changes: Any) -> Self:
        """A copy with `changes` (`dataclasses.replace`)."""
        values = {name: getattr(self, name) for name in self._record_fields}
        return type(self)(**{**values, **changes})
