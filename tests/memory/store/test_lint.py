"""Lint: secrets, session ids and local paths block; evidence and look-alikes pass.

The corpus (data/lint_corpus.jsonl) stores templates, not secrets: `{{}}` is deleted and
`{{kind:arg}}` is filled from a seeded RNG here, so the repository never holds anything that looks
like a live credential. `pytest -s -k corpus` prints precision and recall.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
import re
import string
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from support import SHARED_FIXTURES
from teamlore.core.errors import MEMORY_NOT_INITIALIZED, UNSAFE_PATH, TeamloreError
from teamlore.core.secrets import (
    LOCAL_PATH_PLACEHOLDER,
    PROVIDER_PATH_PLACEHOLDER,
    SESSION_ID_PLACEHOLDER,
    is_high_entropy_secret,
    redact,
    sanitize_text,
    shannon_entropy,
)
from teamlore.memory.store import layout
from teamlore.memory.store.lint import (
    Finding,
    known_session_id_findings,
    lint_bytes,
    lint_paths,
    lint_text,
    lint_tree,
)

DATA = Path(__file__).parents[1] / "data"
CORPUS = DATA / "lint_corpus.jsonl"
REFERENCE = DATA / "reference"
SHARED_TREE = SHARED_FIXTURES / "threadshare-memory"

ALPHABETS = {
    "b62": string.ascii_letters + string.digits,
    "b64": string.ascii_letters + string.digits + "+/",
    "url64": string.ascii_letters + string.digits + "-_",
    "hex": "0123456789abcdef",
    "HEX": "0123456789ABCDEF",
    "up36": string.ascii_uppercase + string.digits,
    "low36": string.ascii_lowercase + string.digits,
    "dig": string.digits,
}
_PLACEHOLDER = re.compile(r"\{\{([^{}]*)\}\}")


@dataclass
class Case:
    id: str
    expect: str
    rule: str | None
    text: str
    random_parts: list[str]


def _uuid(rng: random.Random, version: int) -> str:
    digits = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    variant = rng.choice("89ab")
    groups = (digits[:8], digits[8:12], f"{version}{digits[13:16]}", f"{variant}{digits[17:20]}")
    return "-".join((*groups, digits[20:]))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _fill(kind: str, arg: str, rng: random.Random) -> tuple[str, bool]:
    """(value, is_random) for one placeholder."""
    if kind == "":
        return "", False
    if kind in ALPHABETS:
        return "".join(rng.choice(ALPHABETS[kind]) for _ in range(int(arg))), True
    if kind == "uuid4":
        return _uuid(rng, 4), True
    if kind == "uuid7":
        return _uuid(rng, 7), True
    if kind == "jwt":
        header = _b64url(b'{"alg":"HS256","typ":"JWT"}')
        payload = _b64url(json.dumps({"sub": rng.randrange(10**9), "iat": 1767225600}).encode())
        signature = "".join(rng.choice(ALPHABETS["url64"]) for _ in range(43))
        return f"{header}.{payload}.{signature}", True
    if kind == "randb64":
        return base64.b64encode(rng.randbytes(int(arg))).decode(), True
    if kind == "randurl64":
        return base64.urlsafe_b64encode(rng.randbytes(int(arg))).decode(), True
    if kind == "b64of":
        return base64.b64encode(arg.encode()).decode(), False
    if kind == "b64urlof":
        return base64.urlsafe_b64encode(arg.encode()).decode(), False
    if kind in ("sha1", "sha256", "md5"):
        return hashlib.new(kind, arg.encode()).hexdigest(), False
    raise ValueError(f"unknown corpus placeholder {kind!r}")


def expand(template: str, seed: str) -> tuple[str, list[str]]:
    rng = random.Random(seed)
    parts: list[str] = []

    def replace(match: re.Match[str]) -> str:
        kind, _, arg = match.group(1).partition(":")
        value, is_random = _fill(kind, arg, rng)
        if is_random and len(value) >= 8:
            parts.append(value)
        return value

    text = template
    while True:
        new = _PLACEHOLDER.sub(replace, text)
        if new == text:
            return text, parts
        text = new


def load_corpus() -> list[Case]:
    cases = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "id" not in row:
            continue
        text, parts = expand(row["text"], row["id"])
        cases.append(Case(row["id"], row["expect"], row.get("rule"), text, parts))
    return cases


def _blocks(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "block"]


# --- the corpus ---------------------------------------------------------------------------------


def test_corpus_recall_is_total_and_no_look_alike_blocks() -> None:
    cases = load_corpus()
    secrets = [c for c in cases if c.expect == "block"]
    look_alikes = [c for c in cases if c.expect == "pass"]
    assert len(secrets) >= 100 and len(look_alikes) >= 100

    missed: list[str] = []
    wrong_rule: list[tuple[str, str, list[str]]] = []
    false_blocks: list[tuple[str, list[tuple[str, str]]]] = []
    leaks: list[tuple[str, str]] = []
    for case in cases:
        findings = lint_text(case.text, path=f"corpus/{case.id}.md", kind="text")
        blocks = _blocks(findings)
        if case.expect == "block":
            if not blocks:
                missed.append(case.id)
            elif case.rule and case.rule not in {f.rule for f in blocks}:
                wrong_rule.append((case.id, case.rule, sorted({f.rule for f in blocks})))
        elif blocks:
            false_blocks.append((case.id, [(f.rule, f.message) for f in blocks]))
        for finding in findings:
            leaks.extend(
                (case.id, part) for part in case.random_parts if part[-12:] in finding.message
            )

    true_positives = len(secrets) - len(missed)
    recall = true_positives / len(secrets)
    precision = true_positives / (true_positives + len(false_blocks))
    print(
        f"\nlint corpus: {len(secrets)} must-block, {len(look_alikes)} look-alikes; "
        f"recall {recall:.4f} ({true_positives}/{len(secrets)}), "
        f"precision {precision:.4f} ({len(false_blocks)} look-alikes blocked), "
        f"rule-specific hits {len(secrets) - len(missed) - len(wrong_rule)}/{len(secrets)}"
    )
    assert missed == []
    assert false_blocks == []
    assert wrong_rule == []
    assert leaks == []


def test_corpus_file_itself_holds_no_secret() -> None:
    """The stored templates are inert: no secret rule fires on the raw corpus file (its local
    paths and session-id shapes are not credentials and may stay literal)."""
    raw = CORPUS.read_text(encoding="utf-8")
    assert "{{}}" in raw
    secret_findings = [
        f for f in lint_text(raw, path="corpus", kind="text") if f.rule.startswith("secret.")
    ]
    assert [f for f in secret_findings if f.severity == "block"] == []


# --- individual rules ---------------------------------------------------------------------------


def test_full_commit_hashes_and_repo_relative_paths_are_never_flagged() -> None:
    text = (
        "Fixed by 7fd2f23a1b04c9e8d2f6a35b7c01d94e8f123456 in routes/api/session.ts; "
        "see src/teamlore/memory/lint.py and .claude/skills/release/SKILL.md."
    )
    assert lint_text(text, path="x.md") == []


def test_findings_carry_rule_severity_file_line_and_redacted_message() -> None:
    token = "gh" + "p_" + "Q7x" * 12
    text = f"line one\nline two has {token}\n"
    [finding] = lint_text(text, path=".threadshare/memory/entries/a.md")
    assert finding.rule == "secret.github-token"
    assert finding.severity == "block"
    assert finding.file == ".threadshare/memory/entries/a.md"
    assert finding.line == 2
    assert token not in finding.message
    assert "ghp_…[40 chars]" in finding.message


def test_redact_never_shows_more_than_a_quarter() -> None:
    assert redact("abcdefgh") == "ab…[8 chars]"
    assert redact("0123456789abcdefghij", keep=10) == "01234…[20 chars]"
    assert redact("secret", keep=0) == "…[6 chars]"


def test_entropy_threshold_is_four_bits_over_twenty_chars() -> None:
    nineteen = "aB3dE5gH7jK9mN1pQ2r"
    assert shannon_entropy(nineteen) >= 4.0
    assert _blocks(lint_text(f"key {nineteen}", path="x")) == []
    assert _blocks(lint_text(f"key {nineteen}Z", path="x"))[0].rule == "secret.high-entropy"


def test_uniform_hex64_warns_but_does_not_block() -> None:
    findings = lint_text("digest " + "0123456789abcdef" * 4, path="x")
    assert [(f.rule, f.severity) for f in findings] == [("secret.long-hex", "warn")]


def test_session_uuid_needs_context_and_any_uuid_version_counts() -> None:
    v7 = "019a93b9-7c1e-7d42-9a3b-0c5d6e7f8a9b"
    assert _blocks(lint_text(f"codex session {v7}", path="x"))[0].rule == (
        "session.provider-session-id"
    )
    far = "x" * 60
    # without session words nearby a UUID only warns (the reviewer decides)
    assert [f.rule for f in lint_text(f"session{far} {v7}", path="x")] == ["session.uuid"]
    assert _blocks(lint_text(f"order {v7} was refunded", path="x")) == []


def test_a_session_id_this_machine_indexed_blocks_even_without_context() -> None:
    known = frozenset({"019a93b9-7c1e-7d42-9a3b-0c5d6e7f8a9b"})
    text = "order 019A93B9-7C1E-7D42-9A3B-0C5D6E7F8A9B was refunded"
    found = known_session_id_findings(text, path="x.md", known=known)
    assert [(f.rule, f.severity, f.line) for f in found] == [
        ("session.known-session-id", "block", 1)
    ]
    assert known_session_id_findings(text, path="x.md", known=frozenset()) == []


def test_local_machine_paths() -> None:
    blocks = _blocks(
        lint_text("wsl /mnt/c/Users/dana/x.py and /private/var/folders/xy/T/a", path="x")
    )
    assert [f.rule for f in blocks] == ["path.home-absolute", "path.home-absolute"]
    warned = lint_text("cache in /tmp/aud/state/index.sqlite3", path="x")
    assert [(f.rule, f.severity) for f in warned] == [("path.local-absolute", "warn")]


def test_warnings_do_not_block() -> None:
    findings = lint_text("mail ops@example.com, host 10.0.0.1:8080, see ~/notes.txt", path="x")
    assert {f.rule for f in findings} == {"pii.email", "net.ip-port", "path.home-relative"}
    assert _blocks(findings) == []


@pytest.mark.parametrize(
    "text",
    [
        "clone git@github.com:pat/app.git",
        "ssh deploy@prod.example.org",
        "rsync -avz dist/ deploy@prod.example.org:/srv/app",
        "https://pat@git.example.com/app.git",
    ],
)
def test_a_login_to_a_host_is_not_warned_as_an_email_address(text: str) -> None:
    # the same rule as personal memory's pii.email (core/secrets/rules.py)
    assert "pii.email" not in {f.rule for f in lint_text(text, path="x")}


def test_a_url_with_a_password_is_not_also_an_email_address() -> None:
    findings = lint_text("postgres://admin:pw@db.internal.example.org/app", path="x")
    assert [f.rule for f in findings] == ["secret.url-credentials"]


def test_placeholder_and_code_reference_assignments_pass() -> None:
    for text in (
        "password = os.environ['DB_PASSWORD']",
        "api_key: <your-api-key>",
        "PASSWORD=${DB_PASSWORD}",
        "token: Optional[str]",
    ):
        assert _blocks(lint_text(text, path="x")) == [], text


# --- documents ----------------------------------------------------------------------------------

ENTRY = (
    "---\n"
    "id: {id}\n"
    "type: work_method\n"
    "status: approved\n"
    "priority: 80\n"
    "confidence: high\n"
    "provenance_strength: direct\n"
    "claim_support: human-confirmed\n"
    'limitations: ["source-local-only"]\n'
    "scope: repo\n"
    "scene: release\n"
    "occurred: []\n"
    'evidence: {{"commits":[],"paths":[]}}\n'
    "superseded_by: null\n"
    "---\n"
    "{body}\n"
)


def scene_text(summary: str, body: str) -> str:
    return (
        "-----META-START-----\ncreated: 2026-08-21\nupdated: 2026-08-21\n"
        f'summary: "{summary}"\nheat: 1\n-----META-END-----\n{body}'
    )


def test_clean_entry_has_no_findings() -> None:
    text = ENTRY.format(id="run-e2e-first", body="Run the mobile e2e suite before merging.")
    assert lint_text(text, path=".threadshare/memory/entries/run-e2e-first.md", kind="entry") == []


def test_entry_format_errors_block_with_their_reason_and_line() -> None:
    text = ENTRY.format(id="run-e2e-first", body="ok").replace("scope: repo", "scope: org")
    [finding] = lint_text(text, path=".threadshare/memory/entries/run-e2e-first.md", kind="entry")
    assert (finding.rule, finding.severity, finding.line) == ("format.invalid-field", "block", 10)
    assert "scope" in finding.message


def test_entry_id_must_match_file_name() -> None:
    text = ENTRY.format(id="run-e2e-first", body="ok")
    [finding] = lint_text(text, path=".threadshare/memory/entries/other.md", kind="entry")
    assert finding.rule == "slug.id-mismatch"


def test_format_error_messages_never_echo_a_secret() -> None:
    token = "AK" + "IA" + "Z7Q4" * 4
    text = ENTRY.format(id=token, body="ok")
    findings = lint_text(text, path=f".threadshare/memory/entries/{token}.md", kind="entry")
    assert {f.rule for f in findings} >= {"slug.invalid", "secret.aws-access-key"}
    assert all(token not in f.message for f in findings)


def test_crlf_and_bom_are_read_but_warned() -> None:
    text = ENTRY.format(id="a", body="ok").replace("\n", "\r\n")
    findings = lint_bytes(
        b"\xef\xbb\xbf" + text.encode(), path=".threadshare/memory/entries/a.md", kind="entry"
    )
    assert {(f.rule, f.severity) for f in findings} == {
        ("format.bom", "warn"),
        ("format.crlf", "warn"),
    }


def test_invalid_utf8_is_a_located_block() -> None:
    data = b"line one\nline two \xff\xfe\n"
    [finding] = lint_bytes(data, path="doctrine.md", kind="doctrine")
    assert (finding.rule, finding.line) == ("format.invalid-utf8", 2)


def test_scene_and_doctrine_capacity_block() -> None:
    scene = scene_text("s", "")
    findings = lint_text(scene + "字" * 1501, path=".threadshare/memory/scenes/s.md", kind="scene")
    assert [f.rule for f in findings] == ["capacity.scene-body"]
    findings = lint_text("规" * 1201, path=".threadshare/memory/doctrine.md", kind="doctrine")
    assert [f.rule for f in findings] == ["capacity.doctrine"]


def test_skill_secret_blocks_like_an_entry() -> None:
    token = "x" + "oxb-" + "1234567890-" + "Ab3dEf5hIj7l"
    text = f'---\nname: "deploy"\ndescription: "Deploy"\n---\nUse {token} to post.\n'
    findings = lint_text(text, path=".threadshare/memory/skills/deploy/SKILL.md", kind="skill")
    assert [f.rule for f in findings] == ["secret.slack-token"]


# --- trees --------------------------------------------------------------------------------------


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_reference_copies_lint_clean(tmp_path: Path) -> None:
    layout.init_tree(tmp_path)
    for source in sorted(REFERENCE.rglob("*")):
        if source.is_file() and source.name != "SOURCE.md":
            relative = source.relative_to(REFERENCE).as_posix()
            _write(tmp_path, f"{layout.MEMORY_ROOT}/{relative}", source.read_text(encoding="utf-8"))
    report = lint_tree(tmp_path)
    assert not report.blocked, report.findings
    assert report.findings == []
    assert len(report.files) == 5


def test_shared_reference_tree_lints_clean(tmp_path: Path) -> None:
    if not SHARED_TREE.is_dir():
        pytest.skip("../shared/fixtures is not available in this checkout")
    worktree = tmp_path / "repo"
    for source in SHARED_TREE.rglob("*"):
        if source.is_file() and source.name != "SOURCE.md":
            _write(
                worktree,
                f"{layout.MEMORY_ROOT}/{source.relative_to(SHARED_TREE).as_posix()}",
                source.read_text(encoding="utf-8"),
            )
    report = lint_tree(worktree)
    assert report.findings == []
    assert len(report.files) == 19


def test_tree_findings_cover_every_document_kind(tmp_path: Path) -> None:
    layout.init_tree(tmp_path)
    home = "/Us" + "ers/alice/app"
    _write(tmp_path, layout.entry_path("good"), ENTRY.format(id="good", body="fine"))
    _write(tmp_path, layout.entry_path("leaky"), ENTRY.format(id="leaky", body=f"see {home}"))
    _write(
        tmp_path,
        layout.scene_path("ops"),
        scene_text("Ops", "## Ops\n- resume session 019a93b9-7c1e-7d42-9a3b-0c5d6e7f8a9b"),
    )
    _write(tmp_path, layout.DOCTRINE_FILE, "Never paste ~/.codex" + "/sessions content.\n")
    _write(
        tmp_path,
        layout.skill_path("deploy"),
        '---\nname: "deploy"\ndescription: "Deploy"\n---\nSteps\n',
    )
    _write(tmp_path, f"{layout.SKILLS_DIR}/Bad_Name/SKILL.md", "x")
    _write(tmp_path, f"{layout.MEMORY_ROOT}/notes.txt", "stray")
    report = lint_tree(tmp_path)
    by_file = {(f.file, f.rule) for f in report.findings}
    assert (layout.entry_path("leaky"), "path.home-absolute") in by_file
    assert (layout.scene_path("ops"), "session.provider-session-id") in by_file
    assert (layout.DOCTRINE_FILE, "path.provider-local") in by_file
    assert (f"{layout.SKILLS_DIR}/Bad_Name", "slug.invalid") in by_file
    assert (f"{layout.MEMORY_ROOT}/notes.txt", "tree.unexpected-file") in by_file
    [stray] = [f for f in report.findings if f.rule == "tree.unexpected-file"]
    # what to do with it, as the status line that points here promises
    assert stray.message.endswith("move it out of the memory folder or delete it")
    assert not any(f.file == layout.entry_path("good") for f in report.findings)
    assert not any(f.file == layout.skill_path("deploy") for f in report.findings)
    assert report.blocked


def test_tree_symlinks_block_and_are_not_followed(tmp_path: Path) -> None:
    layout.init_tree(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text("gh" + "p_" + "A1b2" * 9)
    os.symlink(outside, tmp_path / layout.ENTRIES_DIR / "link.md")
    report = lint_tree(tmp_path)
    assert [(f.rule, f.file) for f in report.findings] == [
        ("tree.symlink", f"{layout.ENTRIES_DIR}/link.md")
    ]


def test_tree_names_that_are_not_utf8_block_and_are_shown_escaped(tmp_path: Path) -> None:
    layout.init_tree(tmp_path)
    entries = os.fsencode(tmp_path / layout.ENTRIES_DIR)
    with open(os.path.join(entries, b"caf\xe9.md"), "wb") as handle:
        handle.write(ENTRY.format(id="cafe", body="x").encode())
    report = lint_tree(tmp_path)
    shown = f"{layout.ENTRIES_DIR}/caf\\xe9.md"
    assert ("tree.name-not-utf8", "block", shown) in {
        (f.rule, f.severity, f.file) for f in report.findings
    }
    assert shown in report.files
    report.model_dump_json()  # every file name encodes to UTF-8


def test_a_folder_given_to_lint_stands_for_the_markdown_files_under_it(tmp_path: Path) -> None:
    layout.init_tree(tmp_path)
    _write(tmp_path, layout.entry_path("good"), ENTRY.format(id="good", body="Fine."))
    _write(tmp_path, layout.entry_path("leaky"), ENTRY.format(id="leaky", body="/home/dana/x"))
    _write(tmp_path, f"{layout.ENTRIES_DIR}/.draft.md", "/home/dana/y")  # a dot-file: skipped
    report = lint_paths(tmp_path, [tmp_path / layout.ENTRIES_DIR])
    assert report.files == [layout.entry_path("good"), layout.entry_path("leaky")]
    assert [(f.rule, f.file) for f in report.blocking] == [
        ("path.home-absolute", layout.entry_path("leaky"))
    ]


def test_lint_refuses_a_path_that_is_missing_or_not_a_regular_file(tmp_path: Path) -> None:
    for path, why in [(tmp_path / "gone.md", "no such file"), (Path(os.devnull), "not a regular")]:
        with pytest.raises(TeamloreError) as refused:
            lint_paths(tmp_path, [path])
        assert refused.value.code == "INVALID_ARGUMENT" and why in refused.value.message


def test_lint_of_a_consolidation_record_allows_what_the_tree_lint_allows(tmp_path: Path) -> None:
    """`memory lint .threadshare/memory/consolidated.json` (a pre-commit hook on changed files)
    blocked a record of ~790 entries at the Markdown files' 64 KiB: the tree lint allows it."""
    from teamlore.memory.store import documents as docs

    layout.init_tree(tmp_path)
    covered = {f"entry-{n:04d}": (n + 1, f"{n:016x}") for n in range(2000)}
    record = docs.dump_consolidated(covered)
    assert len(record) > docs.MAX_FILE_BYTES
    _write(tmp_path, layout.CONSOLIDATED_FILE, record.decode())
    assert lint_paths(tmp_path, [tmp_path / layout.CONSOLIDATED_FILE]).findings == []
    assert not [f for f in lint_tree(tmp_path).findings if f.file == layout.CONSOLIDATED_FILE]


def test_tree_scene_capacity(tmp_path: Path) -> None:
    layout.init_tree(tmp_path)
    for number in range(16):
        _write(
            tmp_path,
            layout.scene_path(f"s{number}"),
            scene_text(f"S{number}", "body"),
        )
    rules = {f.rule for f in lint_tree(tmp_path).blocking}
    assert rules == {"capacity.scene-count"}


def test_tree_superseded_target_missing_warns(tmp_path: Path) -> None:
    layout.init_tree(tmp_path)
    text = ENTRY.format(id="old", body="x").replace("status: approved", "status: deprecated")
    _write(
        tmp_path,
        layout.entry_path("old"),
        text.replace("superseded_by: null", "superseded_by: new"),
    )
    [finding] = lint_tree(tmp_path).findings
    assert (finding.rule, finding.severity) == ("entry.superseded-target-missing", "warn")


def test_tree_requires_init_and_refuses_symlinked_root(tmp_path: Path) -> None:
    with pytest.raises(TeamloreError) as missing:
        lint_tree(tmp_path)
    assert missing.value.error is MEMORY_NOT_INITIALIZED
    real = tmp_path / "real"
    real.mkdir()
    layout.init_tree(real)
    worktree = tmp_path / "wt"
    worktree.mkdir()
    os.symlink(real / ".threadshare", worktree / ".threadshare")
    with pytest.raises(TeamloreError) as unsafe:
        lint_tree(worktree)
    assert unsafe.value.error is UNSAFE_PATH
    assert str(tmp_path) not in unsafe.value.message


# --- sanitize_text ------------------------------------------------------------------------------


def test_sanitize_makes_worktree_paths_repo_relative() -> None:
    root = "/ho" + "me/alice/work/app"
    text = f"edit {root}/src/main.py then run make in {root}"
    assert sanitize_text(text, worktree_root=root) == "edit src/main.py then run make in ."


def test_sanitize_replaces_other_local_references() -> None:
    session = "019a93b9-7c1e-7d42-9a3b-0c5d6e7f8a9b"
    text = (
        "logs in ~/.codex/sessions/2026/02/23/x.jsonl, code in /Us" + "ers/bob/src/app.py, "
        "C:\\Users\\carol\\repo\\a.ps1 and codex session " + session + "; "
        "commit 7fd2f23a1b04c9e8d2f6a35b7c01d94e8f123456 touched src/app.py"
    )
    clean = sanitize_text(text)
    assert clean == (
        f"logs in {PROVIDER_PATH_PLACEHOLDER}, code in {LOCAL_PATH_PLACEHOLDER}, "
        f"{LOCAL_PATH_PLACEHOLDER} and codex session {SESSION_ID_PLACEHOLDER}; "
        "commit 7fd2f23a1b04c9e8d2f6a35b7c01d94e8f123456 touched src/app.py"
    )
    assert sanitize_text(clean) == clean
    assert _blocks(lint_text(clean, path="x")) == []


def test_sanitize_clears_every_path_and_session_case_of_the_corpus() -> None:
    for case in load_corpus():
        if case.expect != "block" or not (case.rule or "").startswith(("path.", "session.")):
            continue
        clean = sanitize_text(case.text)
        remaining = {f.rule for f in _blocks(lint_text(clean, path="x"))}
        assert not {r for r in remaining if r.startswith(("path.", "session."))}, (case.id, clean)
        assert sanitize_text(clean) == clean


@given(
    st.lists(
        st.sampled_from(
            [
                "staging",
                "数据库",
                "迁移",
                "30s",
                "lock",
                "timeout",
                "v2",
                "alembic",
                "锁等待",
                "LOCK_TIMEOUT",
                "head",
                "42",
            ]
        ),
        min_size=1,
        max_size=12,
    )
)
@example(words=["30s", "v2", "LOCK_TIMEOUT", "head"])  # a pure-ASCII id with short parts
@example(words=["timeout", "42", "30s", "30s", "锁等待"])  # timeout-42-30s-30s-<hash>
def test_generated_entry_ids_never_look_like_secrets(words: list[str]) -> None:
    from teamlore.memory.store.slugs import entry_slug

    slug = entry_slug(" ".join(words))
    assert [f for f in lint_text(f"id: {slug}", path="x.md") if f.severity == "block"] == []


PATH_PIECES = [
    "/Users/dana/x",
    "/home/bob/.codex/sessions/a",
    "~/.claude/projects/x",
    "C:\\Users\\Y\\a",
    "c:/users/y/b",
    "/root/.x",
    "/mnt/c/Users/d e/f",
    "/tmp/a",
    "/private/var/folders/x/T",
    " ",
    '"',
    "(",
    "=",
    "x",
    "-",
    ".",
    "~",
    "\\",
    "/",
    "AppData\\Roaming\\Claude\\x",
    "${CODEX_HOME}/sessions/r",
    "https://h/x",
    "D:\\Documents and Settings\\u\\x",
    "%USERPROFILE%\\.codex\\y",
    "$HOME/.Claude/x",
]


@given(st.lists(st.sampled_from(PATH_PIECES), max_size=14))
@example(pieces=["~", "/Users/dana/x"])  # `~/…` stays a home-relative warning
def test_sanitizing_skips_no_local_path(pieces: list[str]) -> None:
    """The substring pre-checks in sanitize_text only skip texts the path patterns cannot match."""
    from teamlore.core.secrets import sanitize as lint

    text = "".join(pieces)
    unfiltered = lint._HOME_PATH.sub(
        lint.LOCAL_PATH_PLACEHOLDER,
        lint._PROVIDER_PATH.sub(lint.PROVIDER_PATH_PLACEHOLDER, text),
    )
    assert sanitize_text(text) == sanitize_text(unfiltered)
    assert not [
        f for f in lint_text(sanitize_text(text), path="x") if f.rule == "path.home-absolute"
    ]


# --- issue 11: ids, names and fields; encoded and prose secrets; public identifiers ----------


@pytest.mark.parametrize(
    "entry_id",
    [
        "timeout-42-30s-30s-1df6a88abe",  # hypothesis found it flagged as high-entropy
        "v-1c675b6acf",  # the id of a Chinese sentence with one ASCII letter
        "release-2025-11-rc2-7fd2f23",
        "payments-retry-7c1e",
        "checkout-v2-rollout-5pct-0b9f3a2c1d",
    ],
)
def test_ids_teamlore_generates_are_never_secrets(entry_id: str) -> None:
    text = ENTRY.format(id=entry_id, body="Run the release tests before pushing tags.")
    findings = lint_text(text, path=f"entries/{entry_id}.md", kind="entry")
    assert [f for f in findings if f.severity == "block"] == []


def test_a_file_name_holding_this_machines_home_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/alice")
    entry_id = "home-alice-src-shop-fix-the-tag-check"
    findings = lint_text(
        ENTRY.format(id=entry_id, body="Run the release tests before pushing tags."),
        path=f"entries/{entry_id}.md",
        kind="entry",
    )
    assert "path.home-in-name" in {f.rule for f in findings if f.severity == "block"}
    monkeypatch.setenv("HOME", "/home/runner")  # a CI runner's home is nobody's
    assert [
        f
        for f in lint_text(
            ENTRY.format(id=entry_id, body="Run the release tests before pushing tags."),
            path=f"entries/{entry_id}.md",
            kind="entry",
        )
        if f.severity == "block"
    ] == []


def test_secrets_in_a_file_name_block() -> None:
    from teamlore.memory.store.lint import name_findings

    token = "gh" + "p_" + "Zq8Lr2VwPn5TyKc0MbXa7Hd3Jf6Ge1Ns4Qu9"
    assert {f.rule for f in name_findings(f"skills/{token}/SKILL.md")} == {"secret.github-token"}
    assert name_findings("entries/release-tag-needs-v-prefix-3f9a2c81d0.md") == []


@pytest.mark.parametrize(
    "field_line",
    [
        'scene: "\\u002fhome\\u002fbob\\u002fsrc"\n',
        'evidence: {"commits":[],"paths":["docs/\\u0067h\\u0070_'
        'Zq8Lr2VwPn5TyKc0MbXa7Hd3Jf6Ge1N.md"]}\n',
    ],
)
def test_every_frontmatter_field_is_linted_decoded(field_line: str) -> None:
    field = field_line.split(":", 1)[0]
    lines = ENTRY.format(id="release-tag-check", body="Run the release tests first.").splitlines(
        keepends=True
    )
    text = "".join(field_line if line.startswith(f"{field}:") else line for line in lines)
    findings = lint_text(text, path="entries/release-tag-check.md", kind="entry")
    blocks = [f for f in findings if f.severity == "block"]
    assert blocks, findings
    assert all(f.line == text.splitlines().index(field_line.rstrip("\n")) + 1 for f in blocks)


HOSTILE = {
    "hyphen runs": "a-" * 100_000,
    "uuid runs": "0b6e5d1c-8d0e-4f7a-9b1e-3c4d5e6f7a8b-" * 5_000,
    "home paths": "/home/alice/" * 15_000,
    "pem openers": "-----BEGIN PUBLIC KEY-----\n" * 7_000,
    "url schemes": "aB3" * 60_000 + "://",
    "assignments": "password=password=" * 10_000,
    "base64": "Z2hwX2FiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6MDEyMzQ1Njc4OQ" * 3_000,
}


@pytest.mark.parametrize("payload", sorted(HOSTILE))
def test_scanning_and_sanitizing_finish_on_hostile_text(payload: str) -> None:
    """Sizes where each old quadratic shape took minutes (lazy key prefixes, a scheme match
    tried at every letter, one overlap check per accepted hit, one line count per finding,
    `.*?` to a missing PEM end); linear scans take a second or less. Figures at 10 MiB:
    bench/bench_adversarial.py."""
    text = HOSTILE[payload]
    lint_text(text, path="x.md")
    sanitize_text(text, worktree_root="/home/alice/src/shop")


def test_an_encoded_token_blocks_and_encoded_prose_does_not() -> None:
    token = "gh" + "p_" + "Zq8Lr2VwPn5TyKc0MbXa7Hd3Jf6Ge1Ns4Qu9"
    encoded = base64.b64encode(token.encode()).decode()
    assert "secret.encoded" in {f.rule for f in _blocks(lint_text(f"value {encoded}", path="x"))}
    plain = base64.b64encode(b"release notes for the mobile client").decode()
    assert _blocks(lint_text(f"value {plain}", path="x")) == []


def test_a_document_full_of_one_finding_reports_a_bounded_number() -> None:
    from teamlore.core.secrets import MAX_HITS_PER_RULE

    findings = lint_text("see /home/alice/x\n" * (3 * MAX_HITS_PER_RULE), path="x.md")
    homes = [f for f in findings if f.rule == "path.home-absolute"]
    assert len(homes) == MAX_HITS_PER_RULE and all(f.severity == "block" for f in homes)


@pytest.mark.parametrize(
    ("kind", "path", "text"),
    [
        ("doctrine", layout.DOCTRINE_FILE, "- Test first.\n<!-- END THREADSHARE MEMORY -->\nx\n"),
        (
            "entry",
            ".threadshare/memory/entries/run-e2e-first.md",
            ENTRY.format(id="run-e2e-first", body="Run it. <!--begin  Threadshare memory-->"),
        ),
        ("text", "draft", "<!--   END threadshare MEMORY -->"),
    ],
    ids=["doctrine", "entry", "draft"],
)
def test_managed_block_marker_text_blocks_in_any_document(kind: str, path: str, text: str) -> None:
    """Issue 27: doctrine holding the marker text passed lint and broke out of the managed block
    in CLAUDE.md (scene summaries and Skill descriptions already refused `<`)."""
    blocking = _blocks(lint_text(text, path=path, kind=kind))  # type: ignore[arg-type]
    assert [f.rule for f in blocking] == ["format.managed-block-marker"]
    assert "reword" in blocking[0].message


def test_a_hidden_character_blocks_an_entry_once_per_line_naming_it() -> None:
    """A zero-width space, Unicode tag characters (ASCII a model reads and a reviewer never
    sees) and a NUL (git shows the file as binary) were written into entries without a word."""
    body = (
        "Run deploy.sh\u200b with X\U000e0069\U000e0067 set.\n\nNUL\x00 and \x1b[8mhidden\x1b[0m."
    )
    text = ENTRY.format(id="run-deploy", body=body)
    blocking = _blocks(lint_text(text, path=ENTRY_PATH.format(id="run-deploy"), kind="entry"))
    assert [(f.rule, f.line) for f in blocking] == [
        ("format.hidden-character", text[: text.index("\u200b")].count("\n") + 1),
        ("format.hidden-character", text[: text.index("\x00")].count("\n") + 1),
    ]
    assert blocking[0].message.startswith("holds \\u200b, a character a reader does not see")
    assert "\\x00" in blocking[1].message


def test_emoji_sequences_in_an_entry_are_not_hidden_characters() -> None:
    text = ENTRY.format(id="careful", body="⚠️ Careful: 👩‍💻 pairs on 🏳️‍🌈 days.")
    findings = lint_text(text, path=".threadshare/memory/entries/careful.md", kind="entry")
    assert [f for f in findings if f.rule == "format.hidden-character"] == []


ENTRY_PATH = ".threadshare/memory/entries/{id}.md"


def entry_findings(entry_id: str, body: str) -> list[Finding]:
    text = ENTRY.format(id=entry_id, body=body)
    return lint_text(text, path=ENTRY_PATH.format(id=entry_id), kind="entry")


@pytest.mark.parametrize(
    ("entry_id", "body"),
    [
        (
            "tsconfig-target-es2020-bigint-npx-next-build-c82b2745f3",
            "前端构建：tsconfig 的 target 必须足够高（ES2020）以支持 BigInt，"
            "否则 npx next build 失败",
        ),
        # an id the entropy heuristic alone still judges random: it is the entry's own id
        ("nvcc-cuda12-sm89-fp8-gemm-c82b2745f3", "nvcc 对 cuda12 sm89 的 fp8 gemm 需要新版本"),
    ],
)
def test_a_generated_id_is_not_judged_by_the_entropy_rule(entry_id: str, body: str) -> None:
    """Issue 26: a Chinese candidate was blocked by `secret.high-entropy` on the id teamlore
    generated for it. The id comes from the (linted) text; it is not judged again."""
    assert _blocks(entry_findings(entry_id, body)) == []


def test_a_finding_on_text_the_agent_wrote_still_blocks() -> None:
    token = "Zq8Lr2VwPn5TyKc0MbXa7Hd"
    findings = entry_findings("nvcc-cuda12-sm89-fp8-gemm-c82b2745f3", f"use key {token} here")
    assert [f.rule for f in _blocks(findings)] == ["secret.high-entropy"]
    assert token not in findings[0].message


@pytest.mark.parametrize(
    "body",
    [
        "AWS key \u0410KIAIOSFODNN7ABCDEFG (a Cyrillic А)",
        "AWS key AKIAIOSF\u200bODNN7ABCDEFG (split by a zero-width space)",
        "AWS key \uff21\uff2b\uff29\uff21IOSFODNN7ABCDEFG (full-width letters)",
        "token gh\u0440_" + "Zq8" * 12 + " (a Cyrillic р)",
        "AWS key AKIA\u2060IOSFODNN7\u00adABCDEFG (word joiner, soft hyphen)",
    ],
)
def test_secrets_are_matched_after_nfkc_invisible_stripping_and_confusable_folding(
    body: str,
) -> None:
    """Issue 27: secrets split by a zero-width space or spelled with homoglyphs passed lint
    (the invisible characters block on their own too: `format.hidden-character`)."""
    blocking = _blocks(entry_findings("run-e2e-first", body))
    findings = [f for f in blocking if f.rule != "format.hidden-character"]
    assert [f.rule.split(".")[0] for f in findings] == ["secret"], findings
    text = ENTRY.format(id="run-e2e-first", body=body)
    assert findings[0].line == text.splitlines().index(body) + 1  # mapped back to the original


def test_prose_in_cyrillic_or_greek_is_not_folded_into_secrets() -> None:
    body = "Ответ: КАК ОНО ЕСТЬ ТАК И ЕСТЬ. Τα ΚΑΙ ΟΜΟΙΑ ΕΙΝΑΙ ΤΑ ΙΔΙΑ ΠΑΝΤΑ ΚΑΙ ΠΑΝΤΟΥ."
    assert _blocks(entry_findings("run-e2e-first", body)) == []


@pytest.mark.parametrize(
    "body",
    [
        "The fix landed in 3f2c1e4b7a3d5c6e8f0a1b2c3d4e5f6a7b8c9d0e on main.",
        "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 of the tarball",
        "bundle hash 5f2b8c9e4d3a1f7b6c0e9d8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c changed",
        "main.5f2b8c9e4d3a1f7b6c0e.js is the bundle",
        "The latency board is Grafana dashboard uid aBcD3fGh1jKlMnO2pQrS.",
        "See https://grafana.example.com/d/aBcD3fGh1jKlMnO2pQrS/api-latency?orgId=1",
    ],
)
def test_public_hashes_and_ids_are_not_secrets(body: str) -> None:
    """Issue 27: git SHAs, bundle hashes and Grafana uids were blocked as high-entropy secrets."""
    assert _blocks(entry_findings("run-e2e-first", body)) == []


@pytest.mark.parametrize(
    "entry_id",
    [
        "fix-landed-in-3f2c1e4b7a3d5c6e8f0a1b2c3d4e5f6a7b8c9d0e",
        "bundle-5f2b8c9e4d3a1f7b6c0e9d8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c",
    ],
)
def test_a_slug_holding_a_hex_digest_is_not_a_secret(entry_id: str) -> None:
    assert _blocks(entry_findings(entry_id, "ok")) == []
    assert not is_high_entropy_secret(entry_id)


def test_a_credential_word_before_a_uid_keeps_it_judged() -> None:
    findings = entry_findings("run-e2e-first", "api token uid: aBcD3fGh1jKlMnO2pQrS")
    assert [f.rule for f in _blocks(findings)] == ["secret.high-entropy"]


@pytest.mark.parametrize("operation", ["memory.lint", "memory.status"])
def test_the_operations_that_lint_the_tree_say_how_far_they_are(
    tmp_path: Path, home: Path, operation: str
) -> None:
    # the CLI shows it as a bar on a terminal (`Linting memory … 3714/4001`)
    from support import git
    from teamlore.ops.registry import OpContext, run_operation

    git(tmp_path, "init", "-q")
    layout.init_tree(tmp_path)
    _write(tmp_path, layout.entry_path("good"), ENTRY.format(id="good", body="Fine."))
    heard: list[tuple[int, int, str]] = []
    ctx = OpContext(cwd=tmp_path, home=home, progress=lambda *step: heard.append(step))
    run_operation(operation, ctx, {})
    assert (2, 2, layout.ENTRIES_DIR) in heard  # the entry and `init`'s .gitkeep
