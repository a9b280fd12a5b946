"""What promotion puts in place of a local path shows on GitHub as written and lints clean.

The placeholders were `<local-path>`, `<session-id>`, …: raw HTML to a Markdown renderer, so
GitHub dropped them (`see <local-path> and <local-path>` read `see  and `) and teamlore's own
`memory lint` warned `format.raw-html` about text teamlore wrote. They are braces now
(`{local-path}`), text in prose and in code alike. An entry an older teamlore wrote keeps its
`<local-path>`: lint still warns about it, and no secret rule mistakes either form for a value.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_review import Flow, candidate, request_for

from teamlore.core.secrets import (
    LOCAL_PATH_PLACEHOLDER,
    PROVIDER_PATH_PLACEHOLDER,
    SESSION_FILE_PLACEHOLDER,
    SESSION_ID_PLACEHOLDER,
    sanitize_text,
)
from teamlore.memory.store.lint import lint_text

PLACEHOLDERS = (
    LOCAL_PATH_PLACEHOLDER,
    PROVIDER_PATH_PLACEHOLDER,
    SESSION_ID_PLACEHOLDER,
    SESSION_FILE_PLACEHOLDER,
)
LEGACY = ("<local-path>", "<provider-local-path>", "<session-id>", "<session-file>")
HOME_PATH = "/ho" + "me/erin/shop/app.js"  # another machine's home
WINDOWS_PATH = "C:\\Us" + "ers\\erin\\shop\\app.js"
DRAFT = (
    f"Serve app.js over http, not file:// (see {HOME_PATH} and {WINDOWS_PATH}), or CORS blocks it."
)


def as_github_shows(markdown: str) -> tuple[str, list[str]]:
    """The text a reader sees of `markdown` and the raw HTML GitHub's sanitizer drops: parsed as
    CommonMark with HTML on, as GitHub parses it; an unknown tag (`<local-path>`) is dropped."""
    from markdown_it import MarkdownIt

    shown: list[str] = []
    dropped: list[str] = []
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.type == "html_block":
            dropped.append(token.content)
        elif token.type in ("fence", "code_block"):
            shown.append(token.content)
        for child in token.children or []:
            if child.type == "html_inline":
                dropped.append(child.content)
            elif child.type in ("text", "code_inline"):
                shown.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                shown.append("\n")
    return "".join(shown), dropped


def test_a_promoted_entry_shows_its_placeholders_on_github_and_lints_clean(
    tmp_path: Path, home: Path
) -> None:
    flow = Flow(tmp_path, home)
    (cid,) = flow.quarantine([candidate(DRAFT, [(DRAFT, [flow.turn_ev(1)])])])
    prepared = flow.op("memory.prepare", request_for(flow.item(cid)))
    promoted = flow.op(
        "memory.promote", {"planId": prepared["planId"], "planDigest": prepared["planDigest"]}
    )
    assert promoted["status"] == "applied", promoted
    (file,) = prepared["files"]
    written = (flow.repo / file["targetPath"]).read_text(encoding="utf-8")
    body = written.split("---\n", 2)[2]
    seen = f"(see {LOCAL_PATH_PLACEHOLDER} and {LOCAL_PATH_PLACEHOLDER})"
    assert seen in body
    assert "erin" not in written
    # GitHub drops nothing of it, and a reader sees the placeholders where the paths were
    shown, dropped = as_github_shows(body)
    assert dropped == []
    assert seen in shown
    # teamlore's own lint of the tree does not warn about text teamlore wrote
    report = flow.op("memory.lint", {})
    assert file["targetPath"] in report["files"]
    assert [f for f in report["findings"] if f["rule"] == "format.raw-html"] == []
    assert [f["rule"] for f in report["findings"] if f["file"] == file["targetPath"]] == []


@pytest.mark.parametrize("placeholder", PLACEHOLDERS)
def test_a_placeholder_is_text_in_prose_and_in_code(placeholder: str) -> None:
    for markdown in (
        f"see {placeholder} first",
        f"run `cat {placeholder}` first",
        f"```sh\ncat {placeholder}\n```",
        f"    cat {placeholder}",
    ):
        shown, dropped = as_github_shows(markdown)
        assert dropped == [] and placeholder in shown, markdown
        assert [f.rule for f in lint_text(markdown, path="x.md")] == []


@pytest.mark.parametrize("placeholder", PLACEHOLDERS + LEGACY)
@pytest.mark.parametrize(
    "template",
    [
        "password: {p}",
        "the staging password is {p}",
        'DB_PASSWORD="{p}"',
        "token={p}",
        "clone https://deploy:{p}@git.example.com/shop.git",
    ],
)
def test_no_secret_rule_takes_a_placeholder_for_a_value(template: str, placeholder: str) -> None:
    """`<local-path>` passed the secret rules as a placeholder; `{local-path}` must too, or a
    sanitized text that says where a password file is would block its own promotion."""
    text = template.replace("{p}", placeholder)
    blocking = [f.rule for f in lint_text(text, path="x") if f.severity == "block"]
    assert blocking == [], text
    assert sanitize_text(text) == text  # already sanitized, in either form


@pytest.mark.parametrize(
    "value",
    [
        "{Zq8Lr2VwPn5TyKc0MbXa7Hd}",
        "{qZ7LrVwPnTyKcMbXaHdWs}",
        "{qwhxkzjvbnmplrtysd}",
        "{QWHXKZJVBNMPLRT}",
    ],
)
def test_a_secret_in_braces_still_blocks(value: str) -> None:
    """Only a name in braces whose words read as words is a placeholder: random letters in
    braces, in one case or mixed, are a value."""
    rules = [f.rule for f in lint_text(f'DB_PASSWORD="{value}"', path="x")]
    assert "secret.assignment" in rules
    assert lint_text(f"token: {value}", path="x"), value
    url = f"postgres://user:{value}@db/x"
    assert "secret.url-credentials" in [f.rule for f in lint_text(url, path="x")]


@pytest.mark.parametrize("name", ["{API_TOKEN}", "{db-password}", "{SECRET_KEY}", "{token}"])
def test_a_name_in_braces_is_a_placeholder(name: str) -> None:
    assert [f.rule for f in lint_text(f'DB_PASSWORD="{name}"', path="x")] == []


def test_an_older_entry_keeps_its_raw_html_warning() -> None:
    """An entry an older teamlore wrote is left as it is; lint keeps telling the team."""
    rules = [f.rule for f in lint_text(f"see {LEGACY[0]} first", path="x.md")]
    assert rules == ["format.raw-html"]
