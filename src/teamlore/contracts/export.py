"""Export one JSON Schema (draft 2020-12) per contract to `schema/<format>.json`.

    python -m teamlore.contracts.export [--check] [--dir schema]

Output is deterministic (sorted keys, two-space indent, trailing newline). `--check` writes
nothing and exits 1 when a file is missing, different, or no longer generated.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

from teamlore.contracts._base import ContractModel
from teamlore.contracts.adjudication import AdjudicationResult, AdjudicationTask
from teamlore.contracts.consolidation import ConsolidationPatch, ConsolidationTask
from teamlore.contracts.evidence import EvidenceAssessment
from teamlore.contracts.extraction import (
    CandidateDraftBatch,
    ExtractionTask,
    MemoryExtractionRequest,
)
from teamlore.contracts.promotion import PrepareRequest, PromotionPlan
from teamlore.contracts.repository import RepositoryBinding
from teamlore.contracts.runner import (
    AuthorizationManifest,
    RestrictedExtractionRunner,
    RunnerExecutionPlan,
    RunnerExecutionPlanV2,
)
from teamlore.contracts.search import MemorySearchRequest
from teamlore.contracts.skill import SkillCandidate

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

CONTRACTS: tuple[type[ContractModel], ...] = (
    RepositoryBinding,
    MemoryExtractionRequest,
    ExtractionTask,
    CandidateDraftBatch,
    EvidenceAssessment,
    AdjudicationTask,
    AdjudicationResult,
    MemorySearchRequest,
    PrepareRequest,
    PromotionPlan,
    SkillCandidate,
    ConsolidationTask,
    ConsolidationPatch,
    RestrictedExtractionRunner,
    RunnerExecutionPlan,
    RunnerExecutionPlanV2,
    AuthorizationManifest,
)


def contract_format(model: type[ContractModel]) -> str:
    """The exact `format` string of a top-level contract (its `format` Literal)."""
    (value,) = get_args(model.model_fields["format"].annotation)
    if not isinstance(value, str):
        raise TypeError(f"{model.__name__}.format is not a string literal")
    return value


def _allows_null(schema: dict[str, Any]) -> bool:
    if schema.get("type") == "null":
        return True
    return any(isinstance(s, dict) and _allows_null(s) for s in schema.get("anyOf", ()))


def _tidy(node: Any) -> Any:
    """Drop per-property titles, and `default: null` on properties that cannot be null (the
    optional-but-not-nullable fields: absent on the wire, never null)."""
    if isinstance(node, dict):
        out = {key: _tidy(value) for key, value in node.items()}
        properties = out.get("properties")
        if isinstance(properties, dict):
            for schema in properties.values():
                if isinstance(schema, dict):
                    schema.pop("title", None)
                    nullable = _allows_null(schema)
                    if "default" in schema and schema["default"] is None and not nullable:
                        del schema["default"]
        return out
    if isinstance(node, list):
        return [_tidy(item) for item in node]
    return node


def contract_schema(model: type[ContractModel]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True, mode="validation")
    schema = _tidy(schema)
    return {"$schema": JSON_SCHEMA_DIALECT, "$id": contract_format(model), **schema}


def render(model: type[ContractModel]) -> str:
    return json.dumps(contract_schema(model), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def expected_files() -> dict[str, str]:
    return {f"{contract_format(model)}.json": render(model) for model in CONTRACTS}


def stale_files(directory: Path) -> list[str]:
    """Names of schema files that are missing, different, or not generated any more."""
    expected = expected_files()
    stale = []
    for name, text in expected.items():
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    for path in directory.glob("threadshare-memory-*.json"):
        if path.name not in expected:
            stale.append(path.name)
    return sorted(stale)


def write_all(directory: Path) -> list[str]:
    directory.mkdir(parents=True, exist_ok=True)
    changed = stale_files(directory)
    expected = expected_files()
    for name in changed:
        path = directory / name
        if name in expected:
            path.write_text(expected[name], encoding="utf-8")
        else:
            path.unlink()
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m teamlore.contracts.export")
    parser.add_argument("--check", action="store_true", help="exit 1 if a schema file is stale")
    parser.add_argument("--dir", type=Path, default=Path("schema"), help="schema directory")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files(args.dir)
        for name in stale:
            print(f"stale: {args.dir / name}", file=sys.stderr)
        return 1 if stale else 0
    for name in write_all(args.dir):
        print(f"wrote {args.dir / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
