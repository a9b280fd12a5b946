"""What every reader of personal memory gets of a file a person edited by hand: a secret typed
into it is masked (`safety.mask_secrets`), control characters show as escapes, and the secret
scanner loads only for a text that `may_hold_secret` (core/secrets/shapes.py) lets through. That
test must let through every text the scanner finds a `secret.*` hit in, rule by rule: each rule
gates on its shape's needles, from the one table the test reads, and each shape is checked
against what its rule finds here."""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import shared_fixtures
from teamlore.core import errors
from teamlore.core.secrets import rules, scan, shapes
from teamlore.personal import documents, reader
from teamlore.personal.safety import first_secret, mask_secrets

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "store"))
from test_lint import load_corpus  # the lint corpus, its templates filled
from test_secret_rule_gates import FRAGMENTS  # pieces of every rule's shapes

TOKEN = "ghp_" + "R8a2Kd9sLq0ZxYw3Vb7Nc1Tm5Pe4Ju6Hf2Gi"  # the shape of one, not a real token
# a key as a person may paste it: full-width letters, a Cyrillic look-alike, a zero-width space
# inside, accented text around it; and base64 of a secret, a long random token
DISGUISED = [
    "ｇｈｐ＿" + TOKEN[4:],
    "АKIA" + "Q7ZP4M2XKD8WV3RT",
    "ghp_R8a2Kd9sLq0Z\u200bxYw3Vb7Nc1Tm5Pe4Ju6Hf2Gi",
    "pаssword: Zx9Qw8Lm7Kp6",
    "Zx9Qw8Lm7Kp6Jn5Hb4Vc3",
    "Y2xpZW50X3NlY3JldD1aeDlRdzhMbTdLcDZKbjVIYjRWYzM=",
    "é",
    "ｔｏｋｅｎ＝",
    "\u200b",
]


def _scanned_secret_rules(text: str) -> set[str]:
    return {
        h.rule
        for h in scan.scan_content(text)
        if h.severity == "block" and h.rule.startswith("secret.")
    }


def _passes_its_shape(rule: str, text: str) -> bool:
    """The shape of `rule` is found in `text` (a token rule: the whole test passes)."""
    if rule in shapes.TOKEN_RULES:
        return reader.may_hold_secret(text)
    view = shapes.as_scanned(text)
    return shapes.shape_found(view, shapes.case_folded(view), shapes.SECRET_SHAPES[rule])


def _shapes_missed(text: str) -> list[str]:
    return sorted(r for r in _scanned_secret_rules(text) if not _passes_its_shape(r, text))


def test_every_secret_rule_of_the_scanner_has_a_shape_or_is_a_token_rule() -> None:
    patterns = {r.rule for r in rules._RULES if r.severity == "block"}
    found_in_code = set(re.findall(r'"(secret\.[a-z0-9-]+)"', inspect.getsource(scan)))
    scanner = {r for r in patterns | found_in_code if r.startswith("secret.")}
    assert scanner == set(shapes.SECRET_SHAPES) | set(shapes.TOKEN_RULES)


def test_each_secret_rule_gates_on_its_shapes_needles_only() -> None:
    """A needle is never the scanner's alone: a rule's gate is its shape's needles (so a rule
    that brought needles of its own, which the reader's test would not look for, fails here)."""
    for rule in rules._RULES:
        if not rule.rule.startswith("secret."):
            continue
        shape = shapes.SECRET_SHAPES[rule.rule]
        if rule.gate is None:
            assert (rule.needles, rule.folded) == (shape.needles, ()), rule.rule
            continue
        assert shape.anycase and (rule.needles, rule.folded) == ((), shape.needles), rule.rule
        alternatives = rule.gate.pattern.removeprefix("(?i)").split("|")
        assert [a.replace("\\", "") for a in alternatives] == list(shape.needles), rule.rule
    for shape in shapes.SECRET_SHAPES.values():
        if shape.anycase:  # looked up in the case-folded text
            assert all(needle == needle.lower() for needle in shape.needles)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from([*FRAGMENTS, *DISGUISED]), min_size=1, max_size=24).map("".join))
def test_every_secret_the_scanner_finds_passes_its_rules_shape(text: str) -> None:
    assert _shapes_missed(text) == []


def _random(n: int) -> str:
    """`n` characters of a random-looking key (letters and digits, no word in it)."""
    return ("Zx9Qw8Lm7Kp6Jn5Hb4Vc3Xy2Tr1Gs0Df4Ah7Ek9Mu3Po6Wi2Nb8Yc5Rj1Lq" * 2)[:n]


# the shortest secret each rule reports (the lengths its pattern asks for, not one more)
SHORTEST = [
    ("secret.private-key", "-----BEGIN PRIVATE KEY-----"),
    ("secret.aws-access-key", "AKIA" + _random(16).upper()),
    ("secret.github-token", "ghs_" + _random(16)),
    ("secret.github-token", "github_pat_" + _random(22)),
    ("secret.gitlab-token", "glptt-" + _random(20)),
    ("secret.npm-token", "npm_" + _random(36)),
    ("secret.pypi-token", "pypi-AgE" + _random(50)),
    ("secret.google-api-key", "AIza" + _random(35)),
    ("secret.google-oauth", "ya29." + _random(20)),
    ("secret.google-oauth", "GOCSPX-" + _random(20)),
    ("secret.slack-webhook", "https://hooks.slack.com/services/" + _random(20)),
    ("secret.slack-token", "xoxb-" + _random(10)),
    ("secret.slack-token", "xapp-1-" + _random(10)),
    ("secret.stripe-key", "rk_test_" + _random(16)),
    ("secret.stripe-key", "whsec_" + _random(24)),
    ("secret.model-api-key", "sk-" + _random(20)),
    ("secret.sendgrid-key", f"SG.{_random(16)}.{_random(16)}"),
    ("secret.huggingface-token", "hf_" + _random(30)),
    ("secret.telegram-bot-token", "12345678:AA" + _random(33)),
    ("secret.jwt", f"eyJ{_random(8)}.{_random(8)}.{_random(8)}"),
    ("secret.url-credentials", "https://u:Zx9Qw8@example.org"),
    ("secret.authorization-header", "Authorization: Basic " + _random(16)),
    ("secret.authorization-header", "BEARER " + _random(16)),
    ("secret.assignment", "API-KEY:'Zx9Qw8'"),
    ("secret.assignment", "apı_key=Zx9Qw8"),  # a dotless `ı`, which `(?i)` reads as `i`
    ("secret.assignment", "PRİVATE_KEY: Zx9Qw8"),
    ("secret.prose", "pw: Zx9Qw8"),
    ("secret.prose", "Passwort Zx9Qw8"),
    ("secret.prose", "密码是Zx9Qw8"),
    ("secret.prose", "金鑰：Zx9Qw8"),
    ("secret.cli-flag", "--Client-Secret Zx9Qw8"),
    ("secret.high-entropy", _random(20)),
    # a random segment of a dashboard link, in a token too repetitive as a whole
    ("secret.high-entropy", "a" * 40 + "/d/abcdefg/" + _random(20)),
    # base64 of `token=a1ba1b…`: too repetitive for the entropy rule
    ("secret.encoded", "dG9rZW49YTFiYTFiYTFiYTFiYTFiYTFi"),
]


@pytest.mark.parametrize(
    ("rule", "text"), SHORTEST, ids=[f"{r}-{i}" for i, (r, _) in enumerate(SHORTEST)]
)
def test_the_shortest_secret_of_each_rule_passes_its_shape(rule: str, text: str) -> None:
    for line in (f"see {text} here", f"vu {text} ici, déjà"):
        assert rule in _scanned_secret_rules(line)
        assert _passes_its_shape(rule, line)
        assert reader.may_hold_secret(line)


def test_every_secret_of_the_lint_corpus_passes_its_rules_shape() -> None:
    cases = load_corpus()
    flagged = [case.text for case in cases if _scanned_secret_rules(case.text)]
    assert len(flagged) > 100  # the corpus's secrets, of every rule
    for text in flagged:
        assert _shapes_missed(text) == [], text
        for disguise in ("ｘ", "é ", "\u200b"):  # the text in a non-ASCII line
            assert _shapes_missed(disguise + text) == [], text


def test_every_secret_in_real_session_text_passes_its_rules_shape() -> None:
    checked = 0
    for path in sorted(shared_fixtures().rglob("*.jsonl"))[:12]:
        text = path.read_text(encoding="utf-8", errors="replace")[:60_000]
        for start in range(0, len(text), 4000):
            chunk = text[start : start + 4000]
            assert _shapes_missed(chunk) == [], path.name
            checked += 1
    assert checked > 50


@pytest.mark.parametrize(
    "notes",
    [
        "# Profile\n\n## Work\nThe user writes Rust at work and reviews Go; prefers small commits."
        "\nRepo: https://github.com/example/teamlore-main, notes in docs/personal.md.\n",
        "# Preferences\n\n## Tools\nneovim, tmux, fish; TEAMLORE_HOOK_BUDGET=0.9 in the hook.\n"
        "Runs `uv run pytest -k reader` and `git log --oneline`; the author of tokenize.py.\n",
        "# Profile\n\n## 背景\n张伟，后端工程师，常用 Rust 和 Go；喜欢简短的回答（中文）。\n"
        "## Über mich\nJosé Müller, café ☕, Straße — Köln.\n",
        "# Project\n\n## Layout\nsrc/teamlore/personal/reader.py reads; internationalization later."
        "\nSee https://docs.example.org/guide/getting-started#install for setup.\n",
    ],
    ids=["english", "commands", "chinese-and-german", "paths-and-urls"],
)
def test_ordinary_notes_need_no_scanner(notes: str) -> None:
    assert first_secret(notes) is None
    assert not reader.may_hold_secret(notes)


def test_a_masked_secret_shows_its_length_never_a_character_of_it() -> None:
    text = f"# Profile\n\n## Tools\nMy token is {TOKEN} and\nmy password is Zx9Qw8Lm7Kp6, too\n"
    masked, found = mask_secrets(text)
    assert found == [(4, "secret.github-token"), (5, "secret.prose")]
    assert masked == (
        "# Profile\n\n## Tools\nMy token is …[40 chars] and\nmy password is …[12 chars], too\n"
    )
    assert TOKEN[:4] not in masked and "Zx9" not in masked


def test_the_reader_masks_secrets_and_shows_control_characters(tmp_path: Path) -> None:
    home = tmp_path / "state"
    (home / "personal").mkdir(parents=True)
    (home / "personal" / "profile.md").write_bytes(
        f"\ufeff# Profile\r\n\r\n## Tools\r\nGitHub: {TOKEN}\r\nBell\a, \x1b[31mred\x1b[0m, "
        "zero\u200bwidth\r\n".encode()
    )
    view = reader.read_memory(home, ["global"])
    profile = view.documents[0]
    assert profile.content == (
        "# Profile\n\n## Tools\nGitHub: …[40 chars]\nBell\\x07, \\x1b[31mred\\x1b[0m, "
        "zero\\u200bwidth\n"
    )
    assert [m.to_json() for m in view.masked] == [
        {"file": "profile.md", "line": 4, "rule": "secret.github-token"}
    ]
    text = reader.render_memory(view)
    assert TOKEN not in text and "\x1b" not in text and "\a" not in text
    assert text.endswith(
        "[teamlore: a secret typed into personal memory by hand is masked above as `…[N chars]`"
        " (profile.md:4 secret.github-token); the file keeps it until removed there by hand.]"
    )
    assert (home / "personal" / "profile.md").read_bytes().count(TOKEN.encode()) == 1


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        (f"# Profile\n\n## A\n# token {TOKEN}\n", "'# token …[40 chars]' is a level-1 heading"),
        (f"# Profile\n\nkey {TOKEN}\n", "'key …[40 chars]' is outside any section"),
        (f"# Profile\n\n## A\n```{TOKEN}\nx\n", "'```…[40 chars]' is never closed"),
        (f"# Token {TOKEN}\n", "the first line is '# Token …[40 chars]'"),
        (f"# Profile\n\n## {TOKEN}\nx\n## {TOKEN}\ny\n", "title '…[40 chars]' is already used"),
        (f"# Profile\n\n## {TOKEN} \nx\n", "'…[40 chars] ' has spaces around it; write it as"),
        # where the quote of a long line is cut, the secret it cuts is masked whole
        (f"# Profile\n\n{'x' * 40} {TOKEN}\n", f"'{'x' * 40} …[40 chars]' is outside"),
    ],
)
def test_a_line_quoted_in_a_format_refusal_has_its_secret_masked(text: str, quoted: str) -> None:
    """PERSONAL_DOCUMENT_INVALID quotes the line of a hand edit that breaks the format; `doctor`
    prints it, and the Writer's failed job keeps it. A secret typed into that line is masked
    there as every reader gets it: no character of it, cut short or not."""
    with pytest.raises(errors.TeamloreError) as refused:
        documents.parse_document("profile", text.encode())
    message = refused.value.message
    assert refused.value.code == "PERSONAL_DOCUMENT_INVALID"
    assert quoted in message, message
    assert "R8a2Kd" not in message and "ghp_" not in message
