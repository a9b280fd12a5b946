"""What the Pi extension adds to every prompt (integrations/pi.py, docs/agents.md "Pi").

On each prompt the extension runs `teamlore hook user-turn` (from Pi's `input`) and
`teamlore hook session-start` (from `before_agent_start`) as child processes, side by side, and
Pi waits for both before it asks the model. This times the real Pi CLI (`pi -p`, pinned in
tests/pi_cli.py, installed from npm into the test cache) against the scripted model on
127.0.0.1, with the extension and with `--no-extensions`, alternating, and prints the medians
and their ratio; then each hook alone as a process. The state holds a small personal profile.

    .venv/bin/python bench/bench_pi_prompt.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from agent_clis import Scenario, ScriptedModel  # noqa: E402
from pi_cli import install_pi_cli, pi_env, run_pi  # noqa: E402

PROFILE = "# Profile\n\n## Work\nThe user maintains the Quillon tide-table service in Rust.\n"


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _teamlore(args: list[str], payload: dict[str, str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "teamlore.cli.entry", *args],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    options = parser.parse_args()
    cli = install_pi_cli()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        home, state, cwd = root / "home", root / "state", root / "work"
        cwd.mkdir()
        (state / "personal").mkdir(parents=True, mode=0o700)
        (state / "personal" / "profile.md").write_text(PROFILE)
        env = pi_env(home, {"TEAMLORE_HOME": str(state)})
        env["PATH"] = f"{cli.bin_dir}{os.pathsep}{env['PATH']}"
        subprocess.run(
            [sys.executable, "-m", "teamlore.cli.entry", "install", "--client", "pi"],
            env=env,
            cwd=cwd,
            check=True,
            capture_output=True,
        )
        on: list[float] = []
        off: list[float] = []
        with ScriptedModel(Scenario(final_text="ok", max_requests=10_000)) as model:
            for run in range(options.runs):
                for extensions, samples in ((True, on), (False, off)):
                    started = time.perf_counter()
                    done = run_pi(
                        cli, f"prompt {run}", cwd=cwd, home=home, model=model, extensions=extensions
                    )
                    samples.append(time.perf_counter() - started)
                    assert done.returncode == 0, done.describe()
        turn = {"cwd": str(cwd), "text": "x", "source": "interactive", "sessionId": "s"}
        brief = [
            _teamlore(["hook", "session-start", "--client", "pi"], {"cwd": str(cwd)}, env)
            for _ in range(options.runs)
        ]
        capture = [
            _teamlore(["hook", "user-turn", "--client", "pi"], {**turn, "turnId": f"t{i}"}, env)
            for i in range(options.runs)
        ]
    print(f"pi -p, extension on : median {_median_ms(on):7.0f} ms over {options.runs} runs")
    print(f"pi -p, extension off: median {_median_ms(off):7.0f} ms")
    print(
        f"added per prompt    : {_median_ms(on) - _median_ms(off):7.0f} ms "
        f"(on/off ratio {statistics.median(on) / statistics.median(off):.2f})"
    )
    print(f"hook session-start  : median {_median_ms(brief):7.0f} ms (process)")
    print(f"hook user-turn      : median {_median_ms(capture):7.0f} ms (process)")


if __name__ == "__main__":
    main()
