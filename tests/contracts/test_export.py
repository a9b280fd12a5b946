"""Schema export: schema/ is current, deterministic, draft 2020-12, closed objects everywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from teamlore.contracts.export import CONTRACTS, contract_format, expected_files, main

REPO_SCHEMA = Path(__file__).resolve().parents[2] / "schema"


def test_committed_schema_directory_is_current() -> None:
    assert main(["--check", "--dir", str(REPO_SCHEMA)]) == 0, (
        "schema/ is stale: run `python -m teamlore.contracts.export`"
    )


def test_check_reports_missing_changed_and_orphaned_files(tmp_path: Path) -> None:
    assert main(["--check", "--dir", str(tmp_path)]) == 1
    assert main(["--dir", str(tmp_path)]) == 0
    assert main(["--check", "--dir", str(tmp_path)]) == 0
    first = next(iter(sorted(tmp_path.iterdir())))
    first.write_text(first.read_text() + " ")
    assert main(["--check", "--dir", str(tmp_path)]) == 1
    main(["--dir", str(tmp_path)])
    (tmp_path / "threadshare-memory-retired@v1.json").write_text("{}")
    assert main(["--check", "--dir", str(tmp_path)]) == 1
    main(["--dir", str(tmp_path)])
    assert not (tmp_path / "threadshare-memory-retired@v1.json").exists()
    assert main(["--check", "--dir", str(tmp_path)]) == 0


def test_module_entry_point_exits_1_on_stale_schema(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "teamlore.contracts.export", "--check", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert "stale" in run.stderr


def test_output_is_deterministic(tmp_path: Path) -> None:
    """Two fresh interpreters with different hash seeds write byte-identical schema files."""
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        out.mkdir()
        subprocess.run(
            [sys.executable, "-m", "teamlore.contracts.export", "--dir", str(out)],
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        outputs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outputs[0] == outputs[1] and outputs[0]


def test_one_file_per_contract_named_by_its_format() -> None:
    names = set(expected_files())
    assert len(names) == len(CONTRACTS)
    for model in CONTRACTS:
        assert f"{contract_format(model)}.json" in names
        assert contract_format(model).startswith("threadshare-memory-")


def _objects(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            found.append(node)
        for value in node.values():
            found.extend(_objects(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_objects(value))
    return found


def test_every_object_is_closed_and_every_schema_is_valid_2020_12() -> None:
    for name, text in expected_files().items():
        schema = json.loads(text)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(schema)
        objects = _objects(schema)
        assert objects, name
        for obj in objects:
            assert obj.get("additionalProperties") is False, (name, obj.get("title"))


def test_format_is_a_required_constant() -> None:
    for model in CONTRACTS:
        schema = json.loads(expected_files()[f"{contract_format(model)}.json"])
        assert schema["properties"]["format"]["const"] == contract_format(model)
        if model.__name__ != "MemorySearchRequest":
            assert "format" in schema["required"]
