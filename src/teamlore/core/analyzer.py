"""The one text analyzer behind every FTS table.

Text is analyzed in Python and stored in FTS5 already tokenized (space-separated tokens that
SQLite's `unicode61` tokenizer keeps intact); queries pass through the same analyzer.

- NFKC, then case folding.
- Identifiers (`snake_case`, `kebab-case`, `dotted.name`, `a/path`, `camelCase`) are split into
  their parts, and the whole identifier is kept too (separators dropped), so `parse_line`,
  `parseLine` and `parse line` all meet.
- CJK runs (Han, kana, hangul) become unigrams plus overlapping bigrams, so one- and
  two-character Chinese queries match and Chinese near-duplicates share many tokens.
- Light English stemming (`stem`) of plain lowercase ASCII words and identifier parts, at index
  and query time alike: `tests`/`test`, `prompts`/`prompt`, `failed`/`failing`/`fail`.
- Queries (`parse_query`): English stopwords are not search terms (unless the query has nothing
  else); `"quoted words"` are phrases; `word*` is a prefix. See docs/search.md.

Changing any rule here changes `ANALYZER_VERSION`; every FTS table records the version it was
built with and is rebuilt when it differs.
"""

from __future__ import annotations

import contextlib
import heapq
import importlib
import marshal
import re
import sys
import unicodedata
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, NamedTuple

from teamlore.core import errors
from teamlore.core.locations import state_dir_path
from teamlore.core.paths import ensure_private_dir, read_private_file, write_private_file

ANALYZER_VERSION = "teamlore-analyzer@2"

# Its Unicode patterns are compiled once per state dir, not once per process
# (docs/architecture.md, "A short CLI process"): `re` compiles a character class by walking every
# BMP code point of its ranges in a Python loop; the analyzer's CJK class holds ~40,000 of them
# and its token pattern holds it three times, so a process that analyzes one non-ASCII text (a
# Chinese query, a snippet with an accent) paid ~50 million instructions to compile it. The
# compiled program (`re._compiler`'s code list) is a few hundred integers: it is derived once,
# kept in the state dir's model cache (marshal, stamped with the pattern and the exact Python and
# `_sre` versions) and handed to `_sre.compile` by later processes. Anything unexpected — another
# Python, a damaged copy, a missing private API — falls back to `re.compile` silently; tests
# compare the two on real session text and random text (tests/core/test_compiled_patterns.py); the
# glosses' Han pattern is loaded the same way.
PATTERN_FORMAT = 1
PATTERN_CACHE_DIR = "models"  # the state dir's model cache, beside the tokenizer subsets
# what `_sre.compile` takes after the pattern text: flags, code, groups, groupindex, indexgroup
_Program = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]


def compile_once(pattern: str) -> re.Pattern[str]:
    """`re.compile(pattern)`, from the program stored in the state dir when there is one."""
    try:
        sre = importlib.import_module("_sre")
        stamp = f"{PATTERN_FORMAT}|{sys.version}|{sre.MAGIC}|{pattern}"
        cached = (
            state_dir_path()
            / PATTERN_CACHE_DIR
            / f"pattern-{zlib.crc32(stamp.encode()):08x}.marshal"
        )
        program = _load_program(cached, stamp) or _derive_program(pattern, cached, stamp)
        compiled: re.Pattern[str] = sre.compile(pattern, *program)
        return compiled
    except Exception:  # any failure of the private API: the public one
        return re.compile(pattern)


def _load_program(cached: Path, stamp: str) -> _Program | None:
    with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
        data = marshal.loads(read_private_file(cached))
        if isinstance(data, tuple) and len(data) == 2 and data[0] == stamp:
            program: _Program = data[1]
            return program
    return None


def _derive_program(pattern: str, cached: Path, stamp: str) -> _Program:
    """The program `re.compile` would build (as `re._compiler.compile` does), stored when the
    state dir exists (it is never created here)."""
    parser: Any = importlib.import_module("re._parser")
    compiler: Any = importlib.import_module("re._compiler")
    parsed = parser.parse(pattern, 0)
    groupindex: dict[str, int] = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    program: _Program = (
        int(parsed.state.flags),
        [int(word) for word in compiler._code(parsed, 0)],  # opcodes are int subclasses
        parsed.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )
    if cached.parent.parent.is_dir():
        # a read-only or unsafe state dir: this process derived it, the next one will too
        with contextlib.suppress(OSError, errors.TeamloreError):
            ensure_private_dir(cached.parent)
            write_private_file(cached, marshal.dumps((stamp, program)))
    return program


_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
# a word: letters/digits (no CJK), optionally joined by identifier separators. `[^\W_<CJK>]` is
# a word character that is neither `_` nor CJK, in one class (a lookahead per character made
# this pattern the slowest part of analyzing non-ASCII text)
_LETTER = rf"[^\W_{_CJK}]"
_TOKEN = rf"[{_CJK}]+|{_LETTER}+(?:[_\-./]{_LETTER}+)*"


# The patterns with the CJK classes are compiled on first use, from the program kept in the
# state dir (`compile_once`: `re` walks every code point of a class's ranges, ~4 ms of a CLI
# process for `_TOKEN`), and an ASCII text (most queries, most snippets) is read by
# `_ASCII_TOKEN`, which matches exactly what `_TOKEN` does in ASCII (docs/architecture.md,
# "A short CLI process").
@lru_cache(maxsize=1)
def _token() -> re.Pattern[str]:
    """A token of any text: a CJK run, or a word or identifier (see `_LETTER`)."""
    return compile_once(_TOKEN)


@lru_cache(maxsize=1)
def _cjk_run() -> re.Pattern[str]:
    return compile_once(f"[{_CJK}]+")


def _token_pattern(text: str) -> re.Pattern[str]:
    """The pattern that finds `text`'s tokens: `_ASCII_TOKEN` when it is ASCII."""
    return _ASCII_TOKEN if text.isascii() else _token()


def _is_cjk_run(raw: str) -> bool:
    """Whether a token match is a CJK run (every CJK range begins at U+1100 or above)."""
    return raw[0] >= "\u1100" and _cjk_run().fullmatch(raw) is not None


_SEPARATORS = re.compile(r"[_\-./]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_a-zA-Z]+")

MAX_TOKEN_CHARS = 64  # longer runs (base64, minified blobs) are noise for search


class TermGroup(NamedTuple):
    """One query unit: matches when `whole` occurs, or when every part occurs."""

    whole: str
    parts: tuple[str, ...]


# English function words: never required search terms (docs/search.md). They stay in the index,
# so a quoted phrase that contains them still matches.
_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could d did didn do does doesn doing don down
    during each even ever every few for from further had has have having he her here hers
    herself him himself his how i if in into is isn it its itself just let lets ll m many me
    more most much my myself no nor not now of off on once only or other our ours ourselves
    out over own please re s same she should so some such t than that the their theirs them
    themselves then there these they this those through to too under until up us ve very was
    wasn we were what when where which while who whom why will with won would yet you your
    yours yourself yourselves"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_VOWELS = frozenset("aeiouy")


def _undouble(stem: str) -> str:
    if len(stem) >= 4 and stem[-1] == stem[-2] and stem[-1] not in "aeiouylsz":
        return stem[:-1]
    return stem


def _strip_suffix(word: str, suffix: str) -> str | None:
    """`word` without `suffix` when at least three letters with a vowel remain."""
    if not word.endswith(suffix):
        return None
    stem = word[: -len(suffix)]
    if len(stem) < 3 or _VOWELS.isdisjoint(stem):
        return None
    return stem


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Light English stemming of one lowercase ASCII word: plural -s/-es/-ies, -ed, -ing and a
    final -e go, so `tests`/`test`, `prompts`/`prompt`, `failed`/`failing`/`fails`/`fail` and
    `create`/`created`/`creating` meet. Deliberately small and predictable (no Porter steps for
    -ation, -ness, …); anything else is returned unchanged."""
    if len(word) <= 3 or word in STOPWORDS or not (word.isascii() and word.isalpha()):
        return word
    if word[-1] not in "sdge":  # no rule below ends elsewhere (`word` is no stopword)
        return word
    w = word
    if w.endswith("ies") and not w.endswith(("eies", "aies")):
        w = w[:-3] + "y"
    elif w.endswith(("sses", "xes", "ches", "shes", "zzes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ied") and len(w) > 4:
        w = w[:-3] + "y"
    elif cut := (None if w.endswith("eed") else _strip_suffix(w, "ed")) or _strip_suffix(w, "ing"):
        w = _undouble(cut)
    if len(w) >= 4 and w.endswith("e"):
        w = w[:-1]
    # a stem must not become a stopword (`theme` → `them`): keep it apart from the function word
    return w + "e" if w in STOPWORDS else w


def _split_identifier(raw: str) -> list[str]:
    """`raw` is one token as `_TOKEN` matches it (its pieces: letters and digits between
    separators); other text may keep a separator at an end."""
    if raw.islower() or raw.isupper():  # no piece to split at its case (digits: one part)
        return [p.casefold() for p in _SEPARATORS.split(raw) if p]
    parts: list[str] = []
    for piece in _SEPARATORS.split(raw):
        if not piece:
            continue
        if piece.isascii() and not piece.islower() and not piece.isupper():
            parts.extend(_CAMEL.findall(piece) or [piece])
        else:
            parts.append(piece)
    return [p.casefold() for p in parts if p]


def _cjk_tokens(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    unigrams = list(run)
    bigrams = [run[i : i + 2] for i in range(len(run) - 1)]
    return unigrams + bigrams


_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[_\-./][A-Za-z0-9]+)*")


def _group_of(raw: str) -> TermGroup | None:
    """The tokens of one non-CJK word or identifier: `whole` is the identifier with separators
    dropped (only when it has several parts), `parts` its parts, all stemmed."""
    if len(raw) > MAX_TOKEN_CHARS * 4:
        return None
    if raw.isascii() and raw.isalnum() and (raw.islower() or raw.isupper() or raw.isdigit()):
        if len(raw) > MAX_TOKEN_CHARS:
            return None
        word = stem(raw.casefold())
        return TermGroup(word, (word,))
    parts = [p for p in _split_identifier(raw) if len(p) <= MAX_TOKEN_CHARS]
    if not parts:
        return None
    whole = "".join(parts)
    stemmed = tuple(map(stem, parts))
    if len(parts) > 1 and len(whole) <= MAX_TOKEN_CHARS:
        # stemmed too, so the identifier typed as one word (`parselines`) meets it
        return TermGroup(stem(whole), stemmed)
    return TermGroup("", stemmed) if len(parts) > 1 else TermGroup(stemmed[0], stemmed)


# cached: code repeats its names (`_word_text` keeps its own cache of the joined tokens)
_word_group = lru_cache(maxsize=1 << 16)(_group_of)


def _word_tokens(raw: str) -> tuple[str, ...]:
    return _tokens_of(_word_group(raw))


def _tokens_of(group: TermGroup | None) -> tuple[str, ...]:
    if group is None:
        return ()
    if len(group.parts) > 1 and group.whole:
        return (group.whole, *group.parts)
    return group.parts


def _ascii_tokens(text: str) -> list[str]:
    return [token for word in _ASCII_TOKEN.findall(text) for token in _word_tokens(word)]


def tokens(text: str) -> list[str]:
    """Every index token of `text`, in order (with repeats, so BM25 sees term frequency)."""
    # A pure-ASCII text is already NFKC-normal and has no CJK, which allows the much faster
    # ASCII pattern. Tokens never span a newline, so other texts are analyzed line by line and
    # only their non-ASCII lines take the general path.
    if text.isascii():
        return _ascii_tokens(text)
    out: list[str] = []
    for line in text.split("\n"):
        if line.isascii():
            out.extend(_ascii_tokens(line))
            continue
        for match in _token().finditer(unicodedata.normalize("NFKC", line)):
            raw = match.group()
            if _is_cjk_run(raw):
                out.extend(_cjk_tokens(raw.casefold()))
            else:
                out.extend(_word_tokens(raw))
    return out


@lru_cache(maxsize=1 << 16)
def _word_text(raw: str) -> str:
    """`_word_tokens(raw)` joined by spaces ('' when it has none)."""
    return " ".join(_tokens_of(_group_of(raw)))


def _words_text(words: list[str]) -> str:
    # The analyzer's hot loop, written without Python bytecode per word: `map` calls the C-level
    # lru_cache wrapper, and code and prose repeat their words, so nearly every call is a hit.
    return " ".join(filter(None, map(_word_text, words)))


# every byte of a UTF-8 text that cannot be part of a token match, mapped to a space: the ASCII
# characters outside `[A-Za-z0-9_\-./]`. Bytes of multi-byte characters stay (no match spans
# an ASCII gap, whatever the non-ASCII characters around it are).
_GAP_BYTES = bytes(
    c if c >= 0x80 or chr(c).isalnum() or chr(c) in "_-./" else 0x20 for c in range(256)
)


def _chunk_text(chunk: bytes) -> str:
    """The analyzed form of a run of UTF-8 bytes between two ASCII gaps (`analyze`): ASCII by
    the fast pattern; with other characters (already NFKC) by the general one, a CJK run as its
    unigrams and bigrams. Not empty, it ends with a space (`_Chunks`)."""
    if chunk.isalnum() and (
        chunk.islower()
        or chunk.isupper()
        or chunk.isdigit()
        or (chunk.istitle() and chunk.isalpha())
    ):
        # one plain ASCII word (`prompt`, `HTTP`, `2026`, `Good`): what `_word_group` makes of
        # it, without its pattern, identifier split and caches (a cold sync's distinct chunks)
        return stem(chunk.decode("ascii").lower()) + " " if len(chunk) <= MAX_TOKEN_CHARS else ""
    if chunk.isascii():
        words = _ASCII_TOKEN.findall(chunk.decode("ascii"))
        text = _word_text(words[0]) if len(words) == 1 else _words_text(words)
    else:
        found = _token().findall(chunk.decode("utf-8", "surrogatepass"))
        text = " ".join(filter(None, map(_token_text, found)))
    return text + " " if text else ""


class _Chunks(dict[bytes, str]):
    """Analyzed chunks by their bytes (code and prose repeat their words and paths). A plain
    dict read by `map(chunks.__getitem__, ...)`: a hit is one C-level lookup, where an
    `lru_cache` of a `bytes` argument builds a key tuple per call (~25 % of analyzing). Each
    value ends with a space unless empty, so `analyze` joins them with no `filter` pass."""

    def __missing__(self, chunk: bytes) -> str:
        # separators at a chunk's edges are never part of a token (`returns.`, `./src`): the
        # chunk analyzes as the one without them, often analyzed already
        bare = chunk.strip(_EDGE_BYTES)
        if len(bare) == len(chunk):
            text = _chunk_text(chunk)
        elif bare:
            text = self[bare]
        else:  # separators only (`.`, `--`)
            text = ""
        self[chunk] = text
        return text


_ARROW = "→".encode()
_EDGE_BYTES = b"_-./"  # the separators `_ASCII_TOKEN` and `_TOKEN` allow only between letters
_CHUNKS = _Chunks()
MAX_CHUNKS = 1 << 16  # emptied when it holds more (a bound on its memory, as `lru_cache`'s)


@lru_cache(maxsize=1 << 16)
def _token_text(raw: str) -> str:
    """The analyzed form of one `_TOKEN` match: a CJK run's unigrams and bigrams, or
    `_word_text` (cached like it, so `map` serves a chunk's tokens without a Python loop)."""
    if _is_cjk_run(raw):
        return " ".join(_cjk_tokens(raw.casefold()))
    return _word_text(raw)


def analyze(text: str) -> str:
    """The FTS document form of `text`: `" ".join(tokens(text))`, built faster.

    No token spans an ASCII character other than letters, digits and `_-./`, so the text
    (NFKC first when it is not ASCII: NFKC never joins or splits across a newline, so
    normalizing it whole is normalizing it line by line) is cut at those characters into chunks
    by C-level byte `translate` and `split` of its UTF-8 form, and each distinct chunk is
    analyzed once (`_chunk_text`)."""
    data = (
        text.encode("ascii")
        if text.isascii()
        # `→` numbers the lines of every file Claude Code reads (`12→import`); it is never in
        # a token, so as a gap it leaves the line numbers and the words ASCII chunks
        else unicodedata.normalize("NFKC", text)
        .encode("utf-8", "surrogatepass")
        .replace(_ARROW, b" ")
    )
    if len(_CHUNKS) > MAX_CHUNKS:
        _CHUNKS.clear()
    return "".join(map(_CHUNKS.__getitem__, data.translate(_GAP_BYTES).split()))[:-1]


def forget_words() -> None:
    """Empty the caches of analyzed words (`stem` and the `_word_*`, `_CHUNKS` and
    `_token_text` caches, up to 65,536 entries each). A cold sync's had grown to ~20 MiB once
    its files were indexed, memory that embedding the turns then needs (docs/sessions.md,
    "Memory at the peak"); a later text analyzes its words again, to the same form."""
    for cached in (stem, _word_group, _word_text, _token_text):
        cached.cache_clear()
    _CHUNKS.clear()


def cached_words() -> int:
    """How many analyzed words and chunks the caches hold (what `forget_words` empties)."""
    caches = (stem, _word_group, _word_text, _token_text)
    return sum(c.cache_info().currsize for c in caches) + len(_CHUNKS)


# -- queries ------------------------------------------------------------------------------------


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


class QueryTerm(NamedTuple):
    """One unit of a query: a word or identifier (`whole`, or every part), a CJK run (every
    bigram), a `"quoted phrase"` (its tokens in order) or a `prefix*` (the last part a prefix).
    A Chinese word may also match as written in the other script (`variants`: each form's
    tokens, every one required; docs/search.md, "Simplified and Traditional characters")."""

    kind: Literal["word", "phrase", "prefix"]
    whole: str
    parts: tuple[str, ...]
    variants: tuple[tuple[str, ...], ...] = ()

    def forms(self) -> tuple[QueryTerm, ...]:
        """This term as typed and each of its `variants` as a plain word term: where a term has
        other forms, it matches where any of these does."""
        if not self.variants:
            return (self,)
        typed = self._replace(variants=())
        return (typed, *(QueryTerm(self.kind, "", form) for form in self.variants))

    def expr(self) -> str:
        """This term as an FTS5 MATCH expression."""
        if not self.variants:
            return self._own_expr()
        return "(" + " OR ".join(form._own_expr() for form in self.forms()) + ")"

    def _own_expr(self) -> str:
        if self.kind == "phrase":
            return " + ".join(_quote(p) for p in self.parts)
        star = " *" if self.kind == "prefix" else ""
        conj = " AND ".join(
            _quote(p) + (star if i == len(self.parts) - 1 else "") for i, p in enumerate(self.parts)
        )
        if len(self.parts) > 1:
            conj = f"({conj})"
        if self.whole and len(self.parts) > 1:
            return f"({_quote(self.whole)}{star} OR {conj})"
        return conj

    def found_in(self, padded: str) -> bool:
        """Whether this term occurs in an analyzed text given as `" " + analyze(text) + " "`."""
        if self.variants:
            return any(form.found_in(padded) for form in self.forms())
        if self.kind == "phrase":
            return f" {' '.join(self.parts)} " in padded
        if self.kind == "prefix":
            *rest, last = self.parts
            if self.whole and len(self.parts) > 1 and f" {self.whole}" in padded:
                return True
            return f" {last}" in padded and all(f" {p} " in padded for p in rest)
        if self.whole and len(self.parts) > 1 and f" {self.whole} " in padded:
            return True
        return all(f" {p} " in padded for p in self.parts)


_PHRASE = re.compile(r'"([^"]*)"')


@lru_cache(maxsize=1)
def _prefix_word() -> re.Pattern[str]:
    """`word*`, a prefix term: compiled only for a query that holds a `*` (compiling the
    Unicode classes costs ~3 ms of every CLI process otherwise)."""
    return compile_once(rf"({_TOKEN})\*")


def _terms(text: str) -> list[QueryTerm]:
    text = unicodedata.normalize("NFKC", text)
    out: list[QueryTerm] = []
    position = 0
    for quoted in _PHRASE.finditer(text):
        out.extend(_plain_terms(text[position : quoted.start()]))
        phrase = _phrase_tokens(quoted.group(1))
        if len(phrase) == 1 and not _is_cjk_run(phrase[0]):
            out.append(QueryTerm("word", phrase[0], phrase))
        elif phrase:
            out.append(QueryTerm("phrase", "", phrase))
        position = quoted.end()
    out.extend(_plain_terms(text[position:]))
    return out


def _phrase_tokens(text: str) -> tuple[str, ...]:
    """A quoted phrase's tokens in order. A phrase of one CJK run is its bigrams: the index holds
    a run's unigrams and then its bigrams, so the bigrams of a word inside a longer run (无痕 in
    用无痕视窗) follow one another, and its unigrams do not. It stays a phrase however short, so
    a quoted function word (`"什么"`) is searched as typed, never dropped."""
    run = text.strip()
    if run and _is_cjk_run(run) and len(run) > 1:
        run = run.casefold()
        return tuple(run[i : i + 2] for i in range(len(run) - 1))
    return tuple(tokens(text))


def _plain_terms(text: str) -> list[QueryTerm]:
    out: list[QueryTerm] = []
    prefixes = {m.start(1) for m in _prefix_word().finditer(text)} if "*" in text else set()
    for match in _token_pattern(text).finditer(text):
        raw = match.group()
        if _is_cjk_run(raw):
            run = raw.casefold()
            if len(run) == 1:
                out.append(QueryTerm("word", run, (run,)))
            else:
                bigrams = tuple(run[i : i + 2] for i in range(len(run) - 1))
                out.append(QueryTerm("word", "", bigrams))
            continue
        group = _word_group(raw)
        if group is None:
            continue
        kind: Literal["word", "prefix"] = "prefix" if match.start() in prefixes else "word"
        out.append(QueryTerm(kind, group.whole, group.parts))
    return out


def is_stopword(term: QueryTerm) -> bool:
    """Whether `term` is an English function word (`STOPWORDS`), which `parse_query` drops."""
    return term.kind == "word" and len(term.parts) == 1 and term.parts[0] in STOPWORDS


class Query(NamedTuple):
    """A parsed search query (see `parse_query`)."""

    terms: tuple[QueryTerm, ...]

    def match_all(self) -> str:
        """Every term must occur ('' when there are none)."""
        return " AND ".join(t.expr() for t in self.terms)

    def match_any(self) -> str:
        """Any term may occur: BM25 ranks the matches ('' when there are none)."""
        return " OR ".join(t.expr() for t in self.terms)

    def coverage(self, analyzed: str) -> int:
        """How many of the terms occur in an analyzed text (`analyze` output)."""
        padded = f" {analyzed} "
        return sum(1 for t in self.terms if t.found_in(padded))

    def coverage_bound(self, text: str) -> int:
        """An upper bound of `coverage(analyze(text))`, computed without analyzing: a term can
        occur only if the start of each of its tokens occurs in the folded text (a stem keeps
        all but at most the last letter of its word: `copies` → `copy`)."""
        folded = (
            text.casefold() if text.isascii() else unicodedata.normalize("NFKC", text).casefold()
        )
        return sum(
            1
            for t in self.terms
            if any(
                all((p[:-1] if len(p) > 2 else p) in folded for p in form)
                for form in (t.parts, *t.variants)
            )
        )

    def highlight_tokens(self) -> frozenset[str]:
        """Index tokens a snippet may centre on."""
        return frozenset(
            tok
            for t in self.terms
            for tok in (t.whole, *t.parts, *(p for form in t.variants for p in form))
            if tok
        )


def parse_query(text: str) -> Query:
    """What a person typed → search terms. Stopwords are dropped unless nothing else is left;
    a term repeated counts once."""
    terms = list(dict.fromkeys(_terms(text)))
    content = [t for t in terms if not is_stopword(t)]
    return Query(tuple(content or terms))


def searchable_query(text: str) -> Query:
    """`parse_query(text)`, refused with QUERY_EMPTY (`query_without_terms`) when it holds no
    term to search."""
    parsed = parse_query(text)
    if not parsed.terms:
        raise query_without_terms(text)
    return parsed


def query_without_terms(query: str) -> errors.TeamloreError:
    """QUERY_EMPTY for a query in which no term was found, saying why: it is blank, or its words
    are too long to search (a word of over `MAX_TOKEN_CHARS` is left out: base64, a minified
    blob), or it holds only punctuation, or emoji and other symbols (`✅`, `→`: the index leaves
    them out, as FTS5's tokenizer would; docs/search.md, "Refusals")."""
    if not query.strip():
        return errors.TeamloreError(errors.QUERY_EMPTY, "the query is empty")
    too_long = [word for word in _QUERY_WORD.findall(query) if len(word) > MAX_TOKEN_CHARS]
    if not too_long:
        kinds = {unicodedata.category(c)[0] for c in query}
        what = "emoji and symbols are" if "S" in kinds else "punctuation is"
        what = "emoji, symbols and punctuation are" if {"S", "P"} <= kinds else what
        return errors.TeamloreError(
            errors.QUERY_EMPTY, f"{query!r} has no searchable terms: {what} not searched"
        )
    why = f"too long to search (over {MAX_TOKEN_CHARS} characters)"
    if too_long == [query.strip()]:
        return errors.TeamloreError(errors.QUERY_EMPTY, f"{too_long[0]!r} is {why}")
    return errors.TeamloreError(
        errors.QUERY_EMPTY, f"{query!r} has no searchable terms: {too_long[0]!r} is {why}"
    )


_QUERY_WORD = re.compile(r"[\w\-./]+")


def query_groups(text: str) -> list[TermGroup]:
    """The terms of `text` as groups (phrases and prefixes as their plain tokens)."""
    return [TermGroup(t.whole, t.parts) for t in parse_query(text).terms]


def fts_query(text: str, *, mode: str = "all") -> str:
    """An FTS5 MATCH expression for `text`; '' when it has no searchable terms.

    mode "all": every term must match (selection). mode "any": any token may match, ranked by
    BM25 (near-duplicate recall).
    """
    query = parse_query(text)
    if not query.terms:
        return ""
    if mode == "all":
        return query.match_all()
    if mode == "any":
        distinct: dict[str, None] = {}
        for t in query.terms:
            for token in (t.whole, *t.parts):
                if token:
                    distinct[token] = None
        return " OR ".join(_quote(t) for t in distinct)
    raise ValueError(f"unknown mode {mode!r}")


def relative_score(terms_matched: int, bm25: float, best_bm25: float) -> float:
    """The number of query terms a result holds plus its BM25 strength, for a small collection
    (a team's memory: tens of documents): there
    BM25's IDF is about zero for any word most documents share (SQLite floors it at 1e-6), so the
    absolute strength would read `.00` for every hit. The strength relative to the best
    candidate holding as many terms still tells the hits apart: terms held + 0.99 × BM25 / best
    BM25 (`1.99` = one term, the strongest of those). Ordered exactly like the results."""
    if best_bm25 <= 0:
        return float(terms_matched)
    return round(terms_matched + 0.99 * max(bm25, 0.0) / best_bm25, 2)


# -- snippets -----------------------------------------------------------------------------------

SNIPPET_CHARS = 160
SNIPPET_LEAD = 48  # characters shown before the matching term


def _first_match(text: str, highlight: frozenset[str]) -> int | None:
    if text.isascii():
        found = _first_ascii_match(text, highlight) if len(text) > _SCAN_CHARS else None
        if found is not None:
            return found
        if not _may_hold(text, highlight):
            return None  # no word of it can hold a token of `highlight`
    cjk_terms = [t for t in highlight if not t.isascii() and _cjk_run().search(t)]
    for match in _token_pattern(text).finditer(text):
        word = match.group()
        if highlight.isdisjoint(tokens(word)):
            continue
        folded = word.casefold()
        offsets = [i for i in (folded.find(t) for t in cjk_terms) if i >= 0]
        # casefolding keeps CJK offsets; for other words the match starts at the word
        return match.start() + (min(offsets) if offsets and len(folded) == len(word) else 0)
    return None


# every character an ASCII identifier's tokens leave out (`_SEPARATORS`), and a run of letters
# and digits too long to be one part (`MAX_TOKEN_CHARS`: its identifier's whole skips it)
_SEPARATOR_CHARS = str.maketrans("", "", "_-./")
_LONG_PART = re.compile(rf"[A-Za-z0-9]{{{MAX_TOKEN_CHARS + 1}}}")


def _may_hold(text: str, highlight: frozenset[str]) -> bool:
    """False only when no word of the ASCII `text` has a token in `highlight`, found without
    analyzing its words (a search's hits the words did not find: most of a hybrid page). Every
    token of an ASCII word, but for its last letter, occurs in the word lowercased with its
    separators dropped (`_kept_start`): `stem` cuts a suffix, then may put back a `y` and an
    `e` (`ties` → `ty`, `theme` → `them` + `e`); an identifier's parts are pieces of it and
    its whole their concatenation. A text with a part too long for a token is analyzed (True)."""
    if _LONG_PART.search(text):
        return True
    squeezed = text.lower().translate(_SEPARATOR_CHARS)
    return any(_kept_start(token) in squeezed for token in highlight if token.isascii())


def _kept_start(token: str) -> str:
    """What of an ASCII `token` its word holds (`_may_hold`): all but its last letter, or but
    its last two when it ends in an `e` `stem` may have added (`whies` → `why` + `e`)."""
    return token[:-2] if token.endswith("e") else token[:-1]


# a longer ASCII text is not analyzed word by word to find the first match (a tool's output)
_SCAN_CHARS = 256


def _first_ascii_match(text: str, highlight: frozenset[str]) -> int | None:
    """Where `_first_match` finds the first word of an ASCII `text` whose tokens include one of
    `highlight`, found without analyzing every word: every token of a word begins with three
    letters the lowercased word holds (a stem keeps its word's start; an identifier's whole
    begins with its first part), so only the words around those places are analyzed. None when
    no word is found this way (the caller then scans word by word)."""
    folded = text.lower()
    places = [(folded.find(t[:3]), t[:3]) for t in highlight if t.isascii()]
    heap = [place for place in places if place[0] >= 0]
    heapq.heapify(heap)
    while heap:
        at, start = heapq.heappop(heap)
        # the word holding `at`: from the whitespace before it (tokens never span whitespace)
        begin = max(text.rfind(" ", 0, at), text.rfind("\n", 0, at), text.rfind("\t", 0, at)) + 1
        for match in _ASCII_TOKEN.finditer(text, begin):
            if match.start() > at:
                break
            if not highlight.isdisjoint(tokens(match.group())):
                return match.start()
        following = folded.find(start, at + 1)
        if following >= 0:
            heapq.heappush(heap, (following, start))
    return None


def snippet(
    text: str, highlight: frozenset[str], width: int = SNIPPET_CHARS, at: int | None = None
) -> str:
    """About `width` characters of the original `text` (whitespace runs as one space) around
    the first word whose tokens include one of `highlight` (or the word at `at`); `…` marks a
    cut at either end."""
    position = _first_match(text, highlight) if at is None else at
    start = 0 if position is None else max(0, position - SNIPPET_LEAD)
    if start > 0:
        # begin on a word boundary when one is near
        space = text.rfind(" ", max(0, start - 16), start)
        start = space + 1 if space >= 0 else start
    end = min(len(text), start + width)
    excerpt = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + excerpt + ("…" if end < len(text) else "")
