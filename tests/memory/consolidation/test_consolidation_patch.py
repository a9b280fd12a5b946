"""ConsolidationPatch@v1 rules, heat and capacity (memory.consolidation.patch), checked against
an in-memory approved source: every refusal names its stable reason."""

from __future__ import annotations

from typing import Any

import pytest

from teamlore.contracts.consolidation import MAX_HEAT
from teamlore.core import errors
from teamlore.core.canonical import sha256_hex
from teamlore.memory.consolidation.patch import materialize, parse_patch
from teamlore.memory.consolidation.source import ApprovedEntry, ApprovedSource, SceneFile
from teamlore.memory.store import documents
from teamlore.memory.store.layout import scene_path

BINDING_PLACEHOLDER: dict[str, Any] = {}
TODAY = "2026-12-01"


def entry(entry_id: str) -> ApprovedEntry:
    return ApprovedEntry(
        entry_id,
        f".threadshare/memory/entries/{entry_id}.md",
        1,
        "a" * 64,
        "approved",
        "work_method",
        None,
        50,
        "high",
        f"{entry_id} body\n",
    )


ENTRIES = [entry("e1"), entry("e2")]


def scene(name: str, heat: int = 1, created: str = "2026-08-21") -> SceneFile:
    data = documents.dump_scene(
        documents.Scene(
            name=name, created=created, updated=created, summary=name, heat=heat, body="## x"
        )
    )
    return SceneFile(name, scene_path(name), data.decode(), sha256_hex(data), heat, created, name)


def source(*scenes: SceneFile, doctrine: bool = False) -> ApprovedSource:
    from teamlore.memory.consolidation.source import DoctrineFile

    return ApprovedSource(
        generation=1,
        analyzer_version="x",
        source_tree_digest="0" * 64,
        entries={e.entry_id: e for e in ENTRIES},
        scenes={s.name: s for s in scenes},
        doctrine=DoctrineFile("- be kind\n", "d" * 64) if doctrine else None,
    )


def many(n: int) -> list[SceneFile]:
    return [scene(f"scene-{i:02d}") for i in range(n)]


def scene_content(summary: str = "Release checks", body: str = "## Release\n- tag after CI") -> str:
    return f'-----META-START-----\nsummary: "{summary}"\n-----META-END-----\n{body}'


def op(
    op_id: str = "o1",
    kind: str = "create",
    target: str = "scene",
    name: str = "release",
    content: str | None = "default",
    based_on: tuple[str, ...] = ("e1",),
    merge_sources: tuple[str, ...] = (),
    rationale: str = "The release entries belong together.",
) -> dict[str, Any]:
    if content == "default":
        content = scene_content() if target == "scene" else "- Evidence is not truth.\n"
    return {
        "operationId": op_id,
        "op": kind,
        "target": target,
        "name": name,
        "newContent": content,
        "basedOnEntryIds": list(based_on),
        "mergeSources": list(merge_sources),
        "rationale": rationale,
    }


def patch(*ops: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": "threadshare-memory-consolidation-patch@v1",
        "taskId": "consolidate-x",
        "binding": BINDING,
        "operations": list(ops),
    }


BINDING: dict[str, Any] = {
    "databaseUuid": "db",
    "memoryStateUuid": "db",
    "owner": {"repositoryKey": "a" * 64, "worktreeKey": "b" * 64},
    "approvedProjection": {
        "generation": 1,
        "analyzerVersion": "x",
        "coverage": "complete",
        "sourceTreeDigest": "0" * 64,
    },
    "entrySetDigest": "",
    "entryRevisions": [],
    "sceneIndexDigest": "",
    "sceneRevisions": [],
    "doctrineDigest": None,
    "replay": {"mode": "full", "afterSuccessfulRunId": None},
    "promptVersion": "memory-consolidation@3",
    "schemaVersion": "threadshare-memory-consolidation-task@v1",
    "policyVersion": "consolidation-policy@1",
}


def _fill_binding() -> None:
    from teamlore.contracts import digests

    BINDING["entrySetDigest"] = digests.entry_set_digest([])
    BINDING["sceneIndexDigest"] = digests.scene_index_digest([])


_fill_binding()


def run(document: dict[str, Any], src: ApprovedSource) -> Any:
    return materialize(parse_patch(document), src, ENTRIES, today=TODAY)


def refused(document: dict[str, Any], src: ApprovedSource) -> dict[str, Any]:
    with pytest.raises(errors.TeamloreError) as caught:
        run(document, src)
    assert caught.value.code == "CONSOLIDATION_INVALID", caught.value.message
    return {"reason": caught.value.details["reason"], **caught.value.details}


# --- heat -----------------------------------------------------------------------------------


def test_a_create_has_heat_1_and_the_canonical_scene_form() -> None:
    result = run(patch(op()), source())
    ((path, data),) = result.writes
    assert path == ".threadshare/memory/scenes/release.md"
    assert data.decode() == (
        "-----META-START-----\ncreated: 2026-12-01\nupdated: 2026-12-01\n"
        'summary: "Release checks"\nheat: 1\n-----META-END-----\n## Release\n- tag after CI'
    )
    assert result.operations[0]["heat"] == 1


def test_an_update_adds_one_to_the_old_heat_and_a_forged_heat_line_is_dropped() -> None:
    forged = scene_content().replace("-----META-END-----", "heat: 999999\n-----META-END-----")
    result = run(patch(op(kind="update", name="hot", content=forged)), source(scene("hot", 7)))
    ((_, data),) = result.writes
    assert "\nheat: 8\n" in data.decode() and "999999" not in data.decode()
    assert "created: 2026-08-21\nupdated: 2026-12-01" in data.decode()  # created kept


def test_a_merge_sums_the_source_heats_plus_one_and_deletes_the_other_source() -> None:
    result = run(
        patch(op(kind="merge", name="a", merge_sources=("a", "b"))),
        source(scene("a", 3), scene("b", 5)),
    )
    assert result.operations[0]["heat"] == 9
    assert [p for p, _ in result.writes] == [scene_path("a")]
    assert result.deletes == (scene_path("b"),)


def test_a_merge_into_a_new_name_deletes_every_source() -> None:
    result = run(
        patch(op(kind="merge", name="c", merge_sources=("a", "b"))), source(scene("a"), scene("b"))
    )
    assert result.deletes == (scene_path("a"), scene_path("b"))


def test_heat_past_the_maximum_is_refused() -> None:
    problem = refused(
        patch(op(kind="merge", name="a", merge_sources=("a", "b"))),
        source(scene("a", MAX_HEAT), scene("b", 1)),
    )
    assert problem["reason"] == "heat-overflow"


# --- batch rules ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ops", "reason"),
    [
        ((op("o1", name="x"), op("o1", name="y")), "duplicate-operation-id"),
        ((op("o1", name="x"), op("o2", kind="update", name="x")), "conflicting-file-operation"),
        ((op("o1", name="x"), op("o2", name="y")), "too-many-scene-creates"),
        ((op(kind="merge", name="a", merge_sources=("a",)),), "unknown-merge-source"),
        ((op(based_on=("nope",)),), "unknown-entry"),
        ((op(content=None),), "invalid-operation-content"),
        ((op(kind="delete", name="a", content="x", based_on=()),), "invalid-operation-content"),
        ((op(target="doctrine", name="rules"),), "invalid-doctrine-name"),
        ((op(kind="update", name="a", merge_sources=("a", "b")),), "invalid-merge-sources"),
    ],
)
def test_batch_and_shape_rules(ops: tuple[dict[str, Any], ...], reason: str) -> None:
    assert refused(patch(*ops), source(scene("a"), scene("b")))["reason"] == reason


def test_a_merge_source_is_used_once_and_never_written_by_another_operation() -> None:
    src = source(scene("a"), scene("b"), scene("c"))
    twice = patch(
        op("o1", kind="merge", name="a", merge_sources=("a", "b")),
        op("o2", kind="merge", name="c", merge_sources=("c", "b")),
    )
    assert refused(twice, src)["reason"] == "merge-source-conflict"
    written = patch(
        op("o1", kind="merge", name="a", merge_sources=("a", "b")),
        op("o2", kind="update", name="b"),
    )
    assert refused(written, src)["reason"] == "merge-source-conflict"


def test_targets_must_exist_or_be_absent_as_the_operation_says() -> None:
    assert refused(patch(op(name="a")), source(scene("a")))["reason"] == "target-already-exists"
    assert refused(patch(op(kind="update", name="zz")), source())["reason"] == "target-not-found"
    assert (
        refused(patch(op(kind="delete", name="zz", content=None, based_on=())), source())["reason"]
        == "target-not-found"
    )
    doctrine_twice = patch(op(target="doctrine", name="doctrine"))
    assert refused(doctrine_twice, source(doctrine=True))["reason"] == "target-already-exists"
    merge_over = patch(op(kind="merge", name="c", merge_sources=("a", "b")))
    assert (
        refused(merge_over, source(scene("a"), scene("b"), scene("c")))["reason"]
        == "conflicting-file-operation"
    )


# --- capacity -------------------------------------------------------------------------------


def test_at_12_scenes_a_create_must_say_why_it_cannot_fit() -> None:
    src = source(*many(12))
    assert refused(patch(op()), src)["reason"] == "create-rationale-required"
    fits = op(rationale="Release work cannot fit into any existing scene: none covers tagging.")
    assert run(patch(fits), src).writes
    chinese = op(rationale="发布流程无法并入现有场景。")
    assert run(patch(chinese), src).writes


def test_at_14_scenes_no_create_even_with_a_rationale() -> None:
    fits = op(rationale="It cannot fit anywhere else.")
    assert refused(patch(fits), source(*many(14)))["reason"] == "create-forbidden"


def test_at_15_scenes_an_update_alone_is_refused_and_a_merge_is_accepted() -> None:
    src = source(*many(15))
    update = op(kind="update", name="scene-00")
    assert refused(patch(update), src)["reason"] == "scene-reduction-required"
    merge = op(kind="merge", name="scene-00", merge_sources=("scene-00", "scene-01"))
    result = run(patch(merge), src)
    assert result.deletes == (scene_path("scene-01"),)


def test_a_merge_into_a_new_name_at_15_reduces_by_one() -> None:
    merge = op(kind="merge", name="fresh", merge_sources=("scene-00", "scene-01"))
    result = run(patch(merge), source(*many(15)))
    assert result.deletes == (scene_path("scene-00"), scene_path("scene-01"))


def test_never_more_than_15_scenes_after_the_patch() -> None:
    delete = op(kind="delete", name="scene-00", content=None, based_on=())
    assert refused(patch(delete), source(*many(17)))["reason"] == "scene-capacity-exceeded"
    assert refused(patch(delete), source(*many(16)))["reason"] == "scene-reduction-required"
    assert run(patch(delete), source(*many(15))).deletes == (scene_path("scene-00"),)


# --- content --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "reason", "rule"),
    [
        ("\ufeff" + scene_content(), "invalid-content", None),
        (scene_content().replace("\n## Release", "\r## Release"), "invalid-content", None),
        (scene_content(body="x" * 1501), "invalid-scene-content", "capacity.scene-body"),
        (scene_content(summary="s" * 41), "invalid-scene-content", "capacity.scene-summary"),
        ("## no meta", "invalid-scene-content", "format.missing-meta"),
        (
            scene_content().replace("-----META-END-----", "heat: 2\nheat: 3\n-----META-END-----"),
            "invalid-scene-content",
            "format.duplicate-key",
        ),
        (
            scene_content().replace("-----META-END-----", "owner: me\n-----META-END-----"),
            "invalid-scene-content",
            "format.meta-unknown-field",
        ),
    ],
)
def test_scene_content_rules(content: str, reason: str, rule: str | None) -> None:
    problem = refused(patch(op(content=content)), source())
    assert problem["reason"] == reason
    if rule is not None:
        assert problem["rule"] == rule


def test_crlf_and_trailing_blanks_are_normalized_before_counting() -> None:
    body = "## Release  \n- " + "x" * 1480 + "\t\n- ok"
    result = run(patch(op(content=scene_content(body=body).replace("\n", "\r\n"))), source())
    text = result.writes[0][1].decode()
    assert "\r" not in text and "  \n" not in text and "\t\n" not in text


def test_a_1500_code_point_cjk_body_fits_and_1501_does_not() -> None:
    assert run(patch(op(content=scene_content(body="场" * 1500))), source()).writes
    assert refused(patch(op(content=scene_content(body="场" * 1501))), source())["rule"] == (
        "capacity.scene-body"
    )


def test_doctrine_rules() -> None:
    fits = op(target="doctrine", name="doctrine", content="规" * 1200)
    ((path, data),) = run(patch(fits), source()).writes
    assert path == ".threadshare/memory/doctrine.md" and len(data.decode()) == 1200
    too_long = op(target="doctrine", name="doctrine", content="规" * 1201)
    assert refused(patch(too_long), source())["reason"] == "invalid-doctrine-content"
    empty = op(target="doctrine", name="doctrine", content="  \n")
    assert refused(patch(empty), source())["reason"] == "invalid-doctrine-content"
    merge = op(kind="merge", target="doctrine", name="doctrine", merge_sources=("a", "b"))
    assert refused(patch(merge), source(scene("a"), scene("b")))["reason"] == (
        "invalid-doctrine-operation"
    )


@pytest.mark.parametrize("name", ["../escape", "Release", "a/b", "..", "release.md"])
def test_a_name_that_is_not_a_slug_is_refused_by_the_contract(name: str) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        parse_patch(patch(op(name=name)))
    assert caught.value.code == "STAGE_REQUEST_INVALID"
