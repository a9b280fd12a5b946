"""Typed memory documents: every field and allowed value, located errors, canonical bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from teamlore.core.errors import MEMORY_FILE_INVALID, TeamloreError
from teamlore.memory.store import documents as docs
from teamlore.memory.store.documents import MemoryFormatError

DATA = Path(__file__).parents[1] / "data"
SHARED_TREE = Path(__file__).resolve().parents[3] / "../shared/fixtures/threadshare-memory"
ENTRY_PATH = ".threadshare/memory/entries/auth-session-cookie.md"

FIELDS = {
    "id": "auth-session-cookie",
    "type": "work_method",
    "status": "approved",
    "priority": "85",
    "confidence": "high",
    "provenance_strength": "observed",
    "claim_support": "human-confirmed",
    "limitations": '["not-authorship","not-causality"]',
    "scope": "repo",
    "scene": "鉴权模块维护",
    "occurred": '["2026-08-12","2026-08-18"]',
    "evidence": '{"commits":[{"repo":"github.com/team-harness/threadshare",'
    '"hash":"7fd2f23a1b04c9e8d2f6a35b7c01d94e8f123456"}],"paths":["routes/api/session.ts"]}',
    "superseded_by": "null",
}
BODY = "别重构旧鉴权模块的 session 中间件。\n"


def entry_text(**overrides: str | None) -> str:
    fields = {**FIELDS, **overrides}
    lines = [f"{key}: {value}" for key, value in fields.items() if value is not None]
    return "---\n" + "\n".join(lines) + "\n---\n" + BODY


def load_error(text: str, path: str = ENTRY_PATH) -> MemoryFormatError:
    with pytest.raises(MemoryFormatError) as caught:
        docs.load_entry(text.encode(), path)
    return caught.value


# --- entries --------------------------------------------------------------------------------


def test_entry_loads_every_field_with_its_type() -> None:
    entry = docs.load_entry(entry_text().encode(), ENTRY_PATH)
    assert entry.id == "auth-session-cookie"
    assert entry.priority == 85
    assert entry.limitations == ["not-authorship", "not-causality"]
    assert entry.scene == "鉴权模块维护"
    assert entry.evidence.commits[0].hash == "7fd2f23a1b04c9e8d2f6a35b7c01d94e8f123456"
    assert entry.evidence.paths == ["routes/api/session.ts"]
    assert entry.body == BODY
    assert docs.dump_entry(entry) == entry_text().encode()


def test_entry_dump_is_independent_of_field_order_in_the_file() -> None:
    shuffled = dict(reversed(list(FIELDS.items())))
    text = "---\n" + "\n".join(f"{k}: {v}" for k, v in shuffled.items()) + "\n---\n" + BODY
    assert docs.dump_entry(docs.load_entry(text, ENTRY_PATH)) == entry_text().encode()


def test_proposal_multi_line_evidence_reads_to_the_canonical_entry() -> None:
    multi_line = entry_text(
        evidence='{\n  "commits": [\n    { "repo": "github.com/team-harness/threadshare",\n'
        '      "hash": "7fd2f23a1b04c9e8d2f6a35b7c01d94e8f123456" }\n  ],\n'
        '  "paths": ["routes/api/session.ts"]\n}'
    )
    entry = docs.load_entry(multi_line, ENTRY_PATH)
    assert docs.dump_entry(entry) == entry_text().encode()


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("id", "Bad_Slug", "slug.invalid"),
        ("id", "-leading-dash", "slug.invalid"),
        ("id", "a" * 129, "slug.invalid"),
        ("type", "work_note", "format.invalid-field"),
        ("status", "pending", "format.invalid-field"),
        ("priority", "101", "format.invalid-field"),
        ("priority", "-1", "format.invalid-field"),
        ("priority", "085", "format.invalid-field"),
        ("priority", "8.5", "format.invalid-field"),
        ("priority", "true", "format.invalid-field"),
        ("confidence", "certain", "format.invalid-field"),
        ("provenance_strength", "strong", "format.invalid-field"),
        ("claim_support", "verified", "format.invalid-field"),
        ("claim_support", "unverified", "format.unverified-claim-support"),
        ("limitations", '["ok",""]', "format.invalid-field"),
        ("limitations", "ok", "format.invalid-field"),
        ("scope", "org", "format.invalid-field"),
        ("scene", '""', "format.invalid-field"),
        ("occurred", '["2026-13-01"]', "format.invalid-field"),
        ("occurred", '["2026-02-30"]', "format.invalid-field"),
        ("occurred", "2026-08-12", "format.invalid-field"),
        ("evidence", '{"commits":[],"paths":[],"extra":1}', "format.unknown-field"),
        (
            "evidence",
            '{"commits":[{"repo":"","hash":"' + "a" * 40 + '"}],"paths":[]}',
            "format.invalid-field",
        ),
        (
            "evidence",
            '{"commits":[{"repo":"r","hash":"7FD2F23"}],"paths":[]}',
            "format.invalid-field",
        ),
        (
            "evidence",
            '{"commits":[{"repo":"r","hash":"' + "a" * 40 + '","x":1}],"paths":[]}',
            "format.unknown-field",
        ),
        (
            "evidence",
            '{"commits":[{"repo":"https://u:p@host/r","hash":"' + "a" * 40 + '"}],"paths":[]}',
            "format.invalid-field",
        ),
        ("evidence", '{"commits":[],"paths":["/home/alice/app/a.py"]}', "format.invalid-field"),
        ("evidence", '{"commits":[],"paths":["../outside.py"]}', "format.invalid-field"),
        ("evidence", '{"commits":[],"paths":["C:/repo/a.py"]}', "format.invalid-field"),
        ("superseded_by", "Not A Slug", "slug.invalid"),
    ],
)
def test_entry_rejects_each_invalid_value_at_its_line(field: str, value: str, reason: str) -> None:
    error = load_error(entry_text(**{field: value}))
    assert error.reason == reason
    assert error.field == field
    assert error.line == 2 + list(FIELDS).index(field)
    assert error.file == ENTRY_PATH


def test_entry_unknown_and_missing_fields() -> None:
    unknown = load_error(entry_text().replace("scope: repo\n", "scope: repo\nowner: me\n"))
    assert (unknown.reason, unknown.field, unknown.line) == ("format.unknown-field", "owner", 11)
    missing = load_error(entry_text(scene=None))
    assert (missing.reason, missing.field) == ("format.missing-field", "scene")


def test_entry_id_must_equal_the_file_name() -> None:
    error = load_error(entry_text(), ".threadshare/memory/entries/something-else.md")
    assert (error.reason, error.field, error.line) == ("slug.id-mismatch", "id", 2)


def test_supersession_rules() -> None:
    deprecated = docs.load_entry(
        entry_text(status="deprecated", superseded_by="new-entry"), ENTRY_PATH
    )
    assert deprecated.superseded_by == "new-entry"
    assert docs.load_entry(entry_text(status="deprecated"), ENTRY_PATH).superseded_by is None
    still_approved = load_error(entry_text(superseded_by="new-entry"))
    assert (still_approved.reason, still_approved.field) == (
        "format.invalid-field",
        "superseded_by",
    )
    itself = load_error(entry_text(status="deprecated", superseded_by="auth-session-cookie"))
    assert itself.field == "superseded_by"


def test_memory_format_error_is_a_teamlore_error() -> None:
    error = load_error(entry_text(type="work_note"))
    assert isinstance(error, TeamloreError)
    assert error.error is MEMORY_FILE_INVALID
    assert error.to_json()["details"]["why"] == error.why


def test_oversized_file_is_a_capacity_error() -> None:
    error = load_error(entry_text() + "x" * (64 * 1024))
    assert error.reason == "capacity.file-size"


def test_reference_entries_round_trip_byte_identically() -> None:
    paths = sorted((DATA / "reference" / "entries").glob("*.md"))
    assert len(paths) == 3
    for path in paths:
        data = path.read_bytes()
        entry = docs.load_entry(data, f".threadshare/memory/entries/{path.name}")
        assert docs.dump_entry(entry) == data


def test_shared_reference_tree_reads_as_is() -> None:
    if not SHARED_TREE.is_dir():
        pytest.skip("../shared/fixtures is not available in this checkout")
    entries = sorted((SHARED_TREE / "entries").glob("*.md"))
    assert len(entries) == 17
    for path in entries:
        data = path.read_bytes()
        assert docs.dump_entry(docs.load_entry(data, f"entries/{path.name}")) == data
    for path in (SHARED_TREE / "scenes").glob("*.md"):
        data = path.read_bytes()
        assert docs.dump_scene(docs.load_scene(data, f"scenes/{path.name}")) == data
    index = (SHARED_TREE / "index.json").read_bytes()
    assert docs.dump_index(docs.load_index(index)) == index


# --- scenes ---------------------------------------------------------------------------------


def scene_text(summary: str = '"Release verification"', heat: str = "3", body: str = "## R") -> str:
    return (
        "-----META-START-----\ncreated: 2026-08-21\nupdated: 2026-08-22\n"
        f"summary: {summary}\nheat: {heat}\n-----META-END-----\n{body}"
    )


def scene_error(text: str) -> MemoryFormatError:
    with pytest.raises(MemoryFormatError) as caught:
        docs.load_scene(text, ".threadshare/memory/scenes/release.md")
    return caught.value


def test_scene_reads_meta_and_body() -> None:
    scene = docs.load_scene(scene_text(), ".threadshare/memory/scenes/release.md")
    assert (scene.name, scene.heat, scene.summary, scene.body) == (
        "release",
        3,
        "Release verification",
        "## R",
    )
    assert docs.dump_scene(scene) == scene_text().encode()


def test_scene_bare_summary_reads_and_writes_quoted() -> None:
    scene = docs.load_scene(scene_text(summary="Release verification"), "scenes/release.md")
    assert docs.dump_scene(scene) == scene_text().encode()


def test_reference_scene_without_trailing_newline_round_trips() -> None:
    data = (DATA / "reference" / "scenes" / "team-memory-design.md").read_bytes()
    assert not data.endswith(b"\n")
    assert docs.dump_scene(docs.load_scene(data, "scenes/team-memory-design.md")) == data


@pytest.mark.parametrize(
    ("text", "reason", "line"),
    [
        ("created: 2026-08-21\n", "format.missing-meta", 1),
        ("-----META-START-----\ncreated: 2026-08-21\n", "format.unterminated-meta", 1),
        (scene_text().replace("heat: 3", "heat: 3\nowner: x"), "format.unknown-field", 6),
        (scene_text().replace("heat: 3\n", ""), "format.missing-field", 1),
        (
            scene_text().replace("created: 2026-08-21", "created: yesterday"),
            "format.invalid-field",
            2,
        ),
        (scene_text(heat="0"), "format.invalid-field", 5),
        (scene_text(summary='"' + "x" * 41 + '"'), "capacity.scene-summary", 4),
        (scene_text(body="字" * 1501), "capacity.scene-body", 7),
    ],
)
def test_scene_errors(text: str, reason: str, line: int) -> None:
    error = scene_error(text)
    assert (error.reason, error.line) == (reason, line)


def test_scene_capacity_counts_code_points() -> None:
    docs.load_scene(scene_text(summary='"' + "规" * 40 + '"', body="字" * 1500), "scenes/a.md")
    docs.load_scene(scene_text(body="😀" * 1500), "scenes/a.md")


def test_scene_name_comes_from_the_file_and_may_be_chinese_but_not_capitalised() -> None:
    """The one rule an entry's `scene` and a consolidation's scene names follow too."""
    assert docs.load_scene(scene_text(), "scenes/鉴权模块.md").name == "鉴权模块"
    assert docs.load_scene(scene_text(), "scenes/release-notes.md").name == "release-notes"
    for name in (".hidden", "Release_Notes", "release_notes", "Release"):
        with pytest.raises(MemoryFormatError) as caught:
            docs.load_scene(scene_text(), f"scenes/{name}.md")
        assert caught.value.reason == "slug.scene-name"


# --- doctrine -------------------------------------------------------------------------------


def test_doctrine_capacity_and_emptiness() -> None:
    assert docs.load_doctrine("规" * 1200 + "\n").text.startswith("规")
    assert docs.load_doctrine("😀" * 1200).text
    with pytest.raises(MemoryFormatError) as too_long:
        docs.load_doctrine("规" * 1201)
    assert too_long.value.reason == "capacity.doctrine"
    with pytest.raises(MemoryFormatError) as empty:
        docs.load_doctrine(" \n")
    assert empty.value.reason == "format.empty"
    text = "## Core Principles\n- Evidence is not truth.\n"
    assert docs.dump_doctrine(docs.load_doctrine(text)) == text.encode()


# --- skills ---------------------------------------------------------------------------------

SKILL = (
    '---\nname: "release-checks"\ndescription: "Validate and publish a stable release."\n---\n'
    "## Procedure\n\n1. Read AGENTS.md.\n"
)
SKILL_PATH = ".threadshare/memory/skills/release-checks/SKILL.md"


def test_skill_round_trips_and_checks_its_directory() -> None:
    skill = docs.load_skill(SKILL, SKILL_PATH)
    assert (skill.name, skill.description) == (
        "release-checks",
        "Validate and publish a stable release.",
    )
    assert docs.dump_skill(skill) == SKILL.encode()
    with pytest.raises(MemoryFormatError) as drift:
        docs.load_skill(SKILL, ".threadshare/memory/skills/other/SKILL.md")
    assert drift.value.reason == "slug.name-mismatch"


def test_skill_bare_values_and_optional_fields() -> None:
    text = (
        "---\nname: release-checks\ndescription: Validate a release.\nlicense: MIT\n"
        'allowed-tools: ["Bash","Read"]\nmetadata: {"owner":"infra"}\n---\nSteps'
    )
    skill = docs.load_skill(text, SKILL_PATH)
    assert skill.allowed_tools == ["Bash", "Read"]
    assert docs.dump_skill(skill) == (
        b'---\nname: "release-checks"\ndescription: "Validate a release."\nlicense: MIT\n'
        b'allowed-tools: ["Bash","Read"]\nmetadata: {"owner":"infra"}\n---\nSteps\n'
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (SKILL.replace('"release-checks"', '"Release_Checks"'), "slug.invalid"),
        (SKILL.replace("Validate and", "Validate <b> and"), "format.invalid-field"),
        (
            SKILL.replace("Validate and publish a stable release.", "x" * 1025),
            "capacity.skill-description",
        ),
        (SKILL.split("## Procedure")[0], "format.empty"),
        (SKILL.replace("---\n##", "version: 2\n---\n##"), "format.unknown-field"),
        (SKILL.replace('name: "release-checks"\n', ""), "format.missing-field"),
    ],
)
def test_skill_errors(text: str, reason: str) -> None:
    with pytest.raises(MemoryFormatError) as caught:
        docs.load_skill(text, "SKILL.md")
    assert caught.value.reason == reason


# --- index.json -----------------------------------------------------------------------------


def test_index_skeleton_bytes_match_the_reference() -> None:
    expected = (DATA / "reference" / "index.json").read_bytes()
    assert docs.dump_index() == expected
    assert docs.load_index(expected) == docs.MemoryIndex()


def test_index_errors() -> None:
    with pytest.raises(MemoryFormatError) as bad_json:
        docs.load_index('{\n  "format": \n')
    assert (bad_json.value.reason, bad_json.value.line) == ("format.invalid-json-value", 3)
    with pytest.raises(MemoryFormatError) as wrong_format:
        docs.load_index('{"format": "other@v1", "entries": [], "scenes": []}')
    assert wrong_format.value.field == "format"
    with pytest.raises(MemoryFormatError) as extra:
        docs.load_index('{"format": "threadshare-memory-index@v1", "owner": 1}')
    assert extra.value.reason == "format.unknown-field"


# --- consolidated.json ----------------------------------------------------------------------


def test_the_consolidation_record_is_one_sorted_line_per_entry_and_reads_back() -> None:
    covered = {"tag-releases": (7, "0123456789abcdef"), "pin-toolchain": (3, "fedcba9876543210")}
    data = docs.dump_consolidated(covered)
    assert data == (
        b'{\n  "format": "threadshare-memory-consolidated@v1",\n  "entries": {\n'
        b'    "pin-toolchain": [3, "fedcba9876543210"],\n'
        b'    "tag-releases": [7, "0123456789abcdef"]\n  }\n}\n'
    )
    assert docs.load_consolidated(data) == covered
    empty = docs.dump_consolidated({})
    assert docs.load_consolidated(empty) == {} and b'"entries": {}\n' in empty


@pytest.mark.parametrize(
    "entries",
    [
        '{"Not A Slug": [1, "0123456789abcdef"]}',
        '{"a": [1, "0123456789abcdef0123456789abcdef"]}',  # a whole digest
        '{"a": [true, "0123456789abcdef"]}',
        '{"a": [-1, "0123456789abcdef"]}',
        '{"a": {"revision": 1}}',
        '[["a", 1, "0123456789abcdef"]]',
    ],
)
def test_a_consolidation_record_that_breaks_its_shape_is_refused(entries: str) -> None:
    text = f'{{"format": "threadshare-memory-consolidated@v1", "entries": {entries}}}'
    with pytest.raises(MemoryFormatError) as refused:
        docs.load_consolidated(text)
    assert refused.value.reason == "format.invalid-field"
    with pytest.raises(MemoryFormatError) as other_format:
        docs.load_consolidated('{"format": "threadshare-memory-index@v1", "entries": {}}')
    assert other_format.value.reason == "format.invalid-field"


@pytest.mark.parametrize("load", [docs.load_consolidated, docs.load_index])
def test_a_record_nested_past_the_stack_is_invalid_json_not_a_crash(load: Any) -> None:
    """50 KB of `[` is under the size cap; the JSON parser runs out of stack on it, which
    status, lint and synthesize did not catch."""
    with pytest.raises(MemoryFormatError) as refused:
        load("[" * 50_000)
    assert refused.value.reason == "format.invalid-json-value"
