"""The claude and codex runner profiles are RestrictedExtractionRunner@v1 documents, checked
against that contract (and its exported JSON Schema) whenever a profile loads."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import jsonschema
import pytest
from fake_runner import FakeRunner

from support import REPO_ROOT
from teamlore.core import errors
from teamlore.runner.profiles import RunnerChoice, checked, resolve_runner, restricted_profile

SCHEMA = REPO_ROOT / "schema" / "threadshare-memory-restricted-extraction-runner@v1.json"


@pytest.mark.parametrize("kind", ["claude", "codex"])
def test_a_cli_profile_is_a_restricted_extraction_runner(
    tmp_path: Path, home: Path, kind: str
) -> None:
    fake = FakeRunner(tmp_path)
    fake.install(kind)
    runner = resolve_runner(RunnerChoice(kind), environ={**os.environ, **fake.env()}, home=home)
    document = restricted_profile(runner).to_wire()

    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    assert document["adapter"] == f"{kind}-cli"
    assert (document["toolPolicy"], document["network"], document["ephemeral"]) == (
        "none",
        "model-only",
        "required",
    )
    assert document["argvTemplate"][0] == kind  # the binary by name, never its path
    assert document["conformance"] is None


def test_a_profile_that_is_not_restricted_is_refused_when_it_loads(
    tmp_path: Path, home: Path
) -> None:
    fake = FakeRunner(tmp_path)
    fake.install("claude")
    runner = resolve_runner(RunnerChoice("claude"), environ={**os.environ, **fake.env()}, home=home)
    with pytest.raises(errors.TeamloreError) as refused:
        checked(dataclasses.replace(runner, argv_template=()))
    assert refused.value.code == "RUNNER_PROFILE_INVALID"
    assert "argvTemplate" in refused.value.message
