"""Versioned prompt assets of team memory.

A prompt's version takes part in every binding and digest that carries it: change a word, bump
the version. The texts are Python constants (not data files) so every install ships them.
"""

from __future__ import annotations

from teamlore.memory.extraction.prompts.extraction import (
    EXTRACTION_PROMPT,
    EXTRACTION_PROMPT_VERSION,
    TRANSCRIPT_PREAMBLE,
)

__all__ = ["EXTRACTION_PROMPT", "EXTRACTION_PROMPT_VERSION", "TRANSCRIPT_PREAMBLE"]
