"""`teamlore.contracts` names every contract and loads its module only when a name is first
asked for (contracts/__init__.py): each listed name resolves, to the object its module defines."""

from __future__ import annotations

import importlib

import pytest

import teamlore.contracts as contracts


def test_the_lazy_table_lists_exactly_the_public_names() -> None:
    assert sorted(contracts._MODULES) == sorted(contracts.__all__)


@pytest.mark.parametrize("name", sorted(contracts.__all__))
def test_each_public_name_resolves_to_its_modules_object(name: str) -> None:
    module = importlib.import_module(contracts._MODULES[name])
    assert getattr(contracts, name) is getattr(module, name)


def test_a_name_it_does_not_hold_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        contracts.NoSuchContract  # noqa: B018
