"""Versioned prompt assets of team memory: `extraction` (the extraction prompt and the transcript
preamble) and `adjudication`.

A prompt's version takes part in every binding and digest that carries it: change a word, bump
the version. The texts are Python constants (not data files) so every install ships them. This
file imports none of its modules (docs/architecture.md, "Packages and their direction").
"""
