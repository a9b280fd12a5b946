"""The review page: how long each page takes to answer (p50/p95 ms, server RSS) on the demo's
repository and sessions, over HTTP to the real server on 127.0.0.1.

    .venv/bin/python bench/bench_ui.py [--reps 50]

Every page is a view over registered operations (the queue and candidate pages run
`memory.review` once per candidate kind), so these figures are mostly those operations' cost.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import tempfile
import time
from pathlib import Path

import httpx2 as httpx

from teamlore.ops.registry import OpContext, run_operation
from teamlore.ui.server import UiServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="teamlore-bench-ui-") as tmp:
        root = Path(tmp) / "demo"
        result = run_operation(
            "demo", OpContext(cwd=Path(tmp)), {"directory": str(root), "reviewInBrowser": True}
        )
        server = UiServer(Path(result["repository"]), home=Path(result["stateDir"])).start()
        try:
            client = httpx.Client(base_url=server.base_url, follow_redirects=True, timeout=60)
            queue = client.get(server.login_url("/queue")).text
            candidate = re.findall(r'href="(/candidate/[^"]+)"', queue)[0]
            pages = {
                "queue": "/queue",
                "candidate": candidate,
                "plan": "/plan",
                "memory (list)": "/memory",
                "memory (search)": "/memory?q=invoice+export",
                "sessions (search)": "/sessions?q=flaky+export",
            }
            print(f"load average {os.getloadavg()[0]:.2f}; {args.reps} requests per page")
            print(f"{'page':<20} {'p50 ms':>8} {'p95 ms':>8} {'bytes':>8}")
            for name, path in pages.items():
                times, size = [], 0
                for _ in range(args.reps):
                    start = time.perf_counter()
                    answer = client.get(path)
                    times.append((time.perf_counter() - start) * 1000)
                    assert answer.status_code == 200, (path, answer.status_code)
                    size = len(answer.content)
                times.sort()
                p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
                print(f"{name:<20} {statistics.median(times):>8.1f} {p95:>8.1f} {size:>8}")
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"peak RSS of the process (server + client + demo build): {rss:.0f} MiB")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
