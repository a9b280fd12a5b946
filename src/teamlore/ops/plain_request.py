"""Operation requests checked by hand, for the operations a short CLI process runs
(docs/architecture.md, "A short CLI process").

Importing pydantic and building its models costs a short process more than the command itself, so
the session operations (`sync`, `status`, `sessions list|show|search`) declare their requests as
`PlainRequest` records instead. They keep the registry's contract (`Operation.input_model`):
`model_validate(payload)` refuses an unknown field, a value of the wrong type or out of its bounds
with `INVALID_ARGUMENT` and the same `<field>: <message>` wording as a pydantic request (a
CLI-only command's request, `cli_words`, says a value out of its bounds as the commands that check
their own options do: `--limit: must be between 1 and 500`), and
`model_json_schema()` describes the request. Operations whose requests arrive as JSON from an MCP
client or `--request` keep their pydantic models: there they are the contract.

A request is a frozen record (`core/shapes/records.py`: a dataclass costs a short process more at
import) whose fields are declared with `param(...)`, by keyword; `convert` (a field's own parse,
e.g. an instant) and `check` (the whole request, after its fields) raise `ValueError` with a
message a person understands.

A request that is also an MCP tool's contract (`contract = True`, e.g. `memory.search`) is still
declared once, here: its JSON schema and the refusals of what the hand check does not accept come
from a pydantic model derived from the same fields (`pydantic_twin`), so the tool's schema and
its lax coercions (`"5"` for an integer, for a caller in Python) stay pydantic's; the CLI, which
sends values of the right types, never loads pydantic. An MCP tool call's arguments are JSON and
are read strictly (`model_validate_json(strict=True)`, `registry.parse_request`): the hand check
alone, so `"5"` is refused there as it is for a pydantic request.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple, Self

from teamlore.core import errors
from teamlore.core.shapes.records import MISSING, Record, field
from teamlore.core.shapes.records import fields as record_fields


class _Rule(NamedTuple):
    """What `param` declares beside the default."""

    ge: float | None = None
    le: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    alias: str | None = None
    description: str = ""
    convert: Callable[[Any], Any] | None = None


def param(
    default: Any = MISSING,
    *,
    default_factory: Callable[[], Any] | None = None,
    ge: float | None = None,
    le: float | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    alias: str | None = None,
    description: str = "",
    convert: Callable[[Any], Any] | None = None,
) -> Any:
    """A request field: its default (none: required), bounds, wire alias and own parse."""
    rule = _Rule(ge, le, min_length, max_length, alias, description, convert)
    return field(default=default, default_factory=default_factory, metadata={"rule": rule})


# the Python type a JSON value of each field type must have, and pydantic's word for it
_KINDS: dict[type, tuple[tuple[type, ...], str]] = {
    str: ((str,), "a valid string"),
    int: ((int,), "a valid integer"),
    float: ((int, float), "a valid number"),
    bool: ((bool,), "a valid boolean"),
    list: ((list, tuple), "a valid list"),
}


class _Field(NamedTuple):
    name: str
    key: str  # the name on the wire
    kind: type
    item: type | None  # a list's item type
    optional: bool
    rule: _Rule
    required: bool


def _fields_of(cls: type[Record]) -> list[_Field]:
    hints = typing.get_type_hints(cls)
    made = []
    for f in record_fields(cls):
        hint, optional = hints[f.name], False
        if isinstance(hint, types.UnionType):
            args = [a for a in typing.get_args(hint) if a is not type(None)]
            hint, optional = args[0], True
        origin = typing.get_origin(hint)
        item = typing.get_args(hint)[0] if origin is list else None
        rule = f.metadata.get("rule", _Rule())
        required = f.default is MISSING and f.default_factory is None
        made.append(
            _Field(f.name, rule.alias or f.name, origin or hint, item, optional, rule, required)
        )
    return made


def _refused(where: str, message: str) -> errors.TeamloreError:
    return errors.TeamloreError(errors.INVALID_ARGUMENT, f"{where}: {message}")


def refuse_long_query(payload: Mapping[str, Any], limit: int) -> None:
    """A search query over `limit` (a pasted stack trace) is refused saying how long it is and
    how to shorten it: cut to the limit, a Python trace would lose its last line, the error
    (docs/search.md, "Refusals")."""
    query = payload.get("query") if isinstance(payload, Mapping) else None
    if isinstance(query, str) and len(query) > limit:
        raise _refused(
            "query",
            f"too long to search: {len(query):,} characters (at most {limit:,}); keep the"
            " words that tell it apart, such as the error line of a stack trace",
        )


def _is_kind(value: object, kind: type) -> bool:
    """Whether a JSON value has the field type `kind` (a bool is not a number)."""
    return isinstance(value, _KINDS[kind][0]) and (kind is bool or not isinstance(value, bool))


# pydantic's errors for a value of the wrong type, and what a refusal calls each JSON type
TYPE_ERRORS = frozenset({"int_type", "bool_type", "float_type", "string_type", "list_type"})
_JSON_TYPES: dict[type, str] = {
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    list: "an array",
    dict: "an object",
    type(None): "null",
}


def given_type(value: object) -> str:
    """`, not a string`: what a refusal of a value of the wrong type adds (empty for a value
    that is not JSON)."""
    name = _JSON_TYPES.get(type(value))
    return f", not {name}" if name else ""


def _number(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else str(bound)


def _out_of_bounds(rule: _Rule, value: Any) -> str | None:
    """What a value outside `rule`'s bounds is told, in the words the commands that check
    their own options use (`--port: must be between 1 and 65535`, `org serve`): a request
    whose fields are the options of a CLI-only command (`PlainRequest.cli_words`)."""
    low, high = rule.ge, rule.le
    if isinstance(value, (int, float)):
        if (low is not None and value < low) or (high is not None and value > high):
            if low is not None and high is not None:
                return f"must be between {_number(low)} and {_number(high)}"
            if low is not None:
                return f"must be {_number(low)} or more"
            return f"must be {_number(high or 0)} or less"
        return None
    if rule.min_length is not None and len(value) < rule.min_length:
        return (
            "must not be empty"
            if rule.min_length == 1
            else f"must have at least {counted(rule.min_length)}"
        )
    if rule.max_length is not None and len(value) > rule.max_length:
        return f"must have at most {counted(rule.max_length)}"
    return None


def _checked(field: _Field, value: Any, *, json: bool = False, words: bool = False) -> Any:
    """`value` if it fits `field`, else the refusal pydantic would word (`json`: a value of the
    wrong JSON type is named, as `registry.parse_request(strict=True)` names it; `words`: a
    value out of bounds in the commands' own words, `_out_of_bounds`)."""
    if value is None and field.optional:
        return None
    if not _is_kind(value, field.kind):
        given = given_type(value) if json else ""
        raise _refused(field.key, f"Input should be {_KINDS[field.kind][1]}{given}")
    if field.item is not None:
        for n, item in enumerate(value):
            if not _is_kind(item, field.item):
                given = given_type(item) if json else ""
                raise _refused(
                    f"{field.key}.{n}", f"Input should be {_KINDS[field.item][1]}{given}"
                )
        value = list(value)
    if field.kind is float:
        value = float(value)
    rule = field.rule
    # a number out of its bounds is said in teamlore's words, as `errors.first_problem` says a
    # pydantic request's; a text's length in pydantic's unless `words`
    problem = _out_of_bounds(rule, value) if words or isinstance(value, (int, float)) else None
    if problem is not None:
        raise _refused(field.key, problem)
    if rule.min_length is not None and len(value) < rule.min_length:
        raise _refused(field.key, f"String should have at least {counted(rule.min_length)}")
    if rule.max_length is not None and len(value) > rule.max_length:
        raise _refused(field.key, f"String should have at most {counted(rule.max_length)}")
    if rule.convert is not None:
        try:
            return rule.convert(value)
        except ValueError as exc:
            raise _refused(field.key, str(exc)) from None
    return value


def utf8_text(value: str) -> str:
    """A text field's parse (`convert`): a command-line argument whose bytes are not UTF-8
    arrives with surrogate escapes, which no search, model or JSON output can take."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        shown = value[exc.start : exc.end].encode("utf-8", "surrogateescape").hex()
        raise ValueError(
            f"holds bytes that are not UTF-8 (\\x{shown[:2]}); is the terminal set to UTF-8?"
        ) from None
    return value


def counted(n: int) -> str:
    return f"{n} character" + ("" if n == 1 else "s")


@typing.dataclass_transform(frozen_default=True, kw_only_default=True)
class PlainRequest(Record, frozen=True, kw_only=True):
    """The base of a hand-checked request: a frozen record whose fields are `param(...)`s."""

    _plain_fields: ClassVar[list[_Field] | None] = None
    # an MCP tool's request: schema and lax refusals from `pydantic_twin` (the module docstring)
    contract: ClassVar[bool] = False
    _twin: ClassVar[type[Any] | None] = None
    # a CLI-only command's request (no MCP tool, no hook: the session operations): a value out
    # of its bounds is refused in the words the commands that check their options use
    # (`--limit: must be between 1 and 500`), not pydantic's (`_out_of_bounds`)
    cli_words: ClassVar[bool] = False

    @classmethod
    def model_validate(cls, payload: Mapping[str, Any]) -> Self:
        """The request `payload` describes, or `INVALID_ARGUMENT` naming the first problem."""
        cls.said_first(payload)
        try:
            return cls._hand_checked(payload)
        except errors.TeamloreError:
            if not cls.contract:
                raise
        return cls._twin_checked(payload)

    @classmethod
    def model_validate_json(cls, json_data: str, *, strict: bool | None = None) -> Self:
        """The request of a JSON text (an MCP tool's arguments). `strict`: each value must have
        its field's JSON type, as the hand check asks; no lax coercion by the pydantic twin."""
        import json

        try:
            payload = json.loads(json_data)
        except ValueError as exc:
            raise _refused("request", f"not JSON ({exc})") from None
        return cls._hand_checked(payload, json=True) if strict else cls.model_validate(payload)

    @classmethod
    def _twin_checked(cls, payload: Mapping[str, Any]) -> Self:
        """What the pydantic twin makes of a payload the hand check refused: pydantic's lax
        coercion (`"5"` → 5), or its refusal in its words."""
        from pydantic import ValidationError

        twin = cls.pydantic_twin()
        try:
            validated = twin.model_validate(payload)
        except ValidationError as exc:
            from teamlore.contracts.formats import PATTERN_NAMES  # with a refusal only

            raise errors.from_validation_error(
                exc,
                errors.INVALID_ARGUMENT,
                plain=True,
                patterns=PATTERN_NAMES,
                schema=twin.model_json_schema,
            ) from None
        request = cls(**{f.name: getattr(validated, f.name) for f in cls._fields()})
        try:
            request.check()
        except ValueError as exc:
            raise _refused("request", str(exc)) from None
        return request

    @classmethod
    def said_first(cls, payload: Mapping[str, Any]) -> None:
        """Refusals said in teamlore's own words before any other check, a contract's pydantic
        twin included (a search query over its limit: `refuse_long_query`)."""

    @classmethod
    def _hand_checked(cls, payload: Mapping[str, Any], *, json: bool = False) -> Self:
        cls.said_first(payload)
        if not isinstance(payload, Mapping):
            raise _refused("request", "Input should be a valid dictionary")
        fields = cls._fields()
        known = {f.key for f in fields} | {f.name for f in fields}
        for key in payload:
            if key not in known:
                raise _refused(str(key), "Extra inputs are not permitted")
        values = {}
        for f in fields:
            key = f.key if f.key in payload else f.name
            if key in payload:
                values[f.name] = _checked(f, payload[key], json=json, words=cls.cli_words)
            elif f.required:
                raise _refused(f.key, "Field required")
        request = cls(**values)
        try:
            request.check()
        except ValueError as exc:
            raise _refused("request", str(exc)) from None
        return request

    def check(self) -> None:
        """Raise ValueError when the fields do not fit together."""

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        """The request as a JSON schema (what `model_validate` accepts): the pydantic twin's for
        a contract."""
        if cls.contract:
            twin: dict[str, Any] = cls.pydantic_twin().model_json_schema()
            return twin
        names = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array"}
        properties: dict[str, Any] = {}
        for f in cls._fields():
            schema: dict[str, Any] = {"type": names[f.kind]}
            if f.item is not None:
                schema["items"] = {"type": names[f.item]}
            for key, bound in (
                ("minimum", f.rule.ge),
                ("maximum", f.rule.le),
                ("minLength", f.rule.min_length),
                ("maxLength", f.rule.max_length),
            ):
                if bound is not None:
                    schema[key] = bound
            if f.optional:
                schema = {"anyOf": [schema, {"type": "null"}]}
            if f.rule.description:
                schema["description"] = f.rule.description
            properties[f.key] = schema
        required = [f.key for f in cls._fields() if f.required]
        return {
            "title": cls.__name__,
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
            **({"required": required} if required else {}),
        }

    @classmethod
    def pydantic_twin(cls) -> type[Any]:
        """A pydantic model of the same fields, bounds, aliases and descriptions (made once;
        pydantic loads here). A field's `convert` and the request's `check` are not in it."""
        twin = cls.__dict__.get("_twin")
        if twin is None:
            from pydantic import Field, create_model

            from teamlore.core.shapes.strict import STRICT

            hints = typing.get_type_hints(cls)
            fields: dict[str, Any] = {}
            for f, spec in zip(cls._fields(), record_fields(cls), strict=True):
                rule = f.rule
                default: dict[str, Any] = (
                    {"default_factory": spec.default_factory}
                    if spec.default_factory is not None
                    else {"default": ... if f.required else spec.default}
                )
                fields[f.name] = (
                    hints[f.name],
                    Field(
                        **default,
                        ge=rule.ge,
                        le=rule.le,
                        min_length=rule.min_length,
                        max_length=rule.max_length,
                        alias=rule.alias,
                        description=rule.description or None,
                    ),
                )
            twin = create_model(cls.__name__, __config__=STRICT, **fields)
            cls._twin = twin
        return twin

    @classmethod
    def _fields(cls) -> list[_Field]:
        if cls.__dict__.get("_plain_fields") is None:
            cls._plain_fields = _fields_of(cls)
        return cls.__dict__["_plain_fields"]  # type: ignore[no-any-return]
