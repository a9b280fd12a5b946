"""What a keyed id costs now that every lookup also notices a regenerated secret
(docs/sessions.md, "A new origin secret"): `keyed_id` re-stats the secret file and looks for a
committed switch on each call. Prints microseconds per call for this tree and, in the same run,
for another source tree given with `--against` (e.g. main), and their ratio; plus the bare HMAC
as the floor.

    .venv/bin/python bench/bench_keys.py [--calls 20000] [--against /work/main/src]
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEASURE = """
import sys, time
from pathlib import Path
from teamlore.core import keys
home, calls = Path(sys.argv[1]), int(sys.argv[2])
keys.keyed_id("session", "warm-up", home)
start = time.perf_counter()
for n in range(calls):
    keys.keyed_id("session", f"codex:{n}", home)
print((time.perf_counter() - start) / calls * 1e6)
"""


def per_call(src: Path, home: Path, calls: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(home), str(calls)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout)


def bare_hmac(calls: int) -> float:
    secret = os.urandom(32)
    start = time.perf_counter()
    for n in range(calls):
        mac = hmac.new(secret, digestmod=hashlib.sha256)
        mac.update(b"session\x00" + f"codex:{n}".encode())
        mac.hexdigest()
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--against", type=Path, default=None)
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1] / "src"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        ours = per_call(here, home, args.calls)
        print(f"keyed_id, this tree   {ours:8.2f} µs/call")
        if args.against is not None:
            other = per_call(args.against, Path(tmp) / "other", args.calls)
            print(f"keyed_id, {args.against}   {other:8.2f} µs/call   ratio {ours / other:.2f}")
    floor = bare_hmac(args.calls)
    print(f"bare HMAC-SHA256      {floor:8.2f} µs/call   keyed_id/HMAC {ours / floor:.1f}")


if __name__ == "__main__":
    main()
