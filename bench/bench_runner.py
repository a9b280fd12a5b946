"""The batch runner's own costs (docs/runner.md): capturing a runner's output, killing one that
floods past the cap, and identifying a runner binary (sha256, cached by file identity).

Prints MiB/s for capture, the time from the cap being passed to the process group being gone,
and the binary digest speed cold and from the cache. With `--binary PATH` it hashes that file
(the real `claude` is a ~400 MB native binary); otherwise a generated file of `--mib` MiB.

    .venv/bin/python bench/bench_runner.py [--mib 64] [--binary PATH] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from teamlore.core import errors
from teamlore.runner.binaries import _file_sha256
from teamlore.runner.process import Limits, run_bounded

PRINT = "import sys\nb = b'x' * 1048576\nfor _ in range({n}): sys.stdout.buffer.write(b)\n"


def _capture(mib: int, runs: int, cwd: Path) -> None:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = run_bounded(
            [sys.executable, "-c", PRINT.format(n=mib)],
            stdin=b"",
            env={"PATH": os.environ.get("PATH", "")},
            cwd=cwd,
            limits=Limits(120, (mib + 1) * 1024 * 1024),
        )
        times.append(time.perf_counter() - started)
        assert len(result.stdout) == mib * 1024 * 1024
    p50 = statistics.median(times)
    print(f"capture  {mib} MiB stdout: p50 {p50:.3f} s ({mib / p50:.0f} MiB/s incl. start-up)")


def _flood_kill(runs: int, cwd: Path) -> None:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        try:
            run_bounded(
                [sys.executable, "-c", PRINT.format(n=10_000)],
                stdin=b"",
                env={"PATH": os.environ.get("PATH", "")},
                cwd=cwd,
                limits=Limits(120, 4 * 1024 * 1024),
            )
        except errors.TeamloreError as err:
            assert err.code == "RUNNER_OUTPUT_TOO_LARGE"
        times.append(time.perf_counter() - started)
    print(
        f"flood    10 GiB attempt, 4 MiB cap: killed after p50 {statistics.median(times):.3f} s, "
        f"max {max(times):.3f} s"
    )


def _identity(path: Path, home: Path) -> None:
    size = path.stat().st_size / (1024 * 1024)
    started = time.perf_counter()
    _file_sha256(path, home)
    cold = time.perf_counter() - started
    started = time.perf_counter()
    _file_sha256(path, home)
    warm = time.perf_counter() - started
    print(
        f"identity {size:.0f} MiB binary: cold {cold:.3f} s ({size / cold:.0f} MiB/s), "
        f"cached {warm * 1000:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--binary", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _capture(args.mib, args.runs, root)
        _flood_kill(args.runs, root)
        binary = args.binary
        if binary is None:
            binary = root / "fake-binary"
            binary.write_bytes(os.urandom(args.mib * 1024 * 1024))
        (root / "state").mkdir()
        _identity(binary, root / "state")


if __name__ == "__main__":
    main()
