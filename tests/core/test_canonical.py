from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from teamlore.core.canonical import CanonicalizationError, canonical_json, digest


def test_keys_sort_by_utf16_code_units_not_code_points() -> None:
    # U+E000 sorts before U+1F600 by code point, but after it in UTF-16 (surrogates D83D..)
    value = {"\ue000": 1, "\U0001f600": 2, "a": 3, "B": 4}
    assert canonical_json(value).decode() == '{"B":4,"a":3,"😀":2,"\ue000":1}'


def test_no_whitespace_and_nested_structures() -> None:
    assert canonical_json({"b": [1, {"d": None, "c": True}], "a": "x"}) == (
        b'{"a":"x","b":[1,{"c":true,"d":null}]}'
    )


def test_strings_are_nfc_normalized() -> None:
    decomposed = "e\u0301"  # e + combining acute
    assert canonical_json(decomposed) == canonical_json("\u00e9")


def test_integral_floats_print_as_integers() -> None:
    assert canonical_json({"n": 3.0}) == b'{"n":3}'


@pytest.mark.parametrize("bad", [2**53, -(2**53), float("nan"), float("inf"), {1: "x"}, {1, 2}])
def test_values_without_canonical_form_are_refused(bad: object) -> None:
    with pytest.raises(CanonicalizationError):
        canonical_json(bad)


def test_digest_is_sha256_of_canonical_bytes() -> None:
    value = {"z": 1, "a": [1, 2]}
    assert digest(value) == hashlib.sha256(b'{"a":[1,2],"z":1}').hexdigest()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)


def _reversed_keys(value: object) -> object:
    if isinstance(value, dict):
        return {k: _reversed_keys(v) for k, v in reversed(list(value.items()))}
    if isinstance(value, list):
        return [_reversed_keys(v) for v in value]
    return value


@given(json_values)
def test_digest_ignores_key_order_at_every_level(value: object) -> None:
    assert digest(_reversed_keys(value)) == digest(value)


@given(json_values)
def test_canonical_form_is_a_fixed_point(value: object) -> None:
    once = canonical_json(value)
    assert canonical_json(json.loads(once)) == once
