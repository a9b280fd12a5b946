"""Chinese words for an English query word: the dictionary of `glosses` read backwards, so an
English query can find a Chinese turn by its words (docs/hybrid-search.md, "English queries
over Chinese turns").

    chinese_words(["contributor"], cache_dir)  # {"contributor": ("貢獻者", "贡献者", …)}

A Chinese word answers an English word when its first usable sense (`glosses.first_sense`, a
developer's sense first) holds that word alone as one of its `;`/`,`-separated senses: 貢獻者
"contributor", 閾值 "threshold", 實作 "implement". Only words of two to four characters count
(one character has a dozen senses; longer words are set phrases). Words are compared by their
analyzer stem, as the index compares them.

Reading CC-CEDICT and inverting it costs a process ~1 s, so the table is derived once into the
model cache (`models/` of the state dir, `$TEAMLORE_MODEL_CACHE`) as a SQLite table named after
the dictionary file it was made from (path, size, modification time) and this format; a query
then reads only its own words from it (~1 ms; the whole table as one marshal file took ~35 ms).
Without the dictionary every lookup is empty: a translation helps a search, it never fails one.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
import zlib
from collections.abc import Iterable
from pathlib import Path

from teamlore.core.analyzer import Query, QueryTerm, parse_query, stem
from teamlore.models.word_tables import read_words, write_words

FORMAT = 4  # 3: the table of models/word_tables.py; 4: names after common senses
MIN_WORD_CHARS = 2
MAX_WORD_CHARS = 4
SEPARATOR = "\x00"  # between a stem's Chinese words in the table

_derived: dict[str, str] | None = None  # the table this process derived (no cache to read)
_lock = threading.Lock()


def chinese_words(english: Iterable[str], cache_dir: Path | None) -> dict[str, tuple[str, ...]]:
    """Each of the `english` stems (analyzer tokens) that the dictionary translates → its
    Chinese words, in the dictionary's order."""
    words = list(dict.fromkeys(english))
    cached = _cached_file(cache_dir) if words else None
    if cached is None:
        return {}
    with contextlib.suppress(sqlite3.Error):
        if cached.is_file():
            return _split(read_words(cached, words))
    table = _derive_once()
    if cache_dir is not None and cache_dir.parent.is_dir():  # never creates the state dir
        write_words(cached, table.items(), "reverse-glosses-*.sqlite3")
    return _split({word: table[word] for word in words if word in table})


def _split(found: dict[str, str]) -> dict[str, tuple[str, ...]]:
    return {word: tuple(chinese.split(SEPARATOR)) for word, chinese in found.items()}


def _cached_file(cache_dir: Path | None) -> Path | None:
    """Where the table made from the installed dictionary is kept (under the null device when
    there is no cache: never there, never written); None without a dictionary."""
    from teamlore.models.glosses import dictionary_identity

    identity = dictionary_identity()
    if identity is None:
        return None
    name = f"reverse-glosses-{FORMAT}-{zlib.crc32(identity.encode()):08x}.sqlite3"
    return (cache_dir or Path(os.devnull)) / name


def _derive_once() -> dict[str, str]:
    global _derived
    with _lock:
        if _derived is None:
            _derived = derive()
        return _derived


def derive() -> dict[str, str]:
    """English stem → its Chinese words joined by SEPARATOR, from the loaded dictionary."""
    from teamlore.models.glosses import first_sense, loaded_definitions

    words: dict[str, dict[str, None]] = {}
    for word, definitions in (loaded_definitions() or {}).items():
        if not MIN_WORD_CHARS <= len(word) <= MAX_WORD_CHARS:
            continue
        for english in _single_word_senses(first_sense(definitions)):
            words.setdefault(_key(english), {})[word] = None
    return {english: SEPARATOR.join(chinese) for english, chinese in words.items()}


def _single_word_senses(sense: str | None) -> list[str]:
    """The senses of one English word in a `first_sense` ("read; study", "to implement",
    "one-off")."""
    parts = (part.strip().casefold() for part in (sense or "").replace(",", ";").split(";"))
    return [part for part in parts if _ONE_WORD.fullmatch(part)]


_ONE_WORD = re.compile("[a-z]+(?:-[a-z]+)*")


def _key(english: str) -> str:
    """What the analyzer makes of one English word as a query term: its stem, or for a
    hyphenated word its parts joined (`one-off` → `oneoff`: `QueryTerm.whole`)."""
    if "-" not in english:
        return stem(english)
    group = parse_query(english).terms[0]
    return group.whole or group.parts[0]


def translation_terms(parsed: Query, model_cache: Path | None) -> list[list[tuple[QueryTerm, ...]]]:
    """Per term of `parsed`, the search terms of each of its Chinese translations (the shape
    of `glosses.gloss_terms`); none for a term that is not a plain word."""
    words = [term.whole or term.parts[0] for term in parsed.terms if term.kind == "word"]
    translations = chinese_words(words, model_cache)
    return [
        [(parse_query(w).terms[0],) for w in translations.get(term.whole or term.parts[0], ())]
        if term.kind == "word"
        else []
        for term in parsed.terms
    ]
