"""Records (core/shapes/records.py): what a dataclass gives its users (fields in order with
defaults, keyword or positional construction, equality, repr, frozen, hash, `fields` and
`_replace`), without generated code."""

from __future__ import annotations

import pickle
from typing import ClassVar

import pytest

from teamlore.core.shapes.records import MISSING, FrozenRecordError, Record, field, fields


class Counts(Record):
    kind: str
    seen: int = 0
    names: list[str] = field(default_factory=list)
    LIMIT: ClassVar[int] = 3


class Point(Record, frozen=True):
    x: int
    y: int = 0


class Located(Record, frozen=True, kw_only=True):
    file: str
    line: int | None = None
    why: str


class Narrowed(Located):
    code: str = "X"


def test_fields_come_in_order_after_the_bases_with_their_defaults() -> None:
    assert [f.name for f in fields(Counts)] == ["kind", "seen", "names"]
    assert [f.name for f in fields(Narrowed)] == ["file", "line", "why", "code"]
    kind, seen, names = fields(Counts)
    assert kind.default is MISSING and seen.default == 0 and names.default_factory is list
    assert Counts.LIMIT == 3  # a ClassVar is not a field


def test_a_record_is_made_by_position_or_keyword_with_fresh_mutable_defaults() -> None:
    one, two = Counts("a"), Counts(kind="a", seen=2)
    assert (one.kind, one.seen, one.names, two.seen) == ("a", 0, [], 2)
    one.names.append("x")
    assert two.names == [] and Counts("b").names == []


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Counts(), "Counts() missing field 'kind'"),
        (lambda: Counts("a", kind="b"), "Counts() got 'kind' twice"),
        (lambda: Counts("a", 1, [], 4), "Counts() takes its fields by keyword"),
        (lambda: Counts("a", sen=1), "Counts() has no field 'sen'"),
        (lambda: Located("f.md", 3, "why"), "Located() takes its fields by keyword"),
        (lambda: Located(file="f.md"), "Located() missing field 'why'"),
    ],
)
def test_a_wrong_construction_is_refused_as_a_call_would_be(make: object, message: str) -> None:
    with pytest.raises(TypeError) as refused:
        make()  # type: ignore[operator]
    assert str(refused.value) == message


def test_equality_is_by_class_and_fields_and_repr_names_them() -> None:
    assert Point(1, 2) == Point(x=1, y=2) and Point(1) != Point(2)
    assert Point(1) != (1, 0) and Narrowed(file="a", why="w") != Located(file="a", why="w")
    assert repr(Located(file="a", why="w")) == "Located(file='a', line=None, why='w')"


def test_a_mutable_record_is_unhashable_and_a_frozen_one_hashes_by_its_fields() -> None:
    with pytest.raises(TypeError):
        hash(Counts("a"))
    assert hash(Point(1, 2)) == hash(Point(1, 2))
    assert len({Point(1, 2), Point(1, 2), Point(2, 1)}) == 2


def test_a_frozen_record_refuses_assignment_and_its_subclasses_are_frozen_too() -> None:
    point, narrowed = Point(1), Narrowed(file="a", why="w")
    for target, name in ((point, "x"), (narrowed, "code"), (narrowed, "other")):
        with pytest.raises(FrozenRecordError):
            setattr(target, name, 5)
        with pytest.raises(AttributeError):
            delattr(target, name)
    counts = Counts("a")
    counts.seen += 1
    assert counts.seen == 1


def test_replace_copies_with_changes_and_checks_them() -> None:
    before = Narrowed(file="a", why="w")
    assert before._replace(line=4) == Narrowed(file="a", line=4, why="w")
    assert before.line is None
    with pytest.raises(TypeError):
        before._replace(nope=1)


def test_a_required_field_after_a_default_is_refused_unless_keyword_only() -> None:
    with pytest.raises(TypeError, match="non-default field 'b' after a default"):

        class Wrong(Record):
            a: int = 1
            b: int

    class Right(Record, kw_only=True):
        a: int = 1
        b: int

    assert Right(b=2).a == 1


def test_records_pickle() -> None:
    for record in (Counts("a", 2, ["x"]), Point(1, 2), Narrowed(file="a", why="w")):
        assert pickle.loads(pickle.dumps(record)) == record


def test_a_record_in_a_pydantic_model_is_checked_and_dumped_as_a_mapping() -> None:
    from pydantic import BaseModel, ValidationError

    class Holder(BaseModel):
        counts: Counts
        where: list[Located]

    held = Holder(counts=Counts("a", 2), where=[Located(file="a.md", why="w")])
    dumped = held.model_dump(mode="json")
    assert dumped == {
        "counts": {"kind": "a", "seen": 2, "names": []},
        "where": [{"file": "a.md", "line": None, "why": "w"}],
    }
    assert Holder.model_validate(dumped) == held
    with pytest.raises(ValidationError):
        Holder.model_validate({**dumped, "counts": {"kind": "a", "seen": "many"}})
    with pytest.raises(ValidationError):
        Holder.model_validate({**dumped, "counts": {"kind": "a", "extra": 1}})
