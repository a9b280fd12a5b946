"""Evidence catalog: opaque deterministic ids, merged pointers, host-side strength derivation."""

from __future__ import annotations

from pathlib import Path

import pytest

from teamlore.memory.extraction.evidence import (
    Catalog,
    CatalogEdge,
    CatalogTurn,
    UnknownEvidenceError,
    build_catalog,
    entry_limitations,
    entry_strength,
    statement_provenance,
)

HASH = "a" * 40


def edge(strength: str, reason: str, *limits: str) -> CatalogEdge:
    return CatalogEdge(HASH, strength, (reason,), limits, f"{strength}-rev")


def catalog(
    home: Path, scope: str = "scope-1", public: str | None = "github.com/acme/shop"
) -> Catalog:
    turns = [
        CatalogTurn(
            "k" * 24,
            1,
            "1" * 64,
            "2026-03-02T09:00:01.000Z",
            ("src/a.py",),
            (edge("observed", "short-hash-in-tool-output", "not-authorship"),),
        ),
        CatalogTurn(
            "k" * 24,
            2,
            "2" * 64,
            None,
            ("src/a.py", "docs/b.md"),
            (
                edge("direct", "full-hash-in-commit-output", "not-exclusive-line-attribution"),
                CatalogEdge("b" * 40, "candidate", ("time-window-with-writes",), (), "c-rev"),
            ),
        ),
    ]
    return build_catalog(
        turns,
        repository_key="r" * 24,
        worktree_key="w" * 24,
        public_identity=public,
        scope=scope,
        home=home,
    )


def test_catalog_has_one_item_per_pointer_sorted_commit_turn_path(home: Path) -> None:
    cat = catalog(home)
    assert [r.kind for r in cat.records] == ["commit", "turn", "turn", "path", "path"]
    commit = cat.records[0]
    assert commit.display == f"commit {HASH} @ github.com/acme/shop"
    assert commit.strength == "direct"  # strongest of the merged edges
    assert commit.limitations == ["not-authorship", "not-exclusive-line-attribution"]
    assert cat.delivery_edge_revisions == ["direct-rev", "observed-rev"]  # candidate not offered
    assert {r.display for r in cat.records if r.kind == "path"} == {
        "path src/a.py",
        "path docs/b.md",
    }
    assert {r.display for r in cat.records if r.kind == "turn"} == {
        "turn 1 @ 2026-03-02T09:00:01.000Z",
        "turn 2",
    }
    assert set(cat.turn_evidence) == {1, 2}
    assert all(
        set(item) == {"evidenceId", "kind", "pointerDigest", "display"} for item in cat.public()
    )


def test_ids_are_deterministic_per_scope_and_secret_and_reveal_no_order(
    home: Path, tmp_path: Path
) -> None:
    a, b = catalog(home), catalog(home)
    assert [r.evidence_id for r in a.records] == [r.evidence_id for r in b.records]
    other_scope = catalog(home, scope="scope-2")
    assert not {r.evidence_id for r in a.records} & {r.evidence_id for r in other_scope.records}
    other_home = catalog(tmp_path / "elsewhere")
    assert not {r.evidence_id for r in a.records} & {r.evidence_id for r in other_home.records}
    assert [r.evidence_id for r in a.records] == [
        f"ev-{n}-{r.pointer_digest[:12]}" for n, r in enumerate(a.records, start=1)
    ]
    salts = {r.pointer["salt"] for r in a.records}
    assert len(salts) == 1 and all(r.pointer["salt"] not in str(r.public()) for r in a.records)


def test_statement_provenance_is_strongest_cited_with_unioned_limitations(home: Path) -> None:
    cat = catalog(home)
    index = cat.by_id()
    path_id = next(r.evidence_id for r in cat.records if r.kind == "path")
    turn_id = cat.turn_evidence[1]
    prov = statement_provenance([path_id, turn_id, path_id], index)
    assert prov.provenance_strength == "observed"  # the path's, and turn 1's delivery edge
    assert prov.limitations == [
        "not-authorship",
        "not-causality",
        "path-only-context",
        "source-local-only",
    ]
    assert [c["evidenceId"] for c in prov.citations] == sorted({path_id, turn_id})
    assert statement_provenance([], index).provenance_strength == "unknown"
    with pytest.raises(UnknownEvidenceError) as unknown:
        statement_provenance([turn_id, "ev-from-another-task"], index)
    assert unknown.value.evidence_ids == ["ev-from-another-task"]


def test_entry_strength_is_the_weakest_statement() -> None:
    assert entry_strength(["direct", "observed", "direct"]) == "observed"
    assert entry_strength(["direct", "unknown"]) == "unknown"
    assert entry_strength([]) == "unknown"
    assert entry_limitations([["b", "a"], ["a", "c"]]) == ["a", "b", "c"]


def test_a_turn_is_as_strong_as_its_strongest_delivery_and_unknown_without_one(
    home: Path,
) -> None:
    """docs/sessions.md: `direct` is a full hash a commit command printed in that turn. A turn
    that delivered no commit links a claim to none: `unknown`, never `direct`."""
    by_turn = {r.turn_index: r for r in catalog(home).records if r.kind == "turn"}
    assert (by_turn[1].strength, by_turn[1].limitations) == (
        "observed",
        ["not-authorship", "source-local-only"],
    )
    # its `candidate` edge is no delivery the catalog offers: its limitation stays out
    assert (by_turn[2].strength, by_turn[2].limitations) == (
        "direct",
        ["not-exclusive-line-attribution", "source-local-only"],
    )
    quiet = CatalogTurn("k" * 24, 3, "3" * 64, None, (), ())
    (record,) = build_catalog(
        [quiet],
        repository_key="r" * 24,
        worktree_key="w" * 24,
        public_identity=None,
        scope="scope-1",
        home=home,
    ).records
    assert (record.strength, record.limitations) == ("unknown", ["source-local-only"])
    index = {record.evidence_id: record}
    assert statement_provenance([record.evidence_id], index).provenance_strength == "unknown"
