"""What a Codex rollout's bytes are, and what reading each kind of record costs (issue 29,
"Codex parity"; docs/sessions.md, "Lines passed over unread").

    python bench/bench_codex_records.py                 # real fixtures + 20 MiB generated
    python bench/bench_codex_records.py --generated-mib 0 --rounds 7

Every line of the Codex files of ../shared/fixtures/sessions/codex (real rollouts nobody here
wrote) and of a Codex-only corpus made by bench/corpus.py falls in one of three classes:

- *passed over unread*: the adapter's `unread_lines` pattern matches its start, so the reader
  never decodes it (token counts, reasoning, reasoning/delta events, ghost snapshots, …);
- *decoded, no effect*: decoded and parsed, but the adapter emits no event for it and its
  parser state is the same afterwards (a tool output after its call's conclusive result, a
  `turn_context` that changes neither model nor folder, a `role=user` response item, …): what
  skipping records before decoding them could still save, at best;
- *decoded, used*: everything else.

Per class: lines, bytes and their share, by kind; then CPU milliseconds per MiB of the files
(the minimum over `--rounds` runs in this process) to decode and parse every decoded line, and
the used lines alone (a line of no effect changes no state, so the difference is what passing
those over unread could save, at best), to decode the lines passed over unread, and to try the
pattern on every line; and, for scale, a cold in-process sync of the same files (no helper, no
vectors). The classes are found once (the state comparison is not timed).
"""

from __future__ import annotations

import argparse
import collections
import copy
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
FIXTURES = (REPO / ".." / "shared" / "fixtures" / "sessions" / "codex").resolve()
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(REPO / "src"))

import corpus  # noqa: E402
from teamlore.sessions.providers import get_adapter  # noqa: E402

CLASSES = ("passed over unread", "decoded, no effect", "decoded, used")


class Line:
    __slots__ = ("data", "kind", "number", "path")

    def __init__(self, path: Path, number: int, data: bytes, kind: str) -> None:
        self.path, self.number, self.data, self.kind = path, number, data, kind


def _kind(record: Any) -> str:
    if not isinstance(record, dict):
        return "not an object"
    payload = record.get("payload")
    if isinstance(payload, dict):
        return f"{record.get('type')}/{payload.get('type')}"
    if "payload" in record:
        return str(record.get("type"))
    if "record_type" in record:
        return "legacy record_type"
    return f"legacy {record.get('type')}"


def classify(files: list[Path]) -> dict[str, list[Line]]:
    """Every non-blank line of `files` by class (docstring), in file order."""
    adapter = get_adapter("codex")
    unread = adapter.unread_lines
    assert unread is not None
    found: dict[str, list[Line]] = {name: [] for name in CLASSES}
    for path in files:
        state = adapter.new_state(path)
        for number, data in enumerate(path.read_bytes().split(b"\n"), start=1):
            if not data.strip():
                continue
            try:
                record = orjson.loads(data)
            except orjson.JSONDecodeError:
                continue  # reported as bad-json either way: not a record kind
            line = Line(path, number, data, _kind(record))
            if unread.match(data):
                found[CLASSES[0]].append(line)
                continue
            before = copy.deepcopy(state)
            events = adapter.parse(record, number, state)
            found[CLASSES[1] if not events and state == before else CLASSES[2]].append(line)
    return found


def _best(rounds: int, run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def _decode_and_parse(lines: list[Line]) -> None:
    """Decode and parse `lines` in order, a parser state per file."""
    adapter = get_adapter("codex")
    states: dict[Path, dict[str, Any]] = {}
    for line in lines:
        state = states.get(line.path)
        if state is None:
            state = states[line.path] = adapter.new_state(line.path)
        adapter.parse(orjson.loads(line.data), line.number, state)


def _sync(root: Path) -> None:
    """A cold in-process sync of the Codex files under `root` (no helper, no vectors)."""
    from teamlore.sessions.index_db import open_index
    from teamlore.sessions.indexer import Indexer, Source

    with tempfile.TemporaryDirectory(prefix="codex-records-state-") as folder:
        state = Path(folder)
        conn = open_index(state)
        adapters = {"codex": get_adapter("codex")}
        Indexer(conn, adapters, home=state, analysis="off").sync([Source("codex", root)])
        conn.close()


def report(title: str, root: Path, files: list[Path], rounds: int) -> None:
    total = sum(path.stat().st_size for path in files)
    mib = total / (1 << 20)
    found = classify(files)
    print(f"\n{title}: {len(files)} files, {mib:.1f} MiB")
    print(f"  {'class':22} {'lines':>7} {'MiB':>7} {'share':>6}")
    for name in CLASSES:
        size = sum(len(line.data) + 1 for line in found[name])
        print(f"  {name:22} {len(found[name]):7d} {size / (1 << 20):7.2f} {size / total:6.1%}")
    for name in CLASSES[:2]:
        by_kind: collections.Counter[str] = collections.Counter()
        for line in found[name]:
            by_kind[line.kind] += len(line.data) + 1
        kinds = ", ".join(f"{kind} {size / total:.1%}" for kind, size in by_kind.most_common(6))
        print(f"  {name}, by kind (share of all bytes): {kinds}")
    # a line of no effect changes no state: parsing the used lines alone gives the same events,
    # so the difference is what passing them over before decoding could save, at best
    decoded = sorted(found[CLASSES[1]] + found[CLASSES[2]], key=lambda x: (str(x.path), x.number))
    used = found[CLASSES[2]]
    unread_data = [line.data for line in found[CLASSES[0]]]
    every = [line.data for lines in found.values() for line in lines]
    unread = get_adapter("codex").unread_lines
    assert unread is not None
    all_lines = _best(rounds, lambda: _decode_and_parse(decoded))
    used_only = _best(rounds, lambda: _decode_and_parse(used))
    skipped = _best(rounds, lambda: [orjson.loads(d) for d in unread_data])
    match = _best(rounds, lambda: [unread.match(d) for d in every])
    sync = _best(max(rounds // 2, 1), lambda: _sync(root))

    def per_mib(seconds: float) -> str:
        return f"{seconds * 1000 / mib:.2f} CPU ms per MiB"

    print(f"  decoding + parsing the decoded lines: {per_mib(all_lines)}")
    print(
        f"  ... without the lines of no effect: {per_mib(used_only)}; passing those over"
        f" unread would save at best {per_mib(all_lines - used_only)}"
        f" ({(all_lines - used_only) / all_lines:.0%} of it,"
        f" {(all_lines - used_only) / sync:.1%} of the in-process sync's {per_mib(sync)})"
    )
    print(
        f"  decoding the lines passed over unread would cost {per_mib(skipped)};"
        f" trying the pattern on every line costs {per_mib(match)}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--generated-mib", type=float, default=20.0)
    args = parser.parse_args(argv)
    if FIXTURES.is_dir():
        files = sorted(FIXTURES.glob("*.jsonl"))
        report("real Codex fixtures", FIXTURES, files, args.rounds)
    else:
        print(f"real fixtures not found at {FIXTURES}")
    if args.generated_mib > 0:
        with tempfile.TemporaryDirectory(prefix="codex-records-") as folder:
            root = Path(folder)
            corpus.generate(root, seed=1, mib=args.generated_mib, codex_share=1.0)
            codex = corpus.source_roots(root)["codex"]
            files = sorted(codex.rglob("*.jsonl"))
            report("generated Codex corpus (bench/corpus.py)", codex, files, args.rounds)
    print(f"\n(command: python bench/bench_codex_records.py {' '.join(sys.argv[1:])})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
