"""Candidate kinds: the packages built on promotion register what promotion calls for them."""

from __future__ import annotations

import pytest

from teamlore.memory.promotion import kinds


def test_skills_and_consolidation_register_their_kinds_when_their_kind_modules_load() -> None:
    import teamlore.memory.consolidation.kind
    import teamlore.memory.skills.kind  # noqa: F401

    skill = kinds.require("skill")
    assert skill.render is not None and skill.check_before_apply is not None
    consolidation = kinds.require("consolidation-patch")
    assert consolidation.prepare is not None and consolidation.check_plan is not None
    assert None not in (consolidation.on_applied, consolidation.on_voided)
    assert consolidation.on_discarded is not None


def test_an_unregistered_kind_is_refused_loudly_never_skipped() -> None:
    with pytest.raises(RuntimeError, match="'poem' is not registered"):
        kinds.require("poem")


def test_a_kind_registers_once() -> None:
    import teamlore.memory.skills.kind  # noqa: F401

    same = kinds.require("skill")
    assert kinds.register(same) is same  # importing twice is harmless
    with pytest.raises(ValueError, match="registered twice"):
        kinds.register(kinds.CandidateKindHooks("skill"))
