"""Rendering a merge: an approved entry it deprecates that does not parse is refused with what
to do about that file (repair it, then extract the candidate again), never just "discard"."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_review import write_approved_entry

from teamlore.core import errors
from teamlore.core.canonical import sha256_hex
from teamlore.memory.promotion.rendered import RenderContext
from teamlore.memory.promotion.rendering import render_entry_candidate
from teamlore.memory.promotion.review import CandidateView


def _approved(repo: Path, entry_id: str, content: bytes) -> dict[str, str]:
    """A supersedes reference as adjudication records it: the entry exactly as it was seen."""
    return {
        "sourceKind": "approved",
        "id": entry_id,
        "path": f"entries/{entry_id}.md",
        "contentDigest": sha256_hex(content),
    }


def _merge_of(supersedes: list[dict[str, str]]) -> CandidateView:
    """A candidate adjudicated as a merge of release-tag-check into release-tag-prefix."""
    return CandidateView(
        candidate_id="cand-1",
        kind="entry",
        status="quarantined",
        adjudication="merge",
        revision=1,
        content_digest="",
        payload={
            "content": "Release tags need a v prefix; CI checks it.",
            "mergedFrom": ["release-tag-check"],
            "supersedes": supersedes,
        },
        statements=[],
    )


def test_a_merge_target_that_does_not_parse_is_to_be_repaired_then_extracted_again(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / ".threadshare/memory/entries").mkdir(parents=True)
    kept = write_approved_entry(repo, "release-tag-prefix", "Release tags need a v prefix.")
    broken = write_approved_entry(repo, "release-tag-check", "Release tags are checked.")
    broken.write_text(broken.read_text().replace("priority: 50", "priority: lots"))
    view = _merge_of(
        [
            _approved(repo, "release-tag-prefix", kept.read_bytes()),
            _approved(repo, "release-tag-check", broken.read_bytes()),
        ]
    )
    with pytest.raises(errors.TeamloreError) as refused:
        render_entry_candidate(view, RenderContext(repo, None, {"release-tag-prefix"}))
    assert refused.value.code == "TARGET_DRIFT"
    assert refused.value.message.startswith("entry release-tag-check no longer parses (")
    remedy = refused.value.remedy or errors.next_step(refused.value.error)
    path = ".threadshare/memory/entries/release-tag-check.md"
    assert remedy.startswith(f"Fix {path} as `teamlore memory lint` says")
    # the discard runnable as printed: the candidate's id and a reason (it said `--candidate ID`)
    assert remedy.endswith(
        "with `teamlore memory discard --candidate cand-1 --reason 'it cannot be promoted as it"
        " is' --extract-again`."
    ), remedy


def test_targets_a_windows_checkout_gave_crlf_are_the_entries_adjudication_saw(
    tmp_path: Path,
) -> None:
    """In a clone with `core.autocrlf=true` the files have CRLF and the projection's digests
    (which adjudication records) are of their LF text, as in every other clone: the merge
    renders; a real edit of a target since is still drift."""
    repo = tmp_path / "repo"
    (repo / ".threadshare/memory/entries").mkdir(parents=True)
    kept = write_approved_entry(repo, "release-tag-prefix", "Release tags need a v prefix.")
    merged = write_approved_entry(repo, "release-tag-check", "Release tags are checked.")
    as_git_holds = {path: path.read_bytes() for path in (kept, merged)}
    for path in (kept, merged):
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))

    def view() -> CandidateView:
        return _merge_of([_approved(repo, p.stem, as_git_holds[p]) for p in (kept, merged)])

    files = render_entry_candidate(view(), RenderContext(repo, None, {"release-tag-prefix"}))
    assert [(f.entry_id, f.role) for f in files] == [
        ("release-tag-prefix", "update"),
        ("release-tag-check", "deprecate"),
    ]
    assert all(b"\r" not in f.content for f in files)  # written as the writer always writes

    # a candidate adjudicated in this checkout before teamlore read CRLF as LF recorded the
    # bytes' digest: it still renders after the upgrade, not TARGET_DRIFT
    adjudicated_before = view()
    adjudicated_before.payload["supersedes"] = [
        _approved(repo, p.stem, p.read_bytes()) for p in (kept, merged)
    ]
    again = render_entry_candidate(
        adjudicated_before, RenderContext(repo, None, {"release-tag-prefix"})
    )
    assert [f.entry_id for f in again] == [f.entry_id for f in files]

    merged.write_bytes(merged.read_bytes().replace(b"are checked", b"are checked by CI"))
    with pytest.raises(errors.TeamloreError) as refused:
        render_entry_candidate(view(), RenderContext(repo, None, {"release-tag-prefix"}))
    assert refused.value.code == "TARGET_DRIFT"
