"""`duplicate_of` at team scale (memory/promotion/duplicates.py) on a generated tree: 1,500
approved entry files, 200 candidates (copies, copies with a word changed, unrelated lessons).
Per candidate, p50/p95 of comparing every entry (the code before the prefilter) and of the
prefiltered `duplicate_of`, their ratio, and whether every verdict is the same. Prints figures;
asserts nothing but the verdicts.

    PYTHONPATH=src python bench/bench_review_scale.py
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path

ENTRIES = 1500
CANDIDATES = 200


def every_entry(texts, mine_texts, besides):  # type: ignore[no-untyped-def]
    """`ApprovedTexts.duplicate_of` before the prefilter: every approved entry compared."""
    from teamlore.memory.promotion import duplicates
    from teamlore.memory.store import layout

    mine = [w for w in (duplicates.words(t) for t in mine_texts) if w]
    near = None
    for entry_id, theirs in texts._load().items():
        if entry_id in besides:
            continue
        for one in mine:
            for other in theirs:
                same = duplicates._similar(one, other)
                if same is None:
                    continue
                found = duplicates.Duplicate(entry_id, layout.entry_path(entry_id), same)
                if same:
                    return found
                near = near or found
    return near


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    from teamlore.memory.promotion.duplicates import ApprovedTexts

    rng = random.Random(11)
    # a team's words: a few hundred common ones, a long tail of names
    common = [f"c{n}" for n in range(300)]
    rare = [f"r{n}" for n in range(20000)]

    def lesson() -> list[str]:
        n = rng.randint(8, 40)
        return [rng.choice(common) if rng.random() < 0.6 else rng.choice(rare) for _ in range(n)]

    root = Path(tempfile.mkdtemp())
    entries = root / ".threadshare" / "memory" / "entries"
    entries.mkdir(parents=True)
    leads = []
    for n in range(ENTRIES):
        lead = lesson()
        leads.append(lead)
        statements = " ".join(lesson())
        body = f"{' '.join(lead)}\n\nStatements:\n- {statements}"
        (entries / f"entry-{n:04d}.md").write_text(f"---\nstatus: approved\n---\n{body}\n")
    candidates = []
    for n in range(CANDIDATES):
        if n % 4 == 0:
            words = list(rng.choice(leads))
            if n % 8 == 0:
                words[rng.randrange(len(words))] = rng.choice(rare)
        else:
            words = lesson()
        candidates.append([" ".join(words), " ".join(words[: len(words) // 2])])
    approved = ApprovedTexts(root)
    start = time.perf_counter()
    approved._load()
    print(f"{ENTRIES} entries read and indexed in {time.perf_counter() - start:.2f}s")
    before, after, same = [], [], 0
    for texts in candidates:
        t = time.perf_counter()
        old = every_entry(approved, texts, set())
        before.append(time.perf_counter() - t)
        t = time.perf_counter()
        new = approved.duplicate_of(texts, besides=set())
        after.append(time.perf_counter() - t)
        same += old == new
    for name, values in (("every entry", before), ("prefiltered", after)):
        print(
            f"{name:12s} p50 {percentile(values, 0.5) * 1000:7.2f} ms  "
            f"p95 {percentile(values, 0.95) * 1000:7.2f} ms  total {sum(values):6.2f}s"
        )
    ratio = statistics.median(before) / statistics.median(after)
    print(f"ratio (p50) {ratio:.0f}x; same verdict for {same} of {len(candidates)} candidates")
    assert same == len(candidates)


if __name__ == "__main__":
    main()
