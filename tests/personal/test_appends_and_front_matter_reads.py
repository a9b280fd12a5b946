"""A section appended to a file a person edited by hand starts after exactly one blank line,
the bytes before it untouched; and what readers get of a file with YAML front matter: the
memory without the file's metadata, a file holding only front matter being empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from teamlore.personal import documents, reader
from teamlore.personal.documents import PutSection

TOKEN = "ghp_" + "R8a2Kd9sLq0ZxYw3Vb7Nc1Tm5Pe4Ju6Hf2Gi"  # the shape of one, not a real token
NEW = "## Editor\nUses neovim.\n\n"


def _appended(text: str) -> str:
    document = documents.parse_document("preferences", text.encode())
    return documents.apply_operations(document, [PutSection(None, "Editor", "Uses neovim.")]).text()


@pytest.mark.parametrize(
    "before",
    [
        "# Preferences\n\n## Tools\n- fish\n- uv",  # a list item, no line end
        "# Preferences\n\n## Tools\nI use fish.\n",  # a paragraph's line end, no blank line
        "# Preferences\n\n## Tools\n<details>\nfish\n</details>\n",  # an HTML block
        "# Preferences\n\n## Tools\nI use fish.\n   ",  # a line of spaces is blank already
        "# Preferences\n",  # only the title
        "# Preferences",
    ],
    ids=["list-item", "paragraph", "html-block", "spaces", "title", "title-no-line-end"],
)
def test_an_appended_section_follows_one_blank_line_and_the_text_before_it_is_kept(
    before: str,
) -> None:
    after = _appended(before)

    assert after.startswith(before) and after.endswith(NEW)
    separator = after[len(before) : -len(NEW)]
    lines = (before + separator).split("\n")
    assert lines[-1] == "" and not lines[-2].strip() and lines[-3].strip(), repr(after)


@pytest.mark.parametrize(
    "before",
    ["# Preferences\n\n## Tools\nI use fish.\n\n", "# Preferences\n\n", "# Preferences\n\n\n"],
)
def test_a_file_that_ends_with_a_blank_line_gets_the_new_section_right_after_it(
    before: str,
) -> None:
    assert _appended(before) == before + NEW


def test_a_section_put_in_place_keeps_the_layout_of_the_sections_around_it() -> None:
    text = "# Preferences\n\n## Tools\nfish\n## Drinks\nTea.\n## Pets\nQuillon."
    document = documents.parse_document("preferences", text.encode())
    updated = documents.apply_operations(document, [PutSection("s2", "Drinks", "Coffee.")])
    assert (
        updated.text() == "# Preferences\n\n## Tools\nfish\n## Drinks\nCoffee.\n\n## Pets\nQuillon."
    )


def _write(home: Path, name: str, text: str) -> None:
    (home / "personal").mkdir(exist_ok=True)
    (home / "personal" / name).write_text(text, encoding="utf-8")


def test_readers_get_the_memory_without_the_files_front_matter(tmp_path: Path) -> None:
    front_matter = f"---\ntitle: Me\ntoken: {TOKEN}\n---\n\n"
    _write(tmp_path, "profile.md", front_matter + f"# Profile\n\n## Work\nRust.\nkey {TOKEN}\n")

    view = reader.read_memory(tmp_path, ["global"])

    [profile, preferences] = view.documents
    assert profile.content == "# Profile\n\n## Work\nRust.\nkey …[40 chars]\n"
    assert profile.front_matter and not preferences.front_matter
    # the line in the file, front matter counted; the secret in the front matter is not read
    assert [(m.file, m.line) for m in profile.masked] == [("profile.md", 10)]
    assert "title: Me" not in reader.render_memory(view)
    assert view.to_json()["documents"][0]["frontMatter"] is True


@pytest.mark.parametrize(
    "text",
    ["---\ntitle: Me\n---\n", "---\ntitle: Me\n---\n\n# Profile\n\n", "---\na: b\n...\n# Profile"],
)
def test_a_file_holding_only_front_matter_is_empty(tmp_path: Path, text: str) -> None:
    _write(tmp_path, "profile.md", text)

    view = reader.read_memory(tmp_path, ["global"])

    assert view.empty and view.documents[0].empty
    assert "no stored content for context(s): global" in reader.render_memory(view)
