"""Whole-process times of the short commands, as ratios to the interpreter floor.

    .venv/bin/python bench/bench_cli.py [--turns 10000] [--rounds 15] [--commands a,b,...] [--warm]

Every round runs every command once, in the same order, each as a fresh `teamlore` process
(the console script of this interpreter's environment, running this checkout's code): the floor
(`python -c "import sqlite3, json"`) and the commands see the same load, so the ratios of one run
are the figures to quote on a shared machine. Prints p50/p95 per command, p50 and p95 over the
floor's p50, and peak RSS (`ru_maxrss` of the child). Byte code is cached under `.bench/pycache`
(an installed package has its `.pyc` files; `PYTHONDONTWRITEBYTECODE` would make every process
compile the package again). With `--warm`, `teamlore watch` runs on the corpus and each command
it answers gets a `[warm]` row beside its cold one (which runs in its own process,
TEAMLORE_NO_WATCH): the client's CPU plus the server's. See bench/README.md, "Short commands".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import corpus  # noqa: E402

FIXTURES = corpus.SHARED_FIXTURES
# the targets, as p50 over the floor's p50 (docs/architecture.md, "A short CLI process")
TARGETS = {
    "sessions search": 5.0,
    "sessions search --lexical": 5.0,
    "sessions search (Chinese)": 5.0,
    "sessions search --lexical (Chinese)": 5.0,
    "memory search": 5.0,
    "status": 4.0,
    "append -> searchable": 10.0,
    "append -> sync + search": 10.0,
    # with --warm: the same commands answered by `teamlore watch` (docs/watch.md)
    "sessions search [warm]": 5.0,
    "sessions search --lexical [warm]": 5.0,
    "memory search [warm]": 5.0,
    "status [warm]": 4.0,
    "append -> searchable [warm]": 10.0,
}
# the commands `teamlore watch` answers (teamlore.cli.warm.SERVED), as named in `command_table`
WARM = {
    "sessions search",
    "sessions search --lexical",
    "sessions search (text)",
    "memory search",
    "memory search --lexical",
    "status",
    "status (text)",
    "sessions list",
    "sessions show",
    "append -> searchable",
}
NO_WATCH = {"TEAMLORE_NO_WATCH": "1"}  # the cold rows run in their own process (entry.py)

HYBRID = {
    "sessions search",
    "sessions search (text)",
    "sessions search (Chinese)",
    "memory search",
}  # their vector side runs


@dataclass
class Command:
    name: str
    argv: list[str]
    cwd: Path
    env: dict[str, str]
    before: list[list[str]] = field(default_factory=list)  # run first, timed with the command
    stdin: bytes | None = None  # a hook's payload, as the agent pipes it
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # user + sys seconds of the processes
    rss_mib: float = 0.0
    misses: int = 0
    server: int | None = None  # the warm server's pid: its CPU is counted with the command's


def fixture_memory_repository(repo: Path) -> Path:
    """A git worktree at `repo` holding the real team-memory fixture (made once)."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        shutil.copytree(FIXTURES / "threadshare-memory", repo / ".threadshare" / "memory")
        (repo / ".threadshare" / "memory" / "SOURCE.md").unlink()
    return repo


def teamlore_exe() -> str:
    exe = Path(sys.executable).parent / "teamlore"
    if not exe.exists():
        raise SystemExit(f"no teamlore console script next to {sys.executable}")
    return str(exe)


def child_env(home: Path, work: Path, src: Path) -> dict[str, str]:
    """A user's environment: `HOME`, and the state dir where teamlore puts it by default
    (`user_state`: no `TEAMLORE_HOME` or `XDG_STATE_HOME`, which would skip the lookup a user's
    process makes)."""
    dropped = {"PYTHONDONTWRITEBYTECODE", "TEAMLORE_HOME", "XDG_STATE_HOME"}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(
        HOME=str(home),
        PYTHONPATH=str(src),
        PYTHONPYCACHEPREFIX=str(work / "pycache"),
        # a hook gives up (prints nothing) past its budget: time the whole brief instead
        TEAMLORE_HOOK_BUDGET="60",
    )
    return env


def user_state(home: Path) -> Path:
    """The state dir of a user whose home is `home` (Linux: `~/.local/state/teamlore`)."""
    return home / ".local" / "state" / "teamlore"


def run_once(
    argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None = None
) -> tuple[float, float, bytes, float]:
    """Wall seconds, peak RSS (MiB), stdout and CPU seconds (user + sys) of one process
    (`stdin` written to it first)."""
    started = time.perf_counter()
    piped = subprocess.PIPE if stdin is not None else None
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=piped, stdout=subprocess.PIPE)
    if proc.stdin is not None:
        proc.stdin.write(stdin or b"")
        proc.stdin.close()
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv[1:])} exited {os.waitstatus_to_exitcode(status)}")
    return seconds, usage.ru_maxrss / 1024, out, usage.ru_utime + usage.ru_stime


def prepare(work: Path, turns: int, env: dict[str, str]) -> tuple[Path, str, list[str], list[Path]]:
    """The generated corpus (cached), its index, a git worktree holding the team-memory fixture,
    one session key and the session files."""
    base = work / f"cli-{turns}-g{corpus.GENERATOR_VERSION}"
    home, marker = base / "corpus", base / ".complete"
    if not marker.exists():
        shutil.rmtree(base, ignore_errors=True)
        corpus.generate(home, turns=turns, profile="lean")
        marker.write_text("ok\n")
    roots = corpus.source_roots(home)
    sources = [arg for p, r in roots.items() for arg in ("--source", f"{p}={r}")]
    repo = fixture_memory_repository(base / "repo")
    exe = teamlore_exe()
    started = time.perf_counter()
    subprocess.run(
        [exe, "sync", *sources, "--format", "json"],
        env=env,
        check=True,
        cwd=repo,
        stdout=subprocess.DEVNULL,
    )
    say(f"  setup: sync of {turns} turns took {time.perf_counter() - started:.1f} s")
    listed = subprocess.run(
        [exe, "sessions", "list", "--limit", "1", "--format", "json"],
        env=env,
        check=True,
        cwd=repo,
        capture_output=True,
    )
    key = json.loads(listed.stdout)["sessions"][0]["sessionKey"]
    files = sorted(p for r in roots.values() for p in r.rglob("*.jsonl"))
    return repo, key, sources, files


def found(token: str, out: bytes) -> bool:
    """Whether a search's JSON output holds a hit with `token` (the output echoes the query)."""
    hits = json.loads(out).get("hits", [])
    return any(token in json.dumps(hit) for hit in hits)


def say(text: str = "") -> None:
    print(text, flush=True)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[int(q) - 1]


def command_table(
    exe: str, key: str, sources: list[str]
) -> list[tuple[str, list[str], list[list[str]]]]:
    """(name, argv, argv of the processes run before it and timed with it) per command."""
    search = [exe, "sessions", "search"]
    sync = [exe, "sync", *sources, "--format", "json"]
    return [
        ("sessions search", [*search, "release", "job", "--format", "json"], []),
        (
            "sessions search --lexical",
            [*search, "release", "job", "--lexical", "--format", "json"],
            [],
        ),
        ("sessions search (text)", [*search, "release", "job"], []),
        # a spaceless Chinese query: cut into words by the dictionary (docs/hybrid-search.md)
        ("sessions search (Chinese)", [*search, "数据库迁移", "--format", "json"], []),
        (
            "sessions search --lexical (Chinese)",
            [*search, "数据库迁移", "--lexical", "--format", "json"],
            [],
        ),
        ("memory search", [exe, "memory", "search", "extraction", "--format", "json"], []),
        (
            "memory search --lexical",
            [exe, "memory", "search", "extraction", "--lexical", "--format", "json"],
            [],
        ),
        ("status", [exe, "status", "--format", "json"], []),
        ("status (text)", [exe, "status"], []),
        ("sessions list", [exe, "sessions", "list", "-n", "20", "--format", "json"], []),
        ("sessions show", [exe, "sessions", "show", key, "--format", "json"], []),
        ("sync (no-op)", sync, []),
        # the turn's file is appended to, then a sync process and a search process run
        ("append -> sync + search", [*search, "TOKEN", "--format", "json"], [sync]),
        # ... or the search process alone: it indexes the stale file itself (docs/sessions.md)
        ("append -> searchable", [*search, "TOKEN", "--format", "json"], []),
    ]


def assembled_copy(repo: Path) -> Path:
    """A copy of the team-memory worktree whose AGENTS.md holds the block `memory assemble`
    writes (what an assembling install leaves): the brief has no team section to read."""
    copy = repo.parent / "repo-assembled"
    if not (copy / ".git").exists():
        shutil.copytree(repo, copy, symlinks=True)
        (copy / "AGENTS.md").write_text(
            "<!-- BEGIN THREADSHARE MEMORY (generated; do not edit by hand) -->\n"
        )
    return copy


def hook_table(exe: str, repo: Path) -> list[tuple[str, list[str], bytes]]:
    """(name, argv, payload on stdin) per hook, as Claude Code, Codex and Pi run them: the
    session-start brief of the team-memory worktree (with and without the assembled block),
    one typed prompt queued for personal memory, and a session end whose transcript is gone
    (nothing to sync)."""
    turn = {"cwd": str(repo), "text": "I prefer tabs", "source": "interactive"}
    return [
        (
            "hook session-start",
            [exe, "hook", "session-start", "--client", "codex"],
            json.dumps({"cwd": str(repo)}).encode(),
        ),
        (
            "hook session-start (assembled)",
            [exe, "hook", "session-start", "--client", "codex"],
            json.dumps({"cwd": str(assembled_copy(repo))}).encode(),
        ),
        (
            "hook user-turn",
            [exe, "hook", "user-turn", "--client", "pi"],
            json.dumps({**turn, "sessionId": "bench", "turnId": "bench-1"}).encode(),
        ),
        (
            "hook session-end",
            [exe, "hook", "session-end", "--client", "claude"],
            json.dumps({"transcript_path": str(repo / "gone.jsonl")}).encode(),
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--commands", default="", help="comma-separated names (default: all)")
    parser.add_argument(
        "--versus",
        type=Path,
        help="another checkout's src/ (e.g. ../main/src): its commands run interleaved with ours",
    )
    parser.add_argument(
        "--src",
        type=Path,
        default=REPO / "src",
        help="the checkout's src/ to measure (default: ours)",
    )
    parser.add_argument(
        "--show-turns",
        type=int,
        default=0,
        help="also time `sessions show` of one session this long (e.g. 100000), whole process",
    )
    parser.add_argument(
        "--warm",
        action="store_true",
        help="also time the commands `teamlore watch` answers, through it ([warm] rows)",
    )
    parser.add_argument("--work", type=Path, default=REPO / ".bench")
    args = parser.parse_args(argv)
    work: Path = args.work.resolve()
    home = work / f"cli-home-{args.turns}"
    state = user_state(home)
    home.mkdir(parents=True, exist_ok=True)
    env = child_env(home, work, args.src.resolve())
    load = os.getloadavg()
    say(
        f"bench_cli: {args.turns} turns, {args.rounds} rounds, load {load[0]:.2f} "
        f"{load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs, python {sys.version.split()[0]}"
    )
    if args.show_turns:
        show_long_session(work, args.show_turns, env, args.versus)
    repo, key, sources, files = prepare(work, args.turns, env)
    server = start_watch(work, state, sources, env) if args.warm else None
    try:
        measure(args, work, state, env, repo, key, sources, files, server)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
            (state / "config.toml").unlink()
    return 0


def start_watch(
    work: Path, state: Path, sources: list[str], env: dict[str, str]
) -> subprocess.Popen[bytes]:
    """`teamlore watch` over the corpus (its folders written to config.toml as `[sources]`, what
    a plain sync reads), once its first sync is done."""
    roots = [spec.split("=", 1) for spec in sources if spec != "--source"]
    config = "[sources]\n" + "".join(f'{p} = ["{r}"]\n' for p, r in roots)
    (state / "config.toml").write_text(config)
    log = work / "watch.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [teamlore_exe(), "watch", "--format", "json"], env=env, stdout=out, stderr=out
        )
    while b'"synced"' not in log.read_bytes():
        if server.poll() is not None:
            raise SystemExit(f"teamlore watch exited: {log.read_text()}")
        time.sleep(0.05)
    say(f"  warm: teamlore watch running (pid {server.pid}), its log in {log}")
    return server


def server_cpu(pid: int | None) -> float:
    """User + sys seconds the process `pid` used so far (Linux /proc; 0 elsewhere)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(
    args: argparse.Namespace,
    work: Path,
    state: Path,
    env: dict[str, str],
    repo: Path,
    key: str,
    sources: list[str],
    files: list[Path],
    server: subprocess.Popen[bytes] | None,
) -> None:
    exe = teamlore_exe()
    warm_env = env
    if server is not None:
        env = {**env, **NO_WATCH}
    table = command_table(exe, key, sources)
    hooks = hook_table(exe, repo)
    if args.commands:
        table = [row for row in table if row[0] in args.commands.split(",")]
        hooks = [row for row in hooks if row[0] in args.commands.split(",")]
    trees = [("", env)]
    if args.versus:
        # its own derived model copies: two trees whose copies differ in format would each
        # derive them again on every run (models/multilingual.py, `CACHE_FORMAT`); and its own
        # home with a copy of the state (`versus_home`)
        versus_env = {
            **env,
            "PYTHONPATH": str(args.versus.resolve()),
            "TEAMLORE_MODEL_CACHE": str(work / "models-versus"),
            "HOME": str(versus_home(state.parents[2])),
        }
        trees.append((" [versus]", versus_env))
    commands = [Command("floor", [sys.executable, "-c", "import sqlite3, json"], repo, env)]
    if any(name in HYBRID for name, _, _ in table):
        # what numpy's import alone adds to the floor: a hybrid search's vector side needs it
        numpy_floor = [sys.executable, "-c", "import sqlite3, json, numpy"]
        commands.append(Command("floor + numpy (reference)", numpy_floor, repo, env))
    for name, command, before in table:
        for suffix, tree_env in trees:
            commands.append(Command(name + suffix, command, repo, tree_env, before))
        if server is not None and name in WARM:
            warm = Command(name + " [warm]", command, repo, warm_env, before, server=server.pid)
            commands.append(warm)
    for name, command, payload in hooks:
        for suffix, tree_env in trees:
            commands.append(Command(name + suffix, command, repo, tree_env, stdin=payload))
    for c in commands:  # warm the byte-code cache and the page cache
        run_once([a if a != "TOKEN" else "x" for a in c.argv], c.cwd, c.env, c.stdin)
    at_ms = corpus.BASE_EPOCH_MS + 10 * 365 * 86_400_000
    appends = any("TOKEN" in c.argv for c in commands)
    for round_no in range(args.rounds):
        if appends and len(trees) > 1:
            # the trees append to the same corpus: a turn the other tree appended would make
            # this tree's next search index it first (untimed here, as ours is in a run alone)
            for _, tree_env in trees:
                run_once([exe, "sync", *sources, "--format", "json"], repo, tree_env)
        for n, c in enumerate(commands):
            argv = c.argv
            if "TOKEN" in argv:
                token = f"zqappend{round_no}x{n}x{os.getpid()}"
                at_ms += 60_000
                corpus.append_turn(files[(round_no * 7 + n) % len(files)], token, at_ms=at_ms)
                argv = [token if a == "TOKEN" else a for a in argv]
            total, peak, cpu_total = 0.0, 0.0, 0.0
            for step in c.before:
                seconds, rss, _, cpu = run_once(step, c.cwd, c.env)
                total, peak, cpu_total = total + seconds, max(peak, rss), cpu_total + cpu
            served_before = server_cpu(c.server)
            seconds, rss, out, cpu = run_once(argv, c.cwd, c.env, c.stdin)
            cpu += server_cpu(c.server) - served_before
            c.seconds.append(total + seconds)
            c.cpu.append(cpu_total + cpu)
            c.rss_mib = max(c.rss_mib, peak, rss)
            if "TOKEN" in c.argv and not found(token, out):
                c.misses += 1
    report(commands, exe)


def versus_home(home: Path) -> Path:
    """A home beside `home` for the `--versus` tree, holding a copy of its state, made afresh each
    run: a tree whose state schema is newer migrates the state it opens, which the other could
    not open then. The memory state is left out (derived: the versus tree's first search
    projects and embeds it), and so are the socket and lock of a running `teamlore watch`
    (`--warm`): a socket cannot be copied, and the versus tree's commands run in their own
    processes."""
    copy = home.with_name(home.name + "-versus")
    shutil.rmtree(copy, ignore_errors=True)
    skipped = shutil.ignore_patterns("memory-state.sqlite3*", "watch.sock", "watch.lock")
    shutil.copytree(user_state(home), user_state(copy), ignore=skipped)
    return copy


def show_long_session(work: Path, turns: int, env: dict[str, str], versus: Path | None) -> None:
    """`sessions show` of one generated session of `turns` turns (its first page), whole
    process, ours then `--versus` (which may print every turn)."""
    base = work / f"show-{turns}-g{corpus.GENERATOR_VERSION}"
    home, state = base / "corpus", base / "state"
    env = {**env, "TEAMLORE_HOME": str(state)}
    exe = teamlore_exe()
    if not (base / ".complete").exists():
        shutil.rmtree(base, ignore_errors=True)
        # in a child: a child's ru_maxrss starts at its parent's RSS (bench/README.md)
        make = (
            f"import corpus; from pathlib import Path; corpus.generate(Path({str(home)!r}),"
            f" turns={turns}, profile='lean', turns_per_session=({turns}, {turns}))"
        )
        subprocess.run([sys.executable, "-c", make], cwd=BENCH_DIR, check=True)
        roots = corpus.source_roots(home)
        sync = [exe, "sync", *[a for p, r in roots.items() for a in ("--source", f"{p}={r}")]]
        subprocess.run([*sync, "--format", "json"], env=env, check=True, stdout=subprocess.DEVNULL)
        (base / ".complete").write_text("ok\n")
    listed = subprocess.run(
        [exe, "sessions", "list", "--format", "json"], env=env, check=True, capture_output=True
    )
    key = json.loads(listed.stdout)["sessions"][0]["sessionKey"]
    show = [exe, "sessions", "show", key, "--format", "json"]
    for label, tree_env in [("", env), (" [versus]", {**env, "PYTHONPATH": str(versus)})][
        : 2 if versus else 1
    ]:
        seconds, rss, out, _ = run_once(show, base, tree_env)
        shown = len(json.loads(out)["turns"])
        say(
            f"  sessions show of a {turns}-turn session{label}: {seconds:.2f} s whole process,"
            f" {shown} turns printed, {len(out) / 1048576:.1f} MiB of JSON, peak RSS {rss:.0f} MiB"
            f"  (target <= 5 s)"
        )


def report(commands: list[Command], exe: str) -> None:
    floor = statistics.median(commands[0].seconds)
    floor_cpu = statistics.median(commands[0].cpu)
    # CPU: the median user + sys seconds, over the floor's (steadier than wall on a busy machine)
    say(
        f"  {'command':<41}{'p50 ms':>7}{'p95 ms':>7}{'p50/floor':>10}{'p95/floor':>10}"
        f"{'CPU/floor':>10}{'RSS MiB':>8}  target (p50)"
    )
    for c in commands:
        p50, p95 = statistics.median(c.seconds), pct(c.seconds, 95)
        target = TARGETS.get(c.name)
        verdict = "" if target is None else f"<= {target:g}x"
        if target is not None:
            verdict += " met" if p50 / floor <= target else " NOT met"
        if c.misses:
            verdict += f"  ({c.misses} of {len(c.seconds)} did not find the new turn)"
        say(
            f"  {c.name:<41}{p50 * 1000:7.0f}{p95 * 1000:7.0f}{p50 / floor:10.1f}"
            f"{p95 / floor:10.1f}{statistics.median(c.cpu) / floor_cpu:10.1f}{c.rss_mib:8.0f}"
            f"  {verdict}"
        )
    say("  each command, as run (teamlore = this environment's console script):")
    for c in commands:
        if c.name.endswith("[versus]"):
            continue
        shown = [" ".join("teamlore" if a == exe else a for a in b) for b in [*c.before, c.argv]]
        piped = "" if c.stdin is None else f"echo '{c.stdin.decode()}' | "
        piped = ("TEAMLORE_NO_WATCH=1 " if "TEAMLORE_NO_WATCH" in c.env else "") + piped
        served = "  (answered by `teamlore watch`)" if c.server else ""
        say(f"    {c.name}: {piped}" + " && ".join(shown) + served)


if __name__ == "__main__":
    raise SystemExit(main())
