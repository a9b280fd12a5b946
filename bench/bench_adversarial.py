"""Adversarial payloads through every cleaner and sanitizer of transcript and memory text.

Every text transform teamlore runs on content it did not write (tool results are any file an
agent read) must be linear. Each payload below is built to hit one known quadratic shape (many
openers without closers, runs of escapes, repeated rule prefixes, one endless token); each
transform gets every payload. Prints seconds and MiB/s per pair, and with `--ratio` also the
time at a quarter of the size, so a non-linear transform shows as a ratio far above 4.

    .venv/bin/python bench/bench_adversarial.py [--mib 10] [--ratio] [--only NAME] [--skip NAME]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from teamlore.core import secrets
from teamlore.core.analyzer import analyze
from teamlore.memory.extraction.transcript import escape_text
from teamlore.memory.store import lint
from teamlore.personal.safety import secret_rules
from teamlore.sessions.commits import observe_commits
from teamlore.sessions.providers import apply_patch, claude, codex_records
from teamlore.sessions.providers.common import strip_system_reminders

WORKTREE = "/home/alice/src/shop"


@dataclass(frozen=True, slots=True)
class Transform:
    name: str
    run: Callable[[str], object]


TRANSFORMS: tuple[Transform, ...] = (
    Transform("system-reminder strip", strip_system_reminders),
    Transform("ide-context strip", claude._strip_ide),
    Transform("codex <cwd> read", lambda t: codex_records._tag_content(t, "cwd")),
    Transform("apply_patch find", apply_patch.find_patches),
    Transform("codex code-mode", codex_records._code_mode),
    Transform("codex exit code", codex_records.parse_exit_code),
    Transform("commit observation", lambda t: observe_commits("git commit -m x", t)),
    Transform("transcript escape", escape_text),
    Transform("sanitize_text", lambda t: secrets.sanitize_text(t, worktree_root=WORKTREE)),
    Transform("secret scan (scan_content)", secrets.scan_content),
    Transform("secret scan (lint)", lambda t: lint.lint_text(t, path="entries/x.md")),
    Transform("secret scan (personal)", secret_rules),
    Transform("analyzer", analyze),
)


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


PAYLOADS: dict[str, Callable[[int], str]] = {
    "reminder openers": lambda n: _fill("<system-reminder>x", n),
    "ide openers": lambda n: _fill("<ide_opened_file>x", n),
    "ide names": lambda n: (
        "".join(f"<ide_{chr(97 + i % 26)}{'_' * (i % 7)}>" for i in range(n // 12)) + "</ide_a>"
    ),
    "cwd openers": lambda n: "<environment_context>" + _fill("<cwd>x", n),
    "begin-patch lines": lambda n: _fill("*** Begin Patch\n*** Add File: a\n+x\n", n),
    "escaped quotes": lambda n: '"' + _fill('\\"*** Begin Patch', n),
    "code-mode calls": lambda n: _fill('tools.exec_command({cmd:"\\"', n),
    "exit headers": lambda n: _fill("Exit code: 1\n", n),
    "commit brackets": lambda n: _fill("[main 1234567 [", n),
    "angle runs": lambda n: "<" * n,
    "pem openers": lambda n: _fill("-----BEGIN PRIVATE KEY-----\n", n),
    "home paths": lambda n: _fill("/home/alice/", n),
    "tilde paths": lambda n: _fill("~/x", n),
    "assignments": lambda n: _fill("password=password=", n),
    "url credentials": lambda n: _fill("https://u:", n),
    "one long token": lambda n: _fill("aB3", n),
    "base64 run": lambda n: _fill("Z2hwX2FiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6MDEyMzQ1Njc4OQ", n),
    "uuid runs": lambda n: _fill("0b6e5d1c-8d0e-4f7a-9b1e-3c4d5e6f7a8b-", n),
    "hyphen runs": lambda n: _fill("a-", n),
    "cjk": lambda n: _fill("发布构建部署缓存", n // 3),
    # the normalized view secret rules see (core/secrets/normalize.py)
    "zero-width splits": lambda n: _fill("AKIA\u200b", n // 2),
    "homoglyph token": lambda n: _fill("\u0410KIA", n // 2),
    "full-width": lambda n: _fill("\uff21\uff2b\uff29\uff21", n // 3),
    "cyrillic prose": lambda n: _fill("Ответ на вопрос ", n // 2),
    "grafana paths": lambda n: _fill("/d/aB3cD4eF5g", n),
    "uid runs": lambda n: _fill("uid aB3cD4eF5gH6iJ7kL8m ", n),
}


def _time(transform: Transform, text: str) -> float:
    start = time.perf_counter()
    transform.run(text)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=10.0)
    parser.add_argument("--ratio", action="store_true", help="also time a quarter-size payload")
    parser.add_argument("--only", help="run only transforms whose name contains this")
    parser.add_argument("--skip", help="skip transforms whose name contains this")
    args = parser.parse_args()
    size = int(args.mib * 1024 * 1024)
    print(f"# {args.mib:g} MiB payloads, load average {os.getloadavg()[0]:.2f}")
    print(
        f"{'transform':<24} {'payload':<18} {'seconds':>8} {'MiB/s':>8}"
        + ("  ratio" if args.ratio else "")
    )
    worst = ("", "", 0.0)
    for transform in TRANSFORMS:
        if args.only and args.only not in transform.name:
            continue
        if args.skip and args.skip in transform.name:
            continue
        for name, build in PAYLOADS.items():
            text = build(size)
            seconds = _time(transform, text)
            mib = len(text.encode()) / 1024 / 1024
            line = f"{transform.name:<24} {name:<18} {seconds:8.3f} {mib / max(seconds, 1e-9):8.1f}"
            if args.ratio:
                small = _time(transform, build(size // 4))
                line += f"  {seconds / max(small, 1e-6):5.1f}"
            print(line, flush=True)
            if seconds > worst[2]:
                worst = (transform.name, name, seconds)
    print(f"# slowest: {worst[0]} on {worst[1]}: {worst[2]:.3f} s")


if __name__ == "__main__":
    main()
