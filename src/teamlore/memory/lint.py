"""Memory lint: what must never reach the repository, and what a reviewer should look at.

`lint_text` checks one document (entry, scene, doctrine, Skill, index or plain text) and returns
findings; `lint_tree` checks a whole `.threadshare/memory` tree; `sanitize_text` strips local
references before promotion. Policy version: `LINT_POLICY_VERSION`.

Block (promotion refused):
- `secret.*`: known credential shapes (AWS, GitHub incl. fine-grained, GitLab, npm, PyPI, Google,
  Slack, OpenAI/Anthropic `sk-`, Stripe, SendGrid, Hugging Face, Telegram, private key blocks,
  JWTs, credentials in URLs, Authorization headers, `password=`/`api_key=`-style assignments with a
  literal value) and high-entropy tokens (>= 4.0 bits/char over >= 20 chars of the base64/hex
  alphabet that are not words, identifiers, paths, UUIDs, hex digests or base64 of plain text).
- `session.*`: provider session ids (a UUID of any version next to session/agent/... words) and
  transcript file names (`rollout-<time>-<uuid>.jsonl`, `<uuid>.jsonl`).
- `path.provider-local` (`~/.codex`, `~/.claude`, `.codex/sessions`, `.claude/projects`, ...) and
  `path.home-absolute` (`/Users/x`, `/home/x`, `/root`, `C:\\Users\\x`).
- `format.*`, `capacity.*`, `slug.*`: the file does not follow the format (same ids as
  `MemoryFormatError.reason`), a capacity is exceeded, an id or name is not a valid slug.
Warn (shown in review, never blocks): long hex runs other than 40-hex commit hashes, e-mail
addresses, ip:port, home-relative paths, BOM/CRLF, non-canonical bytes, unknown limitation codes.

Full 40-hex commit hashes and repo-relative paths are public evidence and never flagged. Messages
never contain the matched secret, only a redacted preview (`ghp_…[40 chars]`).
"""

from __future__ import annotations

import base64
import binascii
import math
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from teamlore.core import errors
from teamlore.core.errors import MEMORY_NOT_INITIALIZED, TeamloreError
from teamlore.memory import documents as docs
from teamlore.memory import layout
from teamlore.memory.frontmatter import MemoryFormatError, decode_text, line_of
from teamlore.memory.slugs import HASH_SUFFIX_LENGTH, slug_problem

LINT_POLICY_VERSION = "teamlore-sanitize@1"
ENTROPY_MIN_BITS = 4.0
ENTROPY_MIN_LENGTH = 20
SESSION_CONTEXT_WINDOW = 48
MAX_SCENES = 15
SCENES_NEAR_LIMIT = 12
MAX_ENTRIES = 4096
MAX_SKILLS = 256

Severity = Literal["block", "warn"]
DocumentKind = Literal["entry", "scene", "doctrine", "skill", "index", "text"]


class Finding(BaseModel):
    """One lint result. `line` is 1-based; 0 means the whole file or directory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rule: str
    severity: Severity
    file: str
    line: int
    message: str


class LintReport(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
    )

    policy_version: str = LINT_POLICY_VERSION
    files: list[str]
    findings: list[Finding]

    @property
    def blocked(self) -> bool:
        return any(f.severity == "block" for f in self.findings)

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "block"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warn"]


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
    core = token.rstrip("=")
    if len(core) < 16 or len(core) % 4 == 1:
        return False
    altchars = b"-_" if ("-" in core or "_" in core) else None
    if altchars is not None and ("+" in core or "/" in core):
        return False
    try:
        raw = base64.b64decode(core + "=" * (-len(core) % 4), altchars=altchars, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    if not text:
        return False
    readable = sum(ch.isprintable() or ch in "\n\t" for ch in text)
    alphanumeric = sum(ch.isalnum() for ch in text)
    return readable / len(text) >= 0.97 and alphanumeric / len(text) >= 0.3


def _is_placeholder(value: str) -> bool:
    return _PLACEHOLDER.fullmatch(value) is not None


def _random_enough(value: str) -> bool:
    return not looks_like_words(value) and not _is_placeholder(value)


# --- content rules --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Hit:
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
_HOME_ABSOLUTE = (
    r"(?:(?<![\w.~-])/(?:Users|home)/[A-Za-z0-9._-]+|(?<![\w.~/-])/root(?=/)|"
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
        re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?P<user>[^\s/@:]*):(?P<password>[^\s/@]+)@"),
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
            r"(?i)(?<![A-Za-z0-9])(?P<key>[A-Za-z0-9_.-]*?" + _SECRET_KEYWORDS + r")(?![A-Za-z0-9])"
            r"[\"']?\s*(?::=|=>|=|:)\s*"
            r"(?:(?P<quote>[\"'`])(?P<qvalue>[^\"'`\s]{6,})(?P=quote)|(?P<value>[^\s\"'`,;]{6,}))"
        ),
        "secret assigned to a credential name",
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

_SESSION_ID = re.compile(r"(?<![0-9A-Za-z-])" + _UUID + r"(?![0-9A-Za-z-])")
_SESSION_CONTEXT = re.compile(
    r"session|agent|conversation|thread|rollout|transcript|resume|codex|claude|chat",
    re.IGNORECASE,
)
_ENTROPY_TOKEN = re.compile(r"[A-Za-z0-9+/=_-]{20,}")


def known_session_id_findings(text: str, *, path: str, known: AbstractSet[str]) -> list[Finding]:
    """Block every UUID in `text` that is a provider session id this machine has indexed (the
    context-word rule cannot see an id that stands alone); `known` holds lowercase UUIDs."""
    findings = []
    for match in _SESSION_ID.finditer(text):
        if match.group(0).lower() in known:
            findings.append(
                _finding(
                    "session.known-session-id",
                    "block",
                    path,
                    f"a provider session id from this machine: `{redact(match.group(0), 4)}`",
                    line_of(text, match.start()),
                )
            )
    return findings


def _match_span(rule: _PatternRule, match: re.Match[str]) -> tuple[int, int, str]:
    if rule.rule == "secret.assignment":
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


def _pattern_hits(text: str, rules: Iterable[_PatternRule]) -> list[_Hit]:
    hits: list[_Hit] = []
    for rule in rules:
        for match in rule.pattern.finditer(text):
            accept = _assignment_ok if rule.rule == "secret.assignment" else rule.accept
            if accept is not None and not accept(match):
                continue
            start, end, value = _match_span(rule, match)
            if rule.rule == "secret.assignment":
                preview = f"{match.group('key')}=" + redact(value, 0)
            else:
                preview = redact(value, rule.keep)
            hits.append(_Hit(rule.rule, rule.severity, start, end, f"{rule.what}: `{preview}`"))
    return hits


def _session_id_hits(text: str) -> list[_Hit]:
    """A UUID next to session words blocks; any other UUID warns (a reviewer should know it
    may name a session; prepare also blocks the ids this machine has indexed)."""
    hits: list[_Hit] = []
    for match in _SESSION_ID.finditer(text):
        window = text[
            max(0, match.start() - SESSION_CONTEXT_WINDOW) : match.end() + SESSION_CONTEXT_WINDOW
        ]
        preview = redact(match.group(0), 4)
        if _SESSION_CONTEXT.search(window):
            hits.append(
                _Hit(
                    "session.provider-session-id",
                    "block",
                    match.start(),
                    match.end(),
                    f"provider session id: `{preview}`",
                )
            )
        else:
            hits.append(
                _Hit(
                    "session.uuid",
                    "warn",
                    match.start(),
                    match.end(),
                    f"a UUID (if it names a session or conversation, remove it): `{preview}`",
                )
            )
    return hits


_PUBLIC_MATERIAL = re.compile(
    r"-----BEGIN (?P<label>(?:[A-Z0-9]+ )*(?:PUBLIC KEY|CERTIFICATE(?: REQUEST)?))-----"
    r".*?-----END (?P=label)-----"
    r"|(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp[0-9]+|sk-ssh-ed25519@openssh\.com)"
    r"\s+AAAA[A-Za-z0-9+/]+=*"
    r"|(?<![A-Za-z0-9])sha(?:256|384|512)-[A-Za-z0-9+/]{20,}=*",
    re.DOTALL,
)
_INTERNAL_EQUALS = re.compile(r"=(?=[^=])")


_SLUG_HASH_SUFFIX = re.compile(rf"-[0-9a-f]{{{HASH_SUFFIX_LENGTH}}}$")
_SLUG_SHAPE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


def _is_slug_of_words(token: str) -> bool:
    """A lowercase slug made mostly of words (with short parts like `v2`, `30s` and possibly
    teamlore's content-hash suffix), as entry ids are; random keys have no word parts."""
    if _SLUG_SHAPE.fullmatch(token) is None:
        return False
    stem = _SLUG_HASH_SUFFIX.sub("", token)
    segments = stem.split("-")
    worded = sum(len(s) for s in segments if looks_like_words(s))
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
        len(s) < 8 or looks_like_words(s) or _HEX_OR_UUID.fullmatch(s) is not None for s in segments
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


def _entropy_hits(text: str) -> list[_Hit]:
    exempt = [m.span() for m in _PUBLIC_MATERIAL.finditer(text)]
    hits: list[_Hit] = []
    for match in _ENTROPY_TOKEN.finditer(text):
        for offset, piece in _token_leaves(match.start(), match.group(0)):
            token = piece.strip("-_/+=")
            if not token or not is_high_entropy_secret(token):
                continue
            start = offset + piece.index(token)
            end = start + len(token)
            if any(lo <= start and end <= hi for lo, hi in exempt):
                continue
            hits.append(
                _Hit(
                    "secret.high-entropy",
                    "block",
                    start,
                    end,
                    f"high-entropy token ({shannon_entropy(token):.2f} bits/char): "
                    f"`{redact(token)}`",
                )
            )
    return hits


def _overlaps(hit: _Hit, accepted: list[_Hit]) -> bool:
    return any(hit.start < other.end and other.start < hit.end for other in accepted)


def scan_content(text: str) -> list[_Hit]:
    """Every content hit in `text`; a span is reported once, by the most specific rule."""
    accepted: list[_Hit] = []
    for group in (
        _pattern_hits(text, _RULES),
        _session_id_hits(text),
        _entropy_hits(text),
        _pattern_hits(text, _WARN_RULES),
    ):
        for hit in group:
            if not _overlaps(hit, accepted):
                accepted.append(hit)
    return sorted(accepted, key=lambda h: (h.start, h.rule))


def _scrub(message: str) -> str:
    """Replace anything secret-shaped inside a message by its preview."""
    for hit in sorted(scan_content(message), key=lambda h: -h.start):
        if hit.severity == "block":
            message = (
                message[: hit.start] + redact(message[hit.start : hit.end]) + message[hit.end :]
            )
    return message


# --- documents ------------------------------------------------------------------------------


def _format_finding(error: MemoryFormatError, path: str) -> Finding:
    subject = f"field `{error.field}`: " if error.field else ""
    return Finding(
        rule=error.reason,
        severity="block",
        file=path,
        line=error.line or 0,
        message=_scrub(subject + error.why),
    )


def _canonical_bytes(kind: DocumentKind, data: bytes, path: str) -> tuple[bytes | None, list[str]]:
    """Load the document; return its canonical bytes and any unknown limitation codes."""
    if kind == "entry":
        entry = docs.load_entry(data, path)
        unknown = [item for item in entry.limitations if item not in docs.KNOWN_LIMITATIONS]
        return docs.dump_entry(entry), unknown
    if kind == "scene":
        return docs.dump_scene(docs.load_scene(data, path)), []
    if kind == "doctrine":
        return docs.dump_doctrine(docs.load_doctrine(data, path)), []
    if kind == "skill":
        return docs.dump_skill(docs.load_skill(data, path)), []
    if kind == "index":
        return docs.dump_index(docs.load_index(data, path)), []
    return None, []


def lint_bytes(data: bytes, *, path: str, kind: DocumentKind) -> list[Finding]:
    """Lint one file's bytes; `path` is repo-relative and only used to label findings (and, for
    entries and Skills, to check the id against the file or directory name)."""
    findings: list[Finding] = []
    try:
        decoded = decode_text(data, path)
    except MemoryFormatError as exc:
        return [_format_finding(exc, path)]
    text = decoded.text
    if decoded.had_bom:
        findings.append(
            Finding(
                rule="format.bom",
                severity="warn",
                file=path,
                line=1,
                message="file starts with a UTF-8 BOM",
            )
        )
    if decoded.had_crlf:
        findings.append(
            Finding(
                rule="format.crlf",
                severity="warn",
                file=path,
                line=line_of(text, text.find("\n")),
                message="CRLF line endings (the writer uses LF)",
            )
        )
    if kind != "text":
        try:
            canonical, unknown = _canonical_bytes(kind, data, path)
        except MemoryFormatError as exc:
            findings.append(_format_finding(exc, path))
        else:
            if canonical is not None and canonical != text.encode("utf-8"):
                findings.append(
                    Finding(
                        rule="format.non-canonical",
                        severity="warn",
                        file=path,
                        line=0,
                        message="valid, but not in canonical form (a rewrite would change it)",
                    )
                )
            for code in unknown:
                findings.append(
                    Finding(
                        rule="entry.unknown-limitation",
                        severity="warn",
                        file=path,
                        line=0,
                        message=_scrub(f"limitation `{code}` is not in the known vocabulary"),
                    )
                )
    for hit in scan_content(text):
        findings.append(
            Finding(
                rule=hit.rule,
                severity=hit.severity,
                file=path,
                line=line_of(text, hit.start),
                message=hit.message,
            )
        )
    return _sorted(findings)


def lint_text(text: str, *, path: str, kind: DocumentKind = "text") -> list[Finding]:
    """Lint one document given as text. `kind` "text" checks content only."""
    return lint_bytes(text.encode("utf-8", "surrogatepass"), path=path, kind=kind)


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.file, f.line, f.rule, f.message))


# --- tree -----------------------------------------------------------------------------------


def _finding(rule: str, severity: Severity, path: str, message: str, line: int = 0) -> Finding:
    return Finding(rule=rule, severity=severity, file=path, line=line, message=message)


def _read_file(dir_fd: int, name: str) -> bytes | None:
    """Read a regular file without following a symlink; None if it is larger than allowed."""
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(docs.MAX_FILE_BYTES + 1)
    return None if len(data) > docs.MAX_FILE_BYTES else data


class _TreeLinter:
    def __init__(self) -> None:
        self.files: list[str] = []
        self.findings: list[Finding] = []
        self.entry_ids: set[str] = set()
        self.superseded: list[tuple[str, str]] = []

    def _kind_of(self, dir_fd: int, name: str, relative: str) -> str:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            self.findings.append(
                _finding(
                    "tree.symlink",
                    "block",
                    relative,
                    "symbolic links are not allowed in the memory tree",
                )
            )
            return "link"
        if stat.S_ISDIR(st.st_mode):
            return "dir"
        if stat.S_ISREG(st.st_mode):
            return "file"
        self.findings.append(_finding("tree.not-a-file", "block", relative, "not a regular file"))
        return "other"

    def lint_file(self, dir_fd: int, name: str, relative: str, kind: DocumentKind) -> None:
        self.files.append(relative)
        data = _read_file(dir_fd, name)
        if data is None:
            self.findings.append(
                _finding(
                    "capacity.file-size",
                    "block",
                    relative,
                    f"file is over {docs.MAX_FILE_BYTES} bytes",
                )
            )
            return
        self.findings.extend(lint_bytes(data, path=relative, kind=kind))
        if kind == "entry":
            try:
                entry = docs.load_entry(data, relative)
            except MemoryFormatError:
                return
            self.entry_ids.add(entry.id)
            if entry.superseded_by is not None:
                self.superseded.append((relative, entry.superseded_by))

    def lint_documents_dir(self, parent_fd: int, name: str, kind: DocumentKind) -> int:
        relative = f"{layout.MEMORY_ROOT}/{name}"
        fd = layout.open_dir_nofollow(parent_fd, name, relative)
        count = 0
        try:
            for child in sorted(os.listdir(fd)):
                child_rel = f"{relative}/{child}"
                child_kind = self._kind_of(fd, child, child_rel)
                if child_kind != "file":
                    if child_kind == "dir":
                        self.findings.append(
                            _finding(
                                "tree.unexpected-file", "warn", child_rel, "unexpected directory"
                            )
                        )
                    continue
                if not child.endswith(".md"):
                    self.findings.append(
                        _finding("tree.unexpected-file", "warn", child_rel, "not a memory document")
                    )
                    continue
                count += 1
                self.lint_file(fd, child, child_rel, kind)
        finally:
            os.close(fd)
        return count

    def lint_skills_dir(self, parent_fd: int) -> int:
        relative = layout.SKILLS_DIR
        fd = layout.open_dir_nofollow(parent_fd, "skills", relative)
        count = 0
        try:
            for child in sorted(os.listdir(fd)):
                child_rel = f"{relative}/{child}"
                if self._kind_of(fd, child, child_rel) != "dir":
                    continue
                count += 1
                problem = slug_problem(child, max_length=docs.SKILL_NAME_MAX_LENGTH)
                if problem is not None:
                    self.findings.append(
                        _finding(
                            "slug.invalid",
                            "block",
                            child_rel,
                            _scrub(f"Skill directory name {problem}"),
                        )
                    )
                skill_fd = layout.open_dir_nofollow(fd, child, child_rel)
                try:
                    skill_rel = f"{child_rel}/{layout.SKILL_FILE_NAME}"
                    try:
                        kind = self._kind_of(skill_fd, layout.SKILL_FILE_NAME, skill_rel)
                    except FileNotFoundError:
                        self.findings.append(
                            _finding(
                                "tree.missing-skill-file",
                                "block",
                                child_rel,
                                "Skill directory has no SKILL.md",
                            )
                        )
                        continue
                    if kind == "file":
                        self.lint_file(skill_fd, layout.SKILL_FILE_NAME, skill_rel, "skill")
                finally:
                    os.close(skill_fd)
        finally:
            os.close(fd)
        return count

    def capacity(self, count: int, limit: int, rule: str, path: str, what: str) -> None:
        if count > limit:
            self.findings.append(_finding(rule, "block", path, f"{count} {what} (at most {limit})"))


def lint_tree(worktree_root: str | os.PathLike[str]) -> LintReport:
    """Lint every memory file under `<worktree_root>/.threadshare/memory` without following
    symlinks. Raises MEMORY_NOT_INITIALIZED when there is no tree, UNSAFE_PATH when its root is
    reached through a symlink."""
    linter = _TreeLinter()
    try:
        memory = layout.open_memory_root(worktree_root)
        memory_fd = memory.__enter__()
    except FileNotFoundError:
        raise TeamloreError(MEMORY_NOT_INITIALIZED) from None
    try:
        names = sorted(os.listdir(memory_fd))
        if "index.json" not in names:
            linter.findings.append(
                _finding(
                    "tree.missing-index",
                    "warn",
                    layout.INDEX_FILE,
                    "index.json is missing (run init)",
                )
            )
        for name in names:
            relative = f"{layout.MEMORY_ROOT}/{name}"
            kind = linter._kind_of(memory_fd, name, relative)
            if kind in ("link", "other"):
                continue
            if kind == "file" and name == "index.json":
                linter.lint_file(memory_fd, name, relative, "index")
            elif kind == "file" and name == "doctrine.md":
                linter.lint_file(memory_fd, name, relative, "doctrine")
            elif kind == "dir" and name == "entries":
                entries = linter.lint_documents_dir(memory_fd, name, "entry")
                linter.capacity(
                    entries, MAX_ENTRIES, "capacity.entry-count", layout.ENTRIES_DIR, "entries"
                )
            elif kind == "dir" and name == "scenes":
                scenes = linter.lint_documents_dir(memory_fd, name, "scene")
                linter.capacity(
                    scenes, MAX_SCENES, "capacity.scene-count", layout.SCENES_DIR, "scenes"
                )
                if SCENES_NEAR_LIMIT <= scenes <= MAX_SCENES:
                    linter.findings.append(
                        _finding(
                            "capacity.scene-count-near-limit",
                            "warn",
                            layout.SCENES_DIR,
                            f"{scenes} scenes: merge before creating more (limit {MAX_SCENES})",
                        )
                    )
            elif kind == "dir" and name == "skills":
                skills = linter.lint_skills_dir(memory_fd)
                linter.capacity(
                    skills, MAX_SKILLS, "capacity.skill-count", layout.SKILLS_DIR, "Skills"
                )
            else:
                linter.findings.append(
                    _finding(
                        "tree.unexpected-file", "warn", relative, "not part of the memory layout"
                    )
                )
    finally:
        memory.__exit__(None, None, None)
    for path, target in linter.superseded:
        if target not in linter.entry_ids:
            linter.findings.append(
                _finding(
                    "entry.superseded-target-missing",
                    "warn",
                    path,
                    f"superseded_by names `{target}`, which is not an entry in this tree",
                )
            )
    return LintReport(files=sorted(linter.files), findings=_sorted(linter.findings))


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


def lint_paths(worktree_root: str | os.PathLike[str], paths: Sequence[Path]) -> LintReport:
    """Lint the given files (absolute paths). Files inside the memory tree are checked with the
    rules of their kind; any other file is linted as plain text (e.g. a draft before it is
    copied into the tree). A missing file is a usage error; a symlink is never followed."""
    root = Path(os.path.realpath(worktree_root))
    files: list[str] = []
    findings: list[Finding] = []
    for path in paths:
        absolute = Path(os.path.abspath(path))
        try:
            shown = absolute.relative_to(root).as_posix()
        except ValueError:
            shown = absolute.name
        kind = cast(DocumentKind, layout.document_kind(shown) or "text")
        files.append(shown)
        if absolute.is_symlink():
            findings.append(_finding("path.symlink", "block", shown, "file is a symlink"))
            continue
        if not absolute.is_file():
            raise TeamloreError(errors.INVALID_ARGUMENT, f"{shown}: no such file")
        dir_fd = os.open(absolute.parent, os.O_RDONLY)
        try:
            data = _read_file(dir_fd, absolute.name)
        finally:
            os.close(dir_fd)
        if data is None:
            findings.append(
                _finding(
                    "capacity.file-size",
                    "block",
                    shown,
                    f"file is over {docs.MAX_FILE_BYTES} bytes",
                )
            )
            continue
        findings.extend(lint_bytes(data, path=shown, kind=kind))
    return LintReport(files=files, findings=_sorted(findings))


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
_HOME_TRIGGERS = ("/Users/", "/home/", "/root/", "/mnt/", "/var/folders")


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
    for hit in sorted(_session_id_hits(text), key=lambda h: -h.start):
        text = text[: hit.start] + SESSION_ID_PLACEHOLDER + text[hit.end :]
    return text
