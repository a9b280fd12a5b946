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
model cache (`models/` of the state dir, `$TEAMLORE_MODEL_CACHE`) as one marshal file stamped
with the dictionary's date and this format; later processes read only that (~20 ms). Without
the dictionary every lookup is empty: a translation helps a search, it never fails one.
"""

from __future__ import annotations

import contextlib
import marshal
import threading
from collections.abc import Iterable
from pathlib import Path

from teamlore.core import errors
from teamlore.core.analyzer import stem
from teamlore.core.paths import ensure_private_dir, read_private_file, write_private_file

FORMAT = 1
MIN_WORD_CHARS = 2
MAX_WORD_CHARS = 4
SEPARATOR = "\x00"  # between a stem's Chinese words in the cached table

_tables: dict[Path | None, dict[str, str]] = {}
_lock = threading.Lock()


def chinese_words(english: Iterable[str], cache_dir: Path | None) -> dict[str, tuple[str, ...]]:
    """Each of the `english` stems (analyzer tokens) that the dictionary translates → its
    Chinese words, most common form first as the dictionary lists them."""
    table = _table(cache_dir)
    return {word: tuple(table[word].split(SEPARATOR)) for word in english if word in table}


def _table(cache_dir: Path | None) -> dict[str, str]:
    with _lock:
        if cache_dir not in _tables:
            _tables[cache_dir] = _load_or_derive(cache_dir)
        return _tables[cache_dir]


def _load_or_derive(cache_dir: Path | None) -> dict[str, str]:
    from teamlore.models.glosses import dictionary_version

    version = dictionary_version()
    if version is None:
        return {}
    cached = None if cache_dir is None else cache_dir / f"reverse-glosses-{version}.marshal"
    stamp = [FORMAT, version]
    if cached is not None:
        with contextlib.suppress(OSError, ValueError, EOFError, TypeError, errors.TeamloreError):
            data = marshal.loads(read_private_file(cached))
            if isinstance(data, dict) and data.get("stamp") == stamp:
                table: dict[str, str] = data["table"]
                return table
    table = derive()
    if cached is not None and cached.parent.parent.is_dir():  # never creates the state dir
        with contextlib.suppress(OSError, errors.TeamloreError):
            ensure_private_dir(cached.parent)
            write_private_file(cached, marshal.dumps({"stamp": stamp, "table": table}))
    return table


def derive() -> dict[str, str]:
    """English stem → its Chinese words joined by SEPARATOR, from the loaded dictionary."""
    from teamlore.models.glosses import first_sense, loaded_definitions

    words: dict[str, dict[str, None]] = {}
    for word, definitions in (loaded_definitions() or {}).items():
        if not MIN_WORD_CHARS <= len(word) <= MAX_WORD_CHARS:
            continue
        for english in _single_word_senses(first_sense(definitions)):
            words.setdefault(stem(english), {})[word] = None
    return {english: SEPARATOR.join(chinese) for english, chinese in words.items()}


def _single_word_senses(sense: str | None) -> list[str]:
    """The senses of one English word in a `first_sense` ("read; study", "to implement")."""
    parts = (part.strip().casefold() for part in (sense or "").replace(",", ";").split(";"))
    return [part for part in parts if part.isascii() and part.isalpha()]
