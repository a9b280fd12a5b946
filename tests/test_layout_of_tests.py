"""Test modules are imported by basename (pytest's default prepend mode, no __init__.py), so two
test files with the same name in different folders would shadow each other."""

from __future__ import annotations

from collections import Counter
from pathlib import Path


def test_test_module_basenames_are_unique() -> None:
    tests = Path(__file__).parent
    names = Counter(p.name for p in tests.rglob("*.py") if p.name != "conftest.py")
    assert [name for name, n in names.items() if n > 1] == []
