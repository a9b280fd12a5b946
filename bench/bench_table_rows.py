"""The bundled model's embedding table at a cold sync's peak: mapped vs read by rows.

    .venv/bin/python bench/bench_table_rows.py [--texts 8192] [--chunk 64] [--rounds 3]

Real turn-sized texts (the first KiB of lines of the session files in
/work/shared/fixtures/sessions, else `--fixtures`) are tokenized `--chunk` at a time, as
`BundledEmbedder.embed` does, then each chunk's token rows are averaged (`mean_token_rows`)
over the table two ways: memory-mapped (what a sync used before) and `TableRows`
(`os.preadv` per span of rows a page apart, docs/sessions.md "Memory at the peak"). Prints the
CPU of the means both ways, their ratio, what reading adds per distinct row, the CPU of
tokenizing the same texts (the larger part of embedding), and the table's file pages resident in
this process after each way (`/proc/self/smaps`). Asserts that both give the same bytes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from teamlore.models import embeddings


def turn_texts(root: Path, count: int) -> list[str]:
    texts: list[str] = []
    for path in sorted(root.rglob("*.jsonl")):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        texts += [line[:1024] for line in lines if len(line) > 200]
        if len(texts) >= count:
            break
    return texts[:count]


def mapped_kib(path: Path) -> int:
    """Resident KiB of `path`'s mappings in this process (0 when it is not mapped)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if line[:1].isalnum() and "-" in line.split(" ", 1)[0]:
            inside = line.endswith(str(path))
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--texts", type=int, default=8192)
    parser.add_argument("--chunk", type=int, default=embeddings.ENCODE_CHUNK)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fixtures", type=Path, default=Path("/work/shared/fixtures/sessions"))
    args = parser.parse_args()
    weights, _ = embeddings.bundled_files()
    embedder = embeddings.bundled_embedder()
    texts = turn_texts(args.fixtures, args.texts)
    embedder.embed(texts[:1])  # the tokenizer loads
    started = time.process_time()
    chunks = [
        embedder._token_ids(texts[i : i + args.chunk]) for i in range(0, len(texts), args.chunk)
    ]
    tokenizing = time.process_time() - started
    rows = embeddings._load_table(weights)
    found = embeddings._table_file(weights)
    mapped = np.frombuffer(
        found.mapped, dtype="<f2", count=found.rows * found.columns, offset=found.begin
    ).reshape(found.rows, found.columns)
    distinct = sum(len(set(np.clip(np.concatenate(c), 0, found.rows - 1))) for c in chunks if c)
    print(
        f"{len(texts)} texts in {len(chunks)} chunks of {args.chunk}; "
        f"{distinct / len(chunks):.0f} distinct tokens per chunk"
    )
    results: dict[str, list[bytes]] = {"read by rows": [], "memory-mapped": []}
    for rnd in range(1, args.rounds + 1):
        seconds = {}
        for name, table in (("read by rows", rows), ("memory-mapped", mapped)):
            out = np.zeros((args.chunk, found.columns), dtype=np.float32)
            started = time.process_time()
            for ids in chunks:
                embeddings.mean_token_rows(table, ids, out)
                if rnd == 1:
                    results[name].append(out.tobytes())
            seconds[name] = time.process_time() - started
        rows_s, mapped_s = seconds["read by rows"], seconds["memory-mapped"]
        print(
            f"  round {rnd}: read by rows {rows_s * 1e3:.0f} ms "
            f"vs memory-mapped {mapped_s * 1e3:.0f} ms: {rows_s / max(mapped_s, 1e-9):.2f}x, "
            f"reading adds {(rows_s - mapped_s) / distinct * 1e6:.2f} us per distinct row; "
            f"tokenizing the same texts took {tokenizing * 1e3:.0f} ms"
        )
    assert results["read by rows"] == results["memory-mapped"], "the two ways differ"
    print(
        f"table file pages resident after both ways: {mapped_kib(weights.resolve()) / 1024:.1f} "
        f"MiB of {found.rows * found.columns * 2 / 2**20:.0f} (all of them the mapped way's)"
    )


if __name__ == "__main__":
    main()
