"""Secret and sensitive-text scanning, shared by team memory lint and personal memory.

`scan_content` finds credential shapes, high-entropy tokens, provider session ids and local paths
in any text and reports each span once, by its most specific rule (`Hit`, with a redacted preview
that never contains the secret). `sanitize_text` strips local references (absolute and home paths,
provider-local paths, transcript file names, provider session ids) before text is shared. Rules
and severities are described in docs/memory.md ("Lint").

Rule families (block unless noted):
- `secret.*`: known credential shapes (AWS, GitHub incl. fine-grained, GitLab, npm, PyPI, Google,
  Slack, OpenAI/Anthropic `sk-`, Stripe, SendGrid, Hugging Face, Telegram, private key blocks,
  JWTs, credentials in URLs, Authorization headers, `password=`/`api_key=`-style assignments with a
  literal value) and high-entropy tokens (>= 4.0 bits/char over >= 20 chars of the base64/hex
  alphabet that are not words, identifiers, paths, UUIDs, hex digests or base64 of plain text).
- `session.*`: provider session ids (a UUID of any version next to session/agent/... words) and
  transcript file names (`rollout-<time>-<uuid>.jsonl`, `<uuid>.jsonl`).
- `path.provider-local` (`~/.codex`, `~/.claude`, `.codex/sessions`, `.claude/projects`, ...) and
  `path.home-absolute` (`/Users/x`, `/home/x`, `/root`, `C:\\Users\\x`).
Warn: long hex runs other than 40-hex commit hashes, e-mail addresses, ip:port, home-relative
paths, other UUIDs. Full 40-hex commit hashes and repo-relative paths are public evidence.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

ENTROPY_MIN_BITS = 4.0
ENTROPY_MIN_LENGTH = 20
SESSION_CONTEXT_WINDOW = 48
# the length of the content-hash suffix of teamlore's slugs (`memory/store/slugs.py`; a test
# keeps the two equal): a slug of words plus such a suffix is an id, not a secret
SLUG_HASH_SUFFIX_LENGTH = 10

Severity = Literal["block", "warn"]

# --- redaction ------------------------------------------------------------------------------


def redact(secret: str, keep: int = 4) -> str:
    """A preview that never reveals the secret: a short head and the length."""
    shown = secret[: min(keep, len(secret) // 4)]
    return f"{shown}…[{len(secret)} chars]"


# --- heuristics -----------------------------------------------------------------------------

_SUBWORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_VOWELS = frozenset("aeiouyAEIOUY")
_CONSONANT_RUN = re.compile(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{5,}")
_HEX_OR_UUID = re.compile(r"[0-9a-fA-F-]+")
_PLACEHOLDER = re.compile(
    r"(?:<[^>]*>|\$\{[^}]*\}|\{\{.*\}\}|\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_(]\S*|\*+|[xX]{3,}|"
    r"\.{3,}|…|null|none|nil|true|false|undefined|redacted|\[redacted\]|"
    r".*(?:your[_-]?|example|placeholder|dummy|changeme|redacted|\{\{.*\}\}).*)",
    re.IGNORECASE,
)
_CODE_REFERENCE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(.*)?|"  # settings.API_KEY, a.b()
    r"[A-Z][A-Z0-9_]*|"  # API_KEY (a variable name)
    r".*[(\[].*"  # calls, subscripts, generic types
)


def _wordish(subword: str) -> bool:
    if subword.isdigit():
        return len(subword) <= 4
    if subword.isupper():
        return len(subword) <= 5
    if len(subword) <= 3:
        return True
    vowels = sum(ch in _VOWELS for ch in subword)
    return vowels / len(subword) >= 0.2 and _CONSONANT_RUN.search(subword) is None


def looks_like_words(token: str) -> bool:
    """Identifiers, slugs and paths made of words (`lastUsedAt`, `src/memory/lint`), as opposed
    to random strings (`Zq8Lr2VwPn5TyKc0MbXa7Hd`)."""
    subwords = _SUBWORD.findall(token)
    if not subwords:
        return False
    average = sum(map(len, subwords)) / len(subwords)
    short = sum(1 for s in subwords if len(s) <= 2) / len(subwords)
    wordish_chars = sum(len(s) for s in subwords if _wordish(s))
    total_chars = sum(map(len, subwords))
    return average >= 3.0 and short <= 0.4 and wordish_chars >= 0.8 * total_chars


def shannon_entropy(token: str) -> float:
    counts = Counter(token)
    size = len(token)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def _decodes_to_text(token: str) -> bool:
    """True when `token` is base64 (standard or URL-safe) of readable UTF-8 text."""
    return decoded_text(token) is not None


def decoded_text(token: str) -> str | None:
    """The readable UTF-8 text `token` is the base64 (standard or URL-safe) of, else None."""
    core = token.rstrip("=")
    if len(core) < 16 or len(core) % 4 == 1:
        return None
    altchars = b"-_" if ("-" in core or "_" in core) else None
    if altchars is not None and ("+" in core or "/" in core):
        return None
    try:
        raw = base64.b64decode(core + "=" * (-len(core) % 4), altchars=altchars, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if not text:
        return None
    readable = sum(ch.isprintable() or ch in "\n\t" for ch in text)
    alphanumeric = sum(ch.isalnum() for ch in text)
    if readable / len(text) >= 0.97 and alphanumeric / len(text) >= 0.3:
        return text
    return None


def _is_placeholder(value: str) -> bool:
    return _PLACEHOLDER.fullmatch(value) is not None


def _random_enough(value: str) -> bool:
    return not looks_like_words(value) and not _is_placeholder(value)


# --- content rules --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hit:
    rule: str
    severity: Severity
    start: int
    end: int
    message: str


@dataclass(frozen=True, slots=True)
class _PatternRule:
    rule: str
    severity: Severity
    pattern: re.Pattern[str]
    what: str
    group: int | str = 0
    accept: Callable[[re.Match[str]], bool] | None = None
    keep: int = 4


def _value_group_ok(match: re.Match[str]) -> bool:
    return _random_enough(match.group("value"))


def _url_password_ok(match: re.Match[str]) -> bool:
    password = match.group("password")
    return not _is_placeholder(password) and not _is_placeholder(match.group("user"))


def _sk_key_ok(match: re.Match[str]) -> bool:
    body = match.group(0)[3:]
    return any(ch.isdigit() for ch in body) and not looks_like_words(body)


_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}"
_SECRET_KEYWORDS = (
    r"(?:pass(?:word|wd|phrase)|secret(?:[_-]?key)?|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|"
    r"auth[_-]?key|credentials?)"
)

_HOME_PREFIX = r"(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%|%APPDATA%)"
_PROVIDER_LOCAL = (
    r"(?i:" + _HOME_PREFIX + r"[/\\]+\.(?:codex|claude)(?![A-Za-z0-9])"
    r"|\.codex[/\\]+(?:sessions|archived_sessions|history\.jsonl)"
    r"|\.claude[/\\]+(?:projects|todos|history\.jsonl)"
    r"|\$\{?CODEX_HOME\}?[/\\]+sessions"
    r"|AppData[/\\]+(?:Roaming|Local)[/\\]+(?:Claude|codex)(?![A-Za-z0-9]))"
)

_PATH_TAIL = r"[^\s\"'`<>|)\]},;]*"
# CI runners' homes are the same on every runner and say nothing about a person (docs/memory.md)
CI_HOMES = ("runner", "circleci", "travis", "vsts", "gitlab-runner", "jenkins", "buildkite-agent")
_NOT_CI_HOME = r"(?!(?:" + "|".join(CI_HOMES) + r")(?![A-Za-z0-9._-]))"
_HOME_ABSOLUTE = (
    r"(?:(?<![\w.~-])(?:/var|/export)?/(?:Users|home)/" + _NOT_CI_HOME + r"[A-Za-z0-9._-]+|"
    r"(?<![\w.~/-])/root(?=/)|"
    # a Linux home seen from Windows through WSL's share
    r"(?i:\\\\wsl(?:\$|\.localhost)\\[^\\\s]+\\home\\[^\\\s\"']+)|"
    # a Windows home seen from WSL, and macOS per-user temp folders: this machine only
    r"(?<![\w.~-])/mnt/[a-z]/Users/[A-Za-z0-9._ -]+|(?<![\w.~-])(?:/private)?/var/folders(?=/)|"
    r"(?i:(?<![A-Za-z])[A-Z]:(?:\\\\?|/)(?:Users|Documents and Settings)(?:\\\\?|/)[^\\/\s\"']+))"
)

_RULES: tuple[_PatternRule, ...] = (
    _PatternRule(
        "secret.private-key",
        "block",
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        "private key block",
        keep=11,
    ),
    _PatternRule(
        "secret.aws-access-key",
        "block",
        re.compile(
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)"
            r"[A-Z0-9]{16}(?![A-Za-z0-9])"
        ),
        "AWS access key id",
    ),
    _PatternRule(
        "secret.github-token",
        "block",
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[oprsu]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{22,})"),
        "GitHub token",
    ),
    _PatternRule(
        "secret.gitlab-token",
        "block",
        re.compile(r"(?<![A-Za-z0-9])gl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_-]{20,}"),
        "GitLab token",
    ),
    _PatternRule(
        "secret.npm-token",
        "block",
        re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
        "npm token",
    ),
    _PatternRule(
        "secret.pypi-token",
        "block",
        re.compile(r"(?<![A-Za-z0-9])pypi-AgE[A-Za-z0-9_-]{50,}"),
        "PyPI token",
    ),
    _PatternRule(
        "secret.google-api-key",
        "block",
        re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        "Google API key",
    ),
    _PatternRule(
        "secret.google-oauth",
        "block",
        re.compile(r"(?<![A-Za-z0-9])(?:ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{20,})"),
        "Google OAuth token or client secret",
    ),
    _PatternRule(
        "secret.slack-webhook",
        "block",
        re.compile(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}"
        ),
        "Slack webhook URL",
        keep=23,
    ),
    _PatternRule(
        "secret.slack-token",
        "block",
        re.compile(
            r"(?<![A-Za-z0-9])(?:xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,})"
        ),
        "Slack token",
    ),
    _PatternRule(
        "secret.stripe-key",
        "block",
        re.compile(
            r"(?<![A-Za-z0-9])(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[A-Za-z0-9]{24,})"
        ),
        "Stripe secret key",
    ),
    _PatternRule(
        "secret.model-api-key",
        "block",
        re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}"),
        "model provider API key (OpenAI/Anthropic `sk-`)",
        accept=_sk_key_ok,
    ),
    _PatternRule(
        "secret.sendgrid-key",
        "block",
        re.compile(r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
        "SendGrid API key",
    ),
    _PatternRule(
        "secret.huggingface-token",
        "block",
        re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}"),
        "Hugging Face token",
    ),
    _PatternRule(
        "secret.telegram-bot-token",
        "block",
        re.compile(r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}"),
        "Telegram bot token",
    ),
    _PatternRule(
        "secret.jwt",
        "block",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        "JSON Web Token",
    ),
    _PatternRule(
        "secret.url-credentials",
        "block",
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://(?P<user>[^\s/@:]*):(?P<password>[^\s/@]+)@"
        ),
        "credentials in a URL",
        accept=_url_password_ok,
        keep=0,
    ),
    _PatternRule(
        "secret.authorization-header",
        "block",
        re.compile(
            r"(?i)(?:\bauthorization\s*[:=]\s*[\"']?(?:bearer|basic|token)|\bbearer)\s+"
            r"(?P<value>[A-Za-z0-9._~+/-]{16,}=*)"
        ),
        "credential in an Authorization header",
        group="value",
        accept=_value_group_ok,
        keep=0,
    ),
    _PatternRule(
        "secret.assignment",
        "block",
        re.compile(
            # the name's prefix is bounded: an unbounded lazy prefix rescans a long run of
            # name characters from every start (quadratic)
            r"(?i)(?<![A-Za-z0-9])(?P<key>[A-Za-z0-9_.-]{0,48}?"
            + _SECRET_KEYWORDS
            + r")(?![A-Za-z0-9])"
            r"[\"']?\s*(?::=|=>|=|:)\s*"
            r"(?:(?P<quote>[\"'`])(?P<qvalue>[^\"'`\s]{6,})(?P=quote)|(?P<value>[^\s\"'`,;]{6,}))"
        ),
        "secret assigned to a credential name",
        keep=0,
    ),
    _PatternRule(
        "secret.prose",
        "block",
        re.compile(
            r"(?i)(?<![A-Za-z_-])(?P<key>pass(?:word|wd|phrase)|pass phrase|pw|pwd|passwort"
            r"|mot de passe|contrase(?:ñ|n)a)(?![A-Za-z])"
            r"(?:\s+(?:for|of|to)\s+[^\n:=]{1,40}?)?"
            r"(?:\s*(?:is|was|will be|lautet|est|es|:|=)\s*:?|\s)[ \t]*"
            r"(?:(?P<quote>[\"'`])(?P<qvalue>[^\"'`\n]{6,64})(?P=quote)"
            r"|(?P<value>[^\s\"'`,;]{6,64}(?:[ \t]+[a-z]{3,12}){0,7}))"
        ),
        "password or passphrase written out in prose",
        keep=0,
    ),
    _PatternRule(
        "secret.cli-flag",
        "block",
        re.compile(
            r"(?i)--(?:password|passwd|token|api-key|secret|client-secret)[= ]"
            r"(?P<value>[^\s\"'`]{6,})"
        ),
        "credential passed as a command-line flag",
        group="value",
        accept=_value_group_ok,
        keep=0,
    ),
    _PatternRule(
        "session.transcript-file",
        "block",
        re.compile(
            r"(?:rollout-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}[-:][0-9]{2}[-:][0-9]{2}-"
            + _UUID
            + r"(?:\.jsonl)?|(?<![0-9A-Za-z-])"
            + _UUID
            + r"\.jsonl)"
        ),
        "provider transcript file name",
    ),
    _PatternRule(
        "path.provider-local",
        "block",
        re.compile(_PROVIDER_LOCAL),
        "provider-local path (session store)",
        keep=8,
    ),
    _PatternRule(
        "path.home-absolute",
        "block",
        re.compile(_HOME_ABSOLUTE),
        "absolute home path (use a repo-relative path)",
        keep=6,
    ),
)

_WARN_RULES: tuple[_PatternRule, ...] = (
    _PatternRule(
        "path.local-absolute",
        "warn",
        re.compile(r"(?<![\w.~-])(?:/private)?/tmp/[^\s\"'`<>|)\]},;]+|(?<![\w.~-])/mnt/[a-z]/\S+"),
        "absolute path on this machine (a temp or mounted drive path: is it meant for the team?)",
        keep=5,
    ),
    _PatternRule(
        "secret.long-hex",
        "warn",
        re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{32,}(?![0-9a-fA-F])"),
        "long hex value (a digest or an encoded secret?)",
        accept=lambda m: len(m.group(0)) != 40,
    ),
    _PatternRule(
        "pii.email",
        "warn",
        re.compile(
            r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
        ),
        "e-mail address",
        keep=2,
    ),
    _PatternRule(
        "net.ip-port",
        "warn",
        re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}:\d{1,5}(?!\d)"),
        "ip:port address",
        keep=0,
    ),
    _PatternRule(
        "path.home-relative",
        "warn",
        re.compile(r"(?<![\w/])~/[^\s\"'`)\]]+"),
        "home-relative path",
        keep=2,
    ),
)

SESSION_ID_PATTERN = re.compile(r"(?<![0-9A-Za-z-])" + _UUID + r"(?![0-9A-Za-z-])")
_SESSION_CONTEXT = re.compile(
    r"session|agent|conversation|thread|rollout|transcript|resume|codex|claude|chat",
    re.IGNORECASE,
)
_ENTROPY_TOKEN = re.compile(r"[A-Za-z0-9+/=_-]{20,}")


def _match_span(rule: _PatternRule, match: re.Match[str]) -> tuple[int, int, str]:
    if rule.rule in ("secret.assignment", "secret.prose"):
        name = "qvalue" if match.group("qvalue") is not None else "value"
        return match.start(name), match.end(name), match.group(name)
    return match.start(rule.group), match.end(rule.group), match.group(rule.group)


def _assignment_ok(match: re.Match[str]) -> bool:
    quoted = match.group("qvalue")
    if quoted is not None:
        return not _is_placeholder(quoted) and _CODE_REFERENCE.fullmatch(quoted) is None
    value = match.group("value")
    if _is_placeholder(value) or _CODE_REFERENCE.fullmatch(value) is not None:
        return False
    if value.startswith(("/", "./", "~", "http:", "https:")):
        return False  # a path or URL, judged by the path and URL rules
    return not looks_like_words(value)


_PASSPHRASE_WORD = re.compile(r"[a-z]{3,12}")
_PROSE_STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "is",
        "are",
        "was",
        "be",
        "been",
        "being",
        "to",
        "of",
        "for",
        "in",
        "on",
        "at",
        "by",
        "with",
        "and",
        "or",
        "not",
        "no",
        "must",
        "should",
        "will",
        "can",
        "may",
        "stored",
        "required",
        "wrong",
        "changed",
        "reset",
        "sent",
        "read",
        "used",
        "set",
        "hashed",
        "expired",
        "incorrect",
        "invalid",
        "missing",
        "empty",
        "too",
        "long",
        "short",
        "field",
        "manager",
        "policy",
        "rotated",
    ]
)


def _prose_secret_ok(match: re.Match[str]) -> bool:
    """A written-out password: a token that mixes letters with digits or symbols, or (after
    `passphrase`, or quoted) three or more plain words that are not a sentence about passwords."""
    quoted = match.group("qvalue")
    value = quoted if quoted is not None else match.group("value")
    if _is_placeholder(value) or _CODE_REFERENCE.fullmatch(value) is not None:
        return False
    words = value.split()
    first = words[0] if words else value
    parts = first.split("-")
    if len(parts) >= 3 and all(_PASSPHRASE_WORD.fullmatch(p) for p in parts):
        return "phrase" in match.group("key").lower() or quoted is not None
    has_letter = any(ch.isalpha() for ch in first)
    has_other = any(ch.isdigit() or not ch.isalnum() for ch in first)
    if has_letter and has_other and not first.startswith(("/", "./", "http", "$", "%", "~")):
        return True
    if "phrase" not in match.group("key").lower() and quoted is None:
        return False
    plain = [w for w in words if _PASSPHRASE_WORD.fullmatch(w)]
    return len(plain) >= 3 and not any(w in _PROSE_STOPWORDS for w in plain)


_ACCEPT_BY_RULE: dict[str, Callable[[re.Match[str]], bool]] = {
    "secret.assignment": lambda m: _assignment_ok(m),
    "secret.prose": _prose_secret_ok,
}


# a document with more hits of one rule than this is reported by its first ones: the verdict is
# the same, and a megabyte of repeated paths does not become a million findings
MAX_HITS_PER_RULE = 1000


def _pattern_hits(text: str, rules: Iterable[_PatternRule]) -> list[Hit]:
    hits: list[Hit] = []
    for rule in rules:
        found = 0
        for match in rule.pattern.finditer(text):
            accept = _ACCEPT_BY_RULE.get(rule.rule, rule.accept)
            if accept is not None and not accept(match):
                continue
            found += 1
            if found > MAX_HITS_PER_RULE:
                break
            start, end, value = _match_span(rule, match)
            if rule.rule in ("secret.assignment", "secret.prose"):
                preview = f"{match.group('key')}: " + redact(value, 0)
            else:
                preview = redact(value, rule.keep)
            hits.append(Hit(rule.rule, rule.severity, start, end, f"{rule.what}: `{preview}`"))
    return hits


def _session_id_hits(text: str) -> list[Hit]:
    """A UUID next to session words blocks; any other UUID warns (a reviewer should know it
    may name a session; prepare also blocks the ids this machine has indexed)."""
    hits: list[Hit] = []
    for match in SESSION_ID_PATTERN.finditer(text):
        window = text[
            max(0, match.start() - SESSION_CONTEXT_WINDOW) : match.end() + SESSION_CONTEXT_WINDOW
        ]
        preview = redact(match.group(0), 4)
        if _SESSION_CONTEXT.search(window):
            hits.append(
                Hit(
                    "session.provider-session-id",
                    "block",
                    match.start(),
                    match.end(),
                    f"provider session id: `{preview}`",
                )
            )
        else:
            hits.append(
                Hit(
                    "session.uuid",
                    "warn",
                    match.start(),
                    match.end(),
                    f"a UUID (if it names a session or conversation, remove it): `{preview}`",
                )
            )
    return hits


_PUBLIC_PEM_BEGIN = re.compile(
    r"-----BEGIN (?P<label>(?:[A-Z0-9]+ )*(?:PUBLIC KEY|CERTIFICATE(?: REQUEST)?))-----"
)
_BASE58 = r"[1-9A-HJ-NP-Za-km-z]"
_PUBLIC_MATERIAL = re.compile(
    r"(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp[0-9]+|sk-ssh-ed25519@openssh\.com)"
    r"\s+AAAA[A-Za-z0-9+/]+=*"
    r"|(?<![A-Za-z0-9])sha(?:256|384|512)-[A-Za-z0-9+/]{20,}=*"
    # public identifiers: EVM addresses, IPFS CIDs (v0 base58, v1 base32)
    r"|(?<![A-Za-z0-9])0x[0-9a-fA-F]{40}(?![0-9a-fA-F])"
    r"|(?<![A-Za-z0-9])Qm" + _BASE58 + r"{44}(?![A-Za-z0-9])"
    r"|(?<![A-Za-z0-9])baf[a-z2-7]{50,}(?![A-Za-z0-9])"
)
# a base58 account / program id (Solana and the like: 32-44 characters) next to words that say
# it is an address; without such a word a base58 string is judged like any other token
_BASE58_ACCOUNT = re.compile(r"(?<![A-Za-z0-9])" + _BASE58 + r"{32,44}(?![A-Za-z0-9])")
_ACCOUNT_CONTEXT = re.compile(
    r"program|address|pubkey|public key|mint|account|wallet|declare_id|solana|\bsol\b|signer"
    r"|validator|devnet|mainnet|testnet|airdrop",
    re.IGNORECASE,
)


def _public_spans(text: str) -> list[tuple[int, int]]:
    """Spans of public material (certificates, public keys, integrity hashes, addresses, CIDs)
    that the entropy rule must not flag. Linear: one scan per kind, `str.find` for PEM ends."""
    spans = [m.span() for m in _PUBLIC_MATERIAL.finditer(text)]
    no_end_after: dict[str, int] = {}
    for match in _PUBLIC_PEM_BEGIN.finditer(text):
        label = match.group("label")
        if label in no_end_after:
            continue
        end = text.find(f"-----END {label}-----", match.end())
        if end < 0:
            no_end_after[label] = match.start()  # no later BEGIN of this label has an END
            continue
        spans.append((match.start(), end + len(label) + 14))
    for match in _BASE58_ACCOUNT.finditer(text):
        window = text[max(0, match.start() - 48) : match.end() + 48]
        if _ACCOUNT_CONTEXT.search(window):
            spans.append(match.span())
    return spans


_INTERNAL_EQUALS = re.compile(r"=(?=[^=])")


# teamlore's content-hash suffix, or any short hex tag (`payments-retry-7c1e`, `…-7fd2f23`)
_SLUG_HASH_SUFFIX = re.compile(rf"-[0-9a-f]{{4,{SLUG_HASH_SUFFIX_LENGTH}}}$")
_ID_NUMBER = re.compile(r"[0-9]+[a-z]{0,4}|[a-z]{1,3}[0-9]+[a-z]?")
_SLUG_SHAPE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


def _is_slug_of_words(token: str) -> bool:
    """A lowercase slug made mostly of words (with short parts like `v2`, `30s` and possibly
    teamlore's content-hash suffix), as entry ids are; random keys have no word parts."""
    if _SLUG_SHAPE.fullmatch(token) is None:
        return False
    stem = _SLUG_HASH_SUFFIX.sub("", token)
    if stem != token and len(stem) <= 4:
        return True  # `v-1c675b6acf`: a short word and a hash suffix (ids of non-ASCII text)
    segments = stem.split("-")
    worded = sum(len(s) for s in segments if looks_like_words(s) or _ID_NUMBER.fullmatch(s))
    if not all(len(s) <= 4 or looks_like_words(s) for s in segments):
        return False
    return worded * 2 >= len(stem) - stem.count("-")


def is_high_entropy_secret(token: str) -> bool:
    """The entropy rule on one token (see module doc for what is exempt)."""
    if len(token) < ENTROPY_MIN_LENGTH:
        return False
    if _is_slug_of_words(token):
        return False  # an entry id: words, short parts such as `v2`, maybe a hash suffix
    if _HEX_OR_UUID.fullmatch(token) is not None:
        return False  # hex digests and UUIDs: long-hex warning / session-id rule
    if shannon_entropy(token) < ENTROPY_MIN_BITS:
        return False
    if looks_like_words(token):
        return False
    return not _decodes_to_text(token)


def _is_path_like(token: str) -> bool:
    """`com/team-harness/app/commit/<hash>`: segments that are words, hex or short."""
    segments = [s for s in token.split("/") if s]
    if len(segments) < 2 or not any(len(s) >= 3 and looks_like_words(s) for s in segments):
        return False
    return all(
        len(s) < 8
        or looks_like_words(s)
        or _HEX_OR_UUID.fullmatch(s) is not None
        or _is_slug_of_words(s)
        for s in segments
    )


def _token_leaves(start: int, token: str) -> Iterable[tuple[int, str]]:
    """Split `key=value` at internal `=` and path-like tokens at `/`; yield (offset, piece)."""
    offset = 0
    for part in _INTERNAL_EQUALS.split(token):
        if "/" in part.strip("/") and _is_path_like(part):
            inner = 0
            for segment in part.split("/"):
                yield start + offset + inner, segment
                inner += len(segment) + 1
        else:
            yield start + offset, part
        offset += len(part) + 1


def _encoded_hits(text: str) -> list[Hit]:
    """Base64 (standard or URL-safe) tokens whose decoded text holds a credential: a token
    encoded once is still the token (a Kubernetes secret, a Basic header, a CI variable)."""
    hits: list[Hit] = []
    for match in _ENTROPY_TOKEN.finditer(text):
        token = match.group(0).strip("-_/+")
        decoded = decoded_text(token)
        if decoded is None:
            continue
        inner = [h for h in _pattern_hits(decoded, _RULES) if h.severity == "block"]
        inner += _entropy_hits(decoded)
        if inner:
            start = match.start() + match.group(0).index(token)
            what = inner[0].message.split(":")[0]
            hits.append(
                Hit(
                    "secret.encoded",
                    "block",
                    start,
                    start + len(token),
                    f"base64 of a {what}: `{redact(token)}`",
                )
            )
    return hits


def _entropy_hits(text: str) -> list[Hit]:
    exempt = _Spans(_public_spans(text))
    hits: list[Hit] = []
    for match in _ENTROPY_TOKEN.finditer(text):
        for offset, piece in _token_leaves(match.start(), match.group(0)):
            token = piece.strip("-_/+=")
            if not token or not is_high_entropy_secret(token):
                continue
            start = offset + piece.index(token)
            end = start + len(token)
            if exempt.covers(start, end):
                continue
            hits.append(
                Hit(
                    "secret.high-entropy",
                    "block",
                    start,
                    end,
                    f"high-entropy token ({shannon_entropy(token):.2f} bits/char): "
                    f"`{redact(token)}`",
                )
            )
    return hits


class _Spans:
    """Disjoint (start, end) spans kept sorted: overlap and cover checks in O(log n), so a text
    with many hits is not scanned once per hit."""

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        for start, end in sorted(spans):
            if self.ends and start < self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], end)  # merge overlapping spans
            else:
                self.starts.append(start)
                self.ends.append(end)

    def overlaps(self, start: int, end: int) -> bool:
        index = bisect.bisect_left(self.ends, start + 1)  # first span ending after `start`
        return index < len(self.starts) and self.starts[index] < end

    def covers(self, start: int, end: int) -> bool:
        index = bisect.bisect_right(self.starts, start) - 1
        return index >= 0 and self.ends[index] >= end

    def add(self, start: int, end: int) -> None:
        index = bisect.bisect_left(self.starts, start)
        self.starts.insert(index, start)
        self.ends.insert(index, end)


def scan_content(text: str) -> list[Hit]:
    """Every content hit in `text`; a span is reported once, by the most specific rule."""
    accepted: list[Hit] = []
    taken = _Spans()
    for group in (
        _pattern_hits(text, _RULES),
        _session_id_hits(text),
        _encoded_hits(text),
        _entropy_hits(text),
        _pattern_hits(text, _WARN_RULES),
    ):
        for hit in group:
            if hit.end > hit.start and not taken.overlaps(hit.start, hit.end):
                accepted.append(hit)
                taken.add(hit.start, hit.end)
    return sorted(accepted, key=lambda h: (h.start, h.rule))


def scrub(message: str) -> str:
    """Replace anything secret-shaped inside a message by its preview."""
    for hit in sorted(scan_content(message), key=lambda h: -h.start):
        if hit.severity == "block":
            message = (
                message[: hit.start] + redact(message[hit.start : hit.end]) + message[hit.end :]
            )
    return message


# --- sanitizer ------------------------------------------------------------------------------

LOCAL_PATH_PLACEHOLDER = "<local-path>"
PROVIDER_PATH_PLACEHOLDER = "<provider-local-path>"
SESSION_ID_PLACEHOLDER = "<session-id>"
SESSION_FILE_PLACEHOLDER = "<session-file>"

_PROVIDER_PATH = re.compile(
    r"(?:" + _HOME_ABSOLUTE + r"(?:\\\\?|/))?" + _PROVIDER_LOCAL + _PATH_TAIL
)
_HOME_PATH = re.compile(_HOME_ABSOLUTE + _PATH_TAIL)
_TRANSCRIPT_FILE = re.compile(
    r"rollout-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}[-:][0-9]{2}[-:][0-9]{2}-"
    + _UUID
    + r"(?:\.jsonl)?|(?<![0-9A-Za-z-])"
    + _UUID
    + r"\.jsonl"
)


def _strip_worktree(text: str, worktree_root: str) -> str:
    root = worktree_root.rstrip("/\\")
    if not root:
        return text
    forms = {root, root.replace("\\", "/")}
    for form in sorted(forms, key=len, reverse=True):
        escaped = re.escape(form)
        text = re.sub(escaped + r"[/\\]+(?=[^\s/\\])", "", text)
        text = re.sub(escaped + r"(?![\w.-])", ".", text)
    return text


_PROVIDER_TRIGGERS = (".codex", ".claude", "codex_home", "appdata")
_HOME_TRIGGERS = ("/Users/", "/home/", "/root/", "/mnt/", "/var/folders", "\\home\\")


def sanitize_text(text: str, *, worktree_root: str | os.PathLike[str] | None = None) -> str:
    """Strip local references for promotion: paths under `worktree_root` become repo-relative,
    provider-local paths, other home paths, transcript file names and provider session ids become
    placeholders. Idempotent; its output has no `path.*` or `session.*` lint findings."""
    if worktree_root is not None:
        text = _strip_worktree(text, os.fspath(worktree_root))
    # the path patterns are slow on long texts (they try every position); a substring check
    # that every one of their matches needs skips them on texts that cannot match
    folded = text.casefold()
    if any(t in folded for t in _PROVIDER_TRIGGERS):
        text = _PROVIDER_PATH.sub(PROVIDER_PATH_PLACEHOLDER, text)
    if any(t in text for t in _HOME_TRIGGERS) or (
        (":\\" in text or ":/" in text) and ("users" in folded or "documents and" in folded)
    ):
        text = _HOME_PATH.sub(LOCAL_PATH_PLACEHOLDER, text)
    text = _TRANSCRIPT_FILE.sub(SESSION_FILE_PLACEHOLDER, text)
    pieces: list[str] = []
    position = 0
    for hit in sorted(_session_id_hits(text), key=lambda h: h.start):
        pieces += [text[position : hit.start], SESSION_ID_PLACEHOLDER]
        position = hit.end
    text = "".join(pieces) + text[position:]
    return text
