"""Helpers for the personal-memory tests: settings, a scripted decision model, decision builders.

The scripted model stands in for a paid model's judgement, which cannot exist in these tests: it
answers with decisions the test chose, so every test checks what teamlore does with an answer
(validation, guards, commit, recovery), never the quality of a model's judgement. It implements
the real `DecisionModel` port and sees the real `WriterRequest`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from teamlore.core.config import RepositoryConfig, load_config, save_config
from teamlore.personal.config import PersonalSettings, save_personal_settings
from teamlore.personal.model_port import WriterRequest

ALL_PROVENANCE: list[Any] = ["user_explicit", "agent_observation", "document_import"]
PROJECT_ID = "a1b2c3d4e5f6a1b2c3d4e5f6"
PROJECT = f"project:{PROJECT_ID}"

Answer = str | Callable[[WriterRequest], str]


def settings(**overrides: Any) -> PersonalSettings:
    data: dict[str, Any] = {
        "allowed_provenance": ALL_PROVENANCE,
        "allowed_scopes": ["global", "project:*"],
    }
    data.update(overrides)
    return PersonalSettings.model_validate(data)


def configure(home: Path, personal: PersonalSettings, *, project: bool = True) -> None:
    """Write config.toml with `[personal]` and (optionally) one registered repository."""
    home.mkdir(parents=True, exist_ok=True)
    config = load_config(home)
    if project:
        config.repositories = [
            RepositoryConfig(path="/tmp/project", repository_key=PROJECT_ID, worktree_key="w1")
        ]
        save_config(config, home)
    save_personal_settings(personal, home)


class ScriptedModel:
    """A DecisionModel that replays answers in order and records every request."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[WriterRequest] = []

    @property
    def model_name(self) -> str:
        return "scripted-test-model"

    def decide(self, request: WriterRequest) -> str:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError("the scripted model was called more often than scripted")
        answer = self.answers.pop(0)
        return answer(request) if callable(answer) else answer

    def projections(self) -> list[dict[str, Any]]:
        return [json.loads(r.projection_json) for r in self.requests]


def projection(request: WriterRequest) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(request.projection_json)
    return data


def evidence(request: WriterRequest) -> list[str]:
    return [o["ref"] for o in projection(request)["observations"]]


def section_ref(request: WriterRequest, target: str, title: str) -> str:
    for doc in projection(request)["documents"]:
        if doc["target"] == target:
            for section in doc["sections"]:
                if section["title"] == title:
                    return str(section["ref"])
    raise AssertionError(f"{target} has no section {title!r} in the projection")


def put(target: str, title: str, body: str, section: str | None = None) -> dict[str, Any]:
    return {"op": "put_section", "target": target, "section": section, "title": title, "body": body}


def remove(target: str, section: str) -> dict[str, Any]:
    return {"op": "remove_section", "target": target, "section": section}


def decision(
    kind: str,
    operations: list[dict[str, Any]] | None = None,
    *,
    evidence: list[str] | None = None,
    applicability: str = "global",
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": kind,
        "applicability": applicability,
        "confidence": 0.8,
        "evidence": evidence or [],
        "reason": "private model rationale",
    }
    if kind == "retain":
        out["admission"] = "remember"
        out["lifetime"] = "stable"
    if kind != "ignore":
        out["operations"] = operations or []
    return out


def answer(
    build: Callable[[WriterRequest], list[dict[str, Any]]],
) -> Callable[[WriterRequest], str]:
    """An answer whose decisions are built from the request (handles, evidence refs)."""

    def respond(request: WriterRequest) -> str:
        return json.dumps(
            {
                "version": "memory_maintenance_v2",
                "request_id": request.request_id,
                "decisions": build(request),
            }
        )

    return respond


def retain_all(target: str, title: str, body: str) -> Callable[[WriterRequest], str]:
    """Retain one new section citing every observation of the batch."""
    applicability = "project" if target.startswith("project:") else "global"
    return answer(
        lambda r: [
            decision(
                "retain",
                [put(target, title, body)],
                evidence=evidence(r),
                applicability=applicability,
            )
        ]
    )


def ignore_all() -> Callable[[WriterRequest], str]:
    return answer(lambda r: [decision("ignore", evidence=evidence(r), applicability="uncertain")])
