"""`secret.prose` reads one line of prose: `/etc/passwd` and the `passwd` command are not a
password written out, and a credential word at a line's end is never joined with the next line
(`scene: ../../../etc/passwd` then `occurred: []`) — while a password written out still blocks.
An entry's `scene` names a scene as `scenes/<name>.md` does (`slug.scene-name`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import SHARED_FIXTURES, entry_file, git, teamlore_cli, writable_copy
from teamlore.core.secrets import scan_content
from teamlore.memory.store import layout
from teamlore.memory.store.lint import lint_text, lint_tree

SHARED_TREE = SHARED_FIXTURES / "threadshare-memory"

# templates, not secrets: `{{}}` is deleted (as in data/lint_corpus.jsonl)
PATHS_AND_COMMANDS = [
    "Mount /etc/passwd read-only in the sandbox.",
    "The container copies /etc/passwd verbatim-ish into the image.",
    "Bind-mount etc/passwd read-only; never chmod it.",
    "Never edit ..\\etc\\passwd by-hand on the share.",
    "Run `passwd deploy-bot` to rotate the service login.",
    "sudo passwd alice-ops resets her login; she picks a new one.",
    "passwd --stdin reads from a pipe on RHEL only.",
    "pwd --physical-x is not a flag; `pwd -P` is.",
    "the pass{{}}word\nhunter2-Zq8 is the next line's text",
    "the pass{{}}word is\nhunter2-Zq8",
    "the pass{{}}word is\r\nhunter2-Zq8",
    "reset the pass{{}}word for\nthe admin account-x via the portal",
]
WRITTEN_OUT = [
    "the pass{{}}word is hunter2-Zq8",
    "pass{{}}wd: S3cr3t!x",
    "PASS{{}}WD: S3cr3t!x",
    "pw=Zx9Qw8Lm7Kp",
    "pw: S3cr3t!x",
    "login with user admin and pass{{}}word Spring2025Rocks",
    "the pass{{}}wd for root is S3cr3t!x",
    "pass{{}}wd for root hunter2-Zq8",
    "config.pass{{}}word is hunter2-Zq8",
    "/etc/pass{{}}wd: S3cr3t!x",
    "The VPN pass{{}} phrase is: purple monkey dishwasher lamp",
    "the pass{{}}word is Sha256-Zq8x",
    # a rotation, and a qualifier in brackets before the colon
    "The staging pass{{}}word was changed to Zh8kP2qLm9vX",
    "Set the pass{{}}word to Zh8kP2qLm9vX",
    "the pass{{}}word has been reset to Zh8kP2qLm9vX",
    "pass{{}}word updated to Zh8kP2qLm9vX",
    "the pass{{}}word is set to Zh8kP2qLm9vX",
    "The pass{{}}word (staging): Zh8kP2qLm9vX",
]
# what a password is hashed or encoded with, a standard or a version names no password
ALGORITHMS_AND_VERSIONS = [
    "the pass{{}}word is SHA-256 hashed",
    "The pass{{}}word is bcrypt.",
    "the pass{{}}word is base64 encoded",
    "the pass{{}}word is argon2id, never md5",
    "the pass{{}}word is HMAC-SHA256 signed",
    "the pass{{}}word is v2.1.0 or later",
    "the pass{{}}word was changed to SHA-256 hashing",
    # a rotation told, not its value
    "set the pass{{}}word to something long",
    "the pass{{}}word was changed to the new one",
    "The pass{{}}word (staging): see 1Password",
]


def _text(template: str) -> str:
    return template.replace("{{}}", "")


def entry(entry_id: str, body: str, scene: str = "null") -> str:
    return entry_file(entry_id, body).replace("scene: null\n", f"scene: {scene}\n")


@pytest.mark.parametrize("template", PATHS_AND_COMMANDS)
def test_a_path_a_command_or_a_value_on_another_line_is_no_password(template: str) -> None:
    text = _text(template)
    assert [h.rule for h in scan_content(text) if h.rule.startswith("secret.")] == []
    path = ".threadshare/memory/entries/note.md"
    findings = lint_text(entry("note", text), path=path, kind="entry")
    assert [f.rule for f in findings if f.severity == "block"] == []


@pytest.mark.parametrize("template", WRITTEN_OUT)
def test_a_password_written_out_on_its_line_still_blocks(template: str) -> None:
    text = _text(template)
    assert [h.severity for h in scan_content(text)] == ["block"], text
    findings = lint_text(entry("note", text), path=".threadshare/memory/entries/note.md")
    assert [(f.severity, f.line) for f in findings] == [("block", 16)]


@pytest.mark.parametrize("template", ALGORITHMS_AND_VERSIONS)
def test_an_algorithm_an_encoding_or_a_version_is_no_password(template: str) -> None:
    text = _text(template)
    assert [h.rule for h in scan_content(text) if h.severity == "block"] == [], text


def test_a_rotation_masks_exactly_its_value() -> None:
    for template in WRITTEN_OUT[-6:]:
        text = _text(template)
        [hit] = scan_content(text)
        assert (hit.rule, text[hit.start : hit.end]) == ("secret.prose", "Zh8kP2qLm9vX"), text


def test_the_prose_rule_itself_finds_what_it_must() -> None:
    # each of these is reported by `secret.prose`, no other rule standing in for it
    for template in WRITTEN_OUT[:1] + WRITTEN_OUT[4:9]:
        assert [h.rule for h in scan_content(_text(template))] == ["secret.prose"], template


def test_a_scene_path_ending_in_passwd_is_not_joined_with_the_next_field() -> None:
    text = entry("note", "A lesson.", scene="../../../etc/passwd")
    findings = lint_text(text, path=".threadshare/memory/entries/note.md", kind="entry")
    assert [(f.rule, f.line) for f in findings] == [("slug.scene-name", 11)]


@pytest.mark.parametrize(
    "scene",
    [
        "../../../../tmp/evil",
        "/abs/scene",
        '"release readiness"',
        '"a:b"',
        ".x",
        "-x",
        # no scene file is named so: scene names are lowercase, `-` between words
        "Release_Notes",
        "Release",
    ],
)
def test_an_entry_whose_scene_is_not_a_scene_name_blocks(scene: str) -> None:
    text = entry("note", "A lesson.", scene=scene)
    findings = lint_text(text, path=".threadshare/memory/entries/note.md", kind="entry")
    [finding] = [f for f in findings if f.severity == "block"]
    assert (finding.rule, finding.line) == ("slug.scene-name", 11)
    assert "evil" not in finding.message and "abs" not in finding.message


def test_an_entry_whose_scene_holds_a_line_break_blocks() -> None:
    text = entry("note", "A lesson.", scene='"a\\nb: injected"')
    [finding] = lint_text(text, path=".threadshare/memory/entries/note.md", kind="entry")
    assert (finding.rule, finding.severity, finding.line) == ("format.invalid-field", "block", 11)


@pytest.mark.parametrize("scene", ["release-readiness", "鉴权模块维护", "null"])
def test_an_entry_naming_a_scene_passes(scene: str) -> None:
    text = entry("note", "A lesson.", scene=scene)
    assert lint_text(text, path=".threadshare/memory/entries/note.md", kind="entry") == []


def _fixture_tree(root: Path) -> Path:
    if not SHARED_TREE.is_dir():
        pytest.skip("../shared/fixtures is not available in this checkout")
    memory = root / layout.MEMORY_ROOT
    writable_copy(SHARED_TREE, memory)
    (memory / "SOURCE.md").unlink(missing_ok=True)
    return memory


def test_the_fixture_tree_with_passwd_mentions_lints_clean_and_bad_scenes_block(
    tmp_path: Path,
) -> None:
    memory = _fixture_tree(tmp_path)
    assert lint_tree(tmp_path).findings == []  # every real scene value passes
    entries = memory / "entries"
    (entries / "mount.md").write_text(
        entry("mount", PATHS_AND_COMMANDS[0], scene="release-readiness"), encoding="utf-8"
    )
    (entries / "path.md").write_text(
        entry("path", "A lesson.", scene="../../../etc/passwd"), encoding="utf-8"
    )
    (entries / "abs.md").write_text(entry("abs", "A lesson.", scene="/abs/scene"), encoding="utf-8")
    findings = lint_tree(tmp_path).findings
    assert sorted((f.file.rsplit("/", 1)[-1], f.rule) for f in findings) == [
        ("abs.md", "slug.scene-name"),
        ("path.md", "slug.scene-name"),
    ]


def test_memory_lint_on_a_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    memory = _fixture_tree(repo)
    (memory / "entries" / "mount.md").write_text(
        entry("mount", PATHS_AND_COMMANDS[0], scene="../../../etc/passwd"), encoding="utf-8"
    )
    done = teamlore_cli("memory", "lint", "--format", "json", cwd=repo)
    assert done.returncode != 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert [(f["rule"], f["line"]) for f in report["findings"]] == [("slug.scene-name", 11)]


@pytest.mark.parametrize("text", ["password is Sha256!!", "the password is hmac-sha256!"])
def test_a_password_named_like_an_algorithm_with_a_mark_of_its_own_is_a_secret(text: str) -> None:
    """The algorithm exclusion let `!`, `?` and `)` follow the name: `Sha256!!` passed (a
    review's finding); a sentence's own `.`, `,` or `;` still may (`password is bcrypt.`)."""
    assert "secret.prose" in [h.rule for h in scan_content(text) if h.severity == "block"]
