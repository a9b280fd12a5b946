"""The apply_patch envelope parser: file operations out of patch text, never an exception."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from teamlore.sessions.providers.apply_patch import (
    FileOperation,
    find_patches,
    parse_apply_patch,
    paths_written_in,
)

FULL_PATCH = """*** Begin Patch
*** Add File: docs/new.md
+# New
+text
*** Update File: src/app.py
@@ def main():
-    old()
+    new()
*** Update File: src/old_name.py
*** Move to: src/new_name.py
@@
-a
+b
*** End of File
*** Delete File: build/junk.txt
*** End Patch
"""


def test_add_update_delete_and_move_are_all_recognised() -> None:
    patch = parse_apply_patch(FULL_PATCH)
    assert patch.complete
    assert patch.problems == ()
    assert patch.added == ["docs/new.md"]
    assert patch.updated == ["src/app.py", "src/old_name.py"]
    assert patch.deleted == ["build/junk.txt"]
    assert patch.moved == [("src/old_name.py", "src/new_name.py")]
    assert patch.paths_written() == [
        "docs/new.md",
        "src/app.py",
        "src/old_name.py",
        "src/new_name.py",
        "build/junk.txt",
    ]


def test_crlf_line_ends_give_the_same_operations() -> None:
    lf = parse_apply_patch(FULL_PATCH)
    crlf = parse_apply_patch(FULL_PATCH.replace("\n", "\r\n"))
    assert crlf == lf


def test_windows_paths_and_non_ascii_names_are_kept_verbatim() -> None:
    text = (
        "*** Begin Patch\n*** Update File: C:\\Users\\DEV\\proj\\src\\main.ts\n@@\n-a\n+b\n"
        "*** Add File: docs/заметки.md\n+привет\n*** End Patch"
    )
    assert parse_apply_patch(text).paths_written() == [
        "C:\\Users\\DEV\\proj\\src\\main.ts",
        "docs/заметки.md",
    ]


def test_body_lines_that_look_like_headers_are_not_headers() -> None:
    text = (
        "*** Begin Patch\n*** Update File: notes.md\n@@\n"
        "+*** Add File: not/a/file.txt\n"
        " *** Delete File: context/line.txt\n"
        "*** End Patch\n"
    )
    assert parse_apply_patch(text).operations == (FileOperation("update", "notes.md"),)


def test_heredoc_wrapper_in_a_shell_command_is_skipped() -> None:
    command = (
        "apply_patch << 'PATCH'\n*** Begin Patch\n*** Update File: docs/fs-scanner.md\n@@\n-x\n+y\n"
        "*** End Patch\nPATCH"
    )
    assert paths_written_in(command) == ["docs/fs-scanner.md"]


def test_patch_in_an_escaped_javascript_string_literal_is_found() -> None:
    body = "*** Begin Patch\n*** Add File: Cargo.toml\n+[workspace]\n*** End Patch"
    source = f"const patch = {json.dumps(body)};\ntext(await tools.apply_patch(patch));"
    patches = find_patches(source)
    assert [p.added for p in patches] == [["Cargo.toml"]]
    assert patches[0].complete


def test_text_without_a_patch_finds_nothing() -> None:
    assert find_patches("ls -la && cat README.md") == []
    assert paths_written_in("echo '*** Update File: x' but no envelope") == []


def test_malformed_envelopes_report_problems_instead_of_raising() -> None:
    missing_end = parse_apply_patch("*** Begin Patch\n*** Add File: a.txt\n+x\n")
    assert missing_end.added == ["a.txt"]
    assert not missing_end.complete
    assert "missing-end" in missing_end.problems

    missing_begin = parse_apply_patch("*** Update File: b.txt\n@@\n-x\n+y\n*** End Patch")
    assert missing_begin.updated == ["b.txt"]
    assert "missing-begin" in missing_begin.problems

    odd = parse_apply_patch(
        "*** Begin Patch\n*** Move to: nowhere.txt\n*** Add File: \n*** Frobnicate: z\n"
        "stray line\n*** End Patch"
    )
    assert odd.operations == ()
    assert {"misplaced-move", "empty-path", "unknown-header", "content-outside-file"} <= set(
        odd.problems
    )

    assert parse_apply_patch("").operations == ()


def test_a_second_move_for_the_same_file_is_a_problem_not_a_new_target() -> None:
    patch = parse_apply_patch(
        "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** Move to: c\n*** End Patch"
    )
    assert patch.moved == [("a", "b")]
    assert "misplaced-move" in patch.problems


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parsing_arbitrary_text_never_raises(text: str) -> None:
    patch = parse_apply_patch(text)
    assert isinstance(patch.paths_written(), list)
    for found in find_patches(text):
        assert isinstance(found.operations, tuple)


_markers = st.sampled_from(
    [
        "*** Begin Patch",
        "*** End Patch",
        "*** Add File: a.txt",
        "*** Update File: b.txt",
        "*** Delete File: c.txt",
        "*** Move to: d.txt",
        "*** End of File",
        "@@",
        "+x",
        "-y",
        " z",
        '"*** Begin Patch\\n*** Add File: q\\n"',
        "\r",
        "",
    ]
)

# lines only the header reader of `paths_written_in` treats apart: indented or trailing End
# markers, bare stars, a header without a path, a literal patch after other text on its line
_more_markers = st.sampled_from(
    [
        "  *** End Patch ",
        "x *** End Patch",
        "*",
        "***",
        "*** Add File: ",
        'x = "*** Begin Patch\\n*** Update File: r\\n*** End Patch"; "',
        "\\",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_markers, st.text(max_size=20)), max_size=30))
def test_parsing_shuffled_patch_fragments_never_raises(fragments: list[str]) -> None:
    text = "\n".join(fragments)
    parse_apply_patch(text)
    paths_written_in(text)


def _paths_of_every_patch(text: str) -> list[str]:
    return list(dict.fromkeys(p for patch in find_patches(text) for p in patch.paths_written()))


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.one_of(_markers, _more_markers, st.text(max_size=20)), max_size=30),
    st.sampled_from(["\n", "\r\n"]),
)
def test_paths_written_in_reads_headers_only_and_finds_what_the_full_parse_finds(
    fragments: list[str], newline: str
) -> None:
    text = newline.join(fragments)
    assert paths_written_in(text) == _paths_of_every_patch(text)


def test_an_indented_end_line_ends_the_patch_for_the_header_reader_too() -> None:
    text = "*** Begin Patch\n*** Add File: a.txt\n+x\n  *** End Patch \n*** Add File: b.txt\n"
    assert paths_written_in(text) == ["a.txt"] == _paths_of_every_patch(text)


_path = (
    st.text(
        alphabet=st.characters(
            blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters="*"
        ),
        min_size=1,
        max_size=30,
    )
    .map(str.strip)
    .filter(bool)
)
_operation = st.one_of(
    st.builds(FileOperation, st.just("add"), _path),
    st.builds(FileOperation, st.just("delete"), _path),
    st.builds(FileOperation, st.just("update"), _path, st.one_of(st.none(), _path)),
)


def _render(operations: list[FileOperation], newline: str) -> str:
    lines = ["*** Begin Patch"]
    for op in operations:
        if op.kind == "add":
            lines += [f"*** Add File: {op.path}", "+content"]
        elif op.kind == "delete":
            lines.append(f"*** Delete File: {op.path}")
        else:
            lines.append(f"*** Update File: {op.path}")
            if op.move_to is not None:
                lines.append(f"*** Move to: {op.move_to}")
            lines += ["@@", "-old", "+new"]
    lines.append("*** End Patch")
    return newline.join(lines)


@settings(max_examples=200, deadline=None)
@given(st.lists(_operation, max_size=8), st.sampled_from(["\n", "\r\n"]))
def test_rendered_operations_parse_back_exactly(
    operations: list[FileOperation], newline: str
) -> None:
    patch = parse_apply_patch(_render(operations, newline))
    assert patch.complete
    assert list(patch.operations) == operations
