"""`duplicate_of` compares a candidate only with the entries that could be its duplicate.

It compared every candidate with every approved entry: 300,000 comparisons for 50 candidates of
a 1,500-entry tree, two of the four seconds of `memory review --limit 50`. Now an inverted index
of the entries' words picks the few that could be the same words or a near-duplicate; the
verdicts are the ones comparing every entry gives (`every_entry` below is the code before),
on a generated tree of real entry files.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from teamlore.memory.promotion import duplicates
from teamlore.memory.promotion.duplicates import ApprovedTexts, Duplicate
from teamlore.memory.store import layout

VOCABULARY = [f"w{n}" for n in range(400)]


def every_entry(texts: ApprovedTexts, mine_texts: list[str], besides: set[str]) -> Duplicate | None:
    """`duplicate_of` before the prefilter: every approved entry compared."""
    mine = [w for w in (duplicates.words(t) for t in mine_texts) if w]
    near: Duplicate | None = None
    for entry_id, theirs in texts._load().items():
        if entry_id in besides:
            continue
        for one in mine:
            for other in theirs:
                same = duplicates._similar(one, other)
                if same is None:
                    continue
                found = Duplicate(entry_id, layout.entry_path(entry_id), same)
                if same:
                    return found
                near = near or found
    return near


def tree(root: Path, bodies: dict[str, str]) -> Path:
    entries = root / ".threadshare" / "memory" / "entries"
    entries.mkdir(parents=True)
    for slug, body in bodies.items():
        (entries / f"{slug}.md").write_text(f"---\nstatus: approved\n---\n{body}\n")
    return root


def sentence(rng: random.Random, n: int) -> list[str]:
    return rng.sample(VOCABULARY, n)


def generated(rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    """200 entries (a lead and a `Statements:` list, some short), and candidates: copies,
    copies with a word or two changed (either side of the near-duplicate line), short ones,
    unrelated ones."""
    bodies: dict[str, str] = {}
    leads: list[list[str]] = []
    for n in range(200):
        lead = sentence(rng, rng.choice([3, 5, 8, 12, 20, 30]))
        leads.append(lead)
        body = " ".join(lead)
        if n % 3 == 0:
            body += "\n\nStatements:\n- " + " ".join(sentence(rng, 6))
        bodies[f"entry-{n:03d}"] = body
    candidates: list[list[str]] = []
    for lead in rng.sample(leads, 80):
        words = list(lead)
        change = rng.choice(["same", "reordered", "one", "two", "added", "cased"])
        if change == "reordered":
            rng.shuffle(words)
        elif change in ("one", "two"):
            for _ in range(1 if change == "one" else 2):
                words[rng.randrange(len(words))] = rng.choice(VOCABULARY)
        elif change == "added":
            words.append(rng.choice(VOCABULARY))
        elif change == "cased":
            words = [w.upper() + "," for w in words]
        candidates.append(words)
    candidates += [sentence(rng, rng.choice([2, 6, 15])) for _ in range(30)]
    return bodies, candidates


def test_the_verdicts_are_those_of_comparing_every_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    bodies, candidates = generated(rng)
    approved = ApprovedTexts(tree(tmp_path, bodies))
    compared = {"every entry": 0, "duplicate_of": 0}
    similar = duplicates._similar
    counted = "every entry"

    def counting(mine: list[str], theirs: list[str]) -> bool | None:
        compared[counted] += 1
        return similar(mine, theirs)

    monkeypatch.setattr(duplicates, "_similar", counting)  # the real one, counted
    verdicts = []
    for n, words in enumerate(candidates):
        texts = [" ".join(words), " ".join(words[: len(words) // 2])]
        besides = {f"entry-{n:03d}"} if n % 10 == 0 else set()
        counted = "every entry"
        expected = every_entry(approved, texts, besides)
        counted = "duplicate_of"
        assert approved.duplicate_of(texts, besides=besides) == expected, texts
        verdicts.append("none" if expected is None else "exact" if expected.exact else "near")
    # the generated set holds every verdict, and prefiltering kept each of them
    assert {"exact", "near", "none"} <= set(verdicts)
    # a small vocabulary shares words between many entries; still a fraction is compared
    assert compared["duplicate_of"] * 5 < compared["every entry"], compared
