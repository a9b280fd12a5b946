"""What the secret rules look for, in one table, and the cheap test built on it.

The `secret.*` rules (rules.py) take their keywords and the needles of their gates from
`SECRET_SHAPES`; the normalized view (normalize.py) its look-alike letters and invisible
characters from here; the token rules (scan.py, heuristics.py) the token pattern, the entropy
thresholds and the base64 decoder. `may_hold_secret` reads the same table: False when the
scanner would find no `secret.*` hit in a text. Reading personal memory runs it on every
document (personal/reader.py) and loads the scanner, 15-35 ms of imports a session-start hook
pays on every session, only for a text it lets through. So this module imports no other part of
the scanner, and the package's `__init__` loads nothing until a name is asked for.

Each pattern rule has a shape: `needles`, one of which is in each text the rule matches, and a
`pattern`, which each of the rule's matches also matches. A case-sensitive shape is found when
one of its needles is in the text and its pattern is found in it. A case-insensitive shape (its
pattern `(?i:…)`) has lowercase needles, one of which each match of its pattern starts with:
the pattern is tried only where a needle is in the case-folded text (searched from every
position of a long text, such a pattern costs milliseconds).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import NamedTuple


class Shape(NamedTuple):
    """The cheap test a `secret.*` pattern rule's every match passes (module doc)."""

    needles: tuple[str, ...]
    pattern: str = ""

    @property
    def anycase(self) -> bool:
        return self.pattern.startswith("(?i")


SECRET_KEYWORDS = (
    r"(?:pass(?:word|wd|phrase)|secret(?:[_-]?key)?|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|"
    r"auth[_-]?key|credentials?)"
)
# the Chinese words for a password, passphrase, secret or private key and token (Simplified
# and Traditional): `secret.prose` reads them as it reads `password` (登录密码 and 访问令牌
# hold 密码 and 令牌). Not 验证码: a one-time code is spent in minutes, no secret to block
PROSE_KEYS_ZH = (
    "密码",
    "密碼",
    "口令",
    "密钥",
    "密鑰",
    "秘钥",
    "秘鑰",
    "金钥",
    "金鑰",
    "私钥",
    "私鑰",
    "令牌",
)
AWS_PREFIXES = (
    "AKIA",
    "ASIA",
    "ABIA",
    "ACCA",
    "AGPA",
    "AIDA",
    "AIPA",
    "ANPA",
    "ANVA",
    "AROA",
    "APKA",
)
SECRET_SHAPES: dict[str, Shape] = {
    "secret.private-key": Shape(("PRIVATE KEY",)),
    "secret.aws-access-key": Shape(AWS_PREFIXES, "(?:" + "|".join(AWS_PREFIXES) + ")[A-Z0-9]{16}"),
    "secret.github-token": Shape(
        ("gho_", "ghp_", "ghr_", "ghs_", "ghu_", "github_pat_"),
        r"gh[oprsu]_[A-Za-z0-9]{16}|github_pat_[A-Za-z0-9_]{22}",
    ),
    "secret.gitlab-token": Shape(
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-"),
        r"gl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_-]{20}",
    ),
    "secret.npm-token": Shape(("npm_",), r"npm_[A-Za-z0-9]{36}"),
    "secret.pypi-token": Shape(("pypi-AgE",), r"pypi-AgE[A-Za-z0-9_-]{50}"),
    "secret.google-api-key": Shape(("AIza",), r"AIza[0-9A-Za-z_-]{35}"),
    "secret.google-oauth": Shape(
        ("ya29.", "GOCSPX-"),
        r"ya29\.[0-9A-Za-z_-]{20}|GOCSPX-[0-9A-Za-z_-]{20}",
    ),
    "secret.slack-webhook": Shape(("https://hooks.slack.com/",)),
    "secret.slack-token": Shape(
        ("xox", "xapp-"),
        r"xox[abposr]-[A-Za-z0-9-]{10}|xapp-[0-9]-[A-Za-z0-9-]{10}",
    ),
    "secret.stripe-key": Shape(
        ("_live_", "_test_", "whsec_"),
        r"[sr]k_(?:live|test)_[0-9A-Za-z]{16}|whsec_[A-Za-z0-9]{24}",
    ),
    "secret.model-api-key": Shape(("sk-",), r"sk-[A-Za-z0-9_-]{20}"),
    "secret.sendgrid-key": Shape(("SG.",), r"SG\.[A-Za-z0-9_-]{16}"),
    "secret.huggingface-token": Shape(("hf_",), r"hf_[A-Za-z0-9]{30}"),
    "secret.telegram-bot-token": Shape((":AA",), r"[0-9]{8}:AA[A-Za-z0-9_-]{33}"),
    "secret.jwt": Shape(("eyJ",), r"eyJ[A-Za-z0-9_-]{8}"),
    "secret.url-credentials": Shape(("://",), r"://[^\s/@:]*:[^\s/@]+@"),
    "secret.authorization-header": Shape(
        ("authorization", "bearer"),
        r"(?i:(?:authorization\s*[:=]\s*[\"']?(?:bearer|basic|token)|bearer)"
        r"\s+[A-Za-z0-9._~+/-]{16})",
    ),
    "secret.assignment": Shape(
        ("pass", "secret", "token", "api", "access", "private", "auth", "credential"),
        r"(?i:" + SECRET_KEYWORDS + r"[\"']?\s*[:=])",
    ),
    "secret.prose": Shape(
        ("pass", "pw", "mot de passe", "contrase", *PROSE_KEYS_ZH),
        r"(?i:(?:pass(?:word|wd|phrase)|pass phrase|pw|pwd|passwort|mot de passe"
        r"|contrase(?:ñ|n)a|"
        + "|".join(PROSE_KEYS_ZH)
        + r")[\s:=(（是为為设設改换換更变變修均都就统統])",
    ),
    "secret.cli-flag": Shape(
        ("--",),
        r"(?i:--(?:password|passwd|token|api-key|secret|client-secret)[= ])",
    ),
}

# the two rules that judge tokens of the base64 alphabet (scan.py): one at least
# ENTROPY_MIN_LENGTH characters long, of ENTROPY_MIN_BITS a character or more, or the base64 of
# readable text holding a secret
TOKEN_RULES = ("secret.high-entropy", "secret.encoded")
SECRET_TOKEN = re.compile(r"[A-Za-z0-9+/=_-]{20,}")
INTERNAL_EQUALS = re.compile(r"=(?=[^=])")  # `key=value` inside a token
ENTROPY_MIN_BITS = 4.0
ENTROPY_MIN_LENGTH = 20

# Cyrillic and Greek letters that look like Latin ones (the Unicode confusables most used to
# disguise ASCII tokens), and the characters that render as nothing: zero-width space and
# joiners, word joiner, BOM, soft hyphen, invisible operators, the Mongolian vowel separator
LOOK_ALIKES = "АВЕЅІЈКМНОРСТХУаеѕіјорсхуԁһԛԝΑΒΕΖΗΙΚΜΝΟΡΤΥΧοαικνρτυχ"
AS_ASCII = "ABESIJKMHOPCTXYaesijopcxydhqwABEZHIKMNOPTYXoaikvptux"
CONFUSABLES: dict[str, str] = dict(zip(LOOK_ALIKES, AS_ASCII, strict=True))
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u2061\u2062\u2063\u2064\u180e"


def shannon_entropy(token: str) -> float:
    counts = Counter(token)
    size = len(token)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def base64_text(token: str) -> str | None:
    """The UTF-8 text `token` is the base64 (standard or URL-safe) of, else None."""
    core = token.rstrip("=")
    if len(core) < 16 or len(core) % 4 == 1:
        return None
    url_safe = "-" in core or "_" in core
    if url_safe and ("+" in core or "/" in core):
        return None
    import base64
    import binascii

    try:
        padded = core + "=" * (-len(core) % 4)
        raw = base64.b64decode(padded, altchars=b"-_" if url_safe else None, validate=True)
        return raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


# -- may a text hold a secret?

_FOLD = str.maketrans(LOOK_ALIKES, AS_ASCII, INVISIBLE)
_FOLDED = re.compile(f"[{LOOK_ALIKES}{INVISIBLE}]")  # `str.translate` goes a character at a time
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
# the letters a case-insensitive pattern matches to an ASCII one that `str.lower` does not turn
# into it, once the text is NFKC (`ſ` and the Kelvin sign are `s` and `K` by then)
_I_LOOK_ALIKES = str.maketrans({"\u0130": "i", "\u0131": "i"})


def may_hold_secret(text: str) -> bool:
    """False when the secret scanner would find no `secret.*` hit in `text`; True may still be
    no secret (the scanner then decides)."""
    view = as_scanned(text)
    folded = case_folded(view)
    return any(shape_found(view, folded, shape) for shape in SECRET_SHAPES.values()) or any(
        _may_be_secret_token(m.group()) for m in SECRET_TOKEN.finditer(view)
    )


def case_folded(view: str) -> str:
    """`view` lowercased, with every letter a case-insensitive pattern reads as an ASCII letter
    turned into that letter (`İ`, `ı`: `i`); each character where it is in `view` (`İ` is the
    one character `str.lower` makes two of)."""
    if view.isascii() or ("\u0130" not in view and "\u0131" not in view):
        return view.lower()
    return view.translate(_I_LOOK_ALIKES).lower()


def shape_found(view: str, folded: str, shape: Shape) -> bool:
    """Whether `shape` is in `view` (`folded`: `case_folded(view)`)."""
    if not shape.anycase:
        if not any(needle in view for needle in shape.needles):
            return False
        return not shape.pattern or re.search(shape.pattern, view) is not None
    pattern = re.compile(shape.pattern)
    for needle in shape.needles:
        start = folded.find(needle)
        while start >= 0:
            if pattern.match(view, start) is not None:
                return True
            start = folded.find(needle, start + 1)
    return False


def as_scanned(text: str) -> str:
    """`text` as the scanner reads it (NFKC a character at a time, no invisible characters,
    look-alike letters folded), or with a few more letters folded: the scanner folds them only
    in a token that mixes scripts, so a token it reads as its shape reads so here too."""
    if text.isascii():
        return text
    import unicodedata

    def normalized(match: re.Match[str]) -> str:
        run = match.group()
        if unicodedata.is_normalized("NFKC", run):
            return run
        return "".join(unicodedata.normalize("NFKC", ch) for ch in run)

    folded = text.translate(_FOLD) if _FOLDED.search(text) else text
    if unicodedata.is_normalized("NFKC", folded):
        return folded  # each character is its own NFKC (nearly every text a person writes)
    return _NON_ASCII_RUN.sub(normalized, folded)


def _may_be_secret_token(token: str) -> bool:
    """The scanner's entropy rule judges each `=`-separated part of a token, or each `/`
    segment of one that reads as a path; its encoded rule, the whole token as base64."""
    for part in INTERNAL_EQUALS.split(token):
        for leaf in (part, *part.split("/")):
            leaf = leaf.strip("-_/+=")
            if len(leaf) >= ENTROPY_MIN_LENGTH and shannon_entropy(leaf) >= ENTROPY_MIN_BITS:
                return True
    return bool(base64_text(token.strip("-_/+")))
