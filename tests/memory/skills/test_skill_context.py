"""Recall's skillContext and memoryContext: all Skills while they fit, ranked by the query
otherwise; memory items ranked and packed into the budget; the binding digest moves with the
entries, scenes and doctrine (and not with Skills)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import entry_file
from teamlore.core import errors
from teamlore.memory.skills.context import (
    memory_context,
    query_terms,
    read_team_memory,
    recall_contexts,
    skill_context,
)


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for sub in ("entries", "scenes", "skills"):
        (root / ".threadshare" / "memory" / sub).mkdir(parents=True)
    return root


def add_skill(root: Path, name: str, description: str, body: str = "1. Do it.\n") -> None:
    folder = root / ".threadshare/memory/skills" / name
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        f'---\nname: "{name}"\ndescription: "{description}"\n---\n{body}'
    )


def add_scene(root: Path, name: str, heat: int, summary: str, body: str = "- a point") -> None:
    (root / ".threadshare/memory/scenes" / f"{name}.md").write_text(
        "-----META-START-----\ncreated: 2026-01-01\nupdated: 2026-01-01\n"
        f'summary: "{summary}"\nheat: {heat}\n-----META-END-----\n{body}'
    )


def add_entry(
    root: Path, entry_id: str, priority: int, body: str, status: str = "approved"
) -> None:
    (root / ".threadshare/memory/entries" / f"{entry_id}.md").write_text(
        entry_file(entry_id, body, status=status, kind="work_fact", priority=priority)
    )


def test_query_terms_are_the_whole_query_and_its_words() -> None:
    assert query_terms("Release ＴＡＧ v-prefix") == [
        "release tag v-prefix",
        "release",
        "tag",
        "v-prefix",
    ]
    assert query_terms("  ") == []


def test_all_skills_while_they_fit_in_name_order(tmp_path: Path) -> None:
    root = tree(tmp_path)
    for name in ("zeta", "alpha", "mid"):
        add_skill(root, name, f"About {name}.")
    context = skill_context(read_team_memory(root), "anything")
    assert context["selection"] == "all" and context["truncated"] is False
    assert [s["name"] for s in context["skills"]] == ["alpha", "mid", "zeta"]
    assert "notReturned" not in context


def test_more_than_twenty_skills_are_ranked_by_the_query(tmp_path: Path) -> None:
    root = tree(tmp_path)
    for i in range(22):
        add_skill(root, f"chore-{i:02d}", "Routine work.")
    add_skill(root, "release", "Cut a release.")  # name equals a term: +16
    add_skill(root, "release-notes", "Write notes.")  # name contains: +8
    add_skill(root, "zz-deploy", "Deploy after the release.")  # description: +4
    add_skill(root, "zz-rollback", "Undo.", "1. Revert the release tag.\n")  # content: +1
    context = skill_context(read_team_memory(root), "release")
    assert context["selection"] == "ranked" and context["truncated"] is True
    assert context["total"] == 26 and context["returned"] == 20
    names = [s["name"] for s in context["skills"]]
    assert names[:4] == ["release", "release-notes", "zz-deploy", "zz-rollback"]
    assert names[4:] == [f"chore-{i:02d}" for i in range(16)]
    assert context["notReturned"] == [f"chore-{i:02d}" for i in range(16, 22)]


def test_a_skill_over_the_remaining_budget_is_skipped_and_smaller_ones_after_it_still_fit(
    tmp_path: Path,
) -> None:
    root = tree(tmp_path)
    add_skill(root, "release", "Cut a release.", "1. " + "x" * (40 * 1024) + "\n")
    add_skill(root, "release-notes", "Write notes.", "1. " + "y" * (40 * 1024) + "\n")
    for name in ("chore-a", "chore-b", "chore-c"):
        add_skill(root, name, "Routine work.")
    context = skill_context(read_team_memory(root), "release", 64 * 1024)
    # the second big one does not fit after the first; the small ones after it still do, and
    # the one left out is named
    assert context["selection"] == "ranked" and context["truncated"] is True
    names = [s["name"] for s in context["skills"]]
    assert names == ["release", "chore-a", "chore-b", "chore-c"]
    assert context["total"] == 5 and context["returned"] == 4
    assert context["notReturned"] == ["release-notes"]


def test_every_skill_not_returned_is_named_in_rank_order(tmp_path: Path) -> None:
    root = tree(tmp_path)
    for i in range(22):
        add_skill(root, f"chore-{i:02d}", "Routine work.")
    add_skill(root, "release", "Cut a release.", "1. " + "x" * (40 * 1024) + "\n")
    context = skill_context(read_team_memory(root), "release", 32 * 1024)
    # the best match is over the budget, twenty others fit, two are past the count
    assert [s["name"] for s in context["skills"]] == [f"chore-{i:02d}" for i in range(20)]
    assert context["notReturned"] == ["release", "chore-20", "chore-21"]


def test_memory_context_ranks_scenes_then_doctrine_then_entries_within_budget(
    tmp_path: Path,
) -> None:
    root = tree(tmp_path)
    add_scene(root, "billing", 5, "Invoices")
    add_scene(root, "release", 1, "Releases")
    (root / ".threadshare/memory/doctrine.md").write_text("- Test first.\n")
    for name, priority in (("big-a", 90), ("big-b", 80), ("big-c", 70)):
        add_entry(root, name, priority, "x" * (60 * 1024))
    add_entry(root, "small-one", 10, "Tags need a v prefix.")
    add_entry(root, "old-entry", 99, "Gone.", status="deprecated")
    context = memory_context(read_team_memory(root), "release")
    ids = [(i["kind"], i["id"]) for i in context["items"]]
    # the query lifts the cooler scene; the third 60 KiB entry does not fit and is skipped, the
    # small one after it still fits; deprecated entries are not memory context
    assert ids == [
        ("scene", "release"),
        ("scene", "billing"),
        ("doctrine", "doctrine"),
        ("entry", "big-a"),
        ("entry", "big-b"),
        ("entry", "small-one"),
    ]
    assert context["truncated"] is True and context["total"] == 7


def test_the_binding_digest_moves_with_memory_but_not_with_skills(tmp_path: Path) -> None:
    root = tree(tmp_path)
    add_entry(root, "one", 50, "One.")
    first = read_team_memory(root).binding_digest()
    add_skill(root, "release", "Cut a release.")
    assert read_team_memory(root).binding_digest() == first
    add_scene(root, "release", 1, "Releases")
    second = read_team_memory(root).binding_digest()
    assert second != first
    (root / ".threadshare/memory/doctrine.md").write_text("- Test first.\n")
    assert read_team_memory(root).binding_digest() != second


def test_a_worktree_without_memory_has_empty_contexts(tmp_path: Path) -> None:
    contexts = recall_contexts(tmp_path, "release")
    assert contexts["skillContext"]["skills"] == [] and contexts["memoryContext"]["items"] == []


def test_the_capture_prompt_is_versioned_and_says_when_in_doubt_capture(tmp_path: Path) -> None:
    """skillContext.capturePrompt (skill-capture@2): capture generously, parameterize the
    specifics, and the four things never captured."""
    prompt = skill_context(read_team_memory(tree(tmp_path)), "")["capturePrompt"]
    assert prompt["promptVersion"] == "skill-capture@2"
    text = " ".join(prompt["text"].split())
    assert "When in doubt, capture" in text and "same team, next time" in text
    assert "placeholders" in text
    never = text.split("Never capture:")[1]
    for rejected in ("1. secrets", "2. raw logs", "3. the purely transient", "4. what an existing"):
        assert rejected in never


def test_recall_leaves_out_a_symlinked_scene_or_skill_and_names_each_but_staging_refuses(
    tmp_path: Path,
) -> None:
    root = tree(tmp_path)
    add_scene(root, "release", 1, "Releases")
    add_skill(root, "deploy", "Deploy the app.")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "stolen.md").write_text("-----META-START-----\n")
    (root / ".threadshare/memory/scenes/stolen.md").symlink_to(outside / "stolen.md")
    (root / ".threadshare/memory/skills/linked").symlink_to(outside)

    contexts = recall_contexts(root, "release")

    memory, skills = contexts["memoryContext"], contexts["skillContext"]
    assert [item["id"] for item in memory["items"]] == ["release"]
    assert memory["coverage"] == skills["coverage"] == "partial"
    assert [(d["code"], d["file"]) for d in memory["leftOut"]] == [
        ("symlink", ".threadshare/memory/scenes/stolen.md")
    ]
    assert [(d["code"], d["file"]) for d in skills["leftOut"]] == [
        ("symlink", ".threadshare/memory/skills/linked")
    ]
    assert [s["name"] for s in skills["skills"]] == ["deploy"]
    with pytest.raises(errors.TeamloreError) as refused:
        read_team_memory(root)  # what staging binds: never a partial view
    assert refused.value.error is errors.UNSAFE_PATH


def test_recall_leaves_out_a_memory_file_a_merge_left_in_conflict_but_staging_refuses(
    tmp_path: Path,
) -> None:
    """After a `git merge` that left a scene and an entry in conflict, recall still answers
    from the rest and names both (search does the same); staging binds only a whole view."""
    root = tree(tmp_path)
    add_scene(root, "release", 1, "Releases")
    memory_dir = root / ".threadshare/memory"
    conflict = "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> b\n"
    (memory_dir / "scenes/deploys.md").write_text(conflict)
    (memory_dir / "entries/tag-first.md").write_text("---\nid: [unclosed\n---\nbody\n")

    memory = recall_contexts(root, "release")["memoryContext"]

    assert [item["id"] for item in memory["items"]] == ["release"]
    assert memory["coverage"] == "partial"
    assert [(d["code"], d["file"], d["line"]) for d in memory["leftOut"]] == [
        ("format.unterminated-json", ".threadshare/memory/entries/tag-first.md", 2),
        ("format.merge-conflict", ".threadshare/memory/scenes/deploys.md", 1),
    ]
    with pytest.raises(errors.TeamloreError) as refused:
        read_team_memory(root)
    assert refused.value.error is errors.MEMORY_FILE_INVALID


def test_recall_leaves_out_a_skill_that_does_not_parse_or_is_not_valid_but_staging_refuses(
    tmp_path: Path,
) -> None:
    """A broken SKILL.md refused the whole recall; now the other Skills still come back and
    each broken one is named with what is wrong with it."""
    root = tree(tmp_path)
    add_skill(root, "deploy", "Deploy the app.")
    skills_dir = root / ".threadshare/memory/skills"
    for name, text in {
        "broken": "---\nname: [unclosed\n---\n1. Do it.\n",
        "mismatch": '---\nname: "other"\ndescription: "Other."\n---\n1. Do it.\n',
        "no-description": '---\nname: "no-description"\n---\n1. Do it.\n',
        "leaky": '---\nname: "leaky"\ndescription: "Leaky."\n---\n1. Open /home/alice/x.\n',
    }.items():
        (skills_dir / name).mkdir()
        (skills_dir / name / "SKILL.md").write_text(text)

    contexts = recall_contexts(root, "deploy")

    skills, memory = contexts["skillContext"], contexts["memoryContext"]
    assert [s["name"] for s in skills["skills"]] == ["deploy"]
    assert skills["coverage"] == "partial" and "coverage" not in memory
    assert [(d["code"], d["file"], d["line"], d["field"]) for d in skills["leftOut"]] == [
        ("format.unterminated-json", ".threadshare/memory/skills/broken/SKILL.md", 2, "name"),
        ("path.home-absolute", ".threadshare/memory/skills/leaky/SKILL.md", 5, None),
        ("slug.name-mismatch", ".threadshare/memory/skills/mismatch/SKILL.md", 2, "name"),
        (
            "format.missing-field",
            ".threadshare/memory/skills/no-description/SKILL.md",
            1,
            "description",
        ),
    ]
    assert skills["leftOut"][2]["why"] == "name 'other' does not match the directory 'mismatch'"
    assert "/home/alice" not in str(skills["leftOut"])  # the lint gate's message is scrubbed
    with pytest.raises(errors.TeamloreError) as refused:
        read_team_memory(root)  # what staging binds: never a partial view
    assert refused.value.error is errors.MEMORY_FILE_INVALID


def test_recall_leaves_out_a_skill_in_a_badly_named_directory(tmp_path: Path) -> None:
    root = tree(tmp_path)
    add_skill(root, "Release_Check", "Check a release.")

    skills = recall_contexts(root, "release")["skillContext"]

    assert skills["skills"] == [] and skills["coverage"] == "partial"
    (left_out,) = skills["leftOut"]
    assert left_out["code"] == "slug.invalid"
    assert left_out["file"] == ".threadshare/memory/skills/Release_Check/SKILL.md"
    assert left_out["why"].startswith("the Skill directory name must be lowercase")


def test_thousands_of_skills_left_out_are_named_fifty_at_most_and_counted(
    tmp_path: Path,
) -> None:
    """`notReturned` named every Skill left out: thousands of them alone passed the 128 KiB the
    context keeps to. It names the first 50 in rank order; `total` - `returned` counts them."""
    root = tree(tmp_path)
    for i in range(120):
        add_skill(root, f"chore-{i:03d}", "Routine work.")
    context = skill_context(read_team_memory(root), "release")
    assert context["total"] - context["returned"] == 100
    assert context["notReturned"] == [f"chore-{i:03d}" for i in range(20, 70)]
