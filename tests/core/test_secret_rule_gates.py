"""Each secret rule's gate (`_PatternRule.may_match`: needles, a gate pattern, lowercase needles
on ASCII text) is a cheap test its pattern's every match passes: a text the gate turns away
holds no match, so the gate changes how fast a text is scanned, never what is found."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from support import shared_fixtures
from teamlore.core.secrets.rules import _RULES, _WARN_RULES, _PatternRule

RULES = [*_RULES, *_WARN_RULES]

# pieces of every rule's shapes, in both cases, with the Unicode letters and digits that match
# ASCII ones under a case-insensitive or `\d` pattern (`ı` → I, `ſ` → s, `K` → k, `٣` → 3)
FRAGMENTS = [
    *"aAzZ0123456789_-./:@~\\=%$ \n\t\"'`{}()",
    *"ıİſKǅ٣５ａ",
    "sk-",
    "ghp_",
    "AKIA",
    "AIza",
    "xoxb-",
    "eyJ",
    "hf_",
    ":AA",
    "SG.",
    "whsec_",
    "sk_live_",
    "PRIVATE KEY",
    "-----BEGIN ",
    "-----",
    "password",
    "PASSWORD",
    "paſſword",
    "pwd",
    "passphrase",
    "Passwort",
    "mot de passe",
    "contraseña",
    # Chinese keys and what joins them to a value (`：` and `＝` read as `:` and `=`)
    "密码",
    "登录密碼",
    "口令",
    "密钥",
    "金鑰",
    "私钥",
    "访问令牌",
    "是",
    "为",
    "設為",
    "改成",
    "设置为",
    "設定為",
    "修改为",
    "均为",
    "都是",
    "就是",
    "统一为",
    "账号/",
    "DB",
    "否",
    "：",
    "＝",
    "。",
    "“",
    "secret_key",
    "apı_key",
    "API-KEY",
    "token",
    "TOKEN",
    "credentials",
    "Authorization",
    "bearer",
    "Bearer",
    " is ",
    "=",
    ": ",
    "--password ",
    "https://",
    "user:",
    "pa55word@",
    "/home/",
    "/Users/",
    "/root/",
    "/var/folders/",
    "/mnt/c/Users/",
    "/tmp/",
    "~/",
    "C:\\Users\\",
    "\\\\wsl$\\",
    "~/.codex/",
    ".claude/projects",
    "CODEX_HOME",
    "AppData/Roaming/Claude",
    "rollout-2025-01-02T03-04-05-",
    "0f8fad5b-d9cb-469f-a165-70867728950e",
    ".jsonl",
    "192.168.1.10:8080",
    "١٩٢.١٦٨.١.١٠:٨٠",
    "a@b.io",
    "deadbeef" * 5,
    # keys, separators and values, so assignments and headers are often whole
    "token=",
    "TOKEN: ",
    "api_key=",
    "access-key := ",
    "private_key => ",
    "auth_key: ",
    "credential=",
    "passwd=",
    "secret: ",
    "authorization: bearer ",
    "Zx9Qw8Lm7Kp6Jn5Hb4Vc3",
    "'Zx9Qw8Lm7K'",
]


def _ascii_lower(text: str) -> str | None:
    return text.lower() if text.isascii() else None


def _gate_holds(rule: _PatternRule, text: str) -> bool:
    return rule.pattern.search(text) is None or rule.may_match(text, _ascii_lower(text))


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=24).map("".join))
def test_no_rule_gate_turns_away_a_text_its_pattern_matches(text: str) -> None:
    assert [r.rule for r in RULES if not _gate_holds(r, text)] == []


def test_no_rule_gate_turns_away_a_match_in_real_session_text() -> None:
    checked = 0
    for path in sorted(shared_fixtures().rglob("*.jsonl"))[:40]:
        text = path.read_text(encoding="utf-8", errors="replace")[:200_000]
        for start in range(0, len(text), 4000):
            chunk = text[start : start + 4000]
            assert [r.rule for r in RULES if not _gate_holds(r, chunk)] == [], path.name
            checked += 1
    assert checked > 100


def test_every_rule_has_a_gate_but_the_long_hex_one() -> None:
    # a rule without one searches every text with its lookbehind at every position
    ungated = [r.rule for r in RULES if not r.needles and r.gate is None]
    assert ungated == ["secret.long-hex"]
    for rule in RULES:
        if rule.folded:  # lowercase needles stand in for the gate on ASCII text
            assert rule.gate is not None
            assert all(needle == needle.lower() for needle in rule.folded)
