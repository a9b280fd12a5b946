"""The frontmatter dialect: JSON-literal values, bare strings, multi-line JSON, no comments."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import SHARED_FIXTURES
from teamlore.core.errors import TeamloreError
from teamlore.memory.store import frontmatter as fm
from teamlore.memory.store.frontmatter import MemoryFormatError, SerializationError

DATA = Path(__file__).parents[1] / "data"
SHARED_TREE = SHARED_FIXTURES / "threadshare-memory"

CANONICAL = (
    "---\n"
    "id: auth-module-do-not-refactor\n"
    "priority: 85\n"
    "scene: 鉴权模块维护\n"
    'occurred: ["2026-08-12","2026-08-18"]\n'
    'evidence: {"commits":[{"repo":"github.com/team-harness/threadshare",'
    '"hash":"7fd2f23a1b04c9e8d2f6a35b7c01d94e8f123456"}],"paths":["routes/api/session.ts"]}\n'
    "superseded_by: null\n"
    "---\n"
    "别重构旧鉴权模块的 session 中间件。\n"
)


def reason_of(text: str | bytes) -> tuple[str, int | None]:
    with pytest.raises(MemoryFormatError) as caught:
        fm.parse(text, "entries/x.md")
    return caught.value.reason, caught.value.line


def test_canonical_text_parses_to_typed_values_and_back_to_the_same_bytes() -> None:
    doc = fm.parse(CANONICAL, "entries/x.md")
    assert doc.fields["priority"] == 85
    assert doc.fields["scene"] == "鉴权模块维护"
    assert doc.fields["superseded_by"] is None
    assert doc.fields["evidence"] == {
        "commits": [
            {
                "repo": "github.com/team-harness/threadshare",
                "hash": "7fd2f23a1b04c9e8d2f6a35b7c01d94e8f123456",
            }
        ],
        "paths": ["routes/api/session.ts"],
    }
    assert doc.body == "别重构旧鉴权模块的 session 中间件。\n"
    assert doc.body_line == 9
    assert fm.serialize(doc.fields, doc.body, order=list(doc.fields)) == CANONICAL


def test_key_order_comes_from_the_order_argument_not_the_mapping() -> None:
    shuffled = {"b": 1, "a": 2, "z": 3}
    assert fm.serialize(shuffled, order=("z", "b")) == "---\nz: 3\nb: 1\na: 2\n---\n"
    assert fm.serialize(dict(reversed(shuffled.items())), order=("z", "b")) == (
        "---\nz: 3\nb: 1\na: 2\n---\n"
    )


def test_strings_are_bare_only_when_they_read_back_identically() -> None:
    cases = {
        "plain": "plain",
        "鉴权模块维护": "鉴权模块维护",
        "  padded # scene ": '"  padded # scene "',
        "has # hash": '"has # hash"',
        "85": '"85"',
        "085": "085",
        "8.5": '"8.5"',
        "true": '"true"',
        "null": '"null"',
        "[x]": '"[x]"',
        '"q"': '"\\"q\\""',
        "": '""',
        "two\nlines": '"two\\nlines"',
    }
    for value, written in cases.items():
        assert fm.format_value(value) == written, value
        assert fm.parse(f"---\nk: {written}\n---\n").fields["k"] == value


def test_bare_values_are_trimmed_and_numbers_are_json() -> None:
    doc = fm.parse("---\nscene:    鉴权模块维护   \npriority: 85\nratio: 8.5\nflag: true\n---\n")
    assert doc.fields == {"scene": "鉴权模块维护", "priority": 85, "ratio": 8.5, "flag": True}
    assert isinstance(doc.fields["priority"], int)


def test_multi_line_json_balances_brackets_and_collapses_on_write() -> None:
    text = (
        "---\n"
        "evidence: {\n"
        '  "commits": [\n'
        '    { "repo": "github.com/a/b",\n'
        '      "hash": "7fd2f23a1b04c9e8d2f6a35b7c01d94e8f123456" }\n'
        "  ],\n"
        '  "paths": ["a ] { # : \\" b"]\n'
        "}\n"
        'occurred: [\n  "2026-08-12",\n  "2026-08-18"\n]\n'
        "after: x\n"
        "---\n"
    )
    doc = fm.parse(text)
    assert doc.fields["evidence"] == {
        "commits": [{"repo": "github.com/a/b", "hash": "7fd2f23a1b04c9e8d2f6a35b7c01d94e8f123456"}],
        "paths": ['a ] { # : " b'],
    }
    assert doc.field_lines == {"evidence": 2, "occurred": 9, "after": 13}
    assert fm.serialize(doc.fields, order=list(doc.fields)) == (
        "---\n"
        'evidence: {"commits":[{"repo":"github.com/a/b",'
        '"hash":"7fd2f23a1b04c9e8d2f6a35b7c01d94e8f123456"}],"paths":["a ] { # : \\" b"]}\n'
        'occurred: ["2026-08-12","2026-08-18"]\n'
        "after: x\n"
        "---\n"
    )


@pytest.mark.parametrize(
    ("text", "reason", "line"),
    [
        ("id: x\n", "format.missing-frontmatter", 1),
        ("---\nid: x\n", "format.unterminated-frontmatter", 1),
        ("---\nid: x\n---", "format.unterminated-frontmatter", 1),
        ("---\nid: x\nscene:no-space\n---\n", "format.invalid-line", 3),
        ("---\nScene: v\n---\n", "format.invalid-line", 2),
        ("---\nscene: \n---\n", "format.invalid-line", 2),
        ("---\nid: a\nid: b\n---\n", "format.duplicate-key", 3),
        ("---\nscene: 鉴权 # c\n---\n", "format.comment-not-allowed", 2),
        ("---\noccurred: [2026-08-12]\n---\n", "format.invalid-json-value", 2),
        ('---\npriority: {"broken"\n---\n', "format.unterminated-json", 2),
        ('---\nk: ["a",\n"b\n---\n', "format.unterminated-json", 2),
        ('---\nk: ["a",]\n---\n', "format.invalid-json-value", 2),
        ('---\nk: ["a"] tail\n---\n', "format.invalid-json-value", 2),
        ('---\nk: {"a": 1, "a": 2}\n---\n', "format.invalid-json-value", 2),
        ("---\nk: NaN\n---\n", None, None),
        ('---\nk: [\n"a"\n]\nk: 2\n---\n', "format.duplicate-key", 5),
        ("---\nk: " + "[" * 17 + "]" * 17 + "\n---\n", "format.json-too-deep", 2),
        ("---\nk: " + "[\n" * 17 + "]\n" * 17 + "---\n", "format.json-too-deep", 2),
        ("---\nk: " + "x" * 9000 + "\n---\n", "format.line-too-long", 2),
        (
            "---\n" + "".join(f"k{i}: {'x' * 7000}\n" for i in range(10)) + "---\n",
            "format.frontmatter-too-large",
            2,
        ),
        ("---\nk: {\n" + '"a": 1,\n' * 600 + "---\n", "format.too-many-lines", 2),
        ("---\nk: a\rb\n---\n", "format.stray-cr", 2),
    ],
)
def test_grammar_errors_are_located(text: str, reason: str | None, line: int | None) -> None:
    if reason is None:  # `NaN` is a bare string: it is not a JSON literal at all
        assert fm.parse(text).fields == {"k": "NaN"}
        return
    assert reason_of(text) == (reason, line)


CONFLICTED_BODY = "---\nid: x\n---\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> topic\nafter\n"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (CONFLICTED_BODY, 4),
        ("---\n<<<<<<< HEAD\nid: a\n=======\nid: b\n>>>>>>> topic\n---\nbody\n", 2),
        # diff3 style keeps the common ancestor between `|||||||` and `=======`
        ("---\nid: x\n---\nx\n<<<<<<< ours\na\n||||||| base\nb\n=======\nc\n>>>>>>>\n", 5),
        (CONFLICTED_BODY.replace("\n", "\r\n"), 4),
    ],
)
def test_an_unresolved_git_merge_is_not_read_as_one_document(text: str, line: int) -> None:
    assert reason_of(text) == ("format.merge-conflict", line)


def test_depth_sixteen_is_accepted() -> None:
    deep = "[" * 16 + "]" * 16
    assert fm.parse(f"---\nk: {deep}\n---\n").fields["k"] is not None


def test_invalid_utf8_is_a_located_error_not_a_crash() -> None:
    data = b"---\nid: x\nscene: ok\n---\n" + b"body \xc3\x28\n"
    assert reason_of(data) == ("format.invalid-utf8", 5)


def test_crlf_and_bom_are_read_as_lf() -> None:
    lf = fm.parse(CANONICAL)
    crlf = fm.parse(b"\xef\xbb\xbf" + CANONICAL.replace("\n", "\r\n").encode())
    assert (crlf.fields, crlf.body) == (lf.fields, lf.body)
    decoded = fm.decode_text(b"\xef\xbb\xbfa\r\nb", "x")
    assert (decoded.text, decoded.had_bom, decoded.had_crlf) == ("a\nb", True, True)


def test_errors_are_teamlore_errors_with_a_stable_code() -> None:
    with pytest.raises(TeamloreError) as caught:
        fm.parse("---\nBad: 1\n---\n", ".threadshare/memory/entries/x.md")
    error = caught.value
    assert error.code == "MEMORY_FILE_INVALID"
    assert error.details["file"] == ".threadshare/memory/entries/x.md"
    assert error.details["line"] == 2
    assert ".threadshare/memory/entries/x.md:2" in error.message


def test_serializer_refuses_what_would_not_read_back() -> None:
    with pytest.raises(SerializationError):
        fm.serialize({"k": 1}, "body\r\n")
    with pytest.raises(SerializationError):
        fm.serialize({"Bad": 1})
    with pytest.raises(SerializationError):
        fm.serialize({"k": float("nan")})
    with pytest.raises(SerializationError):
        fm.serialize({"k": "x" * 9000})
    deep: fm.JsonValue = []
    for _ in range(17):
        deep = [deep]
    with pytest.raises(SerializationError):
        fm.serialize({"k": deep})


def test_empty_header_round_trips() -> None:
    assert fm.serialize({}, "body") == "---\n---\nbody"
    assert fm.parse("---\n---\nbody").fields == {}


# --- property: parse(serialize(x)) == x -----------------------------------------------------

keys = st.from_regex(r"[a-z_][a-z0-9_-]{0,11}", fullmatch=True)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=24)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
bodies = st.text(max_size=200).map(lambda s: s.replace("\r", ""))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, json_values, max_size=8), bodies)
def test_parse_inverts_serialize(fields: dict[str, fm.JsonValue], body: str) -> None:
    text = fm.serialize(fields, body)
    doc = fm.parse(text.encode("utf-8"))
    assert doc.fields == fields
    assert doc.body == body
    assert fm.serialize(doc.fields, doc.body) == text


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash_the_parser(data: bytes) -> None:
    with contextlib.suppress(MemoryFormatError):
        fm.parse(b"---\n" + data)


# --- the reference product's files ---------------------------------------------------------


def _reference_files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*.md") if p.name != "SOURCE.md" and "scenes" not in p.parts
    )


def test_reference_copies_round_trip_byte_identically() -> None:
    files = _reference_files(DATA / "reference")
    assert len(files) == 3
    for path in files:
        data = path.read_bytes()
        doc = fm.parse(data, path.name)
        assert fm.serialize(doc.fields, doc.body, order=list(doc.fields)).encode() == data, path


def test_shared_reference_tree_round_trips_byte_identically() -> None:
    if not SHARED_TREE.is_dir():
        pytest.skip("../shared/fixtures is not available in this checkout")
    files = _reference_files(SHARED_TREE)
    assert len(files) == 17
    for path in files:
        data = path.read_bytes()
        doc = fm.parse(data, path.name)
        assert fm.serialize(doc.fields, doc.body, order=list(doc.fields)).encode() == data, path
