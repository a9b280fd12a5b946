"""The page's text filters: highlighting escapes every piece of text and adds only <mark>."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from teamlore.ui.render import candidate_title, diff_lines, highlight, visible


def test_shared_words_and_cjk_pairs_are_marked_and_markup_is_escaped() -> None:
    marked = highlight("The release <script>job</script> 数据库迁移超时", "release job 迁移")
    assert str(marked) == (
        "The <mark>release</mark> &lt;script&gt;<mark>job</mark>&lt;/script&gt; "
        "数据库<mark>迁移</mark>超时"
    )


@given(st.text(max_size=200), st.text(max_size=60))
def test_highlight_never_lets_markup_through(text: str, against: str) -> None:
    out = str(highlight(text, against))
    # hidden characters show as escapes: test_candidates_as_the_cli_shows_them.py
    assert out.replace("<mark>", "").replace("</mark>", "") == str(visible(text))


def test_diff_lines_are_classified() -> None:
    diff = "--- /dev/null\n+++ b/x.md\n@@ -0,0 +1 @@\n+added\n-removed\n context"
    assert [kind for kind, _ in diff_lines(diff)] == ["file", "file", "hunk", "add", "del", "ctx"]


def test_a_skill_is_titled_by_name_and_description() -> None:
    item = {"content": "## body", "skill": {"name": "release", "description": "Cut a release."}}
    assert candidate_title(item) == "release: Cut a release."
    assert candidate_title({"content": "first line\nsecond"}) == "first line"


def test_a_removed_front_matter_line_inside_a_hunk_is_a_removed_line_not_a_file_name() -> None:
    diff = (
        "--- a/x.md\n+++ b/x.md\n@@ -1,2 +1 @@\n----\n-old\n\\ No newline at end of file\n"
        "+new\n--- a/y.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n"
    )
    assert [kind for kind, _ in diff_lines(diff)] == [
        *("file", "file", "hunk", "del", "del", "meta", "add"),
        *("file", "file", "hunk", "del"),
    ]


def test_a_mark_does_not_change_what_counts_as_hidden() -> None:
    """A joiner between two letters is part of the word, not hidden: cutting the text at a
    mark took its left neighbour away and showed it as `\\u200d` (a property test's case)."""
    text = "äää\u200dé"
    assert str(highlight(text, "äää")) == "<mark>äää</mark>\u200dé"
    assert "hidden-char" in str(highlight("Ask\u202e ops first", "ops"))
